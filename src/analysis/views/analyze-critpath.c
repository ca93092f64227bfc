/* SPDX-License-Identifier: MIT */
/*
 * gtrace analyze's critical path: for each device, the chain of dependent
 * stretches across its process's CPU threads and GPU streams that ends at
 * the device's last work and starts at the process's first event, found
 * by the classic backward pass: from the last work, step to the
 * predecessor that finished last, charging every stretch on the way to
 * what ran in it (a thread's CPU work or CUDA call, a kernel, a copy) or
 * to why nothing did (a wait). The stretches tile the time from the first
 * event to the last work's end: their sum is that wall time.
 *
 * The dependencies, from what the recording holds:
 *   work on a stream waits for the work before it on its stream, for its
 *   launch call, and, when it started well after both, for the process's
 *   work on another stream that ended last before it (an event, a shared
 *   engine);
 *   a thread at a time waits for its own work back to the end of its last
 *   synchronizing call, whose end waits for the process's work that ended
 *   last within the call; a call that no work ended in is the thread's.
 * Each step moves the time back before a work's end or a call's end that
 * it had not passed: the walk takes as many steps as there are works and
 * calls at most, each a binary search. man/gtrace-analyze.1 tells it.
 */
#include "analysis/views/analyze-private.h"

#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/xalloc.h"

/* Work that started this much after its stream and launch call were ready waited for another. */
#define DEPENDENCY_SLACK_NS 20000
/* The text lists at most these items. */
#define ITEMS_SHOWN 20

static const char *const kind_names[CRITPATH_KINDS] = {
	[CRITPATH_CPU] = "cpu",
	[CRITPATH_OFFCPU] = "off-cpu",
	[CRITPATH_API] = "api",
	[CRITPATH_KERNEL] = "kernel",
	[CRITPATH_COPY] = "copy",
	[CRITPATH_MEMSET] = "memset",
	[CRITPATH_WAIT] = "wait",
};

static const char *const wait_names[CRITWAITS] = {
	[CRITWAIT_LAUNCH] = "launch",
	[CRITWAIT_QUEUE] = "queue",
	[CRITWAIT_DEPENDENCY] = "dependency",
	[CRITWAIT_SYNC] = "synchronization",
	[CRITWAIT_UNKNOWN] = "unknown",
};

/* Calls of threads and works of processes, sorted by owner, then end. */
static int cmp_intervals(const void *pa, const void *pb)
{
	const struct owned_span *a = pa, *b = pb;

	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return (a->span > b->span) - (a->span < b->span);
}

