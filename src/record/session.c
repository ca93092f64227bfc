/* SPDX-License-Identifier: MIT */
#include "record/session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "contract/meta.h"
#include "format/file.h"
#include "record/cuda-inject.h"
#include "record/ingest.h"
#include "record/jobrank.h"
#include "record/procfs.h"
#include "record/metrics.h"
#include "record/queue.h"
#include "record/secure-exec.h"
#include "record/writer.h"
#include "contract/wire.h"
#include "util/clock.h"
#include "util/xalloc.h"


/* The longest the drain sleeps: bounds how long records wait in the queue. */
#define POLL_MS 50
/*
 * ... while a CPython process is recorded: its samples' Python stacks are
 * read when drained, and each millisecond more is a chance that the thread
 * has moved on to another Python function.
 */
#define PYTHON_POLL_MS 1
/*
 * A record older than this when a drain starts is in its ring already: the
 * kernel writes records within microseconds of timestamping them.
 */
#define ORDER_MARGIN_NS (10 * NSEC_PER_MSEC)
#define CHUNK_NS NSEC_PER_SEC
/* How long a command stopped by --duration has to exit before SIGKILL. */
#define STOP_GRACE_NS (2 * NSEC_PER_SEC)
/* How long spans may still come once the command has exited: its atexit flush. */
#define SPANS_GRACE_NS NSEC_PER_SEC
/*
 * Each CPU's ring holds RING_MS of samples at the requested rate: a CPU
 * runs at most a second of threads a second, so it takes at most freq
 * samples a second, however many threads share it. That is how long the
 * recorder may be kept off a busy machine's CPUs before samples are lost.
 */
#define RING_MS 50
#define DWARF_RING_BYTES (4u << 20)
#define FP_RING_BYTES (1u << 20)
#define MAX_RING_BYTES (64u << 20)
/* A sample's size beside its stack copy: registers, ids, a callchain. */
#define SAMPLE_BYTES 1024

