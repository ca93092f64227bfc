/* SPDX-License-Identifier: MIT */
#include "format/tables.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format/file.h"
#include "format/golomb.h"
#include "format/on-cpu.h"
#include "util/hashmap.h"
#include "util/select.h"
#include "util/xalloc.h"

/*
 * A TABLES payload is a run of table records, each
 *	uvarint table id, uvarint row count, uvarint body length, body
 * where the body holds the table's columns one after the other, each column
 * being one value per row. Readers skip records with an unknown id and bytes
 * after the columns they know, so new tables and new trailing columns need
 * no new reader. man/gtrace-format.5 is the full specification.
 */

enum col_enc {
	COL_PLAIN,	/* uvarint */
	COL_DELTA,	/* svarint of the change from the previous row (0 before the first) */
	COL_AFTER,	/* svarint of the difference from field `base` of the same row */
	COL_KEYED,	/* svarint of the change from the previous row with the same
			 * 4-byte field `key` (0 before the first) */
	COL_FOLLOWS,	/* svarint of the value minus the end (this field plus field
			 * `base`) of the previous row with the same 4-byte field
			 * `key` (0 before the first) */
	COL_ON_CPU,	/* a uvarint step, then per row the svarint of the value minus
			 * what the last row with the same 4-byte field `key` and the
			 * key's off-CPU intervals predict (struct on_cpu) */
	COL_STR,	/* uvarint length, then the bytes (no NUL) */
	COL_BUILD_ID,	/* struct tr_dso: uvarint length <= TR_BUILD_ID_MAX, then the bytes */
	COL_BYTES,	/* struct tr_bytes: uvarint length, then the bytes */
};

struct column {
	uint8_t enc;	/* enum col_enc */
	uint8_t width;	/* of the integer field: 4 or 8 bytes */
	uint8_t off;	/* of the field in the row */
	uint8_t base;	/* COL_AFTER, COL_FOLLOWS: offset of an earlier column's
			 * field of the same width */
	uint8_t key;	/* COL_KEYED, COL_FOLLOWS: offset of an earlier column's
			 * 4-byte field */
	uint8_t later;	/* appended after the table's first version: a record
			 * of an older writer ends before it, and reads as 0 */
	uint8_t golomb;	/* a signed encoding's values as one run of Exp-Golomb
			 * codes (format/golomb.h), not svarints */
};

#define U32(type, f, enc_) { .enc = enc_, .width = 4, .off = offsetof(type, f) }
#define U64(type, f, enc_) { .enc = enc_, .width = 8, .off = offsetof(type, f) }
#define U64_GOLOMB(type, f, enc_)                                              \
	{ .enc = enc_, .width = 8, .off = offsetof(type, f), .golomb = 1 }
#define U64_AFTER(type, f, b)                                                  \
	{ .enc = COL_AFTER, .width = 8, .off = offsetof(type, f), .base = offsetof(type, b) }
#define U64_AFTER_GOLOMB(type, f, b)                                           \
	{ .enc = COL_AFTER, .width = 8, .off = offsetof(type, f), .base = offsetof(type, b), \
	  .golomb = 1 }
#define U64_KEYED(type, f, k)                                                  \
	{ .enc = COL_KEYED, .width = 8, .off = offsetof(type, f), .key = offsetof(type, k) }
#define U64_FOLLOWS(type, f, len, k)                                           \
	{ .enc = COL_FOLLOWS, .width = 8, .off = offsetof(type, f),             \
	  .base = offsetof(type, len), .key = offsetof(type, k) }
#define U64_ON_CPU(type, f, k)                                                 \
	{ .enc = COL_ON_CPU, .width = 8, .off = offsetof(type, f), .key = offsetof(type, k) }
#define U64_ON_CPU_GOLOMB(type, f, k)                                          \
	{ .enc = COL_ON_CPU, .width = 8, .off = offsetof(type, f), .key = offsetof(type, k), \
	  .golomb = 1 }
