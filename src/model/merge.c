/* SPDX-License-Identifier: MIT */
/*
 * Several recordings as one model: the ranks of a job, each recorded on
 * its own (perhaps on its own machine), read together. Rows are appended
 * with their ids moved past the rows before them, times moved onto the
 * first recording's clock, and pids that collide renumbered.
 */
#include <stdlib.h>
#include <string.h>

#include "contract/meta.h"
#include "model/model-internal.h"
#include "util/saturate.h"
#include "util/xalloc.h"

_Static_assert(TIMED_TABLES == sizeof(((struct model_rank *)0)->rows) /
				  sizeof(((struct model_rank *)0)->rows[0]),
	       "a row range for each timed table");

/* Where the rows of the recording being merged go: what comes before them. */
struct offsets {
	uint32_t *strings;	/* by its string id: the id in m, of the same text */
	uint32_t dsos, locs, nodes, lanes, spans, cubins, metrics;
	struct u64map pids;	/* its pid or tid -> the one it takes, where they differ */
	int64_t shift;
};

/* An id of the recording merged, past m's rows; an id out of its range stays unknown. */
static uint32_t moved(uint32_t id, uint32_t off, size_t len)
{
	return id && id <= len ? id + off : 0;
}

static uint32_t string_of(const struct offsets *o, uint32_t id, size_t len)
{
	return id && id <= len ? o->strings[id] : 0;
}

static uint32_t pid_of(const struct offsets *o, uint32_t pid)
{
	uint64_t to;

	return u64map_get(&o->pids, pid, &to) ? (uint32_t)to : pid;
}

/*
 * Here and below, what a file's clock pairs give stops at the ends of
 * int64 (strtoll's readings too), never overflows.
 */
bool model_clock_offset(const char *pair, int64_t *offset)
{
	char *real_end, *mono_end;
	long long real, mono;

	if (!pair)
		return false;
	real = strtoll(pair, &real_end, 10);
	mono = strtoll(real_end, &mono_end, 10);
	if (real_end == pair || mono_end == real_end)
		return false;
	*offset = i64_sat_sub(real, mono);
	return true;
}

/*
 * How far from's CLOCK_MONOTONIC is from m's: both recordings' realtime
 * minus monotonic, at start; at end too, for how much that moved.
 */
static void clock_shift(struct model_rank *r, const struct model *m, const struct model *from)
{
	int64_t mine, theirs, mine_end, theirs_end;

	r->clock_pairs = model_clock_offset(model_meta(m, META_CLOCK_START), &mine) &&
			 model_clock_offset(model_meta(from, META_CLOCK_START), &theirs);
	if (!r->clock_pairs)
		return;
	r->shift_ns = i64_sat_sub(theirs, mine);
	if (model_clock_offset(model_meta(m, META_CLOCK_END), &mine_end) &&
	    model_clock_offset(model_meta(from, META_CLOCK_END), &theirs_end))
		r->drift_ns = i64_sat_sub(i64_sat_sub(theirs_end, mine_end), r->shift_ns);
}

static void use_id(struct u64map *used, uint32_t id)
{
	if (id && id < TR_SYNTHETIC_TID_BASE)
		u64map_put(used, id, 0);
}

/*
 * Every pid and tid a model names: its threads index has those of its
 * tasks, samples and off-CPU rows, so that only the tables without
 * threads are read row by row.
 */
static void ids_of(const struct model *m, struct u64map *ids)
{
	for (size_t i = 0; i < m->threads.len; i++) {
		use_id(ids, m->threads.v[i].pid);
		use_id(ids, m->threads.v[i].tid);
	}
	for (size_t i = 0; i < m->t.metrics.len; i++)
		use_id(ids, m->t.metrics.v[i].pid);
	for (size_t i = 0; i < m->t.dsos.len; i++)
		use_id(ids, m->t.dsos.v[i].pid);
	for (size_t i = 0; i < m->t.pc_samples.len; i++)
		use_id(ids, m->t.pc_samples.v[i].pid);
}