struct session {
	const struct record_opts *o;
	struct record_result *res;
	struct tr_writer *w;
	struct chunk_writer *cw;
	struct sampler *sampler;
	struct collector *c;
	struct ingest *in;	/* the span socket, NULL if it could not be made */
	struct metrics *metrics;	/* NULL: --no-metrics */
	struct rec_queue q;
	struct cuda_inject cuda;
	int sigfd;
	sigset_t old_mask;
	pid_t child;
	pid_t target;		/* the child, or the process attached to */
	int target_fd;		/* attached: a pidfd, readable once it exits; else -1 */
	bool detached;		/* attached: done recording it */
	int ready_fd;		/* the child execs once a byte arrives */
	int exec_err_fd;	/* carries execvp's errno; closes on exec */
	int status;		/* the child's, from waitpid */
	bool exited;
	uint64_t start_ns;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int open_output(struct session *se)
{
	uint64_t features = TR_FEAT_CPU_SAMPLES | TR_FEAT_OFFCPU | TR_FEAT_SYMBOLS |
			    TR_FEAT_LANES;

	if (se->o->method == UNWIND_DWARF)
		features |= TR_FEAT_DWARF_STACKS;
	if (se->o->gpu_pc)
		features |= TR_FEAT_GPU_PC;
	if (se->o->metrics_interval_ns)
		features |= TR_FEAT_METRICS;
	return tr_writer_create(&se->w, se->o->output, features, true);
}

/* Undoes open_output when nothing was recorded: no file, the old one back. */
static void discard_output(struct session *se)
{
	tr_writer_discard(se->w);
	se->w = NULL;
}

/* In the child between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) child_main(char **argv, int ready_fd, int err_fd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	char go;
	int err;

	if (read(ready_fd, &go, 1) != 1)
		_exit(127);	/* gtrace gave up before the events were ready */
	close(ready_fd);
	/* gtrace ignores SIGPIPE and SIGXFSZ and blocks the signals it waits for. */
	sigaction(SIGPIPE, &dfl, NULL);
	sigaction(SIGXFSZ, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execvp(argv[0], argv);
	err = errno;
	/* Should the report not get through, the exit status still tells. */
	while (write(err_fd, &err, sizeof(err)) < 0 && errno == EINTR)
		;
	_exit(127);
}

/*
 * The signals the event loop waits for come through se->sigfd: SIGCHLD and
 * every signal that would end gtrace, each taken as SIGTERM is, so that the
 * file gets its end and the command is not left running unrecorded. Not the
 * signals of a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS): a
 * fault of gtrace's own must stop it, with its core dump and sanitizer
 * report (the remover still takes the span socket away).
 */
static int catch_signals(struct session *se)
{
	static const int ending[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGABRT, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM,
		SIGSTKFLT, SIGXCPU, SIGVTALRM, SIGPROF, SIGIO, SIGPWR,
	};
	sigset_t mask;

	/* An inherited SIG_IGN would reap the child before gtrace saw its status. */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	for (size_t i = 0; i < sizeof(ending) / sizeof(ending[0]); i++)
		sigaddset(&mask, ending[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&mask, sig);
	if (sigprocmask(SIG_BLOCK, &mask, &se->old_mask))
		return -errno;
	se->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return se->sigfd < 0 ? -errno : 0;
}

static int start_child(struct session *se)
{
	int ready[2], exec_err[2], fork_err;

	if (pipe2(ready, O_CLOEXEC))
		return -errno;
	if (pipe2(exec_err, O_CLOEXEC)) {
		close(ready[0]);
		close(ready[1]);
		return -errno;
	}
	/* The command's processes find the span socket in their environment. */
	if (se->in)
		setenv(WIRE_SOCKET_ENV, ingest_socket_path(se->in), 1);
	cuda_inject_setenv(&se->cuda);
	se->child = fork();
	fork_err = errno;	/* before the calls below overwrite it */
	if (se->child == 0) {
		close(ready[1]);
		close(exec_err[0]);
		child_main(se->o->argv, ready[0], exec_err[1]);
	}
	if (se->in)
		unsetenv(WIRE_SOCKET_ENV);
	cuda_inject_restore(&se->cuda);
	close(ready[0]);
	close(exec_err[1]);
	se->ready_fd = ready[1];
	se->exec_err_fd = exec_err[0];
	if (se->child < 0) {
		close_fd(&se->ready_fd);
		close_fd(&se->exec_err_fd);
		return -fork_err;
	}
	return 0;
}

static void reap_child(struct session *se, int flags)
{
	if (!se->exited && se->child > 0 && waitpid(se->child, &se->status, flags) == se->child)
		se->exited = true;
}

static void kill_child(struct session *se)
{
	if (se->child > 0 && !se->exited) {
		kill(se->child, SIGKILL);
		reap_child(se, 0);
	}
}

/* Lets the child exec; returns 0 once it has, or execvp's negative errno. */
static int release_child(struct session *se)
{
	char go = 'g';
	int err = 0;
	ssize_t n;

	n = write(se->ready_fd, &go, 1);
	close_fd(&se->ready_fd);
	if (n != 1)
		return -EPIPE;
	do
		n = read(se->exec_err_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close_fd(&se->exec_err_fd);
	if (n == (ssize_t)sizeof(err)) {
		reap_child(se, 0);
		return -err;
	}
	return 0;
}

static void format_iso_time(uint64_t ns, char *buf, size_t size)
{
	time_t secs = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;
	size_t n;

	gmtime_r(&secs, &tm);
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%06uZ", (unsigned)(ns % NSEC_PER_SEC / 1000));
}

/*
 * Helpers that unwind beside the recorder's thread: none on two CPUs or
 * fewer, where they would take the CPU from the recorded program, else
 * one for every four CPUs, up to MAX_UNWIND_THREADS.
 */
#define MAX_UNWIND_THREADS 8

static unsigned unwind_threads(const struct record_opts *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (o->unwind_threads >= 0)
		return (unsigned)o->unwind_threads;
	if (cpus <= 2)
		return 0;
	return cpus / 4 < 1 ? 1 : cpus / 4 > MAX_UNWIND_THREADS ? MAX_UNWIND_THREADS
								: (unsigned)(cpus / 4);
}

static void meta_u64(struct collector *c, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	collector_meta(c, key, buf);
}

/* A running process's command line from /proc, arguments joined by spaces. */
static char *proc_command(pid_t pid)
{
	char path[64], *buf = xmalloc(4096);
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, 4095, f);
		fclose(f);
	}
	while (n && buf[n - 1] == '\0')
		n--;
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return buf;
}

static char *command_line(const struct session *se)
{
	const struct record_opts *o = se->o;
	size_t len = 0;
	char *command;

	if (o->attach)
		return proc_command(o->attach);
	for (char **a = o->argv; *a; a++)
		len += strlen(*a) + 1;
	command = xmalloc(len + 1);
	command[0] = '\0';
	for (char **a = o->argv; *a; a++) {
		if (a != o->argv)
			strcat(command, " ");
		strcat(command, *a);
	}
	return command;
}

/* Whether time in the kernel was sampled, and why not. */
static const char *kernel_time(const struct session *se)
{
	if (sampler_samples_kernel(se->sampler))
		return "sampled, charged to the calling user stack";
	if (se->o->user_only)
		return "not sampled (':u' asked for user time only)";
	return "not sampled: refused; root, CAP_PERFMON or perf_event_paranoid <= 1 allows it";
}

/* Where this recording stands in a job its launcher started, if it does. */
static void add_rank_meta(struct collector *c)
{
	struct job_rank r;

	job_rank_from_env(&r);
	if (r.rank < 0)
		return;
	meta_u64(c, META_RANK, (uint64_t)r.rank);
	if (r.local_rank >= 0)
		meta_u64(c, META_LOCAL_RANK, (uint64_t)r.local_rank);
	if (r.world_size >= 0)
		meta_u64(c, META_WORLD_SIZE, (uint64_t)r.world_size);
	collector_meta(c, META_RANK_FROM, r.from);
}

/* What puts the recordings of several machines on one time axis. */
static void add_clock_pair(struct collector *c, const char *key)
{
	int64_t real, mono;
	char buf[64];

	job_clock_pair(&real, &mono);
	snprintf(buf, sizeof(buf), "%lld %lld", (long long)real, (long long)mono);
	collector_meta(c, key, buf);
}

static void add_start_meta(struct session *se)
{
	const struct record_opts *o = se->o;
	struct collector *c = se->c;
	char buf[HOST_NAME_MAX + 64];
	struct utsname uts;
	char *command;
	long paranoid;

	command = command_line(se);
	collector_meta(c, META_COMMAND, command);
	free(command);

	collector_meta(c, META_EVENT, sampler_event_name(se->sampler));
	collector_meta(c, META_KERNEL_TIME, kernel_time(se));
	meta_u64(c, META_FREQUENCY, o->freq);
	collector_meta(c, META_CALL_GRAPH, o->method == UNWIND_DWARF ? "dwarf" : "fp");
	if (o->method == UNWIND_DWARF)
		meta_u64(c, META_STACK_SIZE, o->stack_size);
	meta_u64(c, META_RING_SIZE, sampler_ring_bytes(se->sampler));
	if (o->method == UNWIND_DWARF)
		meta_u64(c, META_UNWIND_THREADS, unwind_threads(o));
	if (!uname(&uts))
		collector_meta(c, META_KERNEL, uts.release);
	if (!gethostname(buf, sizeof(buf))) {
		buf[sizeof(buf) - 1] = '\0';
		collector_meta(c, META_HOSTNAME, buf);
	}
	/* Signed: -1 is the most permissive setting. */
	if (!sampler_read_sysctl("perf_event_paranoid", &paranoid)) {
		snprintf(buf, sizeof(buf), "%ld", paranoid);
		collector_meta(c, META_PARANOID, buf);
	}
	if (!o->attach) {
		se->res->sampling_stopped = secure_exec_why(o->argv[0]);
		if (se->res->sampling_stopped)
			collector_meta(c, META_SAMPLING_STOPPED, se->res->sampling_stopped);
	}
	add_rank_meta(c);
	add_clock_pair(c, META_CLOCK_START);
	format_iso_time(now_ns(CLOCK_REALTIME), buf, sizeof(buf));
	collector_meta(c, META_START_TIME, buf);
	meta_u64(c, META_START_NS, se->start_ns);
	meta_u64(c, META_PID, (uint64_t)se->target);
	collector_meta(c, META_GTRACE_VERSION, GTRACE_VERSION);
	cuda_inject_meta(&se->cuda, c);
}

/* The recorder's own CPU time (user and system) until now. */
static uint64_t own_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000;
}

