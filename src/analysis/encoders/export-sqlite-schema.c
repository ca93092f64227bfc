/* SPDX-License-Identifier: MIT */
/*
 * The tables of export --format sqlite (man/gtrace-export.1 documents
 * each column). Times are ns after the export's zero (table export),
 * durations ns; ids are the recording's where it has them. The tables of
 * spans of one kind carry their attributes as typed columns, made from
 * span_tables, so that each table's columns and its INSERT agree.
 */
#include "analysis/encoders/export-sqlite.h"

#include <stdio.h>
#include <string.h>

#include "contract/attrs.h"

static const char fixed_tables[] =
	"CREATE TABLE export (key TEXT PRIMARY KEY, value);\n"
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);\n"
	"CREATE TABLE ranks (rank INTEGER, path TEXT, local_rank INTEGER, world_size INTEGER,"
	" shift_ns INTEGER);\n"
	"CREATE TABLE processes (pid INTEGER PRIMARY KEY, name TEXT, rank INTEGER);\n"
	"CREATE TABLE threads (tid INTEGER PRIMARY KEY, pid INTEGER, name TEXT,"
	" samples INTEGER, first_ts INTEGER, last_ts INTEGER, offcpu_ns INTEGER);\n"
	"CREATE TABLE thread_names (tid INTEGER, ts INTEGER, name TEXT, samples INTEGER);\n"
	"CREATE TABLE frames (location INTEGER, depth INTEGER, function TEXT, dso TEXT,"
	" file TEXT, line INTEGER, inlined INTEGER, python INTEGER,"
	" PRIMARY KEY (location, depth)) WITHOUT ROWID;\n"
	"CREATE TABLE stacks (id INTEGER PRIMARY KEY, parent INTEGER, location INTEGER);\n"
	"CREATE TABLE samples (id INTEGER PRIMARY KEY, ts INTEGER, pid INTEGER, tid INTEGER,"
	" stack INTEGER, cpu INTEGER, truncated INTEGER);\n"
	"CREATE TABLE offcpu (tid INTEGER, start INTEGER, dur INTEGER, reason TEXT);\n"
	"CREATE TABLE lost (ts INTEGER, cpu INTEGER, tid INTEGER, count INTEGER);\n"
	"CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER);\n"
	"CREATE TABLE metrics (id INTEGER PRIMARY KEY, name TEXT, unit TEXT, pid INTEGER,"
	" gpu INTEGER, decimals INTEGER);\n"
	"CREATE TABLE metric_values (metric INTEGER, ts INTEGER, value REAL);\n"
	"CREATE TABLE lanes (id INTEGER PRIMARY KEY, pid INTEGER, kind TEXT,"
	" name TEXT, device INTEGER, tid INTEGER);\n"
	"CREATE TABLE spans (id INTEGER PRIMARY KEY, lane INTEGER, name TEXT, start INTEGER,"
	" dur INTEGER, origin_tid INTEGER, origin_ts INTEGER, origin TEXT,"
	" origin_sample INTEGER, origin_stack INTEGER, origin_distance_ns INTEGER);\n"
	"CREATE TABLE span_attrs (span INTEGER, key TEXT, value INTEGER, value_name TEXT);\n"
	"CREATE TABLE stream_queues (lane INTEGER, ts INTEGER, length INTEGER);\n"
	"CREATE TABLE pc_samples (pid INTEGER, correlation INTEGER, cubin_crc INTEGER,"
	" function TEXT, pc INTEGER, stall TEXT, count INTEGER);\n";

static const char indexes[] =
	"CREATE INDEX samples_by_tid ON samples (tid, ts);\n"
	"CREATE INDEX samples_by_stack ON samples (stack);\n"
	"CREATE INDEX stacks_by_parent ON stacks (parent);\n"
	"CREATE INDEX offcpu_by_tid ON offcpu (tid, start);\n"
	"CREATE INDEX spans_by_lane ON spans (lane, start);\n"
	"CREATE INDEX span_attrs_by_span ON span_attrs (span);\n"
	"CREATE INDEX metric_values_by_metric ON metric_values (metric, ts);\n";