/*
 * from's ids that m has already: each gets the next free one from
 * MODEL_MERGED_PID_BASE, so that the threads of two machines stay apart.
 * The ids m has, and the next to try, are kept from merge to merge.
 */
static void renumber(struct offsets *o, struct model *m, const struct model *from)
{
	struct u64map theirs = {0};

	ids_of(from, &theirs);
	for (size_t i = 0; i < theirs.cap; i++) {
		uint64_t id = theirs.keys[i];

		if (id == U64MAP_EMPTY)
			continue;
		if (u64map_get(&m->merged_ids, id, NULL)) {
			while (u64map_get(&m->merged_ids, m->next_merged_id, NULL) ||
			       u64map_get(&theirs, m->next_merged_id, NULL))
				m->next_merged_id++;
			u64map_put(&o->pids, id, m->next_merged_id);
			id = m->next_merged_id;
		}
		u64map_put(&m->merged_ids, id, 0);
	}
	u64map_free(&theirs);
}

/* Moves the rows with times of the ranges given by delta ns. */
static void shift_rows(struct tr_tables *t, const struct model_rows rows[TIMED_TABLES],
		       int64_t delta)
{
	for (size_t i = rows[TIMED_TASKS].first; i < rows[TIMED_TASKS].first + rows[TIMED_TASKS].n; i++)
		t->tasks.v[i].ts = model_shifted(t->tasks.v[i].ts, delta);
	for (size_t i = rows[TIMED_SAMPLES].first;
	     i < rows[TIMED_SAMPLES].first + rows[TIMED_SAMPLES].n; i++)
		t->samples.v[i].ts = model_shifted(t->samples.v[i].ts, delta);
	for (size_t i = rows[TIMED_OFFCPU].first;
	     i < rows[TIMED_OFFCPU].first + rows[TIMED_OFFCPU].n; i++) {
		t->offcpu.v[i].start = model_shifted(t->offcpu.v[i].start, delta);
		t->offcpu.v[i].end = model_shifted(t->offcpu.v[i].end, delta);
	}
	for (size_t i = rows[TIMED_SPANS].first; i < rows[TIMED_SPANS].first + rows[TIMED_SPANS].n;
	     i++) {
		t->spans.v[i].start = model_shifted(t->spans.v[i].start, delta);
		t->spans.v[i].origin_ts = model_shifted(t->spans.v[i].origin_ts, delta);
	}
	for (size_t i = rows[TIMED_LOSSES].first;
	     i < rows[TIMED_LOSSES].first + rows[TIMED_LOSSES].n; i++)
		t->losses.v[i].ts = model_shifted(t->losses.v[i].ts, delta);
	for (size_t i = rows[TIMED_METRIC_TICKS].first;
	     i < rows[TIMED_METRIC_TICKS].first + rows[TIMED_METRIC_TICKS].n; i++)
		t->metric_ticks.v[i].ts = model_shifted(t->metric_ticks.v[i].ts, delta);
}

/* The rows each timed table has now: where a recording appended next starts. */
static void rows_now(const struct tr_tables *t, struct model_rows rows[TIMED_TABLES])
{
	rows[TIMED_TASKS].first = t->tasks.len;
	rows[TIMED_SAMPLES].first = t->samples.len;
	rows[TIMED_OFFCPU].first = t->offcpu.len;
	rows[TIMED_SPANS].first = t->spans.len;
	rows[TIMED_LOSSES].first = t->losses.len;
	rows[TIMED_METRIC_TICKS].first = t->metric_ticks.len;
}

static void rows_count(const struct tr_tables *t, struct model_rows rows[TIMED_TABLES])
{
	struct model_rows end[TIMED_TABLES];

	rows_now(t, end);
	for (int k = 0; k < TIMED_TABLES; k++)
		rows[k].n = end[k].first - rows[k].first;
}

