/* SPDX-License-Identifier: MIT */
/*
 * export --format sqlite's lanes and spans: each selected lane; each span
 * export.c exports (of a selected lane, or queued by a selected thread,
 * in the window), with how its origin linked (origins.c) and the stack
 * of the sample it linked to; every attribute a row of span_attrs, by
 * name where it holds an enum; the spans of gtrace's own kinds once
 * more in their kind's table (span_tables), each attribute a column; and
 * each CUDA stream's queue length over its exported spans.
 */
#include "analysis/encoders/export-emitter.h"
#include "analysis/encoders/export-sqlite.h"

#include <math.h>
#include <stdlib.h>

#include "contract/attrs.h"
#include "contract/lanes.h"
#include "util/xalloc.h"

/* What the attributes of spans are written with. */
struct span_writer {
	struct sqlite_export *x;
	struct sqlstmt *span, *attr, *table[SPAN_TABLES];
	uint32_t bytes_key;		/* the string id of CUDA_ATTR_BYTES, 0 none */
	/* By span table and column: its key's string id, 0 when the recording has none. */
	uint32_t *key_sid[SPAN_TABLES];
	/* By string id: the names of an enum key's values (attr_value_names), made on first use. */
	const char *const **names;
	uint32_t *nnames;
	bool *named;
};

/* The names of the values of key_sid, NULL for a number. */
static const char *const *value_names(struct span_writer *w, uint32_t key_sid, uint32_t *n)
{
	if (!w->named[key_sid]) {
		w->names[key_sid] = key_sid ? attr_value_names(model_str(w->x->m, key_sid),
							       &w->nnames[key_sid])
					    : NULL;
		w->named[key_sid] = true;
	}
	*n = w->nnames[key_sid];
	return w->names[key_sid];
}

/* The value of an attribute that holds an enum as its name; a value without one as its number. */
static void bind_named(struct span_writer *w, struct sqlstmt *st, int i, uint32_t key_sid,
		       uint64_t value)
{
	uint32_t n;
	const char *const *names = value_names(w, key_sid, &n);

	if (names && value < n && names[value])
		sqlstmt_text(st, i, names[value]);
	else
		sqlstmt_u64(st, i, value);
}

/* The span table of span sp, or SPAN_TABLES for none. */
static enum span_table_id table_of(const struct model *m, const struct tr_span *sp)
{
	switch (model_lane_class(m, sp->lane)) {
	case MODEL_LANE_CUDA_STREAM:
		switch (model_span_class(m, sp)) {
		case MODEL_SPAN_COPY:
			return SPAN_TABLE_COPIES;
		case MODEL_SPAN_MEMSET:
			return SPAN_TABLE_MEMSETS;
		default:
			return SPAN_TABLE_KERNELS;
		}
	case MODEL_LANE_CUDA_API:
		return SPAN_TABLE_API_CALLS;
	case MODEL_LANE_CUDA_WAIT:
		return SPAN_TABLE_WAITS;
	case MODEL_LANE_NVTX:
		return SPAN_TABLE_NVTX;
	default:
		return SPAN_TABLES;
	}
}

/* Span index span's row of its kind's table t: each column its attribute's, NULL without. */
static void write_typed(struct span_writer *w, enum span_table_id t, size_t span)
{
	const struct model *m = w->x->m;
	const struct span_table *table = &span_tables[t];
	const struct model_span_attrs *sa = &m->span_attrs[span + 1];
	const struct tr_span *sp = &m->t.spans.v[span];
	struct sqlstmt *st = w->table[t];
	int first = 2 + table->thread;

	sqlstmt_u64(st, 1, span + 1);
	if (table->thread)
		sqlstmt_int(st, 2, sp->origin_tid);
	for (uint32_t c = 0; c < table->ncolumns; c++)
		if (table->columns[c].type == ATTR_NVTX_DOMAIN && sp->lane &&
		    sp->lane <= m->t.lanes.len)
			sqlstmt_text(st, first + (int)c,
				     nvtx_lane_domain(model_str(m, m->t.lanes.v[sp->lane - 1].name)));
	for (uint32_t k = 0; k < sa->count; k++) {
		const struct tr_span_attr *a = &m->t.span_attrs.v[sa->first + k];

		for (uint32_t c = 0; c < table->ncolumns; c++) {
			if (!w->key_sid[t][c] || w->key_sid[t][c] != a->key)
				continue;
			if (table->columns[c].type == ATTR_NAME)
				bind_named(w, st, first + (int)c, a->key, a->value);
			else if (table->columns[c].type == ATTR_FRACTION)
				sqlstmt_real(st, first + (int)c, (double)a->value / 1000);
			else
				sqlstmt_u64(st, first + (int)c, a->value);
		}
	}
	/* A copy's or memset's bandwidth, as report --gpu counts it: bytes per ns, which is GB/s. */
	if (table->gbps) {
		uint64_t bytes;

		if (sp->dur && w->bytes_key && model_span_attr(m, (uint32_t)span + 1, w->bytes_key,
							       &bytes))
			sqlstmt_real(st, first + (int)table->ncolumns, (double)bytes / (double)sp->dur);
	}
	sqlstmt_run(st);
}

