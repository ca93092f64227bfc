/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_GPUPC_H
#define GTRACE_ANALYSIS_VIEWS_GPUPC_H

/* report --gpu-pc: per kernel, its source lines (or SASS offsets) by samples. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"
#include "util/vec.h"

/*
 * "900 of 1000 samples (90.00%) at a source line; 100 whose cubin was not
 * kept", in buf.
 */
const char *pc_lines_describe(char *buf, size_t size, const uint64_t samples[PC_LINE_OUTCOMES]);
/* What a stall reason (a short name, less "_not_issued") means; NULL when not known. */
const char *pc_stall_explain(const char *short_name);

struct pc_stall_count {
	uint32_t stall;		/* names id of the short name, less "_not_issued" */
	uint64_t samples;
	uint64_t not_issued;	/* of those, on a cycle when no instruction was issued */
};

struct pc_row {
	uint32_t kernel;	/* index in pc_view.kernels */
	uint32_t site;		/* a site of the row: its place; with sass its pc */
	uint64_t samples;
	size_t stall_first, stalls;	/* stalls.v[stall_first ..], by samples */
};

struct pc_kernel_row {
	uint32_t kernel;
	uint64_t samples;
	size_t row_first, rows;	/* rows.v[row_first ..], by samples */
};

struct pc_report {
	VEC(struct pc_kernel_row) kernels;	/* by samples, descending */
	VEC(struct pc_row) rows;
	VEC(struct pc_stall_count) stalls;
	uint64_t samples;
	bool sass;		/* rows are SASS offsets, not source lines */
};

void pc_report_build(struct pc_report *r, const struct pc_view *v, const struct funcs *f,
		     bool sass);
/*
 * The header names path; limit kernels and rows per kernel, 0 all. Under
 * the table, what each stall reason shown means.
 */
void pc_report_print(FILE *out, const struct pc_report *r, const struct pc_view *v,
		     const struct funcs *f, const char *path, size_t limit);
/* The same rows, every stall reason of each, as one JSON document. */
void pc_report_print_json(FILE *out, const struct pc_report *r, const struct pc_view *v,
			  const struct funcs *f, const char *path, size_t limit);
void pc_report_free(struct pc_report *r);

#endif
