/* SPDX-License-Identifier: MIT */
/*
 * lanes: reports spans on target lanes from several threads, the program
 * the tests of target lanes record. Each worker thread dispatches work
 * from dispatch_work (about 20 us of CPU, so its stacks get sampled there)
 * and reports a span for it, round-robin over the lanes, with an origin
 * chosen to produce one link outcome on purpose.
 *
 *   lanes [--threads N] [--lanes N] [--spans N]
 *         [--origin self|none|bad|unknown|nostack|far] [--burst] [--fork]
 *         [--wait-active SECONDS] [--run-ms MS] [--names N] [--rate N] [--attrs]
 *         [--queue-work] [--linger]
 *
 * --run-ms reports for MS milliseconds instead of --spans, or until SIGUSR1
 * comes, so that a test can end it when it is done rather than guess a
 * time. --linger: once it printed its counts (its spans have reached the
 * recorder then), it waits for SIGUSR1 before it exits, so that a test can
 * end a recorder attached to it first. --names sets how many distinct span names there are (default 50);
 * --rate paces the reporting to N spans a second over all threads, for
 * benchmarks of sustained ingestion. --attrs gives every span 12
 * attributes, "lanes.attr-0" .. "lanes.attr-11" = 16 * k + j for span k of
 * its thread, and at the end sets the counter "lanes.attr-spans" to the
 * spans accepted with them and the meta "lanes.mode" to "attrs".
 * --queue-work queues from queue_work instead, which spins in its own body
 * so that its samples end there, and names span k after the Greek letter
 * k % 7 (alpha .. eta); a span of the i-th letter lasts (i + 1) * 10 us,
 * so a test can check the target time of each name from its span count.
 *
 * At the end it prints "lanes: pid P reported N spans, dropped D": the
 * spans the library accepted and the ones it dropped. Exit status: 0, 2
 * for bad options, 3 when --wait-active ran out, 1 when the child failed.
 */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtrace/target.h>

#include "workload.h"

#define NAMES 50
#define GREEK 7			/* --queue-work: alpha .. eta */
#define PACE_SPANS 256		/* --rate: spans between two looks at the clock */
#define DISPATCH_US 20
#define CHILD_SPANS 100
#define ATTRS 12
#define FAR_BEFORE_NS 10000000000ull		/* --origin far: before the start */
#define BAD_SYNTHETIC_TID 0xFFF00001u		/* a lane's tid, not a CPU's */
#define UNKNOWN_TID 4000000000u			/* above any pid_max */

static const char *const greek[GREEK] = { "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta" };

enum origin_mode { ORIGIN_SELF, ORIGIN_NONE, ORIGIN_BAD, ORIGIN_UNKNOWN, ORIGIN_NOSTACK, ORIGIN_FAR };
static const char *const origin_names[] = { "self", "none", "bad", "unknown", "nostack", "far" };

static struct {
	long threads, lanes, spans, run_ms, names, rate;
	enum origin_mode origin;
	bool burst, fork, attrs, queue_work, linger;
	double wait_active;
} opt = { .threads = 2, .lanes = 2, .spans = 1000, .names = NAMES };

static gtrace_lane **lanes;
static char (*names)[24];
static uint64_t start_ns;
static uint64_t loops_per_us;
static volatile sig_atomic_t stop_requested;

static pthread_mutex_t idler_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idler_cond = PTHREAD_COND_INITIALIZER;
static bool idler_done;
static uint32_t idler_tid;

static uint32_t my_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static inline __attribute__((always_inline)) void spin(uint64_t loops)
{
	uint64_t x = loops;

	for (uint64_t i = 0; i < loops; i++)
		x = workload_mix(x + i);
	workload_sink = x;
}

FRAME static void burn(uint64_t loops)
{
	spin(loops);
}

/* Queues work number k: the CPU side whose stack the origin points into. */
FRAME static gtrace_origin dispatch_work(long k)
{
	if (!opt.burst)
		burn(DISPATCH_US * loops_per_us + (uint64_t)k % 2);
	return gtrace_current_origin();
}

/* --queue-work: the same, with the CPU time in its own frame. */
FRAME static gtrace_origin queue_work(long k)
{
	spin(DISPATCH_US * loops_per_us + (uint64_t)k % 2);
	return gtrace_current_origin();
}

static gtrace_origin origin_for(gtrace_origin here, long k)
{
	switch (opt.origin) {
	case ORIGIN_BAD:
		here.tid = k % 2 ? BAD_SYNTHETIC_TID : 0;
		break;
	case ORIGIN_UNKNOWN:
		here.tid = UNKNOWN_TID;
		break;
	case ORIGIN_NOSTACK:
		here.tid = idler_tid;
		break;
	case ORIGIN_FAR:
		here.ts_ns = start_ns - FAR_BEFORE_NS;
		break;
	default:
		break;
	}
	return here;
}

