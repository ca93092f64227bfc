/* SPDX-License-Identifier: MIT */
/*
 * The Chrome Trace Event Format (JSON), as chrome://tracing, Perfetto and
 * speedscope read it:
 *
 *   {"traceEvents": [...], "samples": [...], "stackFrames": {...},
 *    "displayTimeUnit": "ns", "metadata": {...}}
 *
 * Processes and threads (lanes too, as threads of their process) are
 * named by "M" events; slices are "X" events, instants "i"; a flow is an
 * "s" event at the origin, bound to the slice around it (the API call's,
 * or a zero-length "X" on the thread when no call holds it), and an "f"
 * bound to the enclosing span; counters are "C" events, their one value
 * keyed by its unit ("value" for a count), the machine's and each GPU's
 * metrics those of a pseudo process of their own. A CPU sample is an
 * instant on its thread, named after its leaf function, whose "sf" names its stack
 * in "stackFrames" (frame "name" and "category": function and dso, then
 * "parent"); and again an entry of "samples" (pid, tid, ts, cpu, name,
 * sf), in the order taken. Speedscope and catapult build their
 * sampled profiles (flame charts, CPU stacks) from "samples" alone;
 * Perfetto's importer reads neither "samples" nor "stackFrames" and
 * draws only the instants, which is why they stay. Every sample counts
 * one: no "weight". Times are in microseconds with the ns as decimals:
 * exact. The format has no wall clock: "metadata" says when ts 0 was.
 */
#include "analysis/encoders/export-emitter.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/json.h"
#include "util/xalloc.h"

struct chrome {
	struct json j;		/* the document, open at traceEvents while events come */
	bool *used;		/* by node id: a sample's stack ends there, or a callee's */
	bool in_samples;	/* traceEvents ended, "samples" open */
};

static struct json *doc(struct exporter *x)
{
	return &((struct chrome *)x->state)->j;
}

static void put_name(struct exporter *x, const char *key, uint32_t name)
{
	json_string(doc(x), key, funcs_name(x->f, name));
}

/* ns as microseconds, exactly. */
static void put_us(struct exporter *x, const char *key, uint64_t ns)
{
	json_scaled(doc(x), key, ns, 3);
}

/* Opens an event object: "ph", the name and where it is. */
static void begin_event(struct exporter *x, const char *ph, uint32_t name,
			const struct export_track *t)
{
	struct json *j = doc(x);

	json_begin_object(j, NULL, JSON_INLINE);
	json_string(j, "ph", ph);
	put_name(x, "name", name);
	json_uint(j, "pid", t->pid);
	json_uint(j, "tid", t->tid);
}

/* One end of flow id: "s" binds to the slice around it, "f" with "bp":"e" too. */
static void put_flow(struct exporter *x, const char *ph, uint64_t id,
		     const struct export_track *t, uint64_t ts)
{
	struct json *j = doc(x);

	json_begin_object(j, NULL, JSON_INLINE);
	json_string(j, "ph", ph);
	json_string(j, "name", "origin");
	json_string(j, "cat", "flow");
	json_uint(j, "id", id);
	json_uint(j, "pid", t->pid);
	json_uint(j, "tid", t->tid);
	if (*ph == 'f')
		json_string(j, "bp", "e");
	put_us(x, "ts", ts);
	json_end(j);
}

static void put_args(struct exporter *x, const struct export_arg *args, size_t n)
{
	struct json *j = doc(x);

	json_begin_object(j, "args", JSON_INLINE);
	for (size_t i = 0; i < n; i++) {
		const char *key = funcs_name(x->f, args[i].key);

		if (args[i].str)
			json_string(j, key, args[i].str);
		else if (args[i].decimals)
			json_scaled(j, key, args[i].value, args[i].decimals);
		else
			json_uint(j, key, args[i].value);
	}
	json_end(j);
}

static void chrome_begin(struct exporter *x)
{
	struct chrome *c = xcalloc(1, sizeof(*c));

	c->used = xcalloc(x->m->t.nodes.len + 1, sizeof(*c->used));
	x->state = c;
	json_init_compact(&c->j, x->out);
	json_begin_object(&c->j, NULL, JSON_INLINE);
	json_begin_array(&c->j, "traceEvents", JSON_LINES);
}

