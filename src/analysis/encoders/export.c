/* SPDX-License-Identifier: MIT */
/*
 * gtrace export's walk: the model once over, in this order, each part
 * handed to the format's emitter (export-emitter.h) as it is found:
 *
 *   the recording's track with its metadata and counters;
 *   a track per selected process and thread, by rank when several ranks
 *   are loaded, each process then named with its rank;
 *   each selected metric series as a counter track of its process, or of
 *   the machine's or its GPU's pseudo process, an average at the start of
 *   its interval;
 *   their off-CPU intervals;
 *   lane by lane, the spans in time order on tracks of their lane, a
 *   GPU's streams under a track of that GPU whose first row shows when the
 *   GPU was busy (export-busy.c: the union of its streams' spans); each
 *   linked origin a flow to its span: from the CUDA API call that queued
 *   the kernel, copy or memset (passes/launches.c), else from an instant on
 *   its thread; the work's queue delay, start - origin, an argument; after
 *   a stream's spans, its queue length as a counter track beside it;
 *   the CPU samples; for a format that lists them apart too, the same
 *   samples again.
 *
 * A lane's spans nest as slices must (a slice that starts inside another
 * ends inside it). The CUDA API, CPU wait and NVTX lanes hold calls made
 * by threads: each exported thread's go on tracks of the lane under that
 * thread's track, as Nsight Systems and Kineto show them; only those whose
 * thread is not exported stay on the process's. A span that would overlap
 * without nesting goes to the next track of its part ("NAME #2") that
 * takes it.
 */
#include "analysis/encoders/export-emitter.h"
#include "analysis/views/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contract/attrs.h"
#include "contract/lanes.h"
#include "contract/meta.h"
#include "util/saturate.h"
#include "util/xalloc.h"

#define OFFCPU_NAME "off-CPU"
#define GBPS_NAME "GB/s"
#define RECORDING_NAME "recording"
#define QUEUE_DELAY_NAME "queue.delay.ns"
#define BUSY_NAME "busy"
#define QUEUE_SUFFIX " queue"
/*
 * The pids of the machine's (+ 0) and the GPUs' (+ NVML index + 1) pseudo
 * processes, DEVICE_PIDS_PER_RANK more for each rank index: room for
 * 4096 ranks of up to 255 GPUs below the lanes' synthetic tids.
 */
#define DEVICE_PID_BASE 0xffe00000u
#define DEVICE_PIDS_PER_RANK 256u

/* An attribute key as exported: its name, and its values' names if it holds an enum. */
struct arg_key {
	uint32_t name;			/* names id, 0 not made yet */
	uint32_t nvalues;
	const char *const *values;	/* attr_value_names */
};

struct walk {
	struct exporter x;
	const struct export_emitter *e;
	const struct export_opts *o;
	uint64_t zero;
	uint64_t from, to;		/* the window in CLOCK_MONOTONIC ns, to excluded */
	uint32_t tracks;		/* made so far */
	uint32_t extra_tids;		/* synthetic tids given to lane tracks past the lanes' */
	struct export_track global;
	struct u64map processes;	/* pid -> track id */
	struct u64map groups;		/* pid << 32 | GPU number -> track id */
	struct u64map devices;		/* rank index << 32 | GPU NVML index + 1 (0 the
					   machine) -> track id */
	bool ranks;			/* several ranks loaded */
	struct export_track *threads;	/* by real thread index; id 0: not exported */
	VEC(struct export_arg) args;
	struct arg_key *keys;		/* by string id */
	uint32_t bytes_key;		/* the string id of bytes, 0 none */
	uint32_t gbps_name;		/* names id of a copy's GB/s, 0 not made yet */
	uint32_t cat_offcpu, cat_origin, cat_meta;
	uint32_t queue_key;		/* names id of the queue delay, 0 not made yet */
	struct api_launches launches;
	struct export_busy busy;
	VEC(struct export_flow) flows;
};

