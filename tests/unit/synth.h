/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_SYNTH_H
#define GTRACE_TESTS_SYNTH_H

/*
 * Synthetic recordings with known shapes for the model and analysis tests:
 * build tables row by row with names instead of ids, then either hand them
 * to a model directly (synth_model) or write them as a trace file.
 *
 *	struct synth s = {0};
 *	uint32_t app = synth_dso(&s, "/usr/bin/app");
 *	uint32_t main_loc = synth_loc(&s, app, 0x1000, "main");
 *	uint32_t stack[] = { main_loc, foo_loc };	// outermost first
 *	synth_samples(&s, 100, 100, synth_stack(&s, stack, 2), 5);
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "format/file.h"
#include "format/tables.h"
#include "model/model.h"
#include "util/hashmap.h"
#include "util/xalloc.h"

struct synth {
	struct tr_tables t;
	struct strtab strs;	/* mirrors t.strings, to find ids by content */
	struct u64map nodes;	/* parent << 32 | loc -> node id */
	uint64_t ts;		/* of the next sample */
	/* Rows of id'd tables already written in earlier chunks. */
	uint32_t strings_out, dsos_out, locs_out, nodes_out, lanes_out, spans_out, metrics_out;
};

#define SYNTH_T0 1000000000ull	/* the first sample's timestamp */
#define SYNTH_PERIOD 1000000ull	/* ns between samples */

static inline uint32_t synth_str(struct synth *s, const char *str)
{
	uint32_t id = strtab_intern(&s->strs, str);

	if (id > s->strings_out + s->t.strings.len)
		*VEC_PUSH(&s->t.strings) = xstrdup(str);
	return id;
}

static inline void synth_meta(struct synth *s, const char *key, const char *value)
{
	struct tr_meta *kv = VEC_PUSH(&s->t.meta);

	kv->key = xstrdup(key);
	kv->value = xstrdup(value);
}

static inline void synth_counter(struct synth *s, const char *name, uint64_t value)
{
	struct tr_counter *c = VEC_PUSH(&s->t.counters);

	c->name = synth_str(s, name);
	c->value = value;
}

static inline uint32_t synth_dso(struct synth *s, const char *path)
{
	VEC_PUSH(&s->t.dsos)->path = synth_str(s, path);
	return s->dsos_out + (uint32_t)s->t.dsos.len;
}

/* A location with its inline chain funcs[0] (innermost) .. funcs[n - 1]; n == 0 unresolved. */
static inline uint32_t synth_loc_chain(struct synth *s, uint32_t dso, uint64_t addr,
				       const char *const *funcs, size_t n)
{
	struct tr_loc *l = VEC_PUSH(&s->t.locs);
	uint32_t loc = s->locs_out + (uint32_t)s->t.locs.len;

	l->dso = dso;
	l->addr = addr;
	for (size_t i = 0; i < n; i++) {
		struct tr_symbol *sym = VEC_PUSH(&s->t.symbols);

		sym->loc = loc;
		sym->func = synth_str(s, funcs[i]);
		sym->flags = i + 1 < n ? TR_SYM_INLINED : 0;
	}
	return loc;
}

/* A location in one function, or unresolved when func is NULL. */
static inline uint32_t synth_loc(struct synth *s, uint32_t dso, uint64_t addr, const char *func)
{
	return synth_loc_chain(s, dso, addr, &func, func ? 1 : 0);
}

/* A Python source file, as the recorder writes it for the frames of its code. */
static inline uint32_t synth_python_file(struct synth *s, const char *path)
{
	uint32_t dso = synth_dso(s, path);

	s->t.dsos.v[s->t.dsos.len - 1].flags = TR_DSO_PYTHON;
	return dso;
}

/* A Python frame: function func of file (a synth_python_file) at line. */
static inline uint32_t synth_python_loc(struct synth *s, uint32_t file, const char *func,
					uint32_t line)
{
	uint32_t name = synth_str(s, func);
	uint32_t loc = synth_loc(s, file, TR_PYTHON_ADDR(line, name), func);
	struct tr_symbol *sym = &s->t.symbols.v[s->t.symbols.len - 1];

	sym->file = s->t.dsos.v[file - s->dsos_out - 1].path;
	sym->line = line;
	return loc;
}

/* The leaf node of a stack of locations, outermost first. */
static inline uint32_t synth_stack(struct synth *s, const uint32_t *locs, size_t n)
{
	uint32_t parent = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t key = (uint64_t)parent << 32 | locs[i], id;

		if (!u64map_get(&s->nodes, key, &id)) {
			struct tr_node *node = VEC_PUSH(&s->t.nodes);

			node->parent = parent;
			node->loc = locs[i];
			id = s->nodes_out + s->t.nodes.len;
			u64map_put(&s->nodes, key, id);
		}
		parent = (uint32_t)id;
	}
	return parent;
}

static inline void synth_task(struct synth *s, uint32_t kind, uint32_t pid, uint32_t tid,
			      uint32_t arg, uint64_t ts)
{
	struct tr_task *task = VEC_PUSH(&s->t.tasks);

	task->ts = ts;
	task->pid = pid;
	task->tid = tid;
	task->kind = kind;
	task->arg = arg;
}

static inline void synth_comm(struct synth *s, uint32_t pid, uint32_t tid, const char *name)
{
	synth_task(s, TR_TASK_COMM, pid, tid, synth_str(s, name), 0);
}

