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
 * or as the profile that pprof and the continuous profilers read; or as
 * an SQLite database of typed tables. Times are shown from the export's
 * zero: the recording's start, or its first event if earlier.
 */
enum export_format {
	EXPORT_PERFETTO,	/* Perfetto's protobuf trace */
	EXPORT_CHROME,		/* the Chrome Trace Event Format, JSON */
	EXPORT_PPROF,		/* pprof's profile: stacks by CPU, GPU and off-CPU time */
	EXPORT_SQLITE,		/* an SQLite database: every table of the recording, typed */
};

struct analyze;

struct export_opts {
	enum export_format format;
	const struct sample_filter *filter;
	const struct origin_links *links;
	/* Perfetto and Chrome: analyze's findings, as instants on the recording's track; NULL none. */
	const struct analyze *findings;
	uint64_t start_ns, end_ns;	/* the window, ns after model_time_zero; UINT64_MAX: no end */
};

/*
 * Writes the export to out as it walks the model (a profile once counted):
 * no more memory than the model's size. 0, or -EIO when out failed.
 */
int export_write(FILE *out, struct funcs *f, const struct export_opts *o);

/* Whether this gtrace was built with libsqlite3, which export_sqlite needs. */
bool export_sqlite_available(void);
/*
 * Writes the export as an SQLite database into path, an empty file (one
 * transaction, no journal: the caller renames it into place once whole).
 * funcs made with FUNCS_INLINE: every frame of a location is a row. 0,
 * -ENOTSUP without libsqlite3, or a negative errno.
 */
int export_sqlite(const char *path, struct funcs *f, const struct export_opts *o);

#endif
