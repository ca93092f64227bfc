/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_PASSES_INTERNAL_H
#define GTRACE_ANALYSIS_PASSES_INTERNAL_H

/* Private to passes/: what one pass takes of another and no view needs. */

#include <stddef.h>
#include <stdint.h>

#include "analysis/passes/passes.h"

/* One span of lane work and the stack its origin linked to. */
struct lane_work {
	uint32_t group;		/* sample_group of the linked sample */
	uint32_t node;		/* the linked sample's leaf node */
	uint32_t span;		/* index in m->t.spans */
};

/*
 * The lane work queued from the samples of nonzero sample_group: the spans
 * whose origin linked to such a sample that passes the dso filter, in span
 * order; *n of them. NVTX ranges are not work: they are left out. Free the
 * array.
 */
struct lane_work *lane_work_select(const struct funcs *f, const struct sample_filter *flt,
				   const uint32_t *sample_group,
				   const struct origin_links *links, size_t *n);

#endif
