/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_DIFF_H
#define GTRACE_ANALYSIS_VIEWS_DIFF_H

/*
 * gtrace diff: two recordings compared row by row, each row a name that a
 * recording measures: a CPU function's samples, the durations of the
 * spans of one name (kernels, copies and memsets, CUDA calls, CPU waits,
 * NVTX ranges, other lane work), or the mean of a metric series. A change
 * counts when it is significant, after Holm's correction over every row
 * compared so that the whole diff keeps the false-alarm rate the
 * confidence asks for, and when it is larger than the threshold. Rows of
 * analyze's (diff-findings.c), one figure a recording, are not tested: a
 * finding only the new recording has, or a device's idle cause grown past
 * the threshold and DIFF_IDLE_FLOOR_NS, is a regression.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"

/* What a row measures; each kind has a name for --by and --fail-on. */
enum diff_kind {
	DIFF_CPU,		/* a function's self samples */
	DIFF_KERNEL,		/* GPU kernels, by name over every stream */
	DIFF_COPY,		/* copies and memsets, by direction */
	DIFF_API,		/* CUDA runtime and driver calls */
	DIFF_WAIT,		/* CPU waits on the GPU */
	DIFF_NVTX,		/* NVTX ranges */
	DIFF_LANE,		/* other lane work, by lane and span name */
	DIFF_THREAD,		/* threads' time on the CPU, by thread name; not tested */
	DIFF_METRIC,		/* a metric series' mean, by subject and name; not tested */
	DIFF_RULE,		/* analyze's findings: a rule's time at stake; not tested */
	DIFF_IDLE,		/* analyze's idle time of a device, by cause; not tested */
	DIFF_KINDS
};

/*
 * "cpu", "kernel", "copy", "api", "wait", "nvtx", "lane", "thread", "metric",
 * "rule", "idle".
 */
const char *diff_kind_name(enum diff_kind k);
/*
 * A comma-separated list of kind names, or of the sections "gpu" (kernel,
 * copy, api, wait), "lanes" (lane), "threads" (thread), "metrics"
 * (metric) and "findings" (rule, idle), into a bit set of kinds;
 * -EINVAL for an unknown name.
 */
int diff_parse_kinds(const char *list, unsigned *kinds);

enum diff_status {
	DIFF_SAME,		/* no significant change beyond the threshold */
	DIFF_REGRESSION,	/* significantly more time, beyond the threshold */
	DIFF_IMPROVEMENT,	/* significantly less time, beyond the threshold */
	DIFF_ADDED,		/* only in the new recording */
	DIFF_REMOVED,		/* only in the base recording */
};

/* "same", "regression", "improvement", "added", "removed". */
const char *diff_status_name(enum diff_status s);

/* One side of a row. */
struct diff_side {
	uint64_t count;		/* cpu: self samples; spans: instances; threads: threads */
	uint64_t children;	/* cpu: samples with the function on the stack */
	double share;		/* cpu: self samples in percent of all */
	double ms;		/* cpu: self samples times the period; spans: total;
				   threads: on-CPU time */
	double offcpu_ms;	/* threads */
	uint64_t bytes;		/* copies and memsets */
	double mean_ns, median_ns, p95_ns;	/* spans */
	double mean;		/* metrics: of the values, in the row's unit */
};

struct diff_row {
	enum diff_kind kind;
	char *name;		/* function, span name (demangled) */
	char *where;		/* cpu: the dso; nvtx and lane: the lane; metrics: the
				   subject ("machine", a process's name, "GPU0"); else "" */
	char *unit;		/* metrics: of the means; else NULL */
	uint32_t decimals;	/* metrics: of a count's means */
	struct diff_side base, new;
	/*
	 * The relative change of what is compared: cpu, the self share
	 * (normalize total) or the self time (none); spans, the median;
	 * threads, the on-CPU time (scaled to the new recording's length
	 * with normalize total); metrics, the mean.
	 */
	double change;
	bool from_zero;		/* the base's figure is 0 and the new one's not: change
				   is 0, as no relative change exists */
	double p;		/* the test's p-value; 1 when not tested */
	bool tested;
	bool significant;	/* after Holm's correction */
	enum diff_status status;
	double impact_ms;	/* |new - base| time, base scaled to new's length */
};

struct diff_opts {
	double confidence;	/* 0.99 */
	double threshold;	/* 0.05: a 5% change */
	bool normalize_total;	/* compare shares (true) or absolute time */
	unsigned kinds;		/* bit per enum diff_kind shown */
	const struct sample_filter *filter;	/* CPU samples counted */
};

struct diff_recording {
	uint64_t samples;
	double ms;		/* the recording's length */
	const char *command;
};

struct diff {
	VEC(struct diff_row) rows;	/* by impact, descending */
	struct diff_recording base, new;
	size_t tested;			/* rows compared by a test */
	size_t by_status[DIFF_REMOVED + 1];
};

/* The rows of the kinds o->kinds selects. */
void diff_build(struct diff *d, struct funcs *base, struct funcs *new,
		const struct diff_opts *o);
void diff_free(struct diff *d);

/* An idle cause grows into a regression by this much at least, besides the threshold. */
#define DIFF_IDLE_FLOOR_NS 1000000

/* Regressions among the kinds in the bit set. */
size_t diff_regressions(const struct diff *d, unsigned kinds);

enum diff_format {
	DIFF_TEXT,
	DIFF_JSON,
	DIFF_MARKDOWN,
};

/* limit rows (0 all) in text and Markdown; JSON has them all. */
void diff_print(FILE *out, const struct diff *d, const struct diff_opts *o,
		enum diff_format format, const char *base_path, const char *new_path,
		size_t limit);

/* Statistics the rows use, for the tests. */
/* The two-sided p-value of a standard normal z. */
double diff_normal_p(double z);
/* The z whose two-sided p-value is p (0 < p < 1). */
double diff_normal_z(double p);
/* Mann-Whitney U over two sorted samples: the two-sided p-value (normal approximation, ties corrected). */
double diff_rank_test(const uint64_t *a, size_t na, const uint64_t *b, size_t nb);
/* Two proportions k1/n1 and k2/n2: the two-sided p-value of the pooled z test. */
double diff_proportion_test(uint64_t k1, uint64_t n1, uint64_t k2, uint64_t n2);
/* Two counts over equal exposure: the two-sided p-value of the conditional test. */
double diff_count_test(uint64_t k1, uint64_t k2);

#endif
