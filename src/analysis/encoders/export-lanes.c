/* SPDX-License-Identifier: MIT */
/*
 * gtrace export's lanes (export.c walks the rest): lane by lane, the
 * selected spans in time order on tracks of their lane; a GPU's streams
 * under a track of that GPU whose first row shows when it was busy
 * (export-busy.c); each linked origin a flow to its span, from the CUDA
 * API call that queued the work (passes/launches.c), else from an instant
 * on its thread, with the work's queue delay an argument; after a
 * stream's spans, its queue length as a counter track beside it.
 */
#include "analysis/encoders/export-walk.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contract/attrs.h"
#include "contract/lanes.h"
#include "util/saturate.h"
#include "util/xalloc.h"

#define GBPS_NAME "GB/s"
#define QUEUE_DELAY_NAME "queue.delay.ns"
#define BUSY_NAME "busy"
#define QUEUE_SUFFIX " queue"
/* One selected span of a lane, with what orders it. */
struct lane_span {
	uint32_t part;		/* a thread's calls: the origin tid; else 0 */
	uint32_t span;		/* index in m->t.spans */
	uint64_t start, end;
};

/* By part, then outermost first: the earlier start, the later end, the later span. */
static int cmp_lane_spans(const void *pa, const void *pb)
{
	const struct lane_span *a = pa, *b = pb;

	if (a->part != b->part)
		return a->part < b->part ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->span > b->span ? -1 : a->span < b->span;
}

/* A track of a lane: the ends of its open slices, innermost last. */
struct lane_track {
	struct export_track track;
	VEC(uint64_t) open;
};

struct lane_walk {
	uint32_t lane;
	uint32_t parent;	/* the process's or GPU's track */
	uint32_t category;	/* the lane's kind */
	bool by_thread;		/* calls made by threads: CUDA API, CPU wait, NVTX */
	VEC(struct lane_track) rows;	/* of the current part */
};

/* A synthetic tid for a track that is no lane's own, past the lanes'. */
static uint32_t extra_tid(struct walk *w)
{
	return TR_SYNTHETIC_TID_BASE + (uint32_t)w->x.m->t.lanes.len + w->extra_tids++;
}

/*
 * The busy row of GPU group (key export_gpu_key), its first: a slice for
 * each stretch when one of its streams' exported spans ran, none when none.
 */
static void walk_busy(struct walk *w, const struct export_track *group, uint64_t key)
{
	size_t at = export_busy_first(&w->busy, key);
	struct export_busy_interval busy;
	struct export_track t;
	struct export_arg spans = { .key = walk_name_id(w, "spans") };
	struct export_event ev = {
		.track = &t,
		.name = walk_name_id(w, BUSY_NAME),
		.category = walk_name_id(w, BUSY_NAME),
		.args = &spans,
		.nargs = 1,
	};
	char label[48];

	if (!export_busy_next(&w->busy, key, &at, &busy))
		return;
	snprintf(label, sizeof(label), "%s " BUSY_NAME, funcs_name(w->x.f, group->name));
	walk_new_track(w, &t, TRACK_LANE, group->id, walk_name_id(w, label));
	t.pid = group->pid;
	t.tid = extra_tid(w);
	w->e->track(&w->x, &t);
	do {
		ev.ts = busy.start - w->zero;
		ev.dur = busy.end - busy.start;
		spans.value = busy.spans;
		w->e->slice(&w->x, &ev);
	} while (export_busy_next(&w->busy, key, &at, &busy));
}

/*
 * The track of the GPU of a lane named for its device ("GPU0 stream 7"),
 * under its process, with its busy row; 0 when the name has none.
 */
static uint32_t gpu_track(struct walk *w, uint32_t pid, uint32_t process, const char *lane_name)
{
	struct export_track t;
	uint32_t gpu;
	uint64_t key, id;
	char label[32];

	if (!cuda_lane_device(lane_name, &gpu))
		return 0;
	key = export_gpu_key(pid, gpu);
	if (u64map_get(&w->groups, key, &id))
		return (uint32_t)id;
	snprintf(label, sizeof(label), "GPU %" PRIu32, gpu);
	walk_new_track(w, &t, TRACK_GROUP, process, walk_name_id(w, label));
	t.pid = pid;
	w->e->track(&w->x, &t);
	u64map_put(&w->groups, key, t.id);
	walk_busy(w, &t, key);
	return t.id;
}

