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
 * one: no "weight". Speedscope weighs a sample by the time to its
 * thread's next entry instead, so an entry with no stack and no "cpu"
 * ends a sample's weight one period on when the thread's next sample is
 * more than two away (it slept). Times are in microseconds with the ns
 * as decimals: exact. The format has no wall clock: "metadata" says when
 * ts 0 was.
 *
 * A file with "samples" is all speedscope reads: it ignores the events,
 * and with them the lanes. So each lane's slices are in "samples" too,
 * with no "cpu": an entry where each starts, its stack the slices open
 * there (frames named after the slices, of their category), and one
 * where each ends, the stack left open (none: no "sf"). Speedscope
 * weighs an entry by the time to the next on its track, which makes
 * each slice's time its frame's; it keys a frame by name and category,
 * so a kernel launched many times is one frame (its attributes stay on
 * the "X" event, out of the frame's name).
 */
#include "analysis/encoders/export-emitter.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/hashmap.h"
#include "util/json.h"
#include "util/saturate.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* A slice on a lane, kept for its entries of "samples" (put_lane_samples). */
struct lane_slice {
	uint64_t ts, end;
	uint64_t seq;		/* the order written: the tie-break of equal slices */
	uint32_t track, pid, tid;
	uint32_t name, category;
};

/* A frame of a lane's stack: a slice's name and category inside frame parent. */
struct lane_frame {
	uint32_t parent, name, category;
};

/* A slice open on its lane while its entries of "samples" are written. */
struct open_slice {
	uint64_t end;
	uint32_t frame;
};

/* A thread's last CPU sample in "samples". */
struct last_sample {
	uint32_t pid, tid;
	uint64_t ts;
};

struct chrome {
	struct json j;		/* the document, open at traceEvents while events come */
	bool *used;		/* by node id: a sample's stack ends there, or a callee's */
	bool in_samples;	/* traceEvents ended, "samples" open */
	/* The lanes' slices, as many as the model has spans and busy stretches. */
	VEC(struct lane_slice) lane_slices;
	/* Frame id nodes + i + 1, after the stack nodes' ids. */
	VEC(struct lane_frame) lane_frames;
	struct u64map name_pairs;	/* (name, category) -> its pair id */
	struct u64map frame_ids;	/* (parent frame, pair id) -> i + 1 */
	uint64_t period;		/* the sampling period; 0 unknown: no idle entries */
	VEC(struct last_sample) last_samples;	/* by thread, as many as the model has */
	struct u64map thread_ids;	/* (pid, tid) -> i + 1 in last_samples */
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
	c->period = model_sample_period_ns(x->m);
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

/* Keeps a lane's slice for its entries of "samples". */
static void keep_lane_slice(struct exporter *x, const struct export_event *e)
{
	struct chrome *c = x->state;
	struct lane_slice *s = VEC_PUSH(&c->lane_slices);

	s->ts = e->ts;
	s->end = u64_sat_add(e->ts, e->dur);	/* a hostile span's may wrap */
	s->seq = c->lane_slices.len;
	s->track = e->track->id;
	s->pid = e->track->pid;
	s->tid = e->track->tid;
	s->name = e->name;
	s->category = e->category;
}

static void chrome_slice(struct exporter *x, const struct export_event *e)
{
	if (e->track->kind == TRACK_LANE)
		keep_lane_slice(x, e);
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

/* Opens an entry of "samples": its thread's (or lane's) and its time. */
static void begin_entry(struct exporter *x, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct json *j = doc(x);

	json_begin_object(j, NULL, JSON_INLINE);
	json_uint(j, "pid", pid);
	json_uint(j, "tid", tid);
	put_us(x, "ts", ts);
}

/* An entry with no stack one period after a thread's CPU sample: where its weight ends. */
static void put_idle_entry(struct exporter *x, const struct last_sample *last)
{
	struct chrome *c = x->state;

	begin_entry(x, last->pid, last->tid, u64_sat_add(last->ts, c->period));
	json_end(doc(x));
}

/*
 * Speedscope weighs a sample by the time to the next entry of its thread:
 * when the thread's next sample comes more than two periods after its
 * last (it was off the CPU meanwhile), an idle entry one period after the
 * last ends its weight there. The thread's last sample gets one in
 * chrome_end.
 */
static void end_last_weight(struct exporter *x, const struct export_track *t, uint64_t ts)
{
	struct chrome *c = x->state;
	uint32_t id = u64map_pair_id(&c->thread_ids, t->pid, t->tid);
	struct last_sample *last;

	if (!c->period)
		return;
	if (id > c->last_samples.len) {
		*VEC_PUSH(&c->last_samples) = (struct last_sample){ t->pid, t->tid, ts };
		return;
	}
	last = &c->last_samples.v[id - 1];
	if (ts - last->ts > 2 * c->period)
		put_idle_entry(x, last);
	last->ts = ts;
}

/* The entry of "samples" of the sample chrome_sample wrote as an instant. */
static void chrome_profile_sample(struct exporter *x, const struct export_track *t,
				  const struct tr_sample *s, uint64_t ts)
{
	struct json *j = doc(x);

	begin_samples(x);
	end_last_weight(x, t, ts);
	begin_entry(x, t->pid, t->tid, ts);
	json_uint(j, "cpu", s->cpu);
	put_name(x, "name", node_func(x->f, s->node)->name);
	if (s->node)
		json_uint(j, "sf", s->node);
	json_end(j);
}

/* By track, then start; of two that start together the longer first: the outer. */
static int cmp_lane_slices(const void *pa, const void *pb)
{
	const struct lane_slice *a = pa, *b = pb;

	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The id of the frame of slice s inside frame parent (0: none), made on first sight. */
static uint32_t lane_frame(struct exporter *x, uint32_t parent, const struct lane_slice *s)
{
	struct chrome *c = x->state;
	uint32_t pair = u64map_pair_id(&c->name_pairs, s->name, s->category);
	uint32_t i = u64map_pair_id(&c->frame_ids, parent, pair);

	if (i > c->lane_frames.len)
		*VEC_PUSH(&c->lane_frames) = (struct lane_frame){ parent, s->name, s->category };
	return (uint32_t)x->m->t.nodes.len + i;
}

/* An entry of "samples" on s's lane at ts, its stack ending at frame (0: none). */
static void put_lane_sample(struct exporter *x, const struct lane_slice *s, uint64_t ts,
			    uint32_t frame)
{
	struct chrome *c = x->state;
	struct json *j = &c->j;

	begin_entry(x, s->pid, s->tid, ts);
	if (frame) {
		put_name(x, "name", c->lane_frames.v[frame - x->m->t.nodes.len - 1].name);
		json_uint(j, "sf", frame);
	}
	json_end(j);
}

/*
 * Closes the open slices of s's lane that end by until, each an entry at
 * its end with the stack left; *last keeps the entries in time order
 * should an inner slice end after its outer one.
 */
static void close_lane_slices(struct exporter *x, const struct lane_slice *s,
			      struct open_slice *open, size_t *n, uint64_t until, uint64_t *last)
{
	while (*n && open[*n - 1].end <= until) {
		uint64_t end = open[--*n].end;

		*last = end > *last ? end : *last;
		put_lane_sample(x, s, *last, *n ? open[*n - 1].frame : 0);
	}
}

/* Each lane's slices as entries of "samples", where they start and end. */
static void put_lane_samples(struct exporter *x)
{
	struct chrome *c = x->state;
	struct lane_slice *v = c->lane_slices.v;
	size_t n = c->lane_slices.len;
	VEC(struct open_slice) open = {0};
	uint64_t last = 0;

	if (n == 0)
		return;		/* no lanes: v is NULL, which qsort may not be given */
	qsort(v, n, sizeof(*v), cmp_lane_slices);
	for (size_t i = 0; i < n; i++) {
		uint32_t frame;

		if (i == 0 || v[i].track != v[i - 1].track)
			last = 0;
		close_lane_slices(x, &v[i], open.v, &open.len, v[i].ts, &last);
		frame = lane_frame(x, open.len ? open.v[open.len - 1].frame : 0, &v[i]);
		*VEC_PUSH(&open) = (struct open_slice){ v[i].end, frame };
		last = v[i].ts;
		put_lane_sample(x, &v[i], last, frame);
		if (i + 1 == n || v[i + 1].track != v[i].track)
			close_lane_slices(x, &v[i], open.v, &open.len, UINT64_MAX, &last);
	}
	VEC_FREE(&open);
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
	for (size_t i = 0; i < c->lane_frames.len; i++) {
		const struct lane_frame *fr = &c->lane_frames.v[i];

		snprintf(id, sizeof(id), "%zu", m->t.nodes.len + i + 1);
		json_begin_object(j, id, JSON_INLINE);
		put_name(x, "name", fr->name);
		put_name(x, "category", fr->category);
		if (fr->parent) {
			snprintf(id, sizeof(id), "%" PRIu32, fr->parent);
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
	struct chrome *c = x->state;
	struct json *j = doc(x);

	begin_samples(x);
	for (size_t i = 0; i < c->last_samples.len; i++)
		put_idle_entry(x, &c->last_samples.v[i]);
	put_lane_samples(x);
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
	VEC_FREE(&c->lane_slices);
	VEC_FREE(&c->lane_frames);
	u64map_free(&c->name_pairs);
	u64map_free(&c->frame_ids);
	VEC_FREE(&c->last_samples);
	u64map_free(&c->thread_ids);
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