/* How many of n sorted rows come before owner's first ending after t. */
static size_t ending_by(const struct owned_span *v, size_t n, uint32_t owner, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].owner < owner || (v[mid].owner == owner && v[mid].end <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The last of owner's rows that ended by t, or NULL. */
static const struct owned_span *last_ended(const struct owned_span *v, size_t n,
					    uint32_t owner, uint64_t t)
{
	size_t at = ending_by(v, n, owner, t);

	return at && v[at - 1].owner == owner ? &v[at - 1] : NULL;
}

/* A stretch of a thread's own work on the path, outside CUDA calls, for its samples. */
struct piece {
	uint32_t tid;
	uint64_t from, to;
};

/* What the walks read, built once for all devices. */
struct index {
	const struct model *m;
	const struct api_launches *launches;
	const struct timed *samples;
	size_t nsamples;
	VEC(struct owned_span) works;	/* stream work of some time, by pid */
	VEC(struct owned_span) waits;	/* synchronizing calls, by tid */
	VEC(struct owned_span) calls;	/* outermost API calls, by tid: they do not overlap */
	VEC(struct owned_span) blocked;	/* blocked off-CPU intervals, by tid: disjoint */
	uint32_t *prev;		/* by span: the work before it on its stream + 1; 0 none */
	VEC(struct piece) pieces;	/* of the walk under way */
};

/* One device's walk: everything before t is still to charge, down to t0. */
struct walk {
	struct index *x;
	struct analyze_critpath *cp;
	struct u64map items;	/* kind << 32 | id -> index in cp->items */
	uint64_t t, t0;
};

static uint32_t lane_pid(const struct model *m, uint32_t lane)
{
	return m->t.lanes.v[lane - 1].pid;
}

static void add_item(struct walk *w, uint32_t kind, uint32_t id, uint64_t ns)
{
	uint64_t key = (uint64_t)kind << 32 | id, at;

	if (!ns)
		return;
	if (!u64map_get(&w->items, key, &at)) {
		at = w->cp->items.len;
		*VEC_PUSH(&w->cp->items) = (struct critpath_item){ .kind = kind, .id = id };
		u64map_put(&w->items, key, at);
	}
	w->cp->items.v[at].ns += ns;
}

/* Charges [from, t) to kind and id, and moves t back to from. */
static void charge(struct walk *w, uint32_t kind, uint32_t id, uint64_t from)
{
	if (from < w->t0)
		from = w->t0;
	if (from >= w->t)
		return;
	add_item(w, kind, id, w->t - from);
	w->t = from;
}

/* [from, t) of thread tid's own work: its samples will say whose. */
static void charge_piece(struct walk *w, uint32_t tid, uint64_t from)
{
	if (from < w->t0)
		from = w->t0;
	if (from >= w->t)
		return;
	*VEC_PUSH(&w->x->pieces) = (struct piece){ tid, from, w->t };
	w->t = from;
}

/* Charges [from, t) of thread tid: its CUDA calls by name, the rest to its samples. */
static void charge_thread(struct walk *w, uint32_t tid, uint64_t from)
{
	const struct owned_span *c = w->x->calls.v;
	size_t n = w->x->calls.len, at = ending_by(c, n, tid, w->t);

	/* The call open at t is the one after those that ended by then. */
	if (at < n && c[at].owner == tid && c[at].start < w->t)
		at++;
	while (w->t > from && at && c[at - 1].owner == tid && c[at - 1].end > from) {
		const struct owned_span *call = &c[--at];

		charge_piece(w, tid, call->end < w->t ? call->end : w->t);
		charge(w, CRITPATH_API, w->x->m->t.spans.v[call->span].name,
		       call->start > from ? call->start : from);
	}
	charge_piece(w, tid, from);
}

static uint32_t work_kind(const struct model *m, const struct tr_span *sp)
{
	switch (model_span_class(m, sp)) {
	case MODEL_SPAN_COPY:
		return CRITPATH_COPY;
	case MODEL_SPAN_MEMSET:
		return CRITPATH_MEMSET;
	default:
		return CRITPATH_KERNEL;
	}
}

/*
 * Charges the wait why from the end of work span to t, then the work, and
 * picks its predecessor: the work *span, or the launching thread *tid
 * (returns false); neither, and *tid 0.
 */
static bool step_work(struct walk *w, uint32_t *span, uint32_t why, uint32_t *tid)
{
	const struct model *m = w->x->m;
	const struct tr_span *sp = &m->t.spans.v[*span];
	uint32_t prev = w->x->prev[*span];
	struct launch l = launch_of(m, w->x->launches, *span);
	const struct owned_span *other;
	uint64_t stream_at = 0, launch_at = 0, ready;

	charge(w, CRITPATH_WAIT, why, model_span_end(sp));
	charge(w, work_kind(m, sp), sp->name, sp->start);
	if (prev)
		stream_at = model_span_end(&m->t.spans.v[prev - 1]);
	/* The work may start before its call returns: the call waited for nothing after that. */
	if (l.tid)
		launch_at = l.end < w->t ? l.end : w->t;
	stream_at = stream_at < w->t ? stream_at : w->t;
	ready = stream_at > launch_at ? stream_at : launch_at;
	other = last_ended(w->x->works.v, w->x->works.len, lane_pid(m, sp->lane), w->t);
	*tid = 0;
	if (other && other->end > ready && w->t - ready > DEPENDENCY_SLACK_NS) {
		charge(w, CRITPATH_WAIT, CRITWAIT_DEPENDENCY, other->end);
		*span = other->span;
		return true;
	}
	if (prev && (!l.tid || stream_at >= launch_at)) {
		charge(w, CRITPATH_WAIT, CRITWAIT_QUEUE, stream_at);
		*span = prev - 1;
		return true;
	}
	if (l.tid) {
		charge(w, CRITPATH_WAIT, CRITWAIT_LAUNCH, launch_at);
		*tid = l.tid;
	}
	return false;
}

/*
 * Charges thread tid back to its last synchronizing call, and returns the
 * work that call waited for, + 1; 0 when the thread had no call left (all
 * charged) or the call waited for none (charged as the thread's).
 */
static uint32_t step_thread(struct walk *w, uint32_t tid)
{
	const struct model *m = w->x->m;
	const struct owned_span *call = last_ended(w->x->waits.v, w->x->waits.len, tid, w->t);
	const struct owned_span *waited;

	if (!call || call->end <= w->t0) {
		charge_thread(w, tid, w->t0);
		return 0;
	}
	charge_thread(w, tid, call->end);
	waited = last_ended(w->x->works.v, w->x->works.len,
			    lane_pid(m, m->t.spans.v[call->span].lane), call->end);
	if (waited && waited->end > call->start)
		return waited->span + 1;
	charge_thread(w, tid, call->start);
	return 0;
}

/*
 * Charges the time thread tid was blocked in [from, to) to the stack it
 * blocked in, and returns it. Preempted, it wanted to run: that time stays
 * its samples', as does off-CPU time of no known reason (a file older
 * than the reasons), which may be either.
 */
static uint64_t charge_blocked(struct walk *w, uint32_t tid, uint64_t from, uint64_t to)
{
	const struct owned_span *o = w->x->blocked.v;
	size_t n = w->x->blocked.len;
	uint64_t sum = 0;

	for (size_t i = ending_by(o, n, tid, from); i < n && o[i].owner == tid && o[i].start < to;
	     i++) {
		uint64_t ns = (o[i].end < to ? o[i].end : to) - (o[i].start > from ? o[i].start : from);

		add_item(w, CRITPATH_OFFCPU, w->x->m->t.offcpu.v[o[i].span].node, ns);
		sum += ns;
	}
	return sum;
}

/*
 * The stretches of the threads' own work: the time they were off the CPU
 * to the stacks they left it in, the rest spread over their samples in
 * them, or their nearest.
 */
static void charge_pieces(struct walk *w)
{
	const struct timed *s = w->x->samples;
	size_t n = w->x->nsamples;
	uint64_t period = model_sample_period_ns(w->x->m);

	for (size_t p = 0; p < w->x->pieces.len; p++) {
		const struct piece *pc = &w->x->pieces.v[p];
		size_t first, end = timed_within(s, n, pc->tid, pc->from, pc->to, &first);
		uint64_t ns = pc->to - pc->from - charge_blocked(w, pc->tid, pc->from, pc->to);
		uint32_t node = 0;

		for (size_t i = first; i < end; i++)
			add_item(w, CRITPATH_CPU, s[i].node, split_part(ns, end - first, i - first));
		if (end > first)
			continue;
		/*
		 * None in it, as in a short stretch: the thread's next sample
		 * within a period, which counted the CPU time before it.
		 */
		if (end < n && s[end].owner == pc->tid && s[end].start - pc->to <= period)
			node = s[end].node;
		add_item(w, CRITPATH_CPU, node, ns);
	}
}

/* Device cp's walk back from its last work, to the process's first event at t0. */
static void walk_device(struct index *x, struct analyze_critpath *cp, uint32_t last, uint64_t t0)
{
	struct walk w = { .x = x, .cp = cp, .t0 = t0 };
	uint32_t span = last, tid = 0, why = CRITWAIT_QUEUE;
	bool on_gpu = true;

	cp->first = t0;
	cp->last = model_span_end(&x->m->t.spans.v[last]);
	w.t = cp->last;
	x->pieces.len = 0;
	/* Each step passes a work's or a call's end for good: as many as there are, at most. */
	for (size_t steps = 0; w.t > w.t0 && steps <= x->works.len + x->waits.len; steps++) {
		if (on_gpu) {
			on_gpu = step_work(&w, &span, why, &tid);
			if (!on_gpu && !tid)
				break;
		} else if ((span = step_thread(&w, tid))) {
			span--;
			why = CRITWAIT_SYNC;
			on_gpu = true;
		}
	}
	if (!on_gpu && tid)
		charge_thread(&w, tid, w.t0);
	charge(&w, CRITPATH_WAIT, CRITWAIT_UNKNOWN, w.t0);
	charge_pieces(&w);
	u64map_free(&w.items);
}

/* Span indexes by lane, then start: each stream's work in its order. */
static int cmp_by_lane(const void *pa, const void *pb, void *arg)
{
	const struct tr_span *s = arg, *a = &s[*(const uint32_t *)pa], *b = &s[*(const uint32_t *)pb];

	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (*(const uint32_t *)pa > *(const uint32_t *)pb) -
	       (*(const uint32_t *)pa < *(const uint32_t *)pb);
}

/* The works by process, the synchronizing calls and the outermost API calls by thread. */
static void index_build(struct index *x)
{
	const struct model *m = x->m;
	size_t nspans = m->t.spans.len, nwork = 0;
	uint32_t *order = xmalloc((nspans + 1) * sizeof(*order));

	x->prev = xcalloc(nspans + 1, sizeof(*x->prev));
	for (size_t i = 0; i < nspans; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		struct owned_span iv = { .owner = sp->origin_tid, .span = (uint32_t)i,
					 .start = sp->start, .end = model_span_end(sp) };

		switch (model_lane_class(m, sp->lane)) {
		case MODEL_LANE_CUDA_STREAM:
			/* Work of no time holds nothing up, and could not be stepped past. */
			if (!sp->dur)
				break;
			iv.owner = lane_pid(m, sp->lane);
			*VEC_PUSH(&x->works) = iv;
			order[nwork++] = (uint32_t)i;
			break;
		case MODEL_LANE_CUDA_WAIT:
			if (sp->dur)
				*VEC_PUSH(&x->waits) = iv;
			break;
		case MODEL_LANE_CUDA_API:
			*VEC_PUSH(&x->calls) = iv;
			break;
		default:
			break;
		}
	}
	VEC_SORT(&x->works, cmp_intervals);
	VEC_SORT(&x->waits, cmp_intervals);
	x->calls.len = owned_spans_outermost(x->calls.v, x->calls.len);
	for (size_t i = 0; i < m->t.offcpu.len; i++) {
		const struct tr_offcpu *o = &m->t.offcpu.v[i];

		if (o->reason == TR_OFFCPU_BLOCKED && o->end > o->start)
			*VEC_PUSH(&x->blocked) = (struct owned_span){ o->tid, (uint32_t)i,
								      o->start, o->end };
	}
	VEC_SORT(&x->blocked, cmp_intervals);
	if (nwork)
		qsort_r(order, nwork, sizeof(*order), cmp_by_lane, m->t.spans.v);
	for (size_t i = 1; i < nwork; i++)
		if (m->t.spans.v[order[i]].lane == m->t.spans.v[order[i - 1]].lane)
			x->prev[order[i]] = order[i - 1] + 1;
	free(order);
}

/* Puts into first, by device, its process's first event: a sample or a span's start. */
static void first_events(const struct analyze *a, const struct model *m, uint64_t *first)
{
	struct u64map pids = {0};
	uint64_t at;

	for (size_t d = 0; d < a->devices.len; d++)
		u64map_put(&pids, a->devices.v[d].pid, UINT64_MAX);
	for (size_t i = 0; i < m->t.samples.len; i++) {
		const struct tr_sample *s = &m->t.samples.v[i];

		if (u64map_get(&pids, s->pid, &at) && s->ts < at)
			u64map_put(&pids, s->pid, s->ts);
	}
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];

		if (model_lane_class(m, sp->lane) != MODEL_LANE_NONE &&
		    u64map_get(&pids, lane_pid(m, sp->lane), &at) && sp->start < at)
			u64map_put(&pids, lane_pid(m, sp->lane), sp->start);
	}
	for (size_t d = 0; d < a->devices.len; d++)
		u64map_get(&pids, a->devices.v[d].pid, &first[d]);
	u64map_free(&pids);
}