#define U32_LATER(type, f) { .enc = COL_PLAIN, .width = 4, .off = offsetof(type, f), .later = 1 }
#define STR(type, f) { .enc = COL_STR, .off = offsetof(type, f) }
#define BYTES(type, f) { .enc = COL_BYTES, .off = offsetof(type, f) }

static const struct column meta_cols[] = {
	STR(struct tr_meta, key),
	STR(struct tr_meta, value),
};

static const struct column string_cols[] = {
	{ .enc = COL_STR },
};

static const struct column task_cols[] = {
	U64(struct tr_task, ts, COL_DELTA),
	U32(struct tr_task, pid, COL_DELTA),
	U32(struct tr_task, tid, COL_DELTA),
	U32(struct tr_task, kind, COL_PLAIN),
	U32(struct tr_task, arg, COL_PLAIN),
};

static const struct column dso_cols[] = {
	U32(struct tr_dso, path, COL_DELTA),
	U32(struct tr_dso, pid, COL_PLAIN),
	U32(struct tr_dso, flags, COL_PLAIN),
	{ .enc = COL_BUILD_ID },
};

static const struct column loc_cols[] = {
	U32(struct tr_loc, dso, COL_DELTA),
	U64(struct tr_loc, addr, COL_DELTA),
};

static const struct column node_cols[] = {
	U32(struct tr_node, parent, COL_DELTA),
	U32(struct tr_node, loc, COL_DELTA),
};

/* Version 1's samples (table 7): read, no longer written. */
static const struct column sample_v1_cols[] = {
	U64(struct tr_sample, ts, COL_DELTA),
	U32(struct tr_sample, pid, COL_DELTA),
	U32(struct tr_sample, tid, COL_DELTA),
	/* Plain, not delta: a hot stack's id repeats and zstd matches it. */
	U32(struct tr_sample, node, COL_PLAIN),
	U32(struct tr_sample, cpu, COL_DELTA),
	U32(struct tr_sample, flags, COL_PLAIN),
};

/*
 * A thread's timer fires after each period of its own CPU time: its next
 * sample comes a period plus its switched-out time (its offcpu rows, in
 * the same chunk) after its last, so that the timestamp costs the jitter.
 * Version 2's samples (table 20) stored that as svarints: read, no longer
 * written.
 */
static const struct column sample_v2_cols[] = {
	U32(struct tr_sample, pid, COL_DELTA),
	U32(struct tr_sample, tid, COL_DELTA),
	U64_ON_CPU(struct tr_sample, ts, tid),
	/* Plain, not delta: a hot stack's id repeats and zstd matches it. */
	U32(struct tr_sample, node, COL_PLAIN),
	U32(struct tr_sample, cpu, COL_DELTA),
	U32(struct tr_sample, flags, COL_PLAIN),
};

/* The jitter's low bits are noise: Exp-Golomb codes pack them, svarints do not. */
static const struct column sample_cols[] = {
	U32(struct tr_sample, pid, COL_DELTA),
	U32(struct tr_sample, tid, COL_DELTA),
	U64_ON_CPU_GOLOMB(struct tr_sample, ts, tid),
	/* Plain, not delta: a hot stack's id repeats and zstd matches it. */
	U32(struct tr_sample, node, COL_PLAIN),
	U32(struct tr_sample, cpu, COL_DELTA),
	U32(struct tr_sample, flags, COL_PLAIN),
};

/* Version 2's offcpu rows (table 8), times as svarints: read, no longer written. */
static const struct column offcpu_v2_cols[] = {
	U32(struct tr_offcpu, tid, COL_DELTA),
	U64(struct tr_offcpu, start, COL_DELTA),
	U64_AFTER(struct tr_offcpu, end, start),
	U32_LATER(struct tr_offcpu, reason),
	U32_LATER(struct tr_offcpu, node),
};

/* Switch times are nanoseconds of a clock too: their low bits as noisy. */
static const struct column offcpu_cols[] = {
	U32(struct tr_offcpu, tid, COL_DELTA),
	U64_GOLOMB(struct tr_offcpu, start, COL_DELTA),
	U64_AFTER_GOLOMB(struct tr_offcpu, end, start),
	U32(struct tr_offcpu, reason, COL_PLAIN),
	U32(struct tr_offcpu, node, COL_PLAIN),
};

