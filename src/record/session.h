/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_SESSION_H
#define GTRACE_RECORD_SESSION_H

/*
 * One recording from start to end: creates the file, starts the command
 * held at a ready pipe until its events are open (or attaches to a running
 * process), drains the rings and takes in spans until it exits, then
 * symbolizes and closes the file.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/collect.h"
#include "record/sampler.h"
#include "contract/pcopts.h"

struct record_opts {
	char **argv;			/* the command, NULL-terminated */
	pid_t attach;			/* or else a running process (argv NULL) */
	const char *output;		/* an existing file is renamed to output.old */
	enum sampler_event event;
	bool user_only;			/* -e EVENT:u */
	bool no_switch_stacks;		/* --no-switch-stacks */
	uint32_t freq;
	enum unwind_method method;
	uint32_t stack_size;
	uint64_t ring_bytes;		/* per CPU; 0: sized to the rate */
	int unwind_threads;		/* helpers unwinding beside the recorder; -1: by CPUs */
	uint64_t duration_ns;		/* 0: until the command exits (attach: ^C) */
	uint64_t metrics_interval_ns;	/* system and GPU metrics; 0: none */
	bool no_cuda;			/* do not inject the CUDA agent */
	bool cuda_api_all;		/* --cuda-api=all: trace the hot queries too */
	bool gpu_pc;			/* --gpu-pc-sampling */
	struct pc_opts pc;		/* its settings, and --gpu-cubin-max */
};

/* Where a recording failed, for the command to word its message. */
enum record_stage {
	RECORD_STAGE_OUTPUT,	/* creating the output file */
	RECORD_STAGE_START,	/* pipes, fork, threads, the unwinder */
	RECORD_STAGE_ATTACH,	/* the process to attach to: -ESRCH none, -EPERM not ours */
	RECORD_STAGE_EVENTS,	/* perf_event_open or mapping the rings */
	RECORD_STAGE_EXEC,	/* the command could not be run; err is execvp's */
	RECORD_STAGE_WRITE,	/* writing chunks */
};

struct record_result {
	enum record_stage stage;	/* valid when record_run fails */
	int exit_status;		/* the command's: its code, or 128 + signal; 0 attached */
	bool stopped;			/* ended by the duration, not by itself */
	const char *event;		/* what was sampled */
	bool event_fell_back;		/* cycles was not available */
	size_t ring_bytes;
	size_t rate_ring_bytes;		/* what holds RING_MS of samples at the rate, at most
					   the largest default: a smaller ring may lose them */
	uint64_t file_bytes;		/* 0: no file was kept (RECORD_STAGE_WRITE) */
	int spans_err;			/* the span socket could not be made: no spans */
	const char *sampling_stopped;	/* why the kernel stops sampling the command, or NULL */
	struct collect_stats stats;
};

/*
 * Returns 0 once the command has run and the file is complete (or a
 * RECORD_STAGE_WRITE error after it ran), or a negative errno with
 * res->stage. No file is left behind when the command did not start or no
 * chunk could be written, and a previous output is back in its place.
 * Every signal that would end gtrace (but those of a fault) ends the
 * recording as SIGTERM does: passed on to the command, or, attached, the
 * end. SIGXFSZ must be ignored: a file past ulimit -f fails as a full disk.
 */
int record_run(const struct record_opts *o, struct record_result *res);

#endif
