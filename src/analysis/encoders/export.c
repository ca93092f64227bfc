/* SPDX-License-Identifier: MIT */
/*
 * gtrace export's walk: the model once over, in this order, each part
 * handed to the format's emitter (export-emitter.h) as it is found:
 *
 *   the recording's track with its metadata, analyze's findings
 *   (export-findings.c) and its counters;
 *   a track per selected process and thread, by rank when several ranks
 *   are loaded, each process then named with its rank;
 *   each selected metric series as a counter track of its process, or of
 *   the machine's or its GPU's pseudo process, an average at the start of
 *   its interval;
 *   their off-CPU intervals;
 *   lane by lane, the spans in time order on tracks of their lane, a
 *   GPU's streams under a track of that GPU whose first row shows when the
 *   GPU was busy, each linked origin a flow to its span, each stream's
 *   queue length (export-lanes.c);
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
#include "analysis/encoders/export-walk.h"
#include "analysis/views/metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "contract/attrs.h"
#include "contract/meta.h"
#include "util/saturate.h"
#include "util/xalloc.h"

#define OFFCPU_NAME "off-CPU"
#define RECORDING_NAME "recording"
/*
 * The pids of the machine's (+ 0) and the GPUs' (+ NVML index + 1) pseudo
 * processes, DEVICE_PIDS_PER_RANK more for each rank index: room for
 * 4096 ranks of up to 255 GPUs below the lanes' synthetic tids.
 */
#define DEVICE_PID_BASE 0xffe00000u
#define DEVICE_PIDS_PER_RANK 256u

uint32_t walk_name_id(struct walk *w, const char *s)
{
	return strtab_intern(&w->x.f->names, s);
}

void walk_new_track(struct walk *w, struct export_track *t, enum export_track_kind kind,
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
bool walk_in_window(const struct walk *w, uint64_t start, uint64_t dur)
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
		.name = walk_name_id(w, RECORDING_NAME),
		.category = w->cat_meta,
	};

	walk_new_track(w, &w->global, TRACK_GLOBAL, 0, walk_name_id(w, "gtrace"));
	w->e->track(&w->x, &w->global);
	w->args.len = 0;
	for (size_t i = 0; i < m->t.meta.len; i++) {
		if (!export_meta_last(m, i))
			continue;
		*VEC_PUSH(&w->args) = (struct export_arg){
			.key = walk_name_id(w, m->t.meta.v[i].key),
			.str = m->t.meta.v[i].value,
		};
	}
	ev.args = w->args.v;
	ev.nargs = w->args.len;
	w->e->instant(&w->x, &ev);
	if (w->o->findings)
		export_findings(&w->x, w->e, &w->global, w->o->findings, w->zero, w->from, w->to);

	/* Counters are totals with no time of their own: each is its last value, from the start. */
	for (size_t i = 0; i < m->counters.len; i++) {
		const char *name = model_str(m, m->counters.v[i].name);
		struct export_track t;

		walk_new_track(w, &t, TRACK_COUNTER, w->global.id, walk_name_id(w, name ? name : "-"));
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
uint32_t walk_process_track(struct walk *w, uint32_t pid)
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
	walk_new_track(w, &t, TRACK_PROCESS, 0, walk_name_id(w, label));
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
		parent = walk_process_track(w, th->pid);
		walk_new_track(w, &w->threads[i], TRACK_THREAD, parent, funcs_thread_name(w->x.f, th));
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
	walk_new_track(w, &t, TRACK_DEVICE, 0, walk_name_id(w, label));
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

			if (!walk_in_window(w, start, p[i].ts - start))
				continue;
			if (!t.id) {
				uint32_t parent = process ? walk_process_track(w, s->pid) : device_track(w, id);

				walk_new_track(w, &t, TRACK_COUNTER, parent,
					  walk_name_id(w, name && *name ? name : "-"));
				t.pid = process ? s->pid : device_pid(w, id);
				t.unit = *unit ? walk_name_id(w, unit) : 0;
				w->e->track(&w->x, &t);
			}
			w->e->counter(&w->x, &t, (start > w->from ? start : w->from) - w->zero,
				      p[i].value, s->decimals);
		}
	}
}

/* The exported track of real thread tid, or NULL. */
const struct export_track *walk_thread_track(const struct walk *w, uint32_t tid)
{
	long ti = tid < TR_SYNTHETIC_TID_BASE ? model_real_thread_index(w->x.m, tid) : -1;

	return ti >= 0 && w->threads[ti].id ? &w->threads[ti] : NULL;
}

static void walk_offcpu(struct walk *w)
{
	const struct model *m = w->x.m;
	struct export_event ev = {
		.name = walk_name_id(w, OFFCPU_NAME),
		.category = w->cat_offcpu,
	};

	for (size_t i = 0; i < m->t.offcpu.len; i++) {
		const struct tr_offcpu *oc = &m->t.offcpu.v[i];

		if (oc->end < oc->start || !walk_in_window(w, oc->start, oc->end - oc->start) ||
		    !(ev.track = walk_thread_track(w, oc->tid)))
			continue;
		ev.ts = oc->start - w->zero;
		ev.dur = oc->end - oc->start;
		w->e->slice(&w->x, &ev);
	}
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
			t = walk_thread_track(w, s->tid);
		if (!t || !walk_in_window(w, s->ts, 0) || s->node > m->t.nodes.len ||
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
	w.cat_offcpu = walk_name_id(&w, "off-cpu");
	w.cat_origin = walk_name_id(&w, "origin");
	w.cat_meta = walk_name_id(&w, "gtrace");

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