/*
 * The ids of from's strings in m: m's of the same text, else a new one,
 * taken from from (and indexed at once, for the recordings after). The
 * views find attribute keys and names by their id (model_string_id), so a
 * text must keep one.
 */
static void merge_strings(struct offsets *o, struct model *m, struct tr_tables *f)
{
	o->strings = xcalloc(f->strings.len + 1, sizeof(*o->strings));
	for (size_t i = 0; i < f->strings.len; i++) {
		uint32_t id = model_string_id(m, f->strings.v[i] ? f->strings.v[i] : "");

		if (!id) {
			*VEC_PUSH(&m->t.strings) = f->strings.v[i];
			f->strings.v[i] = NULL;
			id = (uint32_t)m->t.strings.len;
			model_add_text(m, id);
		}
		o->strings[i + 1] = id;
	}
}

/* from's ids and pids moved to where its rows go in m, in place. */
static void move_ids(struct tr_tables *f, const struct offsets *o)
{
	size_t strings = f->strings.len;

	for (size_t i = 0; i < f->tasks.len; i++) {
		struct tr_task *r = &f->tasks.v[i];

		r->pid = pid_of(o, r->pid);
		r->tid = pid_of(o, r->tid);
		if (r->kind == TR_TASK_NEW)
			r->arg = pid_of(o, r->arg);
		else if (r->kind == TR_TASK_COMM || r->kind == TR_TASK_EXEC)
			r->arg = string_of(o, r->arg, strings);
	}
	for (size_t i = 0; i < f->dsos.len; i++) {
		f->dsos.v[i].path = string_of(o, f->dsos.v[i].path, strings);
		f->dsos.v[i].pid = pid_of(o, f->dsos.v[i].pid);
	}
	for (size_t i = 0; i < f->locs.len; i++)
		f->locs.v[i].dso = moved(f->locs.v[i].dso, o->dsos, f->dsos.len);
	for (size_t i = 0; i < f->nodes.len; i++) {
		f->nodes.v[i].parent = moved(f->nodes.v[i].parent, o->nodes, f->nodes.len);
		f->nodes.v[i].loc = moved(f->nodes.v[i].loc, o->locs, f->locs.len);
	}
	for (size_t i = 0; i < f->samples.len; i++) {
		struct tr_sample *r = &f->samples.v[i];

		r->pid = pid_of(o, r->pid);
		r->tid = pid_of(o, r->tid);
		r->node = moved(r->node, o->nodes, f->nodes.len);
	}
	for (size_t i = 0; i < f->offcpu.len; i++) {
		f->offcpu.v[i].tid = pid_of(o, f->offcpu.v[i].tid);
		f->offcpu.v[i].node = moved(f->offcpu.v[i].node, o->nodes, f->nodes.len);
	}
	for (size_t i = 0; i < f->lanes.len; i++) {
		struct tr_lane *r = &f->lanes.v[i];

		r->pid = pid_of(o, r->pid);
		r->kind = string_of(o, r->kind, strings);
		r->name = string_of(o, r->name, strings);
	}
	for (size_t i = 0; i < f->spans.len; i++) {
		struct tr_span *r = &f->spans.v[i];

		r->lane = moved(r->lane, o->lanes, f->lanes.len);
		r->name = string_of(o, r->name, strings);
		r->origin_tid = pid_of(o, r->origin_tid);
	}
	for (size_t i = 0; i < f->span_attrs.len; i++) {
		f->span_attrs.v[i].span = moved(f->span_attrs.v[i].span, o->spans, f->spans.len);
		f->span_attrs.v[i].key = string_of(o, f->span_attrs.v[i].key, strings);
	}
	for (size_t i = 0; i < f->symbols.len; i++) {
		struct tr_symbol *r = &f->symbols.v[i];

		r->loc = moved(r->loc, o->locs, f->locs.len);
		r->func = string_of(o, r->func, strings);
		r->file = string_of(o, r->file, strings);
	}
	for (size_t i = 0; i < f->pc_samples.len; i++) {
		struct tr_pc_sample *r = &f->pc_samples.v[i];

		r->pid = pid_of(o, r->pid);
		r->cubin = moved(r->cubin, o->cubins, f->cubins.len);
		r->function = string_of(o, r->function, strings);
		r->stall = string_of(o, r->stall, strings);
	}
	for (size_t i = 0; i < f->losses.len; i++)
		f->losses.v[i].tid = pid_of(o, f->losses.v[i].tid);
	for (size_t i = 0; i < f->metrics.len; i++) {
		struct tr_metric *r = &f->metrics.v[i];

		r->name = string_of(o, r->name, strings);
		r->unit = string_of(o, r->unit, strings);
		r->pid = pid_of(o, r->pid);
	}
	for (size_t i = 0; i < f->codes.len; i++)
		f->codes.v[i].dso = moved(f->codes.v[i].dso, o->dsos, f->dsos.len);
	for (size_t i = 0; i < f->metric_values.len; i++)
		f->metric_values.v[i].metric = moved(f->metric_values.v[i].metric, o->metrics,
						     f->metrics.len);
}

