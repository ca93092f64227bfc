/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_RANKS_PRIVATE_H
#define GTRACE_ANALYSIS_VIEWS_RANKS_PRIVATE_H

/*
 * Private to the ranks view: the collective kernels ranks.c matches and
 * align.c lines the ranks up by.
 */

#include <stddef.h>
#include <stdint.h>

#include "analysis/views/ranks.h"

/* A GPU collective: the nth kernel of one collective name on one rank. */
struct collective_kernel {
	uint32_t rank;		/* index in m->ranks */
	uint32_t name;		/* the first string id of its name; 0 for another kernel */
	uint32_t nth;		/* of its name on its rank, by start */
	uint64_t start, end;
};

/*
 * Every collective kernel of the recordings, in *out (free it), in the
 * order of the collectives: by name, then nth, each collective's kernels
 * by start. Returns how many.
 */
size_t collective_kernels(struct funcs *f, struct collective_kernel **out);
/* The end of the collective that starts at k[i]: the index past its kernels. */
size_t collective_end(const struct collective_kernel *k, size_t n, size_t i);

#endif