/*
 * Names the r-th track of part of a lane and gives it a tid of its own:
 * a thread's calls under that thread's track, the rest under the lane's
 * process or GPU.
 */
static void make_row_track(struct walk *w, struct lane_walk *lw, uint32_t part, size_t r)
{
	const struct model *m = w->x.m;
	const struct tr_lane *lane = &m->t.lanes.v[lw->lane - 1];
	struct export_track *t = &lw->rows.v[r].track;
	const char *name = model_str(m, lane->name);
	const struct export_track *thread = part ? walk_thread_track(w, part) : NULL;
	char label[512];

	if (!name || !*name)
		name = "-";
	if (r)
		snprintf(label, sizeof(label), "%s #%zu", name, r + 1);
	else
		snprintf(label, sizeof(label), "%s", name);
	walk_new_track(w, t, TRACK_LANE, thread ? thread->id : lw->parent, walk_name_id(w, label));
	t->pid = lane->pid;
	t->thread = thread;
	/* The lane's own tid (what threads lists) for its first track. */
	if (!part && !r)
		t->tid = TR_SYNTHETIC_TID_BASE + lw->lane - 1;
	else
		t->tid = extra_tid(w);
	w->e->track(&w->x, t);
}

/* The track for s: the first of its part where it nests, made when none does. */
static const struct export_track *place(struct walk *w, struct lane_walk *lw,
					const struct lane_span *s)
{
	size_t r;

	for (r = 0; r < lw->rows.len; r++) {
		struct lane_track *row = &lw->rows.v[r];

		while (row->open.len && row->open.v[row->open.len - 1] <= s->start)
			row->open.len--;
		if (!row->open.len || s->end <= row->open.v[row->open.len - 1])
			break;
	}
	if (r == lw->rows.len) {
		VEC_PUSH(&lw->rows);
		make_row_track(w, lw, s->part, r);
	}
	*VEC_PUSH(&lw->rows.v[r].open) = s->end;
	return &lw->rows.v[r].track;
}

/* A copy's or memset's bandwidth, as report --gpu counts it: bytes per ns, which is GB/s. */
static void copy_bandwidth(struct walk *w, size_t span)
{
	const struct model *m = w->x.m;
	const struct tr_span *sp = &m->t.spans.v[span];
	uint64_t bytes;
	double milli_gbps;

	if (!sp->dur || !w->bytes_key || !model_span_is_copy(m, sp) ||
	    !model_span_attr(m, span + 1, w->bytes_key, &bytes))
		return;
	milli_gbps = round((double)bytes * 1000 / (double)sp->dur);
	if (!w->gbps_name)
		w->gbps_name = walk_name_id(w, GBPS_NAME);
	*VEC_PUSH(&w->args) = (struct export_arg){
		.key = w->gbps_name,
		.value = milli_gbps < 0x1p64 ? (uint64_t)milli_gbps : UINT64_MAX,
		.decimals = 3,
	};
}

/* The span's attributes, then its origin's thread and how it linked. */
static void span_args(struct walk *w, size_t span, enum origin_outcome outcome)
{
	const struct model *m = w->x.m;
	const struct model_span_attrs *sa = &m->span_attrs[span + 1];
	const struct tr_span *sp = &m->t.spans.v[span];

	w->args.len = 0;
	for (uint32_t k = 0; k < sa->count; k++) {
		const struct tr_span_attr *a = &m->t.span_attrs.v[sa->first + k];
		uint32_t key = a->key <= m->t.strings.len ? a->key : 0;
		struct arg_key *ak = &w->keys[key];

		if (!ak->name) {
			const char *text = model_str(m, key);

			ak->name = walk_name_id(w, text && *text ? text : "-");
			ak->values = key ? attr_value_names(text, &ak->nvalues) : NULL;
		}
		/* An enumeration by its name (report --gpu's, where it prints one), else its number. */
		*VEC_PUSH(&w->args) = (struct export_arg){
			.key = ak->name,
			.value = a->value,
			.str = a->value < ak->nvalues ? ak->values[a->value] : NULL,
		};
	}
	copy_bandwidth(w, span);
	if (outcome == ORIGIN_NONE)
		return;
	*VEC_PUSH(&w->args) = (struct export_arg){ .key = walk_name_id(w, "origin.tid"),
						   .value = sp->origin_tid };
	*VEC_PUSH(&w->args) = (struct export_arg){ .key = walk_name_id(w, "origin"),
						   .str = origin_outcome_name(outcome) };
	/* How long the GPU work waited after it was queued. */
	if (!origin_of_thread(outcome) || sp->start < sp->origin_ts ||
	    model_lane_class(m, sp->lane) != MODEL_LANE_CUDA_STREAM)
		return;
	if (!w->queue_key)
		w->queue_key = walk_name_id(w, QUEUE_DELAY_NAME);
	*VEC_PUSH(&w->args) = (struct export_arg){ .key = w->queue_key,
						   .value = sp->start - sp->origin_ts };
}