static const struct column lane_cols[] = {
	U32(struct tr_lane, pid, COL_DELTA),
	U32(struct tr_lane, kind, COL_PLAIN),
	U32(struct tr_lane, name, COL_DELTA),
};

/*
 * Timing against what it repeats: a duration against the last one of its
 * name (kernels repeat by name), a start against the end of the last span
 * on its lane (a GPU stream runs back to back), so that jitter costs only
 * its own few bits. Duration first: the start's decoding needs it.
 */
static const struct column span_cols[] = {
	U32(struct tr_span, lane, COL_DELTA),
	U32(struct tr_span, name, COL_DELTA),
	U64_KEYED(struct tr_span, dur, name),
	U64_FOLLOWS(struct tr_span, start, dur, lane),
	U32(struct tr_span, origin_tid, COL_DELTA),
	U64_AFTER(struct tr_span, origin_ts, start),
};

/*
 * Keys cycle through the same few ids: plain, so zstd matches the cycle.
 * Values by key: a correlation id then changes by a small constant, and a
 * repeating workload repeats its value column exactly.
 */
static const struct column span_attr_cols[] = {
	U32(struct tr_span_attr, span, COL_DELTA),
	U32(struct tr_span_attr, key, COL_PLAIN),
	U64_KEYED(struct tr_span_attr, value, key),
};

static const struct column counter_cols[] = {
	U32(struct tr_counter, name, COL_PLAIN),
	U64(struct tr_counter, value, COL_PLAIN),
};

static const struct column symbol_cols[] = {
	U32(struct tr_symbol, loc, COL_DELTA),
	U32(struct tr_symbol, func, COL_DELTA),
	U32(struct tr_symbol, file, COL_DELTA),
	U32(struct tr_symbol, line, COL_DELTA),
	U32(struct tr_symbol, flags, COL_PLAIN),
};

static const struct column cubin_cols[] = {
	U64(struct tr_cubin, crc, COL_PLAIN),
	BYTES(struct tr_cubin, image),
};

/*
 * A batch holds one launch's (or one window's) buckets in pc order, a few
 * stall reasons each: pcs by function climb by an instruction or two.
 */
static const struct column pc_sample_cols[] = {
	U32(struct tr_pc_sample, pid, COL_DELTA),
	U32(struct tr_pc_sample, correlation, COL_DELTA),
	U32(struct tr_pc_sample, cubin, COL_DELTA),
	U32(struct tr_pc_sample, function, COL_DELTA),
	U64_KEYED(struct tr_pc_sample, pc, function),
	U32(struct tr_pc_sample, stall, COL_PLAIN),
	U32(struct tr_pc_sample, count, COL_PLAIN),
};

static const struct column loss_cols[] = {
	U64(struct tr_loss, ts, COL_DELTA),
	U32(struct tr_loss, cpu, COL_DELTA),
	U32(struct tr_loss, tid, COL_DELTA),
	U64(struct tr_loss, count, COL_PLAIN),
};

static const struct column metric_cols[] = {
	U32(struct tr_metric, name, COL_PLAIN),
	U32(struct tr_metric, unit, COL_PLAIN),
	U32(struct tr_metric, pid, COL_DELTA),
	U32(struct tr_metric, gpu, COL_PLAIN),
	U32(struct tr_metric, decimals, COL_PLAIN),
};

static const struct column metric_tick_cols[] = {
	U64(struct tr_metric_tick, ts, COL_DELTA),
	U32(struct tr_metric_tick, values, COL_PLAIN),
};

/*
 * Every tick lists the same series in the same order: the metric column
 * is a run of ones, and a value costs what it moved since its last tick.
 */
static const struct column metric_value_cols[] = {
	U32(struct tr_metric_value, metric, COL_DELTA),
	U64_KEYED(struct tr_metric_value, value, metric),
};

