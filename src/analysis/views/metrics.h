/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_METRICS_H
#define GTRACE_ANALYSIS_VIEWS_METRICS_H

/*
 * The metrics of a recording (gtrace-format(5), METRICS): series of one
 * quantity of the machine, a process or a GPU, read at ticks. A series'
 * values are stored times 10^decimals; the views show them in its unit.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"
#include "contract/metrics.h"

enum metric_subject {
	METRIC_MACHINE,
	METRIC_PROCESS,
	METRIC_GPU,
	METRIC_SUBJECTS
};

/* The reason bit that is none: the GPU was idle. */
#define METRIC_MASK_IDLE 0x1ull
/* The reason bits NVML names, from bit 0. */
#define METRIC_REASONS 9

/* One series over the whole recording. */
struct metric_stats {
	uint32_t id;		/* metric id: row index + 1 in m->t.metrics */
	uint32_t rank;		/* report --metrics: its model_metric_rank */
	size_t values;
	double min, mean, p95, max;	/* in the unit; 0 without values */
	bool mask;		/* its unit is METRIC_UNIT_MASK */
	uint64_t reasons;	/* masks: every bit seen */
	size_t flagged;		/* masks: values with a bit other than METRIC_MASK_IDLE */
};

enum metric_subject metric_subject(const struct tr_metric *s);
/* The name of process pid: its main thread's, else one of its threads'; NULL when none. */
const char *metric_process_name(const struct model *m, uint32_t pid);
/* "machine", "pid 1234 (app)" or "GPU0", in buf. */
const char *metric_subject_label(char *buf, size_t size, const struct model *m,
				 const struct tr_metric *s);
/* The unit of a series: "" for a count. */
const char *metric_unit(const struct model *m, const struct tr_metric *s);
/*
 * Whether a series of that unit holds averages over the interval since
 * the reading before (gtrace-format(5)): a rate ("/s") or a share of time
 * ("%"); else each value is what it was at its reading.
 */
bool metric_unit_is_average(const char *unit);

void metric_stats(struct metric_stats *st, const struct model *m, uint32_t id);
/* A mask series' share of values with a reason, in percent. */
double metric_flagged_percent(const struct metric_stats *st);
/*
 * A quantity in its unit as it reads best, in buf: "12.5%", "340 KiB",
 * "1.2 GiB", "3.4 MiB/s", "41.5 W"; a count with the series' decimals.
 */
const char *metric_format(char *buf, size_t size, const char *unit, uint32_t decimals,
			  double v);
/* The names of the reasons set in mask: "gpu idle, sw power cap"; "none". */
const char *metric_reason_names(char *buf, size_t size, uint64_t mask);

/*
 * What the metric tables take in the file: their encoding (as one chunk;
 * chunks start their deltas again, which costs a little more) and that
 * compressed as chunks are.
 */
struct metrics_storage {
	size_t values;
	size_t encoded;		/* bytes */
	size_t compressed;	/* bytes */
};

void metrics_storage(const struct model *m, struct metrics_storage *st);

/* The time the views draw the metrics over: the recording's, and every tick. */
void metrics_range(const struct model *m, uint64_t *from, uint64_t *to);

/* Characters of a sparkline at most, and bytes of its text with the NUL. */
/* The bar of U+2581..U+2588 (three bytes of UTF-8) for level, 0 lowest, 1 highest. */
const char *metric_bar(double level);

#define METRIC_SPARK_WIDTH 40
#define METRIC_SPARK_SIZE (METRIC_SPARK_WIDTH * 3 + 1)
/*
 * How many characters the sparklines of m have: one per two ticks, so
 * that each character holds a value, up to METRIC_SPARK_WIDTH.
 */
unsigned metric_spark_width(const struct model *m);
/*
 * The series over [from, to] in width characters (1 to
 * METRIC_SPARK_WIDTH) of U+2581..U+2588, in buf (METRIC_SPARK_SIZE): each
 * the mean of the values in its part of the time, from the series' min
 * (lowest bar) to its max (full bar); a mask's, the share of its values
 * with a reason; a space where there is none.
 */
const char *metric_sparkline(char *buf, const struct model *m, const struct metric_stats *st,
			     uint64_t from, uint64_t to, unsigned width);

/*
 * Whether a series passes the filters: a process's when its main thread
 * would (a stand-in with its pid and tid when the recording has none);
 * the machine's and the GPUs' unless --rank leaves out rank index rank,
 * the series' model_metric_rank.
 */
bool metric_selected(struct funcs *f, const struct sample_filter *flt, const struct tr_metric *s,
		     uint32_t rank);

/*
 * Why the recording has no metric values, in buf; NULL when it has some:
 * recorded without metrics, or ended before the first reading.
 */
const char *metrics_explain(const struct model *m, char *buf, size_t size);

/* report --metrics: every selected series, by subject. */
struct metrics_report {
	VEC(struct metric_stats) rows;	/* by rank index: the machine's, each process's by
					   pid, each GPU's */
	uint64_t from, to;		/* metrics_range */
	unsigned width;			/* of the sparklines */
};

void metrics_report_build(struct metrics_report *r, struct funcs *f,
			  const struct sample_filter *flt);
/* limit rows, 0 all. */
void metrics_report_print(FILE *out, const struct metrics_report *r, const struct model *m,
			  const char *path, size_t limit);
/* The same as one JSON document (gtrace-report(1) lists its keys). */
void metrics_report_print_json(FILE *out, const struct metrics_report *r,
			       const struct model *m, const char *path, size_t limit);
void metrics_report_free(struct metrics_report *r);

/* A process's figures for the threads view. */
struct metric_process {
	uint32_t pid;
	bool rss_known, cpu_known;
	double peak_rss_kib;	/* the largest proc.rss */
	double cpu_percent;	/* the means of proc.cpu.user and proc.cpu.system, summed */
};

/* The processes with series, busiest first; *n of them. Free it. */
struct metric_process *metrics_processes(const struct model *m, size_t *n);

#endif
