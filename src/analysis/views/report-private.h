/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_REPORT_PRIVATE_H
#define GTRACE_ANALYSIS_VIEWS_REPORT_PRIVATE_H

/*
 * Private to the report view (report.c, report-print.c, lanes.c): the text
 * of its nvtx, pyline and srcline keys, which report.c sorts by and report-print.c
 * prints, the rows' call graphs, and the lanes' part of its JSON document.
 */

#include <stddef.h>
#include <stdint.h>

#include "analysis/views/report.h"

#define NO_RANGE "[no range]"
#define NO_PYTHON "[no python]"
#define NO_LINE "[no line]"

static inline const char *range_name(const struct model *m, uint32_t nvtx)
{
	const char *name = nvtx ? model_str(m, nvtx) : NULL;

	return name ? name : NO_RANGE;
}

static inline const char *pyline_name(const struct funcs *f, uint32_t pyline)
{
	return pyline ? funcs_name(f, pyline) : NO_PYTHON;
}

/* A func's source line (struct func.line). */
static inline const char *srcline_name(const struct funcs *f, uint32_t line)
{
	return line ? funcs_name(f, line) : NO_LINE;
}

/*
 * The rows' call graphs (report-graph.c), from the stack counts they were
 * made of: row_of gives the row (made index) of a group's func, UINT32_MAX
 * none. With children a row's graph holds every stack through it; without,
 * those it is the leaf of. Frames are function names, as in flame.
 */
typedef uint32_t report_row_fn(void *ctx, uint32_t group, uint32_t func);
void report_graphs_build(struct report *r, struct funcs *f, const struct report_opts *o,
			 size_t made, const struct stack_counts *sc, report_row_fn *row_of,
			 void *ctx);

/*
 * The rows of the samples taken in [from, to) (to > from) alone, unpruned
 * and without graphs: a part of report --time-buckets.
 */
void report_build_window(struct report *r, struct funcs *f, const struct report_opts *o,
			 uint64_t from, uint64_t to);
/*
 * r->buckets (report-buckets.c): each row's count in each of
 * o->time_buckets equal parts of the recording, or of the window it was
 * cut to; by the identity of the row in each part's report.
 */
void report_buckets_fill(struct report *r, struct funcs *f, const struct report_opts *o);

/* The lanes' spans as the JSON member "lanes" (gtrace-report(1) lists its keys). */
struct json;
void lane_report_print_json(struct json *j, const struct lane_report *r,
			    const struct model *m, size_t limit);

#endif