/* Appends from's rows to m's, taking the strings and images they own. */
static void append_tables(struct tr_tables *t, struct tr_tables *f)
{
	VEC_APPEND(&t->tasks, f->tasks.v, f->tasks.len);
	VEC_APPEND(&t->dsos, f->dsos.v, f->dsos.len);
	VEC_APPEND(&t->locs, f->locs.v, f->locs.len);
	VEC_APPEND(&t->nodes, f->nodes.v, f->nodes.len);
	VEC_APPEND(&t->samples, f->samples.v, f->samples.len);
	VEC_APPEND(&t->offcpu, f->offcpu.v, f->offcpu.len);
	VEC_APPEND(&t->lanes, f->lanes.v, f->lanes.len);
	VEC_APPEND(&t->spans, f->spans.v, f->spans.len);
	VEC_APPEND(&t->span_attrs, f->span_attrs.v, f->span_attrs.len);
	VEC_APPEND(&t->symbols, f->symbols.v, f->symbols.len);
	VEC_APPEND(&t->cubins, f->cubins.v, f->cubins.len);
	f->cubins.len = 0;
	VEC_APPEND(&t->pc_samples, f->pc_samples.v, f->pc_samples.len);
	VEC_APPEND(&t->losses, f->losses.v, f->losses.len);
	VEC_APPEND(&t->metrics, f->metrics.v, f->metrics.len);
	VEC_APPEND(&t->metric_ticks, f->metric_ticks.v, f->metric_ticks.len);
	VEC_APPEND(&t->metric_values, f->metric_values.v, f->metric_values.len);
	VEC_APPEND(&t->codes, f->codes.v, f->codes.len);
	f->codes.len = 0;
}

/*
 * from's counters added to m's, one row a name: a count of the job is the
 * sum of its recordings' (stopping at 2^64 - 1). Once from's strings are
 * m's: names are m's texts, found by their id.
 */
static void sum_counters(struct model *m, const struct model *from, const struct offsets *o)
{
	for (size_t i = 0; i < from->counters.len; i++) {
		const struct tr_counter *c = &from->counters.v[i];
		uint32_t name = string_of(o, c->name, from->t.strings.len);
		uint64_t row;

		if (!name)
			continue;
		if (u64map_get(&m->merged_counters, name, &row)) {
			uint64_t *sum = &m->t.counters.v[row].value;

			*sum = u64_sat_add(*sum, c->value);
		} else {
			u64map_put(&m->merged_counters, name, m->t.counters.len);
			*VEC_PUSH(&m->t.counters) = (struct tr_counter){ name, c->value };
		}
	}
}

/*
 * What the merges share, from the first recording's indexes: its rows (all
 * there is before the second comes), its ids, and its counters one row a
 * name (the last value of each, as model_counter's), named by the first id
 * of their text as the others' will be.
 */
