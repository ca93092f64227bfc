/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_ENCODERS_EXPORT_SQLITE_H
#define GTRACE_ANALYSIS_ENCODERS_EXPORT_SQLITE_H

/*
 * What the files of export --format sqlite share: export-sqlite.c writes
 * the recording's, the threads' and the samples' tables,
 * export-sqlite-spans.c the lanes' and spans', export-sqlite-schema.c
 * makes the tables. man/gtrace-export.1 documents each.
 */

#include <stdbool.h>
#include <stdint.h>

#include "analysis/encoders/export.h"
#include "analysis/encoders/sqldb.h"

struct sqlite_export {
	struct sqldb *db;
	struct funcs *f;
	const struct model *m;
	const struct export_opts *o;
	uint64_t zero;			/* CLOCK_MONOTONIC ns of time 0 */
	uint64_t from, to;		/* the window in CLOCK_MONOTONIC ns, to excluded */
	bool *thread_selected;		/* by real thread index */
	bool *node_used;		/* by stack node id: an exported row's stack has it */
};

/* An attribute of a span as a column of its kind's table. */
enum attr_column_type {
	ATTR_INTEGER,		/* the value */
	ATTR_NAME,		/* an enum's value by its name (attr_value_names), else its number */
	ATTR_FRACTION,		/* a value in thousandths, as a REAL 0..1 */
	ATTR_NVTX_DOMAIN,	/* no attribute: the NVTX domain its lane is named by, NULL the default */
};

struct attr_column {
	const char *column;
	const char *key;	/* the attribute's key (contract/attrs.h); NULL for none */
	enum attr_column_type type;
};

/* The spans of one kind, a row each: span (its id in spans), then columns. */
struct span_table {
	const char *name;
	bool thread;		/* a tid column: the thread that made the call (its origin's) */
	bool gbps;		/* a gbps column: bytes per ns of the span */
	const struct attr_column *columns;
	uint32_t ncolumns;
};

enum span_table_id {
	SPAN_TABLE_KERNELS,
	SPAN_TABLE_COPIES,
	SPAN_TABLE_MEMSETS,
	SPAN_TABLE_API_CALLS,
	SPAN_TABLE_WAITS,
	SPAN_TABLE_NVTX,
	SPAN_TABLES
};

extern const struct span_table span_tables[SPAN_TABLES];

/* Creates every table, empty. */
void sqlite_schema_create(struct sqldb *db);
/* Indexes them, once filled: faster to build after than to keep up during. */
void sqlite_schema_index(struct sqldb *db);
/* The INSERT of span table t's rows, with a parameter a column in order. */
struct sqlstmt *sqlite_span_table_insert(struct sqldb *db, const struct span_table *t);

/* ns after time 0 of a CLOCK_MONOTONIC time. */
static inline int64_t sqlite_time(const struct sqlite_export *x, uint64_t ts)
{
	return ts >= x->zero ? (int64_t)(ts - x->zero > INT64_MAX ? INT64_MAX : ts - x->zero)
			     : -(int64_t)(x->zero - ts > INT64_MAX ? INT64_MAX : x->zero - ts);
}

/* Marks stack node node and its callers for table stacks. */
void sqlite_use_stack(struct sqlite_export *x, uint32_t node);

/* lanes, spans, span_attrs and the span tables; pc_samples. */
void sqlite_write_spans(struct sqlite_export *x);
void sqlite_write_pc_samples(struct sqlite_export *x);

#endif
