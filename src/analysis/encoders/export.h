/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_ENCODERS_EXPORT_H
#define GTRACE_ANALYSIS_ENCODERS_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"

/*
 * export: the recording as a timeline that Perfetto and Chrome's trace
 * viewer open: processes, threads with their samples and off-CPU time,
 * lanes with their spans, flows from the origins that linked, counters;
 * or as the profile that pprof and the continuous profilers read. Times are shown from the export's zero: the recording's start, or its
 * first event if earlier.
 */
enum export_format {
	EXPORT_PERFETTO,	/* Perfetto's protobuf trace */
	EXPORT_CHROME,		/* the Chrome Trace Event Format, JSON */
	EXPORT_PPROF,		/* pprof's profile: stacks by CPU, GPU and off-CPU time */
};

struct export_opts {
	enum export_format format;
	const struct sample_filter *filter;
	const struct origin_links *links;
	uint64_t start_ns, end_ns;	/* the window, ns after model_time_zero; UINT64_MAX: no end */
};

/*
 * Writes the export to out as it walks the model (a profile once counted):
 * no more memory than the model's size. 0, or -EIO when out failed.
 */
int export_write(FILE *out, struct funcs *f, const struct export_opts *o);

#endif