void critpath_build(struct analyze *a, const struct model *m, const struct api_launches *launches,
		    const uint32_t *lane_device, const struct timed *samples, size_t nsamples)
{
	struct index x = { .m = m, .launches = launches, .samples = samples,
			   .nsamples = nsamples };
	size_t ndev = a->devices.len;
	uint32_t *last = xcalloc(ndev + 1, sizeof(*last));
	uint64_t *first = xcalloc(ndev + 1, sizeof(*first));

	index_build(&x);
	/* Each device's last work: of the latest end, the last span of them. */
	for (size_t i = 0; i < x.works.len; i++) {
		const struct owned_span *w = &x.works.v[i];
		uint32_t d = lane_device[m->t.spans.v[w->span].lane];

		if (d && (!last[d - 1] || w->end >= model_span_end(&m->t.spans.v[last[d - 1] - 1])))
			last[d - 1] = w->span + 1;
	}
	first_events(a, m, first);
	for (size_t d = 0; d < ndev; d++)
		if (last[d])
			walk_device(&x, &a->devices.v[d].critpath, last[d] - 1, first[d]);
	free(last);
	free(first);
	free(x.prev);
	VEC_FREE(&x.works);
	VEC_FREE(&x.waits);
	VEC_FREE(&x.calls);
	VEC_FREE(&x.blocked);
	VEC_FREE(&x.pieces);
}