/* A function's code follows the one before it in its dso: addr climbs a little. */
static const struct column code_cols[] = {
	U32(struct tr_code, dso, COL_DELTA),
	U32(struct tr_code, machine, COL_PLAIN),
	U64(struct tr_code, addr, COL_DELTA),
	U64(struct tr_code, size, COL_PLAIN),
	BYTES(struct tr_code, code),
};

/*
 * X(on-disk id, field of struct tr_tables, columns), in the order written:
 * samples after offcpu, whose rows their timestamps' decoding needs.
 */
#define TABLES(X)                                                              \
	X(1, meta, meta_cols)                                                  \
	X(2, strings, string_cols)                                             \
	X(3, tasks, task_cols)                                                 \
	X(4, dsos, dso_cols)                                                   \
	X(5, locs, loc_cols)                                                   \
	X(6, nodes, node_cols)                                                 \
	X(23, offcpu, offcpu_cols)                                             \
	X(22, samples, sample_cols)                                            \
	X(9, lanes, lane_cols)                                                 \
	X(10, spans, span_cols)                                                \
	X(11, counters, counter_cols)                                          \
	X(12, symbols, symbol_cols)                                            \
	X(13, span_attrs, span_attr_cols)                                      \
	X(14, cubins, cubin_cols)                                              \
	X(15, pc_samples, pc_sample_cols)                                      \
	X(16, losses, loss_cols)                                               \
	X(17, metrics, metric_cols)                                            \
	X(18, metric_ticks, metric_tick_cols)                                  \
	X(19, metric_values, metric_value_cols)                                \
	X(21, codes, code_cols)

struct table {
	uint32_t id;
	const char *name;	/* man/gtrace-format.5's */
	size_t row_size;
	const struct column *cols;
	size_t ncols;
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TABLE_DESC(id_, field, cols_)                                          \
	{ id_, #field, sizeof(*((struct tr_tables *)0)->field.v), cols_, ARRAY_SIZE(cols_) },

/* Tables of an older encoding, read into the same rows, never written. */
#define OLD_TABLES(X)                                                          \
	X(7, samples, sample_v1_cols) X(8, offcpu, offcpu_v2_cols) X(20, samples, sample_v2_cols)

static const struct table tables[] = { TABLES(TABLE_DESC) };
static const struct table old_tables[] = { OLD_TABLES(TABLE_DESC) };

/* The rows of table id in t, and how many there are. */
static uint8_t *rows_of(const struct tr_tables *t, uint32_t id, size_t *n)
{
	switch (id) {
#define ROWS_OF(id_, field, cols_)                                             \
	case id_:                                                              \
		*n = t->field.len;                                             \
		return (uint8_t *)t->field.v;
	TABLES(ROWS_OF)
	OLD_TABLES(ROWS_OF)
#undef ROWS_OF
	}
	*n = 0;
	return NULL;
}

/* Makes room for n > 0 more rows and returns the first, zeroed; len is unchanged. */
static uint8_t *reserve_rows(struct tr_tables *t, const struct table *tab, size_t n)
{
	uint8_t *rows = NULL;

	switch (tab->id) {
#define RESERVE(id_, field, cols_)                                             \
	case id_:                                                              \
		VEC_RESERVE(&t->field, n);                                     \
		rows = (uint8_t *)(t->field.v + t->field.len);                 \
		break;
	TABLES(RESERVE)
	OLD_TABLES(RESERVE)
#undef RESERVE
	}
	memset(rows, 0, n * tab->row_size);
	return rows;
}

static void set_len(struct tr_tables *t, uint32_t id, size_t len)
{
	switch (id) {
#define SET_LEN(id_, field, cols_)                                             \
	case id_:                                                              \
		t->field.len = len;                                            \
		break;
	TABLES(SET_LEN)
	OLD_TABLES(SET_LEN)
#undef SET_LEN
	}
}

static uint64_t get_int(const uint8_t *p, int width)
{
	uint32_t v32;
	uint64_t v64;

	if (width == 4) {
		memcpy(&v32, p, 4);
		return v32;
	}
	memcpy(&v64, p, 8);
	return v64;
}

static void set_int(uint8_t *p, int width, uint64_t v)
{
	uint32_t v32 = (uint32_t)v;

	if (width == 4)
		memcpy(p, &v32, 4);
	else
		memcpy(p, &v, 8);
}

static char *get_str(const uint8_t *p)
{
	char *s;

	memcpy(&s, p, sizeof(s));
	return s;
}

/* COL_KEYED, COL_FOLLOWS: what the value is stored against; 0 for none. */
static uint64_t keyed_prev(const struct u64map *by_key, const uint8_t *row,
			   const struct column *col)
{
	uint64_t prev = 0;

	u64map_get(by_key, get_int(row + col->key, 4), &prev);
	return prev;
}

/* Remembers the row, whose value is v, for the next row with its key. */
static void keyed_put(struct u64map *by_key, const uint8_t *row, const struct column *col,
		      uint64_t v)
{
	if (col->enc == COL_FOLLOWS)
		v += get_int(row + col->base, col->width);
	u64map_put(by_key, get_int(row + col->key, 4), v);
}

#define SIGN_BIT (UINT64_C(1) << 63)

/*
 * COL_ON_CPU's step: the median gap between rows of the same key, then
 * moved by the median of what that leaves over, which the gaps with
 * off-CPU time in them had pulled up, so that the values stored centre
 * on 0 (0 for no gap).
 */
static uint64_t on_cpu_step(const uint8_t *rows, size_t n, size_t row_size,
			    const struct column *col, struct offcpu_rows off)
{
	uint64_t *gaps = xmalloc((n ? n : 1) * sizeof(*gaps)), *left = gaps, step = 0;
	struct u64map last = {0};
	struct on_cpu oc;
	size_t ngaps = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *row = rows + i * row_size;
		uint64_t key = get_int(row + col->key, 4), v = get_int(row + col->off, 8), prev;

		if (u64map_get(&last, key, &prev))
			gaps[ngaps++] = v - prev;
		u64map_put(&last, key, v);
	}
	u64map_free(&last);
	if (!ngaps) {
		free(gaps);
		return 0;
	}
	step = u64_select(gaps, ngaps, ngaps / 2);
	on_cpu_init(&oc, off, step);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *row = rows + i * row_size;
		uint32_t key = (uint32_t)get_int(row + col->key, 4);
		uint64_t v = get_int(row + col->off, 8);

		/* Signed, ordered as unsigned: the sign bit flipped. */
		left[i] = (v - on_cpu_predict(&oc, key)) ^ SIGN_BIT;
		on_cpu_put(&oc, key, v);
	}
	on_cpu_free(&oc);
	step += u64_select(left, n, n / 2) ^ SIGN_BIT;
	free(gaps);
	return step;
}

