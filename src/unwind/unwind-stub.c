/* SPDX-License-Identifier: MIT */
/*
 * The library of unwinder.h when gtrace is built without libunwind: none.
 * A frame the rows cannot express (a signal frame, a CFA expression) ends
 * the walk as a bad frame.
 */
#include "unwind/unwinder.h"

int library_new(struct unwind_library **l)
{
	*l = NULL;
	return 0;
}

void library_free(struct unwind_library *l)
{
}

void library_forget_pid(struct unwind_library *l, uint32_t pid)
{
}

bool library_step(struct unwinder *u, const struct unwind_sample *s, bool first,
		  struct frame *f, enum unwind_outcome *why)
{
	*why = UNWIND_FAILED_BAD_FRAME;
	return false;
}

bool library_walk(struct unwinder *u, const struct unwind_sample *s, uint64_t *ips,
		  size_t *n, enum unwind_outcome *outcome)
{
	return false;
}