/* The flows that start at span's slice: to the work its API call queued. */
static void launch_flows(struct walk *w, size_t span)
{
	const struct api_launches *l = &w->launches;

	w->flows.len = 0;
	for (uint32_t i = l->first[span]; i < l->first[span + 1]; i++) {
		uint32_t work = l->launched[i];

		*VEC_PUSH(&w->flows) = (struct export_flow){
			.id = (uint64_t)work + 1,
			.ts = w->x.m->t.spans.v[work].origin_ts - w->zero,
		};
	}
}

static void emit_span(struct walk *w, struct lane_walk *lw, const struct lane_span *s)
{
	const struct model *m = w->x.m;
	const struct tr_span *sp = &m->t.spans.v[s->span];
	enum origin_outcome outcome = w->o->links->outcome[s->span];
	const struct export_track *origin = NULL;
	struct export_event ev = {
		.ts = sp->start - w->zero,
		.dur = sp->dur,
		.name = funcs_span_frame(w->x.f, sp->name),
		.category = lw->category,
	};

	if (w->launches.call[s->span])
		ev.flow_in = s->span + 1;
	else if (outcome == ORIGIN_LINKED && walk_in_window(w, sp->origin_ts, 0))
		origin = walk_thread_track(w, sp->origin_tid);
	ev.track = place(w, lw, s);
	span_args(w, s->span, outcome);
	ev.args = w->args.v;
	ev.nargs = w->args.len;
	if (origin) {
		const struct export_flow flow = { .id = s->span + 1, .ts = sp->origin_ts - w->zero };
		struct export_event from = {
			.track = origin,
			.ts = flow.ts,
			.name = ev.name,
			.category = w->cat_origin,
			.flows_out = &flow,
			.nflows_out = 1,
		};

		w->e->instant(&w->x, &from);
		ev.flow_in = flow.id;
	}
	launch_flows(w, s->span);
	ev.flows_out = w->flows.v;
	ev.nflows_out = w->flows.len;
	w->e->slice(&w->x, &ev);
}

/*
 * The queue length of stream lane lw (passes/launches.c), a counter track
 * beside its spans: a value at each change.
 */
static void walk_queue(struct walk *w, const struct lane_walk *lw, const struct lane_span *spans,
		       size_t n)
{
	const struct model *m = w->x.m;
	const struct tr_lane *l = &m->t.lanes.v[lw->lane - 1];
	const char *name = model_str(m, l->name);
	uint32_t *ids = xmalloc((n + 1) * sizeof(*ids));
	struct queue_step *steps;
	struct export_track t;
	size_t nsteps;
	char label[512];

	for (size_t i = 0; i < n; i++)
		ids[i] = spans[i].span;
	nsteps = stream_queue_steps(m, &w->launches, ids, n, w->from, &steps);
	free(ids);
	if (nsteps) {
		snprintf(label, sizeof(label), "%s" QUEUE_SUFFIX, name && *name ? name : "-");
		walk_new_track(w, &t, TRACK_COUNTER, lw->parent, walk_name_id(w, label));
		t.pid = l->pid;
		w->e->track(&w->x, &t);
	}
	for (size_t i = 0; i < nsteps; i++)
		w->e->counter(&w->x, &t, steps[i].ts - w->zero, steps[i].len, 0);
	free(steps);
}

