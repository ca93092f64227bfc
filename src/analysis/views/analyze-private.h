/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_ANALYZE_PRIVATE_H
#define GTRACE_ANALYSIS_VIEWS_ANALYZE_PRIVATE_H

/* What analyze.c shares with analyze-findings.c alone. */

#include "analysis/views/analyze.h"

/* A synchronizing call of a process, or a sample of a thread: sorted by owner, then time. */
struct timed {
	uint32_t owner;		/* pid of a call, tid of a sample */
	uint32_t node;		/* a sample's leaf node; a call's origin's, 0 unlinked */
	uint32_t sample;	/* a sample's index */
	uint64_t start, end;
};

/* The first of n sorted rows of owner at or after ts. */
size_t timed_first(const struct timed *v, size_t n, uint32_t owner, uint64_t ts);

/* What analyze_build found on its way that the findings read again. */
struct analyze_inputs {
	const struct api_launches *calls;	/* the launch calls of the model's spans */
	const uint32_t *lane_device;	/* by lane: its selected device + 1, 0 none */
	const struct timed *samples;	/* the samples with a stack, by tid, then time */
	size_t nsamples;
};

/*
 * The findings of a built analyze: the rules of analyze-findings.c over
 * m's copies, kernels, synchronizing and allocating calls, the devices'
 * idle and the ranks' collectives.
 */
void analyze_findings(struct analyze *a, const struct model *m, const struct analyze_opts *o,
		      const struct analyze_inputs *in);
void analyze_findings_free(struct analyze *a);

#endif