/* Opens an "M" event about track t, named what_about, and its args. */
static void begin_meta(struct exporter *x, const struct export_track *t, const char *what,
		       const char *about)
{
	struct json *j = doc(x);
	char name[32];

	snprintf(name, sizeof(name), "%s_%s", what, about);
	json_begin_object(j, NULL, JSON_INLINE);
	json_string(j, "ph", "M");
	json_string(j, "name", name);
	json_uint(j, "pid", t->pid);
	json_uint(j, "tid", t->tid);
	json_begin_object(j, "args", JSON_INLINE);
}

/*
 * "M" events name processes and threads, and keep tracks in the order made.
 * A thread's calls are a thread of their own (its off-CPU slices and
 * instants would not nest with them), sorted with that thread and named
 * after it, so that viewers that break the tie by name show it first.
 */
static void chrome_track(struct exporter *x, const struct export_track *t)
{
	const char *what;

	switch (t->kind) {
	case TRACK_GLOBAL:
	case TRACK_PROCESS:
	case TRACK_DEVICE:
		what = "process";
		break;
	case TRACK_THREAD:
	case TRACK_LANE:
		what = "thread";
		break;
	default:
		return;		/* no such thing in the format: GPU lanes have it in their name */
	}
	begin_meta(x, t, what, "name");
	if (t->thread) {
		char label[512];

		snprintf(label, sizeof(label), "%s %" PRIu32 " %s", funcs_name(x->f, t->thread->name),
			 t->thread->tid, funcs_name(x->f, t->name));
		json_string(doc(x), "name", label);
	} else {
		put_name(x, "name", t->name);
	}
	json_end(doc(x));
	json_end(doc(x));
	begin_meta(x, t, what, "sort_index");
	json_uint(doc(x), "sort_index", t->thread ? t->thread->id : t->id);
	json_end(doc(x));
	json_end(doc(x));
}

static void chrome_slice(struct exporter *x, const struct export_event *e)
{
	begin_event(x, "X", e->name, e->track);
	put_name(x, "cat", e->category);
	put_us(x, "ts", e->ts);
	put_us(x, "dur", e->dur);
	if (e->nargs)
		put_args(x, e->args, e->nargs);
	json_end(doc(x));
	for (size_t i = 0; i < e->nflows_out; i++)
		put_flow(x, "s", e->flows_out[i].id, e->track, e->flows_out[i].ts);
	if (e->flow_in)
		put_flow(x, "f", e->flow_in, e->track, e->ts);
}

/* An instant a flow starts at is a zero-length slice, for the "s" to bind to. */
static void chrome_instant(struct exporter *x, const struct export_event *e)
{
	if (e->nflows_out) {
		chrome_slice(x, e);
		return;
	}
	begin_event(x, "i", e->name, e->track);
	json_string(doc(x), "s", "t");
	put_name(x, "cat", e->category);
	put_us(x, "ts", e->ts);
	if (e->nargs)
		put_args(x, e->args, e->nargs);
	json_end(doc(x));
}

/* The func of a stack node: its location's outermost function. */
static const struct func *node_func(const struct funcs *f, uint32_t node)
{
	uint32_t n;
	const uint32_t *fn = funcs_of_node(f, node, &n);

	return &f->v.v[fn[n - 1]];
}

static void chrome_sample(struct exporter *x, const struct export_track *t,
			  const struct tr_sample *s, uint64_t ts)
{
	struct chrome *c = x->state;
	struct json *j = &c->j;

	begin_event(x, "i", node_func(x->f, s->node)->name, t);
	json_string(j, "s", "t");
	json_string(j, "cat", "cpu");
	put_us(x, "ts", ts);
	if (s->node) {
		json_uint(j, "sf", s->node);
		c->used[s->node] = true;
	}
	json_begin_object(j, "args", JSON_INLINE);
	json_uint(j, "cpu", s->cpu);
	if (s->flags & TR_SAMPLE_TRUNCATED)
		json_int(j, "truncated", 1);
	json_end(j);
	json_end(j);
}

/* Ends traceEvents and opens "samples", once. */
static void begin_samples(struct exporter *x)
{
	struct chrome *c = x->state;

	if (c->in_samples)
		return;
	c->in_samples = true;
	json_end(&c->j);
	json_break(&c->j, 0);
	json_begin_array(&c->j, "samples", JSON_LINES);
}