/* Where a column's signed values go: svarints, or a golomb column's run. */
struct signed_values {
	struct gbuf *out;
	int64_t *golomb;	/* the run's values so far, NULL for svarints */
	size_t n;
};

static void put_signed(struct signed_values *sv, int64_t v)
{
	if (sv->golomb)
		sv->golomb[sv->n++] = v;
	else
		gbuf_put_svarint(sv->out, v);
}

static void encode_column(struct gbuf *out, const uint8_t *rows, size_t n,
			  size_t row_size, const struct column *col, struct offcpu_rows off)
{
	struct u64map by_key = {0};
	struct on_cpu oc = {0};
	struct signed_values sv = { .out = out };
	uint64_t prev = 0;
	uint32_t key;

	if (col->golomb)
		sv.golomb = xmalloc((n ? n : 1) * sizeof(*sv.golomb));
	if (col->enc == COL_ON_CPU) {
		on_cpu_init(&oc, off, on_cpu_step(rows, n, row_size, col, off));
		gbuf_put_uvarint(out, oc.step);
	}

	for (size_t i = 0; i < n; i++) {
		const uint8_t *row = rows + i * row_size;
		uint64_t v = col->width ? get_int(row + col->off, col->width) : 0;
		const struct tr_bytes *bytes;
		const struct tr_dso *dso;
		uint32_t len;

		switch (col->enc) {
		case COL_PLAIN:
			gbuf_put_uvarint(out, v);
			break;
		case COL_DELTA:
			put_signed(&sv, (int64_t)(v - prev));
			prev = v;
			break;
		case COL_AFTER:
			put_signed(&sv, (int64_t)(v - get_int(row + col->base, col->width)));
			break;
		case COL_KEYED:
		case COL_FOLLOWS:
			put_signed(&sv, (int64_t)(v - keyed_prev(&by_key, row, col)));
			keyed_put(&by_key, row, col, v);
			break;
		case COL_ON_CPU:
			key = (uint32_t)get_int(row + col->key, 4);
			put_signed(&sv, (int64_t)(v - on_cpu_predict(&oc, key)));
			on_cpu_put(&oc, key, v);
			break;
		case COL_STR:
			gbuf_put_str(out, get_str(row + col->off));
			break;
		case COL_BUILD_ID:
			dso = (const struct tr_dso *)row;
			len = dso->build_id_len < TR_BUILD_ID_MAX ? dso->build_id_len
								  : TR_BUILD_ID_MAX;
			gbuf_put_uvarint(out, len);
			gbuf_put(out, dso->build_id, len);
			break;
		case COL_BYTES:
			bytes = (const struct tr_bytes *)(row + col->off);
			gbuf_put_uvarint(out, bytes->len);
			gbuf_put(out, bytes->data, bytes->len);
			break;
		}
	}
	if (sv.golomb) {
		golomb_run_put(out, sv.golomb, sv.n);
		free(sv.golomb);
	}
	u64map_free(&by_key);
	if (col->enc == COL_ON_CPU)
		on_cpu_free(&oc);
}

