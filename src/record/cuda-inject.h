/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_CUDA_INJECT_H
#define GTRACE_RECORD_CUDA_INJECT_H

/*
 * Puts the CUDA agent, libgtrace-cuda.so, into the recorded command: the
 * CUDA driver loads it at cuInit through CUDA_INJECTION64_PATH, ld.so
 * through LD_PRELOAD (the same file: one copy per process), and the NVTX
 * loader through NVTX_INJECTION64_PATH (the agent hands NVTX to the CUPTI
 * it uses, so that a process has one copy). gtrace itself never
 * loads CUDA or CUPTI. The agent is found through $GTRACE_CUDA_AGENT, next
 * to the gtrace binary, or in GTRACE_LIBDIR; CUPTI through $GTRACE_CUPTI
 * or where configure found it.
 */

#include <stdbool.h>

struct collector;
struct pc_opts;

enum cuda_inject_var {
	CUDA_INJECT_DRIVER,		/* CUDA_INJECTION64_PATH */
	CUDA_INJECT_PRELOAD,		/* LD_PRELOAD */
	CUDA_INJECT_NVTX,		/* NVTX_INJECTION64_PATH */
	CUDA_INJECT_CUPTI,		/* GTRACE_CUPTI: the CUPTI the agent loads */
	CUDA_INJECT_ASAN,		/* ASAN_OPTIONS */
	CUDA_INJECT_API,		/* GTRACE_CUDA_API: which calls the agent traces */
	CUDA_INJECT_PC,			/* GTRACE_CUDA_PC: PC sampling's settings */
	CUDA_INJECT_VARS
};

struct cuda_inject {
	char *agent;			/* absolute; NULL: not injected */
	char *cupti;
	char *off;			/* why not, when not */
	char *value[CUDA_INJECT_VARS];	/* what the command gets; NULL: unchanged */
	char *saved[CUDA_INJECT_VARS];	/* gtrace's own, put back after the fork */
	bool had[CUDA_INJECT_VARS];
};

/*
 * Decides whether to inject and what: wanted is false for --no-cuda,
 * attach true when recording a running process (too late to inject),
 * all_calls true for --cuda-api=all, pc the settings of
 * --gpu-pc-sampling (NULL without it).
 */
void cuda_inject_plan(struct cuda_inject *ci, bool wanted, bool attach, bool all_calls,
		      const struct pc_opts *pc);

/* Sets the command's variables in this process for the fork, and puts them back. */
void cuda_inject_setenv(struct cuda_inject *ci);
void cuda_inject_restore(struct cuda_inject *ci);

/* The cuda.injection and cuda.driver meta rows. */
void cuda_inject_meta(const struct cuda_inject *ci, struct collector *c);

void cuda_inject_free(struct cuda_inject *ci);

#endif
