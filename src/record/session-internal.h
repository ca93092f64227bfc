/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_SESSION_INTERNAL_H
#define GTRACE_RECORD_SESSION_INTERNAL_H

/*
 * Shared by the files of one recording: session.c (the start, attached or
 * with the command, and record_run), session-loop.c (the event loop and the
 * end) and session-meta.c (what the recording says about itself). Not for
 * the rest of the recorder.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/cuda-inject.h"
#include "record/queue.h"
#include "record/session.h"

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

/* Undoes open_output when nothing was recorded: no file, the old one back. */
void session_discard_output(struct session *se);

/* Takes the child's status if it has exited (flags: waitpid's). */
void session_reap_child(struct session *se, int flags);

/* The helpers that unwind beside the recorder's thread. */
unsigned session_unwind_threads(const struct record_opts *o);

/* The meta rows of the start, once the sampler and the collector are made. */
void session_add_start_meta(struct session *se);

/* The meta rows of the end, which end_ns is. */
void session_add_end_meta(struct session *se, uint64_t end_ns);

/* Drains the rings and takes in spans until the command exits. */
void session_event_loop(struct session *se);

/* After the exit: the last records, the symbols, the END chunk. */
int session_finish(struct session *se);

#endif