static void add_end_meta(struct session *se, uint64_t end_ns)
{
	char buf[64];

	/* Before the names are worked out: what recording cost, sample by sample. */
	meta_u64(se->c, META_RECORDER_CPU_NS, own_cpu_ns());
	meta_u64(se->c, META_RECORDER_NAMING_NS, collector_naming_ns(se->c));

	add_clock_pair(se->c, META_CLOCK_END);
	format_iso_time(now_ns(CLOCK_REALTIME), buf, sizeof(buf));
	collector_meta(se->c, META_END_TIME, buf);
	meta_u64(se->c, META_END_NS, end_ns);
	snprintf(buf, sizeof(buf), "%.3f", (double)(end_ns - se->start_ns) / NSEC_PER_SEC);
	collector_meta(se->c, META_DURATION, buf);
	/* An attached process goes on, or ended with a status only its parent sees. */
	if (!se->o->attach) {
		snprintf(buf, sizeof(buf), "%d", se->res->exit_status);
		collector_meta(se->c, META_EXIT_STATUS, buf);
	}
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The process attached to, its maps and threads, as rows of the trace. */
static int add_attached(struct session *se)
{
	const pid_t *tids;
	size_t n = sampler_threads(se->sampler, &tids);
	char comm[64];
	int err;

	err = collector_attach_process(se->c, (uint32_t)se->target);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		procfs_comm((uint32_t)se->target, (uint32_t)tids[i], comm, sizeof(comm));
		collector_add_thread(se->c, (uint32_t)se->target, (uint32_t)tids[i], comm,
				     se->start_ns);
		/* Asleep at the attach: off the CPU from the start, not on it. */
		if (!procfs_thread_running((uint32_t)se->target, (uint32_t)tids[i]))
			collector_thread_off_cpu(se->c, (uint32_t)tids[i], se->start_ns);
	}
	return 0;
}

