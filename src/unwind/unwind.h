/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UNWIND_UNWIND_H
#define GTRACE_UNWIND_UNWIND_H

/*
 * One interface for turning a sample's registers and copied user stack into a
 * call chain. The DWARF implementation (unwind-dwarf.c) steps most frames by
 * the call frame information of .eh_frame itself and hands the others to
 * libunwind's remote API; built without libunwind, those end the walk.
 * Frame pointers are the fallback for a frame without a table and the whole
 * method for --call-graph fp.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/addrspace.h"

#define UNWIND_MAX_FRAMES 256

enum unwind_method {
	UNWIND_DWARF,
	UNWIND_FP,
};

/* Why an unwind ended: each is a diagnose counter "unwind.<name>". */
enum unwind_outcome {
	UNWIND_COMPLETE,	/* reached the outermost frame (_start, clone) */
	UNWIND_COMPLETE_FP_TAIL,/* the same, past the stack copy by the kernel's frame pointers */
	UNWIND_TRUNCATED_STACK,	/* ran off the copied stack */
	UNWIND_TRUNCATED_DEPTH,	/* hit UNWIND_MAX_FRAMES */
	UNWIND_FAILED_NO_MAP,	/* an address outside any known mapping */
	UNWIND_FAILED_NO_INFO,	/* no unwind table for a frame and no frame pointer */
	UNWIND_FAILED_BAD_FRAME,/* the table or frame chain led somewhere invalid */
	UNWIND_OUTCOMES
};

const char *unwind_outcome_name(enum unwind_outcome o);

/*
 * The part of a perf callchain of n entries after its context marker
 * (PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER) up to the next marker,
 * innermost (the sampled ip) first: how many entries, with *part pointing
 * into chain; 0 and NULL without that marker.
 */
size_t callchain_context(const uint64_t *chain, uint64_t n, uint64_t marker,
			 const uint64_t **part);

static inline bool unwind_complete(enum unwind_outcome o)
{
	return o == UNWIND_COMPLETE || o == UNWIND_COMPLETE_FP_TAIL;
}

static inline bool unwind_failed(enum unwind_outcome o)
{
	return o == UNWIND_FAILED_NO_MAP || o == UNWIND_FAILED_NO_INFO ||
	       o == UNWIND_FAILED_BAD_FRAME;
}

/* x86-64 user registers, in the order of PERF_REG_X86_* */
struct unwind_regs {
	uint64_t r[24];
	uint64_t mask;		/* which of r[] are valid (sample_regs_user) */
};

/* The sample_regs_user mask the unwinder needs. */
uint64_t unwind_regs_mask(enum unwind_method method);

struct unwind_sample {
	uint32_t pid, tid;
	struct unwind_regs regs;	/* at the sample */
	const uint8_t *stack;		/* copy of the stack from regs' SP up */
	size_t stack_len;		/* the bytes the kernel copied (dyn_size) */
	const uint64_t *callchain;	/* PERF_SAMPLE_CALLCHAIN, user part, or NULL */
	size_t callchain_len;
};

struct unwinder;

int unwinder_new(struct unwinder **u, enum unwind_method method,
		 const struct addrspaces *as);
void unwinder_free(struct unwinder *u);

/*
 * Unwinds one sample into ips[0] (the sampled ip) .. ips[*n - 1] (outermost);
 * ips must hold UNWIND_MAX_FRAMES. Caller frames are return addresses minus
 * one. Returns the outcome; *n frames are valid whatever it is. Frames after
 * the first always lie in a known mapping; the first is the sampled ip as
 * it is, and is missing (*n == 0) only when the sample has no user
 * registers or user callchain. Not thread-safe: one unwinder per thread.
 */
enum unwind_outcome unwind(struct unwinder *u, const struct unwind_sample *s,
			   uint64_t *ips, size_t *n);

/* The process exec'd or exited: drop what was cached for it. */
void unwinder_forget_pid(struct unwinder *u, uint32_t pid);

/*
 * The bytes from sp up of a stack copy of len bytes that unwinding a
 * sample of thread tid reads, as its complete unwinds have shown: a
 * thread's outermost frames stay where they are, and what lies above them
 * (the environment, the thread's descriptor) need not be kept. len while
 * nothing is known.
 */
size_t unwinder_stack_needed(const struct unwinder *u, uint32_t tid, uint64_t sp, size_t len);

/* The thread exited. */
void unwinder_forget_thread(struct unwinder *u, uint32_t tid);

/*
 * What u has learnt of where thread tid's stack ends (0: nothing), to be
 * handed to another unwinder of the same samples.
 */
uint64_t unwinder_stack_top(const struct unwinder *u, uint32_t tid);
void unwinder_set_stack_top(struct unwinder *u, uint32_t tid, uint64_t top);

#endif