static void start_merging(struct model *m)
{
	rows_count(&m->t, m->ranks.v[0].rows);
	ids_of(m, &m->merged_ids);
	m->next_merged_id = MODEL_MERGED_PID_BASE;
	m->t.counters.len = 0;
	for (size_t i = 0; i < m->counters.len; i++) {
		uint32_t name = model_string_id(m, model_str(m, m->counters.v[i].name));

		u64map_put(&m->merged_counters, name, i);
		*VEC_PUSH(&m->t.counters) = (struct tr_counter){ name, m->counters.v[i].value };
	}
}

void model_merge(struct model *m, struct model *from)
{
	struct model_rank *r = VEC_PUSH(&m->ranks);
	size_t index = m->ranks.len - 1;
	struct model_rows all[TIMED_TABLES] = {{0, 0}};
	struct offsets o = {
		.dsos = (uint32_t)m->t.dsos.len,
		.locs = (uint32_t)m->t.locs.len,
		.nodes = (uint32_t)m->t.nodes.len,
		.lanes = (uint32_t)m->t.lanes.len,
		.spans = (uint32_t)m->t.spans.len,
		.cubins = (uint32_t)m->t.cubins.len,
		.metrics = (uint32_t)m->t.metrics.len,
	};

	if (index == 1)
		start_merging(m);
	clock_shift(r, m, from);
	/* from's rows, all of them, go after m's, on m's clock. */
	rows_count(&from->t, all);
	shift_rows(&from->t, all, r->shift_ns);
	rows_now(&m->t, r->rows);
	for (int k = 0; k < TIMED_TABLES; k++)
		r->rows[k].n = all[k].n;
	renumber(&o, m, from);
	merge_strings(&o, m, &from->t);
	move_ids(&from->t, &o);
	sum_counters(m, from, &o);
	append_tables(&m->t, &from->t);
	r->first_metric = o.metrics + 1;

	r->path = from->ranks.len ? from->ranks.v[0].path : NULL;
	if (from->ranks.len)
		from->ranks.v[0].path = NULL;
	memcpy(&r->meta, &from->t.meta, sizeof(r->meta));
	memset(&from->t.meta, 0, sizeof(from->t.meta));
	model_rank_facts(r, r->meta.v, r->meta.len, index);
	for (size_t i = 0; i < from->threads.len; i++)
		if (from->threads.v[i].pid)
			u64map_put(&m->rank_of_pid, pid_of(&o, from->threads.v[i].pid), index + 1);

	m->header.features |= from->header.features;
	m->file_size += from->file_size;
	m->chunks += from->chunks;
	m->compressed_bytes += from->compressed_bytes;
	m->payload_bytes += from->payload_bytes;
	m->lanes_past_limit += from->lanes_past_limit;
	/* Each recording within its own limit: the merged one within their sum. */
	m->budget.limit = m->budget.limit && from->budget.limit
				  ? m->budget.limit + from->budget.limit : 0;
	m->budget.used += from->budget.used;
	m->budget.inflated += from->budget.inflated;
	if (!m->damage) {
		m->damage = from->damage;
		m->budget.table = from->budget.table;
	}
	u64map_free(&o.pids);
	free(o.strings);
	model_free(from);
}

void model_merge_end(struct model *m)
{
	u64map_free(&m->merged_ids);
	u64map_free(&m->merged_counters);
	model_reindex(m);
}

void model_shift_ranks(struct model *m, const int64_t *delta)
{
	if (m->ranks.len == 1)
		rows_count(&m->t, m->ranks.v[0].rows);
	for (size_t r = 0; r < m->ranks.len; r++) {
		struct model_rank *rank = &m->ranks.v[r];

		if (!delta[r])
			continue;
		shift_rows(&m->t, rank->rows, delta[r]);
		rank->shift_ns = i64_sat_add(rank->shift_ns, delta[r]);
		rank->start_ns = model_shifted(rank->start_ns, delta[r]);
		rank->end_ns = model_shifted(rank->end_ns, delta[r]);
	}
	model_reindex(m);
}
