/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_REPORT_H
#define GTRACE_ANALYSIS_VIEWS_REPORT_H

/*
 * report by symbol: the samples, the lane work queued from them and the
 * lanes' spans by name, as text and as JSON.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"

/* report: one row per distinct value of the sort keys. */
enum report_key {
	KEY_COMM,
	KEY_DSO,
	KEY_SYMBOL,
	KEY_PID,
	KEY_TID,
	KEY_NVTX,		/* the innermost NVTX range open on the sample's thread */
	KEY_PYLINE,		/* "file.py:line" of the stack's innermost Python frame */
	KEY_RANK,		/* the rank of the sample's recording (model_rank.rank) */
	KEY_SRCLINE,		/* the frame's "file:line": needs funcs of FUNCS_SRCLINES */
	REPORT_KEYS
};

/* The call graph under each row of the samples' text report. */
enum report_graph {
	GRAPH_NONE,
	GRAPH_CALLER,		/* callers first: with children the row's callees under it,
				   without, the paths from the outermost frame to it */
	GRAPH_CALLEE,		/* the row first, its callers under it */
};

/* The graph's pruning without --percent-limit: perf's default. */
#define GRAPH_DEFAULT_PERCENT 0.5
/*
 * The frames the graphs may walk and the nodes they may make, all rows
 * together: each row's graph walks the stacks through it, which a file of
 * deep stacks with a function at each level makes quadratic in their
 * depth. Past either, the graphs are cut short.
 */
#define GRAPH_MAX_FRAMES ((uint64_t)1 << 24)
#define GRAPH_MAX_NODES ((uint64_t)1 << 20)
/* The depth of a graph, as perf report's default --max-stack: deeper frames fold. */
#define GRAPH_MAX_DEPTH 127

struct report_opts {
	enum report_key keys[REPORT_KEYS];
	size_t nkeys;
	bool children;		/* compute and sort by Children */
	size_t limit;		/* rows to print, 0 all */
	double percent_limit;	/* samples' rows and graph branches under it go; < 0 unset */
	enum report_graph graph;
	uint64_t graph_frames;	/* the graphs' bound on frames, 0 GRAPH_MAX_FRAMES */
	unsigned time_buckets;	/* each row's samples in that many parts of the run; 0 none */
	const struct sample_filter *filter;
};

/* The most parts --time-buckets cuts a recording into: characters of its column. */
#define REPORT_MAX_BUCKETS 40

/* Parses "comm,dso,symbol,nvtx,pyline,rank,srcline"; -EINVAL for an unknown or repeated key. */
int report_parse_keys(struct report_opts *o, const char *list);
bool report_has_key(const struct report_opts *o, enum report_key key);

struct report_row {
	uint32_t thread;	/* a thread of the row: its pid, tid */
	uint32_t comm;		/* string id of that thread's name when sampled, 0 none */
	uint32_t func;		/* a func of the row: its dso, symbol */
	uint32_t nvtx;		/* string id of its innermost NVTX range, 0 none */
	uint32_t pyline;	/* names id of its innermost Python frame's place, 0 none */
	uint64_t self;		/* samples whose innermost frame is the row's */
	uint64_t children;	/* samples with the row anywhere on the stack, once each */
	uint64_t target_self;	/* lane work: target ns, like self */
	uint64_t target_children; /* lane work: target ns, like children */
	bool span;		/* lane work: a span name's row, func its funcs_span */
	uint32_t from;		/* a span name's row: the func it was queued from */
	uint32_t made;		/* its index when made, before the sort */
};

struct report {
	VEC(struct report_row) rows;	/* sorted, first row printed first */
	uint64_t total;
	uint64_t target_ns;		/* lane work: all of it */
	bool queued_from;		/* span rows are told apart by from too */
	struct calltree *graphs;	/* by row printed: its call graph (opts.graph) */
	size_t ngraphs;
	uint64_t graphs_cut;		/* past a bound: the one on frames, else 0 */
	/* opts.time_buckets: row i's count (children or self) in part b at [i * nbuckets + b]. */
	uint64_t *buckets;
	unsigned nbuckets;
};


void report_build(struct report *r, struct funcs *f, const struct report_opts *o);
void report_print(FILE *out, const struct report *r, struct funcs *f,
		  const struct report_opts *o, const char *path);
/*
 * The lane work queued from the selected threads, as if each span were a
 * call from the stack its origin linked to: its span name (with its lane as
 * dso) is the leaf, the stack's functions its callers. Self and children
 * count spans, target_self and target_children sum their durations. With
 * the symbol key, a span name's rows are per function it was queued from
 * (funcs_queued_from of the linked stack), printed as a last column
 * "Queued from".
 * Sorted by target time, a span name after functions of equal children.
 */
void report_build_lane_work(struct report *r, struct funcs *f, const struct report_opts *o,
			    const struct origin_links *links);
void report_print_lane_work(FILE *out, const struct report *r, struct funcs *f,
			    const struct report_opts *o);
void report_free(struct report *r);

/* A lane's spans of one name. */
struct lane_row {
	uint32_t lane;		/* lane id */
	uint32_t name;		/* string id of the span name */
	uint64_t spans;
	uint64_t target_ns;	/* sum of their durations */
	uint64_t min_ns, max_ns;
};

/* report for lanes: their spans by name. */
struct lane_report {
	VEC(struct lane_row) rows;	/* by target time, descending */
	size_t lanes;			/* lanes selected */
	uint64_t spans, target_ns;	/* of the selected lanes */
};

void lane_report_build(struct lane_report *r, struct funcs *f, const struct sample_filter *flt);
/* The header names path unless it is NULL; limit rows, 0 all. */
void lane_report_print(FILE *out, const struct lane_report *r, const struct model *m,
		       const char *path, size_t limit);
void lane_report_free(struct lane_report *r);

/*
 * The samples' report, the lane work queued from them and the selected
 * lanes' spans as one JSON document (gtrace-report(1) lists its keys).
 */
void report_print_json(FILE *out, const struct report *samples, const struct report *lane_work,
		       const struct lane_report *lanes, struct funcs *f,
		       const struct report_opts *o, const char *path);

#endif
