/* SPDX-License-Identifier: MIT */
/* What both unwinder builds share: outcome names and frame pointers. */
#include <linux/perf_event.h>
#include <string.h>

#include "unwind/unwind-internal.h"

const char *unwind_outcome_name(enum unwind_outcome o)
{
	static const char *const names[UNWIND_OUTCOMES] = {
		[UNWIND_COMPLETE] = "complete",
		[UNWIND_COMPLETE_FP_TAIL] = "complete.fp-tail",
		[UNWIND_TRUNCATED_STACK] = "truncated.stack",
		[UNWIND_TRUNCATED_DEPTH] = "truncated.depth",
		[UNWIND_FAILED_NO_MAP] = "failed.no-map",
		[UNWIND_FAILED_NO_INFO] = "failed.no-info",
		[UNWIND_FAILED_BAD_FRAME] = "failed.bad-frame",
	};

	return (unsigned)o < UNWIND_OUTCOMES ? names[o] : "unknown";
}

bool fp_frame_of_sample(const struct unwind_sample *s, struct fp_frame *f)
{
	if ((s->regs.mask & UNWIND_FP_REGS_MASK) != UNWIND_FP_REGS_MASK)
		return false;
	f->ip = s->regs.r[PERF_REG_X86_IP];
	f->sp = s->regs.r[PERF_REG_X86_SP];
	f->bp = s->regs.r[PERF_REG_X86_BP];
	return true;
}

bool fp_step(const struct addrspaces *as, const struct unwind_sample *s,
	     struct fp_frame *f, enum unwind_outcome *why)
{
	uint64_t saved_bp, ret;

	if (!f->bp) {
		*why = UNWIND_COMPLETE;	/* the ABI's mark of the outermost frame */
		return false;
	}
	/* A caller's frame record lies above the callee's stack pointer. */
	if (f->bp < f->sp || (f->bp & 7)) {
		*why = UNWIND_FAILED_BAD_FRAME;
		return false;
	}
	if (!stack_read(s, f->bp, &saved_bp) || !stack_read(s, f->bp + 8, &ret)) {
		*why = UNWIND_TRUNCATED_STACK;
		return false;
	}
	if (!ret) {
		*why = UNWIND_COMPLETE;
		return false;
	}
	if (!addrspace_find(as, s->pid, ret)) {
		*why = UNWIND_FAILED_NO_MAP;
		return false;
	}
	f->ip = ret;
	f->sp = f->bp + 16;
	f->bp = saved_bp;
	return true;
}

static enum unwind_outcome walk_frame_pointers(const struct addrspaces *as,
					       const struct unwind_sample *s,
					       uint64_t *ips, size_t *n)
{
	enum unwind_outcome why;
	struct fp_frame f;

	if (!fp_frame_of_sample(s, &f))
		return UNWIND_FAILED_BAD_FRAME;
	ips[(*n)++] = f.ip;
	while (*n < UNWIND_MAX_FRAMES) {
		if (!fp_step(as, s, &f, &why))
			return why;
		ips[(*n)++] = f.ip - 1;
	}
	return UNWIND_TRUNCATED_DEPTH;
}

size_t callchain_context(const uint64_t *chain, uint64_t n, uint64_t marker,
			 const uint64_t **part)
{
	uint64_t i = 0, k = 0;

	*part = NULL;
	while (chain && i < n && chain[i] != marker)
		i++;
	if (!chain || i == n)
		return 0;
	*part = chain + i + 1;
	while (i + 1 + k < n && chain[i + 1 + k] < PERF_CONTEXT_MAX)
		k++;
	return (size_t)k;
}

/* A chain entry as the unwinders store frames: a caller's inside its call. */
static uint64_t chain_frame(const uint64_t *user, size_t i)
{
	return i ? user[i] - 1 : user[i];
}

/* Entries the kernel keeps at most (perf_event_max_stack's default). */
#define KERNEL_CHAIN_MAX 127

/*
 * The DWARF frames ran off the stack copy: the kernel's frame-pointer
 * chain, which no copy bounds, goes on. Walking the same frame records
 * inside the copy ties chain entries to DWARF frames by their stack
 * pointers, so a frame the chain skips (one that keeps no frame pointer)
 * or a recursion, whose return addresses repeat, cannot shift the join.
 * The outermost such tie wins: DWARF frames past it give way to the chain.
 */
enum unwind_outcome unwind_fp_tail(const struct addrspaces *as, const struct unwind_sample *s,
				   const uint64_t *sps, uint64_t *ips, size_t *n)
{
	const uint64_t *user;
	size_t len = callchain_context(s->callchain, s->callchain_len, PERF_CONTEXT_USER, &user);
	size_t chain_at = 0, dwarf_at = 0, i = 1, j = 0;
	enum unwind_outcome why;
	struct fp_frame f;

	if (!len || !fp_frame_of_sample(s, &f) || user[0] != f.ip)
		return UNWIND_TRUNCATED_STACK;
	while (fp_step(as, s, &f, &why) && ++j < len && user[j] == f.ip) {
		/* Frames lie at rising stack pointers: look on from the last tie. */
		while (i < *n && sps[i] < f.sp)
			i++;
		if (i < *n && sps[i] == f.sp && ips[i] == f.ip - 1) {
			dwarf_at = i;
			chain_at = j;
		}
	}
	if (!chain_at)
		return UNWIND_TRUNCATED_STACK;
	*n = dwarf_at + 1;
	for (j = chain_at + 1; j < len; j++) {
		if (*n == UNWIND_MAX_FRAMES)
			return UNWIND_TRUNCATED_DEPTH;
		if (!addrspace_find(as, s->pid, user[j]))
			return UNWIND_TRUNCATED_STACK;
		ips[(*n)++] = chain_frame(user, j);
	}
	return len < KERNEL_CHAIN_MAX ? UNWIND_COMPLETE_FP_TAIL : UNWIND_TRUNCATED_DEPTH;
}

/*
 * The kernel's chain: context markers, then for user space the sampled ip
 * followed by raw return addresses. Kernel frames are not ours to keep.
 * The kernel does not say why its walk stopped; a chain of the sampled ip
 * alone means it could not follow the very first frame pointer.
 */
static enum unwind_outcome copy_callchain(const struct addrspaces *as,
					  const struct unwind_sample *s,
					  uint64_t *ips, size_t *n)
{
	const uint64_t *user;
	size_t len = callchain_context(s->callchain, s->callchain_len, PERF_CONTEXT_USER, &user);

	for (size_t i = 0; i < len; i++) {
		if (*n == UNWIND_MAX_FRAMES)
			return UNWIND_TRUNCATED_DEPTH;
		if (*n && !addrspace_find(as, s->pid, user[i]))
			return user[i] ? UNWIND_FAILED_NO_MAP : UNWIND_COMPLETE;
		ips[(*n)++] = chain_frame(user, i);
	}
	return *n > 1 ? UNWIND_COMPLETE : UNWIND_FAILED_BAD_FRAME;
}

enum unwind_outcome unwind_frame_pointers(const struct addrspaces *as,
					  const struct unwind_sample *s,
					  uint64_t *ips, size_t *n)
{
	*n = 0;
	if (s->callchain)
		return copy_callchain(as, s, ips, n);
	return walk_frame_pointers(as, s, ips, n);
}