/* What a CUDA stream's work says of where it ran. */
#define CUDA_WHERE_COLUMNS                                                     \
	{ "device", CUDA_ATTR_DEVICE, ATTR_INTEGER },                          \
	{ "context", CUDA_ATTR_CONTEXT, ATTR_INTEGER },                        \
	{ "stream", CUDA_ATTR_STREAM, ATTR_INTEGER },                          \
	{ "correlation", CUDA_ATTR_CORRELATION, ATTR_INTEGER },                \
	{ "graph_id", CUDA_ATTR_GRAPH_ID, ATTR_INTEGER },                      \
	{ "graph_node", CUDA_ATTR_GRAPH_NODE, ATTR_INTEGER }

static const struct attr_column kernel_columns[] = {
	CUDA_WHERE_COLUMNS,
	{ "grid_x", CUDA_ATTR_GRID_X, ATTR_INTEGER },
	{ "grid_y", CUDA_ATTR_GRID_Y, ATTR_INTEGER },
	{ "grid_z", CUDA_ATTR_GRID_Z, ATTR_INTEGER },
	{ "block_x", CUDA_ATTR_BLOCK_X, ATTR_INTEGER },
	{ "block_y", CUDA_ATTR_BLOCK_Y, ATTR_INTEGER },
	{ "block_z", CUDA_ATTR_BLOCK_Z, ATTR_INTEGER },
	{ "registers", CUDA_ATTR_REGS, ATTR_INTEGER },
	{ "smem_static", CUDA_ATTR_SMEM_STATIC, ATTR_INTEGER },
	{ "smem_dynamic", CUDA_ATTR_SMEM_DYNAMIC, ATTR_INTEGER },
	{ "local_per_thread", CUDA_ATTR_LOCAL_PER_THREAD, ATTR_INTEGER },
	{ "local_total", CUDA_ATTR_LOCAL_TOTAL, ATTR_INTEGER },
	{ "occupancy", CUDA_ATTR_OCCUPANCY_PERMILLE, ATTR_FRACTION },
	{ "occupancy_limiter", CUDA_ATTR_OCCUPANCY_LIMITER, ATTR_NAME },
	{ "blocks_per_sm", CUDA_ATTR_OCCUPANCY_BLOCKS_PER_SM, ATTR_INTEGER },
};

static const struct attr_column copy_columns[] = {
	CUDA_WHERE_COLUMNS,
	{ "kind", CUDA_ATTR_COPY_KIND, ATTR_NAME },
	{ "bytes", CUDA_ATTR_BYTES, ATTR_INTEGER },
	{ "src_kind", CUDA_ATTR_COPY_SRC, ATTR_NAME },
	{ "dst_kind", CUDA_ATTR_COPY_DST, ATTR_NAME },
	{ "src_device", CUDA_ATTR_SRC_DEVICE, ATTR_INTEGER },
	{ "dst_device", CUDA_ATTR_DST_DEVICE, ATTR_INTEGER },
};

static const struct attr_column memset_columns[] = {
	CUDA_WHERE_COLUMNS,
	{ "bytes", CUDA_ATTR_BYTES, ATTR_INTEGER },
	{ "value", CUDA_ATTR_VALUE, ATTR_INTEGER },
};

static const struct attr_column api_columns[] = {
	{ "domain", CUDA_ATTR_API_DOMAIN, ATTR_NAME },
	{ "correlation", CUDA_ATTR_CORRELATION, ATTR_INTEGER },
};

static const struct attr_column wait_columns[] = {
	{ "correlation", CUDA_ATTR_CORRELATION, ATTR_INTEGER },
	{ "stream", CUDA_ATTR_STREAM, ATTR_INTEGER },
	{ "implicit", CUDA_ATTR_IMPLICIT, ATTR_INTEGER },
};