void critpath_free(struct analyze_critpath *cp)
{
	VEC_FREE(&cp->items);
}

/* An item as the views show it: items of one kind and name merged. */
struct row {
	uint32_t kind;
	uint32_t name;		/* names id; a wait's enum critpath_wait */
	const char *text;
	uint64_t ns;
};

static int cmp_row_names(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return strcmp(a->text, b->text);
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	return cmp_row_names(pa, pb);
}

/*
 * cp's items named, those of one kind and name merged (a CPU item is its
 * leaf function's), by ns, descending; *n of them. Free it.
 */
static struct row *critpath_rows(const struct analyze_critpath *cp, struct funcs *f, size_t *n)
{
	size_t len = cp->items.len, k = 0;
	struct row *r = xmalloc((len + 1) * sizeof(*r));

	/* The names first: naming a span's frame may grow the names the texts point into. */
	for (size_t i = 0; i < len; i++) {
		const struct critpath_item *it = &cp->items.v[i];

		r[i] = (struct row){ .kind = it->kind, .name = it->id, .ns = it->ns };
		if (it->kind == CRITPATH_CPU || it->kind == CRITPATH_OFFCPU)
			r[i].name = it->id ? f->v.v[funcs_queued_from(f, it->id)].name : UINT32_MAX;
		else if (it->kind != CRITPATH_WAIT) {
			r[i].name = funcs_span_frame(f, it->id);
		}
	}
	for (size_t i = 0; i < len; i++)
		r[i].text = r[i].kind == CRITPATH_WAIT ?
				    (r[i].name < CRITWAITS ? wait_names[r[i].name] : "?") :
			    r[i].name != UINT32_MAX ? funcs_name(f, r[i].name) :
			    r[i].kind == CRITPATH_CPU ? "[unsampled]" : "[unknown]";
	qsort(r, len, sizeof(*r), cmp_row_names);
	for (size_t i = 0; i < len; i++)
		if (k && !cmp_row_names(&r[k - 1], &r[i]))
			r[k - 1].ns += r[i].ns;
		else
			r[k++] = r[i];
	qsort(r, k, sizeof(*r), cmp_rows);
	*n = k;
	return r;
}

