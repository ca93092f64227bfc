/* SPDX-License-Identifier: MIT */
/*
 * What analyze.c shares with analyze-findings.c (the findings),
 * analyze-critpath.c (the critical path) and analyze-print.c: the indexes
 * of the recording they read, and their entry points.
 */
#ifndef GTRACE_ANALYSIS_VIEWS_ANALYZE_PRIVATE_H
#define GTRACE_ANALYSIS_VIEWS_ANALYZE_PRIVATE_H

#include "analysis/views/analyze.h"
#include "util/json.h"

/* A synchronizing call of a process, or a sample of a thread: sorted by owner, then time. */
struct timed {
	uint32_t owner;		/* pid of a call, tid of a sample */
	uint32_t node;		/* a sample's leaf node; a call's origin's, 0 unlinked */
	uint32_t sample;	/* a sample's index */
	uint64_t start, end;
};

/* The first of n sorted rows of owner at or after ts. */
size_t timed_first(const struct timed *v, size_t n, uint32_t owner, uint64_t ts);
/* The rows of owner that start in [from, to): v[*first] up to the one returned. */
size_t timed_within(const struct timed *v, size_t n, uint32_t owner, uint64_t from, uint64_t to,
		    size_t *first);

/* Part k of ns split n ways, the remainder to part 0: the parts add up to ns. */
static inline uint64_t split_part(uint64_t ns, size_t n, size_t k)
{
	return ns / n + (k ? 0 : ns % n);
}

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

/* The call that queued a span: its thread and time; tid 0 when unknown. */
struct launch {
	uint32_t tid;
	uint64_t start, end;
};

struct launch launch_of(const struct model *m, const struct api_launches *calls, uint32_t span);

/*
 * Each device's critical path (analyze-critpath.c), once its last work is
 * known: lane_device maps a lane id to its device's index + 1 (0 none),
 * samples are those with a stack, sorted by thread then time.
 */
void critpath_build(struct analyze *a, const struct model *m, const struct api_launches *calls,
		    const uint32_t *lane_device, const struct timed *samples, size_t nsamples);
void critpath_free(struct analyze_critpath *cp);
void critpath_print(FILE *out, const struct analyze_critpath *cp, struct funcs *f);
void critpath_json(struct json *j, const struct analyze_critpath *cp, struct funcs *f);

#endif