/* Span k: starts 10 us after it was queued and lasts 5 to 50 us. */
static void report(gtrace_lane *lane, long k, gtrace_origin here)
{
	gtrace_origin origin = origin_for(here, k);
	uint64_t start = here.ts_ns + 10000;
	uint64_t end = start + (opt.queue_work ? (uint64_t)(k % GREEK + 1) * 10
				 : (uint64_t)(5 + k * 37 % 46)) * 1000;

	static const char *const keys[ATTRS] = {
		"lanes.attr-0", "lanes.attr-1", "lanes.attr-2", "lanes.attr-3",
		"lanes.attr-4", "lanes.attr-5", "lanes.attr-6", "lanes.attr-7",
		"lanes.attr-8", "lanes.attr-9", "lanes.attr-10", "lanes.attr-11",
	};
	gtrace_attr attrs[ATTRS];

	if (!opt.attrs) {
		gtrace_span(lane, names[k % opt.names], start, end,
			    opt.origin == ORIGIN_NONE ? NULL : &origin);
		return;
	}
	for (int j = 0; j < ATTRS; j++)
		attrs[j] = (gtrace_attr){ keys[j], 16 * (uint64_t)k + (uint64_t)j };
	gtrace_span_attrs(lane, names[k % opt.names], start, end,
			  opt.origin == ORIGIN_NONE ? NULL : &origin, attrs, ATTRS);
}

/* --rate: sleeps until span k of a thread is due. */
static void pace(long k, uint64_t begin)
{
	uint64_t due = begin + (uint64_t)((double)k * 1e9 * opt.threads / opt.rate);
	uint64_t now = gtrace_now_ns();
	struct timespec ts;

	if (due <= now)
		return;
	ts.tv_sec = (time_t)((due - now) / 1000000000);
	ts.tv_nsec = (long)((due - now) % 1000000000);
	nanosleep(&ts, NULL);
}

static void request_stop(int sig)
{
	stop_requested = 1;
}

static bool keep_going(long k, uint64_t deadline)
{
	return opt.run_ms ? !stop_requested && gtrace_now_ns() < deadline : k < opt.spans;
}

static void *worker(void *arg)
{
	long index = (long)(intptr_t)arg;
	uint64_t begin = gtrace_now_ns();
	uint64_t deadline = begin + (uint64_t)opt.run_ms * 1000000;
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", index);
	pthread_setname_np(pthread_self(), name);
	for (long k = 0; keep_going(k, deadline); k++) {
		if (opt.rate && k % PACE_SPANS == 0)
			pace(k, begin);
		report(lanes[k % opt.lanes], k, opt.queue_work ? queue_work(k) : dispatch_work(k));
	}
	return NULL;
}

/* Never on a CPU long enough to be sampled: the target of --origin nostack. */
static void *idler(void *arg)
{
	pthread_setname_np(pthread_self(), "idler");
	pthread_mutex_lock(&idler_lock);
	idler_tid = my_tid();
	pthread_cond_broadcast(&idler_cond);
	while (!idler_done)
		pthread_cond_wait(&idler_cond, &idler_lock);
	pthread_mutex_unlock(&idler_lock);
	return arg;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/*
 * Timed by this thread's CPU clock, not the wall clock: on a loaded machine
 * a preemption during the wall-clock timing made the loops too few, and a
 * worker then spun too briefly to be sampled at all.
 */
static void calibrate(void)
{
	const uint64_t loops = 200000;
	uint64_t t0 = thread_cpu_ns(), ns;

	burn(loops);
	ns = thread_cpu_ns() - t0;
	loops_per_us = ns ? loops * 1000 / ns : loops;
	if (!loops_per_us)
		loops_per_us = 1;
}

static void wait_active(void)
{
	uint64_t deadline = gtrace_now_ns() + (uint64_t)(opt.wait_active * 1e9);
	const struct timespec ms = { 0, 1000000 };

	while (!gtrace_reporting_active()) {
		if (gtrace_now_ns() >= deadline) {
			fprintf(stderr, "lanes: pid %d: reporting not active after %g s\n",
				(int)getpid(), opt.wait_active);
			exit(3);
		}
		nanosleep(&ms, NULL);
	}
}

static void print_counts(void)
{
	if (opt.attrs) {
		gtrace_counter_set("lanes.attr-spans", gtrace_reported_spans());
		gtrace_meta_set("lanes.mode", "attrs");
	}
	gtrace_flush(2000);
	printf("lanes: pid %d reported %" PRIu64 " spans, dropped %" PRIu64 "\n", (int)getpid(),
	       gtrace_reported_spans(), gtrace_dropped_spans());
	fflush(stdout);
}

/* --fork: a child reporting under its own pid on its own lane. */
static int run_child(void)
{
	gtrace_lane *lane = gtrace_lane_get("queue", "child 0");

	if (opt.wait_active > 0)
		wait_active();
	for (long k = 0; k < CHILD_SPANS; k++)
		report(lane, k, dispatch_work(k));
	print_counts();
	return 0;
}

static int fork_child(void)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("lanes: fork");
		return 1;
	}
	if (pid == 0)
		_exit(run_child());	/* the parent's exit handlers are not ours */
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "lanes: child %d failed\n", (int)pid);
		return 1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: lanes [--threads N] [--lanes N] [--spans N]\n"
		"             [--origin self|none|bad|unknown|nostack|far] [--burst] [--fork]\n"
		"             [--wait-active SECONDS] [--run-ms MS] [--names N] [--rate N]\n"
		"             [--attrs] [--queue-work] [--linger]\n");
	exit(2);
}