void tr_tables_encode(const struct tr_tables *t, struct gbuf *out)
{
	struct offcpu_rows off = { t->offcpu.v, t->offcpu.len };
	struct gbuf body = {0};

	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		const struct table *tab = &tables[i];
		size_t n;
		const uint8_t *rows = rows_of(t, tab->id, &n);

		if (!n)
			continue;
		gbuf_reset(&body);
		for (size_t c = 0; c < tab->ncols; c++)
			encode_column(&body, rows, n, tab->row_size, &tab->cols[c], off);
		gbuf_put_uvarint(out, tab->id);
		gbuf_put_uvarint(out, n);
		gbuf_put_uvarint(out, body.len);
		gbuf_put(out, body.data, body.len);
	}
	gbuf_free(&body);
}

static int64_t get_signed(struct gcursor *c, struct golomb_reader *run,
			  const struct column *col)
{
	return col->golomb ? golomb_get(run) : gcursor_svarint(c);
}

static void decode_column(struct gcursor *c, uint8_t *rows, size_t n, size_t row_size,
			  const struct column *col, struct offcpu_rows off)
{
	struct u64map by_key = {0};
	struct on_cpu oc = {0};
	struct golomb_reader run = {0};
	uint64_t prev = 0;
	uint32_t key;

	if (col->enc == COL_ON_CPU)
		on_cpu_init(&oc, off, gcursor_uvarint(c));
	if (col->golomb)
		golomb_run_open(&run, c);

	for (size_t i = 0; i < n && !c->err && !run.err; i++) {
		uint8_t *row = rows + i * row_size;
		struct tr_bytes *bytes;
		struct tr_dso *dso;
		const uint8_t *p;
		uint64_t v = 0;
		char *s;

		switch (col->enc) {
		case COL_PLAIN:
			v = gcursor_uvarint(c);
			break;
		case COL_DELTA:
			v = prev + (uint64_t)get_signed(c, &run, col);
			prev = v;
			break;
		case COL_AFTER:
			v = get_int(row + col->base, col->width) + (uint64_t)get_signed(c, &run, col);
			break;
		case COL_KEYED:
		case COL_FOLLOWS:
			v = keyed_prev(&by_key, row, col) + (uint64_t)get_signed(c, &run, col);
			keyed_put(&by_key, row, col, v);
			break;
		case COL_ON_CPU:
			key = (uint32_t)get_int(row + col->key, 4);
			v = on_cpu_predict(&oc, key) + (uint64_t)get_signed(c, &run, col);
			on_cpu_put(&oc, key, v);
			break;
		case COL_STR:
			s = gcursor_str(c);
			memcpy(row + col->off, &s, sizeof(s));
			continue;
		case COL_BUILD_ID:
			dso = (struct tr_dso *)row;
			v = gcursor_uvarint(c);
			p = v <= TR_BUILD_ID_MAX ? gcursor_bytes(c, (size_t)v) : NULL;
			if (!p) {
				c->err = 1;
				continue;
			}
			dso->build_id_len = (uint32_t)v;
			memcpy(dso->build_id, p, (size_t)v);
			continue;
		case COL_BYTES:
			bytes = (struct tr_bytes *)(row + col->off);
			v = gcursor_uvarint(c);
			p = v <= gcursor_left(c) ? gcursor_bytes(c, (size_t)v) : NULL;
			if (!p) {
				c->err = 1;
				continue;
			}
			bytes->data = xmemdup(p, (size_t)v);
			bytes->len = v;
			continue;
		}
		if (col->width == 4 && v > UINT32_MAX)
			c->err = 1;
		set_int(row + col->off, col->width, v);
	}
	if (col->golomb && !c->err)
		golomb_run_close(&run);
	if (run.err)
		c->err = 1;
	u64map_free(&by_key);
	if (col->enc == COL_ON_CPU)
		on_cpu_free(&oc);
}