/* count samples of one thread on one stack, SYNTH_PERIOD apart from the last. */
static inline void synth_samples(struct synth *s, uint32_t pid, uint32_t tid, uint32_t node,
				 unsigned count)
{
	if (!s->ts)
		s->ts = SYNTH_T0;
	for (unsigned i = 0; i < count; i++) {
		struct tr_sample *smp = VEC_PUSH(&s->t.samples);

		smp->ts = s->ts;
		smp->pid = pid;
		smp->tid = tid;
		smp->node = node;
		s->ts += SYNTH_PERIOD;
	}
}

static inline void synth_offcpu(struct synth *s, uint32_t tid, uint64_t start, uint64_t end)
{
	struct tr_offcpu *o = VEC_PUSH(&s->t.offcpu);

	o->tid = tid;
	o->start = start;
	o->end = end;
}

static inline uint32_t synth_lane_kind(struct synth *s, uint32_t pid, const char *kind,
				       const char *name)
{
	struct tr_lane *lane = VEC_PUSH(&s->t.lanes);

	lane->pid = pid;
	lane->kind = synth_str(s, kind);
	lane->name = synth_str(s, name);
	return s->lanes_out + (uint32_t)s->t.lanes.len;
}

static inline uint32_t synth_lane(struct synth *s, uint32_t pid, const char *name)
{
	return synth_lane_kind(s, pid, "cuda", name);
}

/* A span queued from thread origin_tid at origin_ts; both 0 for no origin. */
static inline void synth_span_from(struct synth *s, uint32_t lane, const char *name,
				   uint64_t start, uint64_t dur, uint32_t origin_tid,
				   uint64_t origin_ts)
{
	struct tr_span *sp = VEC_PUSH(&s->t.spans);

	sp->lane = lane;
	sp->name = synth_str(s, name);
	sp->start = start;
	sp->dur = dur;
	sp->origin_tid = origin_tid;
	sp->origin_ts = origin_ts;
}

static inline void synth_span(struct synth *s, uint32_t lane, const char *name,
			      uint64_t start, uint64_t dur)
{
	synth_span_from(s, lane, name, start, dur, 0, 0);
}

/* An attribute of the last span added. */
static inline void synth_span_attr(struct synth *s, const char *key, uint64_t value)
{
	struct tr_span_attr *a = VEC_PUSH(&s->t.span_attrs);

	a->span = s->spans_out + (uint32_t)s->t.spans.len;
	a->key = synth_str(s, key);
	a->value = value;
}

/* A metric series: name in unit ("" a count) of pid, GPU gpu - 1 or the machine; its id. */
static inline uint32_t synth_metric(struct synth *s, const char *name, const char *unit,
				    uint32_t pid, uint32_t gpu, uint32_t decimals)
{
	struct tr_metric *mt = VEC_PUSH(&s->t.metrics);

	mt->name = synth_str(s, name);
	mt->unit = synth_str(s, unit);
	mt->pid = pid;
	mt->gpu = gpu;
	mt->decimals = decimals;
	return s->metrics_out + (uint32_t)s->t.metrics.len;
}

/* A reading at ts: values[i] (times 10^decimals) of series ids[i]. */
static inline void synth_metric_tick(struct synth *s, uint64_t ts, const uint32_t *ids,
				     const uint64_t *values, size_t n)
{
	struct tr_metric_tick *tick = VEC_PUSH(&s->t.metric_ticks);

	tick->ts = ts;
	tick->values = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		struct tr_metric_value *v = VEC_PUSH(&s->t.metric_values);

		v->metric = ids[i];
		v->value = values[i];
	}
}

/* Moves the tables into m and indexes them; s is empty afterwards. */
static inline void synth_model(struct synth *s, struct model *m, uint64_t features)
{
	memset(m, 0, sizeof(*m));
	m->t = s->t;
	m->header.version = TR_VERSION;
	m->header.features = features;
	memset(&s->t, 0, sizeof(s->t));
	strtab_free(&s->strs);
	u64map_free(&s->nodes);
	model_index(m);
}

/* Appends the rows added since the last call as one TABLES chunk, then empties them. */
static inline int synth_put_chunk(struct synth *s, struct tr_writer *w)
{
	struct gbuf payload = {0};
	int err;

	tr_tables_encode(&s->t, &payload);
	err = tr_writer_put(w, TR_CHUNK_TABLES, payload.data, payload.len);
	gbuf_free(&payload);
	/* Ids keep counting across chunks: only the rows go. */
	s->strings_out += (uint32_t)s->t.strings.len;
	s->dsos_out += (uint32_t)s->t.dsos.len;
	s->locs_out += (uint32_t)s->t.locs.len;
	s->nodes_out += (uint32_t)s->t.nodes.len;
	s->lanes_out += (uint32_t)s->t.lanes.len;
	s->spans_out += (uint32_t)s->t.spans.len;
	s->metrics_out += (uint32_t)s->t.metrics.len;
	tr_tables_clear(&s->t);
	return err;
}

static inline int synth_put_end(struct tr_writer *w)
{
	return tr_writer_put(w, TR_CHUNK_END, NULL, 0);
}

/* The rows added so far as a whole recording at path: one TABLES chunk, then END. */
static inline int synth_write(struct synth *s, const char *path, uint64_t features)
{
	struct tr_writer *w;
	int err = tr_writer_open(&w, path, features);

	if (err)
		return err;
	err = synth_put_chunk(s, w);
	if (!err)
		err = synth_put_end(w);
	if (!err)
		return tr_writer_close(w);
	tr_writer_close(w);
	return err;
}

static inline void synth_free(struct synth *s)
{
	tr_tables_free(&s->t);
	strtab_free(&s->strs);
	u64map_free(&s->nodes);
}

#endif