/* The ring -m leaves to gtrace: RING_MS of samples at -F. */
static size_t rate_ring_bytes(const struct record_opts *o)
{
	uint64_t sample = SAMPLE_BYTES + (o->method == UNWIND_DWARF ? o->stack_size : 0);
	uint64_t want = (uint64_t)o->freq * sample * RING_MS / 1000;
	uint64_t least = o->method == UNWIND_DWARF ? DWARF_RING_BYTES : FP_RING_BYTES;

	return want < least ? least : want > MAX_RING_BYTES ? MAX_RING_BYTES : want;
}

/* Checks the process exists and is ours to watch, and learns when it exits. */
static int find_target(struct session *se)
{
	if (kill(se->o->attach, 0))
		return -errno;
	se->target = se->o->attach;
	/* Without pidfds (before Linux 5.3) only ^C or --duration ends the recording. */
	se->target_fd = (int)syscall(SYS_pidfd_open, se->target, 0);
	return 0;
}

/* Everything up to the exec: the file, the child, its events, the writer. */
/* A process_fn: the metrics follow the processes of the recording. */
static void follow_process(void *metrics, uint32_t pid, bool alive)
{
	metrics_process(metrics, pid, alive);
}

static int start(struct session *se)
{
	const struct record_opts *o = se->o;
	struct sampler_opts so = {
		.attach = o->attach != 0,
		.event = o->event,
		.user_only = o->user_only,
		.freq = o->freq,
		.method = o->method,
		.stack_size = o->stack_size,
		.ring_bytes = o->ring_bytes ? o->ring_bytes : rate_ring_bytes(o),
	};
	int err;

	cuda_inject_plan(&se->cuda, !o->no_cuda, o->attach != 0, o->cuda_api_all,
			 o->gpu_pc ? &o->pc : NULL);
	se->res->stage = RECORD_STAGE_OUTPUT;
	err = open_output(se);
	if (err)
		return err;
	se->res->stage = RECORD_STAGE_START;
	err = catch_signals(se);
	if (err)
		return err;
	if (o->attach) {
		se->res->stage = RECORD_STAGE_ATTACH;
		err = find_target(se);
	} else {
		/* Spans are an extra: a recording goes on without them. */
		se->res->spans_err = ingest_open(&se->in, 0);
		err = start_child(se);
		se->target = se->child;
	}
	if (err)
		return err;

	se->res->stage = RECORD_STAGE_EVENTS;
	so.pid = se->target;
	err = sampler_open(&se->sampler, &so);
	if (err)
		return err;
	se->res->event = sampler_event_name(se->sampler);
	se->res->event_fell_back = sampler_fell_back(se->sampler);
	se->res->ring_bytes = sampler_ring_bytes(se->sampler);
	se->res->rate_ring_bytes = rate_ring_bytes(o);

	se->res->stage = RECORD_STAGE_START;
	err = chunk_writer_start(&se->cw, se->w);
	if (err)
		return err;
	err = collector_new(&se->c, o->method, sampler_layout(se->sampler), se->cw);
	if (!err)
		err = collector_unwind_threads(se->c, o->method, unwind_threads(o));
	if (err)
		return err;
	if (o->gpu_pc)
		collector_set_cubin_max(se->c, o->pc.cubin_max);
	/* Before the metrics: their first reading belongs to the recording. */
	se->start_ns = now_ns(CLOCK_MONOTONIC);
	if (o->metrics_interval_ns) {
		err = metrics_start(&se->metrics, o->metrics_interval_ns);
		if (err)
			return err;
		collector_watch_processes(se->c, follow_process, se->metrics);
	}
	add_start_meta(se);
	if (o->attach) {
		se->res->stage = RECORD_STAGE_ATTACH;
		err = add_attached(se);
		if (err)
			return err;
		se->res->spans_err = ingest_open(&se->in, o->attach);
	} else {
		collector_add_process(se->c, (uint32_t)se->child, basename_of(o->argv[0]),
				      se->start_ns);
	}
	if (se->in)
		ingest_start(se->in, se->c, (uint32_t)se->target);
	if (o->attach)
		return 0;
	se->res->stage = RECORD_STAGE_EXEC;
	return release_child(se);
}