/* The entry of "samples" of the sample chrome_sample wrote as an instant. */
static void chrome_profile_sample(struct exporter *x, const struct export_track *t,
				  const struct tr_sample *s, uint64_t ts)
{
	struct json *j = doc(x);

	begin_samples(x);
	json_begin_object(j, NULL, JSON_INLINE);
	json_uint(j, "pid", t->pid);
	json_uint(j, "tid", t->tid);
	put_us(x, "ts", ts);
	json_uint(j, "cpu", s->cpu);
	put_name(x, "name", node_func(x->f, s->node)->name);
	if (s->node)
		json_uint(j, "sf", s->node);
	json_end(j);
}

static void chrome_counter(struct exporter *x, const struct export_track *t, uint64_t ts,
			   uint64_t value, uint32_t decimals)
{
	struct json *j = doc(x);

	begin_event(x, "C", t->name, t);
	put_us(x, "ts", ts);
	json_begin_object(j, "args", JSON_INLINE);
	json_scaled(j, t->unit ? funcs_name(x->f, t->unit) : "value", value, decimals);
	json_end(j);
	json_end(j);
}

/* The frames of the stacks the samples used: each node, its function and caller. */
static void put_stack_frames(struct exporter *x)
{
	const struct model *m = x->m;
	struct chrome *c = x->state;
	struct json *j = &c->j;
	char id[16];

	/* A node's parent has a smaller id: one pass down marks every caller. */
	for (uint32_t node = (uint32_t)m->t.nodes.len; node > 0; node--) {
		uint32_t parent = m->t.nodes.v[node - 1].parent;

		if (c->used[node] && parent && parent < node)
			c->used[parent] = true;
	}
	json_begin_object(j, "stackFrames", JSON_LINES);
	for (uint32_t node = 1; node <= m->t.nodes.len; node++) {
		const struct func *fn = node_func(x->f, node);
		uint32_t parent = m->t.nodes.v[node - 1].parent;

		if (!c->used[node])
			continue;
		snprintf(id, sizeof(id), "%" PRIu32, node);
		json_begin_object(j, id, JSON_INLINE);
		put_name(x, "name", fn->name);
		put_name(x, "category", fn->dso);
		if (parent && parent < node) {
			snprintf(id, sizeof(id), "%" PRIu32, parent);
			json_string(j, "parent", id);
		}
		json_end(j);
	}
	json_end(j);
}

/* When ts 0 was: CLOCK_REALTIME ns, and that as UTC, which the format has no field for. */
static void put_realtime_zero(struct exporter *x)
{
	time_t secs = (time_t)(x->realtime_zero / 1000000000u);
	struct tm tm;
	char utc[64], date[32];

	/* A text: a JSON number past 2^53 loses its ns in JavaScript. */
	snprintf(utc, sizeof(utc), "%" PRIu64, x->realtime_zero);
	json_string(doc(x), "realtime-ns-at-ts-0", utc);
	if (!gmtime_r(&secs, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm))
		return;
	snprintf(utc, sizeof(utc), "%s.%09" PRIu64 "Z", date, x->realtime_zero % 1000000000u);
	json_string(doc(x), "realtime-at-ts-0", utc);
}

/* After the events, each of the document's members on a line of its own. */
static void chrome_end(struct exporter *x)
{
	const struct model *m = x->m;
	struct json *j = doc(x);

	begin_samples(x);
	json_end(j);
	json_break(j, 0);
	put_stack_frames(x);
	json_break(j, 0);
	json_string(j, "displayTimeUnit", "ns");
	json_break(j, 0);
	json_begin_object(j, "metadata", JSON_LINES);
	for (size_t i = 0; i < m->t.meta.len; i++)
		if (export_meta_last(m, i))
			json_string(j, m->t.meta.v[i].key, m->t.meta.v[i].value);
	if (x->realtime_known)
		put_realtime_zero(x);
	json_end(j);
	json_end(j);
}

static void chrome_free(struct exporter *x)
{
	struct chrome *c = x->state;

	free(c->used);
	free(c);
	x->state = NULL;
}

const struct export_emitter export_chrome = {
	.begin = chrome_begin,
	.track = chrome_track,
	.slice = chrome_slice,
	.instant = chrome_instant,
	.sample = chrome_sample,
	.profile_sample = chrome_profile_sample,
	.counter = chrome_counter,
	.end = chrome_end,
	.free = chrome_free,
};
