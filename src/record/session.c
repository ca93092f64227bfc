/* SPDX-License-Identifier: MIT */
/*
 * A recording's start and its whole run (record_run): the output file, the
 * signals, the command held at a pipe until its events are open or the
 * process attached to, the sampler, the collector, the span socket and the
 * metrics thread; and what is left to close whichever way it ends.
 */
#include "record/session-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/file.h"
#include "record/program.h"
#include "record/ingest.h"
#include "record/metrics.h"
#include "record/procfs.h"
#include "record/writer.h"
#include "contract/wire.h"
#include "util/clock.h"

/*
 * Each CPU's ring holds RING_MS of samples at the requested rate: a CPU
 * runs at most a second of threads a second, so it takes at most freq
 * samples a second, however many threads share it. That, less the records
 * still waiting in the ring for ORDER_MARGIN_NS (at most a quarter of it,
 * see sampler_release), is how long the recorder may be kept off a busy
 * machine's CPUs before samples are lost.
 */
#define RING_MS 50
#define DWARF_RING_BYTES (4u << 20)
#define FP_RING_BYTES (1u << 20)
#define MAX_RING_BYTES (64u << 20)

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

void session_discard_output(struct session *se)
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

void session_reap_child(struct session *se, int flags)
{
	if (!se->exited && se->child > 0 && waitpid(se->child, &se->status, flags) == se->child)
		se->exited = true;
}

static void kill_child(struct session *se)
{
	if (se->child > 0 && !se->exited) {
		kill(se->child, SIGKILL);
		session_reap_child(se, 0);
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
		session_reap_child(se, 0);
		return -err;
	}
	return 0;
}

/*
 * Helpers that unwind beside the recorder's thread: none on two CPUs or
 * fewer, where they would take the CPU from the recorded program, else
 * one for every four CPUs, up to MAX_UNWIND_THREADS.
 */
#define MAX_UNWIND_THREADS 8

unsigned session_unwind_threads(const struct record_opts *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (o->unwind_threads >= 0)
		return (unsigned)o->unwind_threads;
	if (cpus <= 2)
		return 0;
	return cpus / 4 < 1 ? 1 : cpus / 4 > MAX_UNWIND_THREADS ? MAX_UNWIND_THREADS
								: (unsigned)(cpus / 4);
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
	uint64_t want = (uint64_t)o->freq * sampler_sample_bytes(o->method, o->stack_size) *
			RING_MS / 1000;
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

/* A process_fn: the metrics follow the processes of the recording. */
static void follow_process(void *metrics, uint32_t pid, bool alive)
{
	metrics_process(metrics, pid, alive);
}

/* Everything up to the exec: the file, the child, its events, the writer. */
static int start(struct session *se)
{
	const struct record_opts *o = se->o;
	struct sampler_opts so = {
		.attach = o->attach != 0,
		.event = o->event,
		.user_only = o->user_only,
		.switch_stacks = !o->no_switch_stacks,
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
	/* A CPython program's Python stacks are read as its samples land. */
	so.wake_soon = o->attach ? process_runs_python(se->target)
				 : program_runs_python(o->argv[0]);
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
		err = collector_unwind_threads(se->c, o->method, session_unwind_threads(o));
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
	session_add_start_meta(se);
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
		session_discard_output(&se);
	} else {
		session_event_loop(&se);
		err = session_finish(&se);
	}
	cleanup(&se);
	return err;
}