static uint32_t name_id(struct walk *w, const char *s)
{
	return strtab_intern(&w->x.f->names, s);
}

static void new_track(struct walk *w, struct export_track *t, enum export_track_kind kind,
		      uint32_t parent, uint32_t name)
{
	*t = (struct export_track){
		.id = ++w->tracks,
		.parent = parent,
		.kind = kind,
		.name = name,
	};
}

bool export_meta_last(const struct model *m, size_t i)
{
	const struct tr_meta *kv = &m->t.meta.v[i];

	return kv->key && model_meta(m, kv->key) == kv->value;
}

/* Whether [start, start + dur) meets the window; an instant when it is in it. */
static bool in_window(const struct walk *w, uint64_t start, uint64_t dur)
{
	return export_in_window(w->from, w->to, start, dur);
}

void export_window(const struct export_opts *o, uint64_t zero, uint64_t *from, uint64_t *to)
{
	*from = zero + o->start_ns;
	*to = o->end_ns > UINT64_MAX - zero ? UINT64_MAX : zero + o->end_ns;
}

/* The recording's track: its metadata as one instant at 0, its counters under it. */
static void walk_recording(struct walk *w)
{
	const struct model *m = w->x.m;
	struct export_event ev = {
		.track = &w->global,
		.name = name_id(w, RECORDING_NAME),
		.category = w->cat_meta,
	};

	new_track(w, &w->global, TRACK_GLOBAL, 0, name_id(w, "gtrace"));
	w->e->track(&w->x, &w->global);
	w->args.len = 0;
	for (size_t i = 0; i < m->t.meta.len; i++) {
		if (!export_meta_last(m, i))
			continue;
		*VEC_PUSH(&w->args) = (struct export_arg){
			.key = name_id(w, m->t.meta.v[i].key),
			.str = m->t.meta.v[i].value,
		};
	}
	ev.args = w->args.v;
	ev.nargs = w->args.len;
	w->e->instant(&w->x, &ev);

	/* Counters are totals with no time of their own: each is its last value, from the start. */
	for (size_t i = 0; i < m->counters.len; i++) {
		const char *name = model_str(m, m->counters.v[i].name);
		struct export_track t;

		new_track(w, &t, TRACK_COUNTER, w->global.id, name_id(w, name ? name : "-"));
		w->e->track(&w->x, &t);
		w->e->counter(&w->x, &t, w->from - w->zero, m->counters.v[i].value, 0);
	}
}

/* "rank N: " before a process's name when several ranks are loaded, else "". */
static const char *rank_prefix(const struct walk *w, char *buf, size_t size, size_t rank)
{
	if (!w->ranks)
		return "";
	snprintf(buf, size, "rank %" PRId64 ": ", w->x.m->ranks.v[rank].rank);
	return buf;
}

/* The track of process pid, made on first use; named after its main thread. */
static uint32_t process_track(struct walk *w, uint32_t pid)
{
	const struct model *m = w->x.m;
	long main_thread = model_real_thread_index(m, pid);
	struct export_track t;
	uint64_t id;
	char buf[48], label[512];
	const char *rank;

	if (u64map_get(&w->processes, pid, &id))
		return (uint32_t)id;
	rank = rank_prefix(w, buf, sizeof(buf), model_rank_of(m, pid));
	if (main_thread >= 0)
		snprintf(label, sizeof(label), "%s%s", rank,
			 funcs_name(w->x.f, funcs_thread_name(w->x.f, &m->threads.v[main_thread])));
	else
		snprintf(label, sizeof(label), "%sprocess %" PRIu32, rank, pid);
	new_track(w, &t, TRACK_PROCESS, 0, name_id(w, label));
	t.pid = pid;
	w->e->track(&w->x, &t);
	u64map_put(&w->processes, pid, t.id);
	return t.id;
}

