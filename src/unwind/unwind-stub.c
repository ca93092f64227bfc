/* SPDX-License-Identifier: MIT */
/* Built without libunwind: frame pointers serve both methods. */
#include <stdlib.h>

#include "unwind/unwind-internal.h"
#include "util/xalloc.h"

struct unwinder {
	const struct addrspaces *as;
};

uint64_t unwind_regs_mask(enum unwind_method method)
{
	return UNWIND_FP_REGS_MASK;
}

int unwinder_new(struct unwinder **u, enum unwind_method method,
		 const struct addrspaces *as)
{
	*u = xcalloc(1, sizeof(**u));
	(*u)->as = as;
	return 0;
}

void unwinder_free(struct unwinder *u)
{
	free(u);
}

enum unwind_outcome unwind(struct unwinder *u, const struct unwind_sample *s,
			   uint64_t *ips, size_t *n)
{
	return unwind_frame_pointers(u->as, s, ips, n);
}

void unwinder_forget_pid(struct unwinder *u, uint32_t pid)
{
}

size_t unwinder_stack_needed(const struct unwinder *u, uint32_t tid, uint64_t sp, size_t len)
{
	return len;
}

void unwinder_forget_thread(struct unwinder *u, uint32_t tid)
{
}

uint64_t unwinder_stack_top(const struct unwinder *u, uint32_t tid)
{
	return 0;
}

void unwinder_set_stack_top(struct unwinder *u, uint32_t tid, uint64_t top)
{
}

void unwinder_without_rows(struct unwinder *u)
{
}