static const char *kind_name(uint32_t kind)
{
	return kind < CRITPATH_KINDS ? kind_names[kind] : "?";
}

void critpath_print(FILE *out, const struct analyze_critpath *cp, struct funcs *f)
{
	uint64_t wall = cp->last - cp->first;
	size_t n;
	struct row *r;

	if (!cp->items.len)
		return;
	r = critpath_rows(cp, f, &n);
	fprintf(out, "critical path: %.3f ms from the process's first event to the GPU's last work\n",
		(double)wall / 1e6);
	fprintf(out, "  %12s %7s  %-7s %s\n", "ms", "WALL", "KIND", "NAME");
	for (size_t i = 0; i < n && i < ITEMS_SHOWN; i++)
		fprintf(out, "  %12.3f %6.1f%%  %-7s %s\n", (double)r[i].ns / 1e6,
			100.0 * (double)r[i].ns / (double)wall, kind_name(r[i].kind), r[i].text);
	free(r);
}

void critpath_json(struct json *j, const struct analyze_critpath *cp, struct funcs *f)
{
	size_t n;
	struct row *r = critpath_rows(cp, f, &n);

	json_begin_object(j, "critical_path", JSON_LINES);
	json_uint(j, "wall_ns", cp->last - cp->first);
	json_begin_array(j, "items", JSON_LINES);
	for (size_t i = 0; i < n; i++) {
		json_begin_object(j, NULL, JSON_INLINE);
		json_string(j, "kind", kind_name(r[i].kind));
		json_string(j, "name", r[i].text);
		json_uint(j, "ns", r[i].ns);
		json_end(j);
	}
	json_end(j);
	json_end(j);
	free(r);
}