/* Frees what string and blob columns own; the rows stay, emptied. */
static void free_strings(const struct table *tab, uint8_t *rows, size_t n)
{
	for (size_t c = 0; c < tab->ncols; c++) {
		enum col_enc enc = tab->cols[c].enc;

		if (enc != COL_STR && enc != COL_BYTES)
			continue;
		for (size_t i = 0; i < n; i++) {
			uint8_t *field = rows + i * tab->row_size + tab->cols[c].off;
			char **s = (char **)field;
			struct tr_bytes *b = (struct tr_bytes *)field;

			if (enc == COL_STR) {
				free(*s);
				*s = NULL;
			} else {
				free(b->data);
				b->data = NULL;
				b->len = 0;
			}
		}
	}
}

/* What the allocator adds to each string or blob a row owns, in bytes. */
#define VALUE_OVERHEAD 32

/*
 * The memory n rows of tab decoded from len bytes of body take, at most:
 * the rows, and what their strings and blobs own, which the body's bytes
 * bound.
 */
static uint64_t rows_cost(const struct table *tab, size_t len, size_t n)
{
	uint64_t cost = (uint64_t)n * tab->row_size;
	bool owns = false;

	for (size_t c = 0; c < tab->ncols; c++) {
		if (tab->cols[c].enc == COL_STR || tab->cols[c].enc == COL_BYTES) {
			cost += (uint64_t)n * VALUE_OVERHEAD;
			owns = true;
		}
	}
	return owns ? cost + len : cost;
}

/*
 * The bits a row of the table takes at least: a byte for each value of
 * the columns every writer wrote (those before the first appended later),
 * two bits for a golomb column's code.
 */
static size_t row_bits_at_least(const struct table *tab)
{
	size_t bits = 0;

	for (size_t i = 0; i < tab->ncols && !tab->cols[i].later; i++)
		bits += tab->cols[i].golomb ? 2 : 8;
	return bits;
}

/* Appends the n rows of one table record, or nothing if the body is bad or over budget. */
static int decode_table(struct tr_tables *t, const struct table *tab, const uint8_t *body,
			size_t len, size_t n, struct offcpu_rows off, struct tr_budget *b)
{
	struct gcursor c;
	size_t have;
	uint8_t *rows;

	if (!n)
		return 0;
	/* This bounds what a bad count allocates. */
	if (n > len * 8 / row_bits_at_least(tab))
		return -TR_ERR_CORRUPT;
	if (b && tr_budget_charge(b, rows_cost(tab, len, n))) {
		b->table = tab->name;
		return -TR_ERR_BUDGET;
	}
	rows_of(t, tab->id, &have);
	rows = reserve_rows(t, tab, n);
	gcursor_init(&c, body, len);
	for (size_t i = 0; i < tab->ncols; i++) {
		/* An older writer's record ends before the columns appended since. */
		if (tab->cols[i].later && !c.err && !gcursor_left(&c))
			break;
		decode_column(&c, rows, n, tab->row_size, &tab->cols[i], off);
	}
	/* Bytes after the known columns are columns a newer writer added. */
	if (c.err) {
		free_strings(tab, rows, n);
		return -TR_ERR_CORRUPT;
	}
	set_len(t, tab->id, have + n);
	return 0;
}

