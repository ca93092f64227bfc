/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_UNWIND_POOL_H
#define GTRACE_RECORD_UNWIND_POOL_H

/*
 * Threads that unwind samples beside the recorder's own: on a machine with
 * many busy CPUs, one thread cannot unwind every sample the kernel takes.
 * A run hands them a run of samples that all see the same address spaces
 * (no map changes among them) and returns when every one is unwound; the
 * calling thread takes its share with its own unwinder. Each thread has
 * an unwinder of its own; the address spaces are only read meanwhile.
 */

#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind.h"

/* One sample to unwind, and what came of it. */
struct unwind_job {
	struct unwind_sample s;
	enum unwind_outcome outcome;
	size_t n;
	uint64_t stack_top;	/* what the unwinder learnt of the thread's stack */
	uint64_t ips[UNWIND_MAX_FRAMES];
};

struct unwind_pool;

/*
 * threads helpers, each with an unwinder of method over as. Returns 0 or a
 * negative errno (the threads could not be started).
 */
int unwind_pool_new(struct unwind_pool **p, unsigned threads, enum unwind_method method,
		    const struct addrspaces *as);
void unwind_pool_free(struct unwind_pool *p);

/*
 * Unwinds jobs[0 .. n) on the helpers and with own, the caller's unwinder;
 * what each helper learns of a thread's stack size, own learns too.
 */
void unwind_pool_run(struct unwind_pool *p, struct unwinder *own, struct unwind_job *jobs,
		     size_t n);

/* The process exec'd or exited: every helper's unwinder forgets it. */
void unwind_pool_forget_pid(struct unwind_pool *p, uint32_t pid);

#endif