static void walk_lane(struct walk *w, uint32_t lane, struct lane_span *spans, size_t n)
{
	const struct model *m = w->x.m;
	const struct tr_lane *l = &m->t.lanes.v[lane - 1];
	enum model_lane_class class = model_lane_class(m, lane);
	struct lane_walk lw = {
		.lane = lane,
		.by_thread = class == MODEL_LANE_CUDA_API || class == MODEL_LANE_CUDA_WAIT ||
			     class == MODEL_LANE_NVTX,
	};
	uint32_t process = walk_process_track(w, l->pid), gpu = 0;
	const char *kind = model_str(m, l->kind);

	lw.category = walk_name_id(w, kind && *kind ? kind : "lane");

	/* A GPU's streams, and the windows when its PCs were sampled. */
	if (class == MODEL_LANE_CUDA_STREAM || class == MODEL_LANE_CUDA_PC)
		gpu = gpu_track(w, l->pid, process, model_str(m, l->name));
	lw.parent = gpu ? gpu : process;
	/* A call's thread is its origin's: the span ran on the thread that made it. */
	for (size_t i = 0; i < n; i++) {
		uint32_t tid = m->t.spans.v[spans[i].span].origin_tid;

		if (lw.by_thread && walk_thread_track(w, tid))
			spans[i].part = tid;
	}
	qsort(spans, n, sizeof(*spans), cmp_lane_spans);
	for (size_t i = 0; i < n; i++) {
		if (i && spans[i].part != spans[i - 1].part) {
			for (size_t r = 0; r < lw.rows.len; r++)
				VEC_FREE(&lw.rows.v[r].open);
			lw.rows.len = 0;
		}
		emit_span(w, &lw, &spans[i]);
	}
	if (class == MODEL_LANE_CUDA_STREAM)
		walk_queue(w, &lw, spans, n);
	for (size_t r = 0; r < lw.rows.len; r++)
		VEC_FREE(&lw.rows.v[r].open);
	VEC_FREE(&lw.rows);
}

/*
 * A span is exported when filter_span selects it (its lane is selected as a
 * thread would be, or its origin thread is: --tid of a CPU thread, the work
 * it queued), and it meets the window.
 */
static bool span_selected(const struct walk *w, const bool *lane_selected,
			  const struct tr_span *sp)
{
	if (!sp->lane || sp->lane > w->x.m->t.lanes.len || !walk_in_window(w, sp->start, sp->dur))
		return false;
	return filter_span(w->o->filter, w->x.f, lane_selected, sp);
}

void walk_lanes(struct walk *w)
{
	const struct model *m = w->x.m;
	size_t nlanes = m->t.lanes.len, *at = xcalloc(nlanes + 2, sizeof(*at));
	bool *selected = filter_lanes(w->x.f, w->o->filter);
	struct lane_span *spans;
	uint32_t *ids;

	/* By lane: counted into at[lane + 1], so that the prefix sum leaves at[lane] as its start. */
	for (size_t i = 0; i < m->t.spans.len; i++)
		if (span_selected(w, selected, &m->t.spans.v[i]))
			at[m->t.spans.v[i].lane + 1]++;
	for (size_t lane = 1; lane <= nlanes + 1; lane++)
		at[lane] += at[lane - 1];
	spans = xmalloc((at[nlanes + 1] + 1) * sizeof(*spans));
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];

		if (span_selected(w, selected, sp))
			spans[at[sp->lane]++] = (struct lane_span){
				.span = (uint32_t)i,
				.start = sp->start,
				.end = model_span_end(sp),
			};
	}
	ids = xmalloc((at[nlanes + 1] + 1) * sizeof(*ids));
	for (size_t i = 0; i < at[nlanes + 1]; i++)
		ids[i] = spans[i].span;
	api_launches_find(&w->launches, m, w->o->links->outcome, ids, at[nlanes + 1], w->from,
			  w->to);
	export_busy_find(&w->busy, m, ids, at[nlanes + 1]);
	free(ids);
	/* The fill moved each at[lane] to its end: lane's spans are at[lane - 1] .. at[lane]. */
	for (uint32_t lane = 1; lane <= nlanes; lane++)
		if (at[lane] > at[lane - 1])
			walk_lane(w, lane, spans + at[lane - 1], at[lane] - at[lane - 1]);
	api_launches_free(&w->launches);
	export_busy_free(&w->busy);
	VEC_FREE(&w->flows);
	free(spans);
	free(selected);
	free(at);
}
