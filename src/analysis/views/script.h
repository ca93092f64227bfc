/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_SCRIPT_H
#define GTRACE_ANALYSIS_VIEWS_SCRIPT_H

/*
 * script: the CPU samples in the text layout of perf script's default
 * output, for the tools that read it (FlameGraph's stackcollapse-perf.pl,
 * the Firefox Profiler, speedscope). One block a sample, in recording
 * order: a header line
 *
 *   COMM PID/TID [CPU] SECONDS.MICROS: PERIOD EVENT:
 *
 * then one line a frame, innermost first, "\tADDR SYMBOL (DSO)", and an
 * empty line. Lane work, NVTX ranges and GPU PC samples are not samples
 * of a thread's stack: they are left out.
 */

#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"

struct script_opts {
	const struct sample_filter *filter;
	uint64_t start_ns, end_ns;	/* the window, ns after model_time_zero; UINT64_MAX: no end */
};

/*
 * Writes the samples in the window that the filter selects (threads by
 * the name they had when each was taken, the dso filter on the leaf) with
 * f's frames: inlined functions as lines of their own when f was made with
 * FUNCS_INLINE. 0, or -EIO when out failed.
 */
int script_write(FILE *out, struct funcs *f, const struct script_opts *o);

#endif