/* Span index span: its row, its attributes' and its kind's. */
static void write_span(struct span_writer *w, size_t span)
{
	struct sqlite_export *x = w->x;
	const struct model *m = x->m;
	const struct tr_span *sp = &m->t.spans.v[span];
	const struct model_span_attrs *sa = &m->span_attrs[span + 1];
	enum origin_outcome outcome = x->o->links->outcome[span];
	uint32_t linked = x->o->links->sample[span];
	enum span_table_id t = table_of(m, sp);

	sqlstmt_u64(w->span, 1, span + 1);
	sqlstmt_int(w->span, 2, sp->lane);
	sqlstmt_text(w->span, 3, funcs_name(x->f, funcs_span_frame(x->f, sp->name)));
	sqlstmt_int(w->span, 4, sqlite_time(x, sp->start));
	sqlstmt_u64(w->span, 5, sp->dur);
	if (outcome != ORIGIN_NONE) {
		sqlstmt_int(w->span, 6, sp->origin_tid);
		sqlstmt_int(w->span, 7, sqlite_time(x, sp->origin_ts));
		sqlstmt_text(w->span, 8, origin_outcome_name(outcome));
	}
	if (linked && linked <= m->t.samples.len) {
		const struct tr_sample *s = &m->t.samples.v[linked - 1];

		sqlstmt_int(w->span, 9, linked);
		if (s->node)
			sqlstmt_int(w->span, 10, s->node);
		sqlite_use_stack(x, s->node);
		sqlstmt_u64(w->span, 11, s->ts > sp->origin_ts ? s->ts - sp->origin_ts
							      : sp->origin_ts - s->ts);
	}
	sqlstmt_run(w->span);
	for (uint32_t k = 0; k < sa->count; k++) {
		const struct tr_span_attr *a = &m->t.span_attrs.v[sa->first + k];
		uint32_t n, key = a->key <= m->t.strings.len ? a->key : 0;
		const char *const *names = value_names(w, key, &n);

		sqlstmt_u64(w->attr, 1, span + 1);
		sqlstmt_text(w->attr, 2, key ? model_str(m, key) : "-");
		sqlstmt_u64(w->attr, 3, a->value);
		if (names && a->value < n)
			sqlstmt_text(w->attr, 4, names[a->value]);
		sqlstmt_run(w->attr);
	}
	if (t < SPAN_TABLES)
		write_typed(w, t, span);
}

/* Each lane that is selected or has an exported span: lane_used by lane id. */
static void write_lanes(struct sqlite_export *x, const bool *lane_used)
{
	const struct model *m = x->m;
	struct sqlstmt *st = sqldb_prepare(x->db, "INSERT INTO lanes VALUES (?, ?, ?, ?, ?, ?)");

	for (uint32_t id = 1; id <= m->t.lanes.len; id++) {
		const struct tr_lane *l = &m->t.lanes.v[id - 1];
		const char *name = model_str(m, l->name);
		uint32_t device;

		if (!lane_used[id])
			continue;
		sqlstmt_int(st, 1, id);
		sqlstmt_int(st, 2, l->pid);
		sqlstmt_text(st, 3, model_str(m, l->kind));
		sqlstmt_text(st, 4, name);
		if (name && cuda_lane_device(name, &device))
			sqlstmt_int(st, 5, device);
		sqlstmt_int(st, 6, model_lane_thread(m, id)->tid);
		sqlstmt_run(st);
	}
	sqlstmt_free(st);
}