static void forward_signal(struct session *se, const struct signalfd_siginfo *si)
{
	/*
	 * A terminal's ^C reaches the whole foreground group, the command
	 * included; only signals sent to gtrace alone need passing on, and
	 * not back to the command that sent one.
	 */
	if (si->ssi_code != SI_KERNEL && !se->exited && (pid_t)si->ssi_pid != se->child)
		kill(se->child, (int)si->ssi_signo);
}

static void read_signals(struct session *se)
{
	struct signalfd_siginfo si;

	while (read(se->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap_child(se, WNOHANG);
		else if (se->o->attach)
			se->detached = true;	/* the attached process is not ours to stop */
		else
			forward_signal(se, &si);
	}
}

static bool recording(const struct session *se)
{
	return se->o->attach ? !se->detached : !se->exited;
}

static int poll_timeout(uint64_t now, uint64_t next_event, int longest_ms)
{
	uint64_t ms = next_event > now ? (next_event - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC : 0;

	return ms < (uint64_t)longest_ms ? (int)ms : longest_ms;
}

static void drain(struct session *se, uint64_t limit)
{
	size_t queued = rec_queue_len(&se->q);

	sampler_drain(se->sampler, &se->q, collector_unwinder(se->c));
	rec_queue_visit(&se->q, queued, collector_arrived, se->c);
	rec_queue_flush(&se->q, limit, collector_record_batch, se->c);
}

/* What the event loop polls: a negative fd is not there. */
enum { PFD_SIGNALS, PFD_SPANS, PFD_TARGET, PFD_RINGS };

/* Drains the rings and takes in spans until the command exits. */
static void event_loop(struct session *se)
{
	size_t nfds = sampler_nfds(se->sampler) + PFD_RINGS;
	struct pollfd *pfds = xcalloc(nfds, sizeof(*pfds));
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t next_chunk = now + CHUNK_NS;
	uint64_t stop_at = se->o->duration_ns ? se->start_ns + se->o->duration_ns : UINT64_MAX;
	uint64_t kill_at = UINT64_MAX;

	pfds[PFD_SIGNALS].fd = se->sigfd;
	pfds[PFD_SPANS].fd = se->in ? ingest_fd(se->in) : -1;
	pfds[PFD_TARGET].fd = se->target_fd;
	for (size_t i = PFD_RINGS; i < nfds; i++)
		pfds[i].fd = sampler_fd(se->sampler, i - PFD_RINGS);
	for (size_t i = 0; i < nfds; i++)
		pfds[i].events = POLLIN;
	while (recording(se)) {
		uint64_t wake = next_chunk < stop_at ? next_chunk : stop_at;

		if (kill_at < wake)
			wake = kill_at;
		poll(pfds, nfds, poll_timeout(now, wake, collector_reads_python(se->c)
							 ? PYTHON_POLL_MS : POLL_MS));
		/* An event whose task exited polls as hung up: stop watching it. */
		for (size_t i = PFD_RINGS; i < nfds; i++)
			if (pfds[i].revents & (POLLHUP | POLLERR))
				pfds[i].fd = -1;
		if (pfds[PFD_SIGNALS].revents & POLLIN)
			read_signals(se);
		if (pfds[PFD_TARGET].revents & POLLIN)
			se->detached = true;

		now = now_ns(CLOCK_MONOTONIC);
		drain(se, now - ORDER_MARGIN_NS);
		/* After the drain: a new process's fork is known before its spans. */
		if (se->in)
			ingest_poll(se->in, false);
		if (now >= next_chunk) {
			if (se->metrics)
				metrics_take(se->metrics, se->c);
			collector_flush(se->c, false);
			next_chunk = now + CHUNK_NS;
		}
		if (now >= stop_at && se->o->attach) {
			se->detached = true;
			se->res->stopped = true;
		} else if (now >= stop_at && !se->exited) {
			sampler_disable(se->sampler);
			se->res->stopped = true;
			kill(se->child, SIGTERM);
			stop_at = UINT64_MAX;
			kill_at = now + STOP_GRACE_NS;
		}
		if (now >= kill_at && !se->exited) {
			kill(se->child, SIGKILL);
			kill_at = UINT64_MAX;
		}
	}
	free(pfds);
}

static int exit_status(const struct session *se)
{
	int st = se->status;

	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);

		/* The end --duration asked for is not a failure of the command. */
		if (se->res->stopped && (sig == SIGTERM || sig == SIGKILL))
			return 0;
		return 128 + sig;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/*
 * Spans still on their way once sampling stopped: the exited command's
 * processes flush theirs as they exit, so their connections are waited for,
 * briefly. An attached process goes on sending: what has arrived is taken.
 * Whatever comes later counts as arriving with no run.
 */
static void take_last_spans(struct session *se)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC), deadline = now + SPANS_GRACE_NS;
	struct pollfd pfd = { .fd = ingest_fd(se->in), .events = POLLIN };
	bool attached = se->o->attach;

	ingest_poll(se->in, true);
	while (!ingest_idle(se->in) && now < deadline) {
		if (poll(&pfd, 1, attached ? 0 : poll_timeout(now, deadline, POLL_MS)) <= 0 && attached)
			break;
		ingest_poll(se->in, true);
		now = now_ns(CLOCK_MONOTONIC);
	}
	ingest_close(se->in);
	se->in = NULL;
}