/* Whether tab has a COL_ON_CPU column, which walks the payload's offcpu rows. */
static bool reads_offcpu(const struct table *tab)
{
	for (size_t i = 0; i < tab->ncols; i++)
		if (tab->cols[i].enc == COL_ON_CPU)
			return true;
	return false;
}

static const struct table *find_table(uint64_t id)
{
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++)
		if (tables[i].id == id)
			return &tables[i];
	for (size_t i = 0; i < ARRAY_SIZE(old_tables); i++)
		if (old_tables[i].id == id)
			return &old_tables[i];
	return NULL;
}

int tr_tables_decode(struct tr_tables *t, const void *payload, size_t len)
{
	return tr_tables_decode_within(t, payload, len, NULL);
}

int tr_tables_decode_within(struct tr_tables *t, const void *payload, size_t len,
			    struct tr_budget *b)
{
	return tr_tables_decode_part(t, payload, len, b, TR_DECODE_ALL);
}

/* Whether part reads the rows of tab. */
static bool part_reads(enum tr_decode_part part, const struct table *tab)
{
	bool by_sample = !strcmp(tab->name, "samples") || !strcmp(tab->name, "offcpu");

	return part == TR_DECODE_ALL || by_sample == (part == TR_DECODE_SAMPLES);
}

int tr_tables_decode_part(struct tr_tables *t, const void *payload, size_t len,
			  struct tr_budget *b, enum tr_decode_part part)
{
	/* This payload's offcpu rows so far: they follow those of earlier payloads. */
	size_t offcpu_before = t->offcpu.len;
	bool read_offcpu = false;
	struct gcursor c;

	gcursor_init(&c, payload, len);
	while (gcursor_left(&c)) {
		uint64_t id = gcursor_uvarint(&c);
		uint64_t n = gcursor_uvarint(&c);
		uint64_t body_len = gcursor_uvarint(&c);
		const uint8_t *body;
		const struct table *tab;
		struct offcpu_rows off;
		int err;

		if (body_len > gcursor_left(&c))
			return -TR_ERR_CORRUPT;
		body = gcursor_bytes(&c, (size_t)body_len);
		if (c.err)
			return -TR_ERR_CORRUPT;
		tab = find_table(id);
		if (!tab || !part_reads(part, tab))
			continue;	/* from a newer writer, or not asked for */
		/* Once a payload: each record would walk all its offcpu rows again. */
		if (reads_offcpu(tab) && read_offcpu)
			return -TR_ERR_CORRUPT;
		read_offcpu |= reads_offcpu(tab);
		off = (struct offcpu_rows){ t->offcpu.len ? t->offcpu.v + offcpu_before : NULL,
					    t->offcpu.len - offcpu_before };
		err = decode_table(t, tab, body, (size_t)body_len, (size_t)n, off, b);
		if (err)
			return err;
	}
	return 0;
}

size_t tr_tables_rows(const struct tr_tables *t)
{
	size_t rows = 0, n;

	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		rows_of(t, tables[i].id, &n);
		rows += n;
	}
	return rows;
}

void tr_tables_clear(struct tr_tables *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		size_t n;
		uint8_t *rows = rows_of(t, tables[i].id, &n);

		free_strings(&tables[i], rows, n);
		set_len(t, tables[i].id, 0);
	}
}

void tr_tables_free(struct tr_tables *t)
{
	tr_tables_clear(t);
#define FREE_TABLE(id_, field, cols_) VEC_FREE(&t->field);
	TABLES(FREE_TABLE)
#undef FREE_TABLE
}