/* A range's NVTX domain is its lane's (contract/lanes.h's names), not an attribute. */
static const struct attr_column nvtx_columns[] = {
	{ "depth", NVTX_ATTR_DEPTH, ATTR_INTEGER },
	{ "kind", NVTX_ATTR_KIND, ATTR_NAME },
	{ "domain", NULL, ATTR_NVTX_DOMAIN },
};

#define COLUMNS(c) c, sizeof(c) / sizeof(c[0])

const struct span_table span_tables[SPAN_TABLES] = {
	[SPAN_TABLE_KERNELS] = { "kernels", false, false, COLUMNS(kernel_columns) },
	[SPAN_TABLE_COPIES] = { "copies", false, true, COLUMNS(copy_columns) },
	[SPAN_TABLE_MEMSETS] = { "memsets", false, true, COLUMNS(memset_columns) },
	[SPAN_TABLE_API_CALLS] = { "api_calls", true, false, COLUMNS(api_columns) },
	[SPAN_TABLE_WAITS] = { "waits", true, false, COLUMNS(wait_columns) },
	[SPAN_TABLE_NVTX] = { "nvtx_ranges", true, false, COLUMNS(nvtx_columns) },
};

static const char *const column_types[] = {
	[ATTR_INTEGER] = "INTEGER",
	[ATTR_NAME] = "TEXT",
	[ATTR_FRACTION] = "REAL",
	[ATTR_NVTX_DOMAIN] = "TEXT",
};

/* Statements of a span table: a few dozen columns, well within. */
#define SPAN_TABLE_SQL_MAX 2048

/* Appends to sql, of SPAN_TABLE_SQL_MAX bytes: snprintf's cut is never reached by span_tables. */
static void append(char *sql, const char *s)
{
	size_t len = strlen(sql);

	snprintf(sql + len, SPAN_TABLE_SQL_MAX - len, "%s", s);
}

/* "(span INTEGER PRIMARY KEY, tid INTEGER, col TYPE, ...)" of t, or its INSERT's "(span, ...)". */
static void span_table_columns(char *sql, const struct span_table *t, bool types)
{
	append(sql, types ? "(span INTEGER PRIMARY KEY" : "(span");
	if (t->thread)
		append(sql, types ? ", tid INTEGER" : ", tid");
	for (uint32_t c = 0; c < t->ncolumns; c++) {
		append(sql, ", ");
		append(sql, t->columns[c].column);
		if (types) {
			append(sql, " ");
			append(sql, column_types[t->columns[c].type]);
		}
	}
	if (t->gbps)
		append(sql, types ? ", gbps REAL" : ", gbps");
	append(sql, ")");
}

/* The number of values of a row of t. */
static uint32_t span_table_width(const struct span_table *t)
{
	return 1 + t->thread + t->ncolumns + t->gbps;
}

void sqlite_schema_create(struct sqldb *db)
{
	sqldb_exec(db, fixed_tables);
	for (size_t i = 0; i < SPAN_TABLES; i++) {
		char sql[SPAN_TABLE_SQL_MAX] = "CREATE TABLE ";

		append(sql, span_tables[i].name);
		append(sql, " ");
		span_table_columns(sql, &span_tables[i], true);
		sqldb_exec(db, sql);
	}
}

void sqlite_schema_index(struct sqldb *db)
{
	sqldb_exec(db, indexes);
}

struct sqlstmt *sqlite_span_table_insert(struct sqldb *db, const struct span_table *t)
{
	char sql[SPAN_TABLE_SQL_MAX] = "INSERT INTO ";

	append(sql, t->name);
	append(sql, " ");
	span_table_columns(sql, t, false);
	append(sql, " VALUES (?");
	for (uint32_t c = 1; c < span_table_width(t); c++)
		append(sql, ", ?");
	append(sql, ")");
	return sqldb_prepare(db, sql);
}