/* After the exit: the last records, the symbols, the END chunk. */
static int finish(struct session *se)
{
	uint64_t end_ns = now_ns(CLOCK_MONOTONIC);
	int err, close_err;

	sampler_disable(se->sampler);
	drain(se, UINT64_MAX);
	if (se->in)
		take_last_spans(se);
	se->res->exit_status = se->o->attach ? 0 : exit_status(se);
	/* Its last reading in the recorder's CPU, which diagnose takes it out of. */
	metrics_stop(se->metrics);
	add_end_meta(se, end_ns);
	if (se->metrics)
		metrics_take(se->metrics, se->c);
	collector_end_offcpu(se->c, end_ns);
	collector_finish(se->c);
	collector_flush(se->c, true);
	collector_stats(se->c, &se->res->stats);

	se->res->stage = RECORD_STAGE_WRITE;
	err = chunk_writer_stop(se->cw, true);
	se->cw = NULL;
	se->res->file_bytes = tr_writer_bytes(se->w);
	/* A file that holds no chunk is no recording: the previous one stays. */
	if (err && se->res->file_bytes <= TR_HEADER_SIZE) {
		se->res->file_bytes = 0;
		discard_output(se);
		return err;
	}
	close_err = tr_writer_close(se->w);
	se->w = NULL;
	return err ? err : close_err;
}

static void cleanup(struct session *se)
{
	ingest_close(se->in);
	if (se->cw)
		chunk_writer_stop(se->cw, false);
	metrics_free(se->metrics);
	collector_free(se->c);
	sampler_close(se->sampler);
	rec_queue_free(&se->q);
	cuda_inject_free(&se->cuda);
	close_fd(&se->ready_fd);
	close_fd(&se->exec_err_fd);
	close_fd(&se->target_fd);
	if (se->sigfd >= 0) {
		struct signalfd_siginfo si;

		/* Signals already taken care of must not strike once unblocked. */
		while (read(se->sigfd, &si, sizeof(si)) > 0)
			;
		close(se->sigfd);
		sigprocmask(SIG_SETMASK, &se->old_mask, NULL);
	}
}

int record_run(const struct record_opts *o, struct record_result *res)
{
	struct session se = {
		.o = o, .res = res, .sigfd = -1, .ready_fd = -1, .exec_err_fd = -1,
		.target_fd = -1,
	};
	int err;

	memset(res, 0, sizeof(*res));
	err = start(&se);
	if (err) {
		kill_child(&se);
		if (se.cw)
			chunk_writer_stop(se.cw, false);
		se.cw = NULL;
		discard_output(&se);
	} else {
		event_loop(&se);
		err = finish(&se);
	}
	cleanup(&se);
	return err;
}