/* Real thread indexes by rank number, then as the model has them. */
static int cmp_by_rank(const void *pa, const void *pb, void *ctx)
{
	const struct model *m = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int64_t ra = pid_rank(m, m->threads.v[a].pid), rb = pid_rank(m, m->threads.v[b].pid);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The threads, so that the processes' tracks are made, hence listed, by rank. */
static void walk_threads(struct walk *w)
{
	const struct model *m = w->x.m;
	size_t *order = xmalloc((m->real_threads + 1) * sizeof(*order));

	for (size_t i = 0; i < m->real_threads; i++)
		order[i] = i;
	if (w->ranks)
		qsort_r(order, m->real_threads, sizeof(*order), cmp_by_rank, (void *)m);
	for (size_t k = 0; k < m->real_threads; k++) {
		size_t i = order[k];
		const struct model_thread *th = &m->threads.v[i];
		uint32_t parent;

		if (!filter_thread(w->o->filter, w->x.f, th))
			continue;
		parent = process_track(w, th->pid);
		new_track(w, &w->threads[i], TRACK_THREAD, parent, funcs_thread_name(w->x.f, th));
		w->threads[i].pid = th->pid;
		w->threads[i].tid = th->tid;
		w->e->track(&w->x, &w->threads[i]);
	}
	free(order);
}

/* The index in m->ranks of series id's recording. */
static uint32_t series_rank(const struct walk *w, uint32_t id)
{
	return (uint32_t)model_metric_rank(w->x.m, id);
}

/* The pid of the pseudo process of series id's machine or GPU. */
static uint32_t device_pid(const struct walk *w, uint32_t id)
{
	return DEVICE_PID_BASE + series_rank(w, id) * DEVICE_PIDS_PER_RANK +
	       w->x.m->t.metrics.v[id - 1].gpu;
}

/* The pseudo process of the metrics of series id's machine or GPU, made on first use. */
static uint32_t device_track(struct walk *w, uint32_t id)
{
	const struct tr_metric *s = &w->x.m->t.metrics.v[id - 1];
	uint64_t key = (uint64_t)series_rank(w, id) << 32 | s->gpu, track;
	struct export_track t;
	char buf[48], subject[32], label[96];

	if (u64map_get(&w->devices, key, &track))
		return (uint32_t)track;
	metric_subject_label(subject, sizeof(subject), w->x.m, s);
	snprintf(label, sizeof(label), "%s%s", rank_prefix(w, buf, sizeof(buf), series_rank(w, id)),
		 subject);
	new_track(w, &t, TRACK_DEVICE, 0, name_id(w, label));
	t.pid = device_pid(w, id);
	w->e->track(&w->x, &t);
	u64map_put(&w->devices, key, t.id);
	return t.id;
}

/*
 * When point p of series id holds from: a value that is an average over
 * the interval since the reading before, from that reading (viewers hold
 * a value until the next); else, or when none came before, from its own.
 */
static uint64_t point_start(const struct walk *w, uint32_t id, bool average,
			    const struct model_point *p)
{
	uint64_t before = average ? model_metric_tick_before(w->x.m, id, p->ts) : 0;

	return before ? before : p->ts;
}

/*
 * Each selected series with a value in the window: a counter track under
 * its subject. An average whose interval began before the window is
 * stamped at its start.
 */
static void walk_metrics(struct walk *w)
{
	const struct model *m = w->x.m;

	for (uint32_t id = 1; id <= m->t.metrics.len; id++) {
		const struct tr_metric *s = &m->t.metrics.v[id - 1];
		const char *name = model_str(m, s->name), *unit = metric_unit(m, s);
		bool process = metric_subject(s) == METRIC_PROCESS;
		bool average = metric_unit_is_average(unit);
		struct export_track t = {0};
		const struct model_point *p;
		size_t n;

		if (!metric_selected(w->x.f, w->o->filter, s, series_rank(w, id)))
			continue;
		p = model_metric_points(m, id, &n);
		for (size_t i = 0; i < n; i++) {
			uint64_t start = point_start(w, id, average, &p[i]);

			if (!in_window(w, start, p[i].ts - start))
				continue;
			if (!t.id) {
				uint32_t parent = process ? process_track(w, s->pid) : device_track(w, id);

				new_track(w, &t, TRACK_COUNTER, parent,
					  name_id(w, name && *name ? name : "-"));
				t.pid = process ? s->pid : device_pid(w, id);
				t.unit = *unit ? name_id(w, unit) : 0;
				w->e->track(&w->x, &t);
			}
			w->e->counter(&w->x, &t, (start > w->from ? start : w->from) - w->zero,
				      p[i].value, s->decimals);
		}
	}
}

/* The exported track of real thread tid, or NULL. */
static const struct export_track *thread_track(const struct walk *w, uint32_t tid)
{
	long ti = tid < TR_SYNTHETIC_TID_BASE ? model_real_thread_index(w->x.m, tid) : -1;

	return ti >= 0 && w->threads[ti].id ? &w->threads[ti] : NULL;
}

static void walk_offcpu(struct walk *w)
{
	const struct model *m = w->x.m;
	struct export_event ev = {
		.name = name_id(w, OFFCPU_NAME),
		.category = w->cat_offcpu,
	};

	for (size_t i = 0; i < m->t.offcpu.len; i++) {
		const struct tr_offcpu *oc = &m->t.offcpu.v[i];

		if (oc->end < oc->start || !in_window(w, oc->start, oc->end - oc->start) ||
		    !(ev.track = thread_track(w, oc->tid)))
			continue;
		ev.ts = oc->start - w->zero;
		ev.dur = oc->end - oc->start;
		w->e->slice(&w->x, &ev);
	}
}

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
	struct export_arg spans = { .key = name_id(w, "spans") };
	struct export_event ev = {
		.track = &t,
		.name = name_id(w, BUSY_NAME),
		.category = name_id(w, BUSY_NAME),
		.args = &spans,
		.nargs = 1,
	};
	char label[48];

	if (!export_busy_next(&w->busy, key, &at, &busy))
		return;
	snprintf(label, sizeof(label), "%s " BUSY_NAME, funcs_name(w->x.f, group->name));
	new_track(w, &t, TRACK_LANE, group->id, name_id(w, label));
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
	new_track(w, &t, TRACK_GROUP, process, name_id(w, label));
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
	const struct export_track *thread = part ? thread_track(w, part) : NULL;
	char label[512];

	if (!name || !*name)
		name = "-";
	if (r)
		snprintf(label, sizeof(label), "%s #%zu", name, r + 1);
	else
		snprintf(label, sizeof(label), "%s", name);
	new_track(w, t, TRACK_LANE, thread ? thread->id : lw->parent, name_id(w, label));
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
		w->gbps_name = name_id(w, GBPS_NAME);
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

			ak->name = name_id(w, text && *text ? text : "-");
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
	*VEC_PUSH(&w->args) = (struct export_arg){ .key = name_id(w, "origin.tid"),
						   .value = sp->origin_tid };
	*VEC_PUSH(&w->args) = (struct export_arg){ .key = name_id(w, "origin"),
						   .str = origin_outcome_name(outcome) };
	/* How long the GPU work waited after it was queued. */
	if (outcome != ORIGIN_LINKED || sp->start < sp->origin_ts ||
	    model_lane_class(m, sp->lane) != MODEL_LANE_CUDA_STREAM)
		return;
	if (!w->queue_key)
		w->queue_key = name_id(w, QUEUE_DELAY_NAME);
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
	else if (outcome == ORIGIN_LINKED && in_window(w, sp->origin_ts, 0))
		origin = thread_track(w, sp->origin_tid);
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
		new_track(w, &t, TRACK_COUNTER, lw->parent, name_id(w, label));
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
	uint32_t process = process_track(w, l->pid), gpu = 0;
	const char *kind = model_str(m, l->kind);

	lw.category = name_id(w, kind && *kind ? kind : "lane");

	/* A GPU's streams, and the windows when its PCs were sampled. */
	if (class == MODEL_LANE_CUDA_STREAM || class == MODEL_LANE_CUDA_PC)
		gpu = gpu_track(w, l->pid, process, model_str(m, l->name));
	lw.parent = gpu ? gpu : process;
	/* A call's thread is its origin's: the span ran on the thread that made it. */
	for (size_t i = 0; i < n; i++) {
		uint32_t tid = m->t.spans.v[spans[i].span].origin_tid;

		if (lw.by_thread && thread_track(w, tid))
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
	if (!sp->lane || sp->lane > w->x.m->t.lanes.len || !in_window(w, sp->start, sp->dur))
		return false;
	return filter_span(w->o->filter, w->x.f, lane_selected, sp);
}

static void walk_lanes(struct walk *w)
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
				.end = sp->start + sp->dur,
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

/* The selected samples in the window, each handed to emit. */
static void walk_samples(struct walk *w,
			 void (*emit)(struct exporter *x, const struct export_track *t,
				      const struct tr_sample *s, uint64_t ts))
{
	const struct model *m = w->x.m;
	bool *node_ok = filter_nodes(w->x.f, w->o->filter);
	const struct export_track *t = NULL;

	for (size_t i = 0; i < m->t.samples.len; i++) {
		const struct tr_sample *s = &m->t.samples.v[i];

		/* Samples come in runs of one thread: one lookup a run. */
		if (i == 0 || s->tid != s[-1].tid)
			t = thread_track(w, s->tid);
		if (!t || !in_window(w, s->ts, 0) || s->node > m->t.nodes.len ||
		    (node_ok && !node_ok[s->node]))
			continue;
		emit(&w->x, t, s, s->ts - w->zero);
	}
	free(node_ok);
}

/* What time 0 is on the clocks: CLOCK_REALTIME by the pair the recording read at its start. */
static void set_clocks(struct exporter *x, uint64_t zero)
{
	int64_t offset, realtime;

	x->monotonic_zero = zero;
	if (!model_clock_offset(model_meta(x->m, META_CLOCK_START), &offset))
		return;
	realtime = i64_sat_add(offset, zero > INT64_MAX ? INT64_MAX : (int64_t)zero);
	x->realtime_known = realtime > 0;
	x->realtime_zero = (uint64_t)realtime;
}

int export_write(FILE *out, struct funcs *f, const struct export_opts *o)
{
	const struct model *m = f->m;
	struct walk w = {
		.x = { .out = out, .f = f, .m = m },
		.e = o->format == EXPORT_CHROME ? &export_chrome : &export_perfetto,
		.o = o,
		.zero = model_time_zero(m),
	};

	set_clocks(&w.x, w.zero);
	export_window(o, w.zero, &w.from, &w.to);
	if (o->format == EXPORT_PPROF)
		return export_pprof(out, f, o, w.from, w.to);
	w.threads = xcalloc(m->real_threads + 1, sizeof(*w.threads));
	w.ranks = m->ranks.len > 1;
	w.keys = xcalloc(m->t.strings.len + 1, sizeof(*w.keys));
	w.bytes_key = model_string_id(m, CUDA_ATTR_BYTES);
	w.cat_offcpu = name_id(&w, "off-cpu");
	w.cat_origin = name_id(&w, "origin");
	w.cat_meta = name_id(&w, "gtrace");

	w.e->begin(&w.x);
	walk_recording(&w);
	walk_threads(&w);
	walk_metrics(&w);
	walk_offcpu(&w);
	walk_lanes(&w);
	walk_samples(&w, w.e->sample);
	if (w.e->profile_sample)
		walk_samples(&w, w.e->profile_sample);
	w.e->end(&w.x);
	w.e->free(&w.x);

	u64map_free(&w.processes);
	u64map_free(&w.groups);
	u64map_free(&w.devices);
	free(w.threads);
	free(w.keys);
	VEC_FREE(&w.args);
	return ferror(out) ? -EIO : 0;
}