static long count_arg(const char *s, long min)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (end == s || *end || v < min)
		usage();
	return v;
}

static double seconds_arg(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v <= 0)
		usage();
	return v;
}

static void parse(int argc, char **argv)
{
	static const struct option options[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "lanes", required_argument, NULL, 'l' },
		{ "spans", required_argument, NULL, 's' },
		{ "origin", required_argument, NULL, 'o' },
		{ "burst", no_argument, NULL, 'b' },
		{ "fork", no_argument, NULL, 'f' },
		{ "wait-active", required_argument, NULL, 'w' },
		{ "run-ms", required_argument, NULL, 'r' },
		{ "names", required_argument, NULL, 'n' },
		{ "rate", required_argument, NULL, 'R' },
		{ "attrs", no_argument, NULL, 'a' },
		{ "queue-work", no_argument, NULL, 'q' },
		{ "linger", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (c) {
		case 't': opt.threads = count_arg(optarg, 1); break;
		case 'l': opt.lanes = count_arg(optarg, 1); break;
		case 's': opt.spans = count_arg(optarg, 0); break;
		case 'r': opt.run_ms = count_arg(optarg, 1); break;
		case 'n': opt.names = count_arg(optarg, 1); break;
		case 'R': opt.rate = count_arg(optarg, 1); break;
		case 'b': opt.burst = true; break;
		case 'f': opt.fork = true; break;
		case 'a': opt.attrs = true; break;
		case 'q': opt.queue_work = true; break;
		case 'L': opt.linger = true; break;
		case 'w': opt.wait_active = seconds_arg(optarg); break;
		case 'o':
			for (c = 0; c < (int)(sizeof(origin_names) / sizeof(*origin_names)); c++)
				if (!strcmp(optarg, origin_names[c]))
					break;
			if (c == (int)(sizeof(origin_names) / sizeof(*origin_names)))
				usage();
			opt.origin = c;
			break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (opt.queue_work)
		opt.names = GREEK;
}

int main(int argc, char **argv)
{
	pthread_t idler_thread, *threads;
	int status = 0;

	start_ns = gtrace_now_ns();
	signal(SIGUSR1, request_stop);
	parse(argc, argv);
	calibrate();
	names = calloc(opt.names, sizeof(*names));
	lanes = calloc(opt.lanes, sizeof(*lanes));
	threads = calloc(opt.threads, sizeof(*threads));
	if (!names || !lanes || !threads)
		return 1;
	for (long i = 0; i < opt.names; i++) {
		if (opt.queue_work)
			snprintf(names[i], sizeof(names[i]), "%s", greek[i]);
		else
			snprintf(names[i], sizeof(names[i]), "job-%ld", i);
	}
	for (long i = 0; i < opt.lanes; i++) {
		char name[32];

		snprintf(name, sizeof(name), "queue %ld", i);
		lanes[i] = gtrace_lane_get("queue", name);
	}

	if (opt.origin == ORIGIN_NOSTACK) {
		pthread_create(&idler_thread, NULL, idler, NULL);
		pthread_mutex_lock(&idler_lock);
		while (!idler_tid)
			pthread_cond_wait(&idler_cond, &idler_lock);
		pthread_mutex_unlock(&idler_lock);
	}

	if (opt.wait_active > 0)
		wait_active();
	for (long i = 0; i < opt.threads; i++)
		pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i);
	for (long i = 0; i < opt.threads; i++)
		pthread_join(threads[i], NULL);

	if (opt.fork)
		status = fork_child();

	if (opt.origin == ORIGIN_NOSTACK) {
		pthread_mutex_lock(&idler_lock);
		idler_done = true;
		pthread_cond_broadcast(&idler_cond);
		pthread_mutex_unlock(&idler_lock);
		pthread_join(idler_thread, NULL);
	}

	print_counts();
	while (opt.linger && !stop_requested) {
		const struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	free(threads);
	free(lanes);
	free(names);
	return status;
}
