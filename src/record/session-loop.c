/* SPDX-License-Identifier: MIT */
/*
 * A recording from the exec to its end: the event loop that drains the
 * rings, takes in spans, writes a chunk a second and ends the command at
 * --duration, then the last records, spans and meta, the symbols and the
 * END chunk.
 */
#include "record/session-internal.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/file.h"
#include "record/ingest.h"
#include "record/metrics.h"
#include "record/writer.h"
#include "util/clock.h"
#include "util/xalloc.h"

/* The longest the drain sleeps: bounds how long records wait in the queue. */
#define POLL_MS 50
/*
 * ... while a CPython process is recorded whose rings do not wake the
 * recorder at each sample (one that a command not itself CPython
 * started): its samples' Python stacks are read when drained, and each
 * millisecond more is a chance that the thread has moved on to another
 * Python function.
 */
#define PYTHON_POLL_MS 1
/*
 * ... but the rest of their records' work waits for a batch this often:
 * one record taken a wakeup found the unwinder's tables and the stack
 * copies cold each time.
 */
#define PYTHON_BATCH_NS (20 * NSEC_PER_MSEC)
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
			session_reap_child(se, WNOHANG);
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

/* Takes what the rings hold, and hands on the records up to limit (0: none). */
static void drain(struct session *se, uint64_t limit)
{
	size_t queued = rec_queue_len(&se->q);

	sampler_drain(se->sampler, &se->q, collector_unwinder(se->c));
	rec_queue_visit(&se->q, queued, collector_arrived, se->c);
	if (limit)
		rec_queue_flush(&se->q, limit, collector_record_batch, se->c);
	sampler_release(se->sampler, &se->q, collector_unwinder(se->c));
}

/* What the event loop polls: a negative fd is not there. */
enum { PFD_SIGNALS, PFD_SPANS, PFD_TARGET, PFD_RINGS };

void session_event_loop(struct session *se)
{
	size_t nfds = sampler_nfds(se->sampler) + PFD_RINGS;
	struct pollfd *pfds = xcalloc(nfds, sizeof(*pfds));
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	uint64_t next_chunk = now + CHUNK_NS;
	uint64_t stop_at = se->o->duration_ns ? se->start_ns + se->o->duration_ns : UINT64_MAX;
	uint64_t kill_at = UINT64_MAX;
	uint64_t next_batch = now;

	pfds[PFD_SIGNALS].fd = se->sigfd;
	pfds[PFD_SPANS].fd = se->in ? ingest_fd(se->in) : -1;
	pfds[PFD_TARGET].fd = se->target_fd;
	for (size_t i = PFD_RINGS; i < nfds; i++)
		pfds[i].fd = sampler_fd(se->sampler, i - PFD_RINGS);
	for (size_t i = 0; i < nfds; i++)
		pfds[i].events = POLLIN;
	while (recording(se)) {
		uint64_t wake = next_chunk < stop_at ? next_chunk : stop_at;
		bool batch;

		if (kill_at < wake)
			wake = kill_at;
		poll(pfds, nfds, poll_timeout(now, wake, collector_reads_python(se->c) &&
							 !sampler_wakeup_samples(se->sampler)
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
		batch = !collector_reads_python(se->c) || now >= next_batch;
		if (batch) {
			drain(se, now - ORDER_MARGIN_NS);
			next_batch = now + PYTHON_BATCH_NS;
		} else {
			drain(se, 0);	/* their Python stacks read, none handed on */
		}
		/*
		 * After the drain: a new process's fork is known before its
		 * spans. Between batches only when spans wait: its waits for
		 * peers and for accepting again keep to the batches.
		 */
		if (se->in && (batch || (pfds[PFD_SPANS].revents & POLLIN)))
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

int session_finish(struct session *se)
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
	session_add_end_meta(se, end_ns);
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
		session_discard_output(se);
		return err;
	}
	close_err = tr_writer_close(se->w);
	se->w = NULL;
	return err ? err : close_err;
}