static void span_writer_init(struct span_writer *w, struct sqlite_export *x)
{
	const struct model *m = x->m;
	size_t strings = m->t.strings.len + 1;

	*w = (struct span_writer){
		.x = x,
		.span = sqldb_prepare(x->db, "INSERT INTO spans VALUES"
					     " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
		.attr = sqldb_prepare(x->db, "INSERT INTO span_attrs VALUES (?, ?, ?, ?)"),
		.bytes_key = model_string_id(m, CUDA_ATTR_BYTES),
		.names = xcalloc(strings, sizeof(*w->names)),
		.nnames = xcalloc(strings, sizeof(*w->nnames)),
		.named = xcalloc(strings, sizeof(*w->named)),
	};
	for (size_t t = 0; t < SPAN_TABLES; t++) {
		const struct span_table *table = &span_tables[t];

		w->table[t] = sqlite_span_table_insert(x->db, table);
		w->key_sid[t] = xcalloc(table->ncolumns, sizeof(*w->key_sid[t]));
		for (uint32_t c = 0; c < table->ncolumns; c++)
			if (table->columns[c].key)
				w->key_sid[t][c] = model_string_id(m, table->columns[c].key);
	}
}

static void span_writer_free(struct span_writer *w)
{
	sqlstmt_free(w->span);
	sqlstmt_free(w->attr);
	for (size_t t = 0; t < SPAN_TABLES; t++) {
		sqlstmt_free(w->table[t]);
		free(w->key_sid[t]);
	}
	free(w->names);
	free(w->nnames);
	free(w->named);
}

static int cmp_by_lane(const void *pa, const void *pb, void *ctx)
{
	const struct model *m = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	uint32_t la = m->t.spans.v[a].lane, lb = m->t.spans.v[b].lane;

	if (la != lb)
		return la < lb ? -1 : 1;
	return (a > b) - (a < b);
}

/* Each CUDA stream's queue length (passes/launches.c) over spans[0 .. n), the exported. */
static void write_queues(struct sqlite_export *x, uint32_t *spans, size_t n)
{
	const struct model *m = x->m;
	struct sqlstmt *st = sqldb_prepare(x->db, "INSERT INTO stream_queues VALUES (?, ?, ?)");
	struct api_launches l;

	api_launches_find(&l, m, x->o->links->outcome, spans, n, x->from, x->to);
	if (n)
		qsort_r(spans, n, sizeof(*spans), cmp_by_lane, (void *)m);
	for (size_t i = 0, end; i < n; i = end) {
		uint32_t lane = m->t.spans.v[spans[i]].lane;
		struct queue_step *steps;
		size_t nsteps;

		for (end = i; end < n && m->t.spans.v[spans[end]].lane == lane; end++)
			;
		if (model_lane_class(m, lane) != MODEL_LANE_CUDA_STREAM)
			continue;
		nsteps = stream_queue_steps(m, &l, spans + i, end - i, x->from, &steps);
		for (size_t k = 0; k < nsteps; k++) {
			sqlstmt_int(st, 1, lane);
			sqlstmt_int(st, 2, sqlite_time(x, steps[k].ts));
			sqlstmt_u64(st, 3, steps[k].len);
			sqlstmt_run(st);
		}
		free(steps);
	}
	api_launches_free(&l);
	sqlstmt_free(st);
}

void sqlite_write_spans(struct sqlite_export *x)
{
	const struct model *m = x->m;
	bool *selected = filter_lanes(x->f, x->o->filter);
	bool *used = xcalloc(m->t.lanes.len + 1, sizeof(*used));
	uint32_t *exported = xmalloc((m->t.spans.len + 1) * sizeof(*exported));
	size_t nexported = 0;
	struct span_writer w;

	span_writer_init(&w, x);
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];

		if (!sp->lane || sp->lane > m->t.lanes.len ||
		    !export_in_window(x->from, x->to, sp->start, sp->dur) ||
		    !filter_span(x->o->filter, x->f, selected, sp))
			continue;
		used[sp->lane] = true;
		write_span(&w, i);
		exported[nexported++] = (uint32_t)i;
	}
	for (uint32_t id = 1; id <= m->t.lanes.len; id++)
		used[id] |= selected[id];
	write_lanes(x, used);
	write_queues(x, exported, nexported);
	span_writer_free(&w);
	free(exported);
	free(used);
	free(selected);
}

/* GPU PC samples have no time: a selected process's, whatever the window. */
void sqlite_write_pc_samples(struct sqlite_export *x)
{
	const struct model *m = x->m;
	struct sqlstmt *st = sqldb_prepare(x->db,
					   "INSERT INTO pc_samples VALUES (?, ?, ?, ?, ?, ?, ?)");

	for (size_t i = 0; i < m->t.pc_samples.len; i++) {
		const struct tr_pc_sample *p = &m->t.pc_samples.v[i];

		if (!filter_process(x->o->filter, m, p->pid))
			continue;
		sqlstmt_int(st, 1, p->pid);
		if (p->correlation)
			sqlstmt_int(st, 2, p->correlation);
		if (p->cubin && p->cubin <= m->t.cubins.len)
			sqlstmt_u64(st, 3, m->t.cubins.v[p->cubin - 1].crc);
		sqlstmt_text(st, 4, model_str(m, p->function));
		sqlstmt_u64(st, 5, p->pc);
		sqlstmt_text(st, 6, model_str(m, p->stall));
		sqlstmt_int(st, 7, p->count);
		sqlstmt_run(st);
	}
	sqlstmt_free(st);
}
