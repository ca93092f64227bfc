/* SPDX-License-Identifier: MIT */
/*
 * Which CUDA API call queued each kernel, copy and memset: export's flows
 * start at that call's slice, analyze measures queue delays from it. The
 * call is the API span of the origin thread (an API span's origin is its
 * calling thread) whose time holds the work's origin_ts, whether or not a
 * sample was near enough to link the origin (a preempted call has none),
 * the innermost when calls nest (cuLaunchKernel in cudaLaunchKernel). The
 * calls are sorted once by thread and start; a thread's calls nest, so
 * each origin is a binary search, then a climb through the calls around
 * the one found. A stream's queue length counts its work from those calls
 * on. Of calls that nest, analyze's critical path and findings count the
 * outermost (owned_spans_outermost).
 */
#include "analysis/passes/passes.h"

#include <stdlib.h>
#include <string.h>

#include "util/sorted.h"
#include "util/xalloc.h"

/* An exported API call, in order of pid, then as owned_spans_outermost orders a thread's. */
struct api_call {
	uint32_t pid;
	struct owned_span call;	/* owned by its calling thread */
	uint32_t parent;	/* the call it nests in, + 1; 0 none */
};

/* By owner, then nesting order (the outer first), then span. */
static int cmp_owned(const void *pa, const void *pb)
{
	const struct owned_span *a = pa, *b = pb;
	int order;

	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	order = nesting_order(a->start, a->end, b->start, b->end);
	if (order)
		return order;
	return (a->span > b->span) - (a->span < b->span);
}

static int cmp_calls(const void *pa, const void *pb)
{
	const struct api_call *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return cmp_owned(&a->call, &b->call);
}

/* Each call's parent: the innermost earlier call of its thread still open at its start. */
static void link_parents(struct api_call *c, size_t n)
{
	uint32_t *open = xmalloc((n + 1) * sizeof(*open));
	size_t depth = 0;

	for (size_t i = 0; i < n; i++) {
		if (i && (c[i].pid != c[i - 1].pid || c[i].call.owner != c[i - 1].call.owner))
			depth = 0;
		while (depth && c[open[depth - 1]].call.end <= c[i].call.start)
			depth--;
		c[i].parent = depth ? open[depth - 1] + 1 : 0;
		open[depth++] = (uint32_t)i;
	}
	free(open);
}

/* The innermost call of pid's thread tid whose time holds ts; NULL none. */
static const struct api_call *call_at(const struct api_call *c, size_t n, uint32_t pid,
				      uint32_t tid, uint64_t ts)
{
	const struct api_call key = {
		.pid = pid, .call = { .owner = tid, .span = UINT32_MAX, .start = ts, .end = 0 },
	};
	size_t lo = 0, hi = n;

	/* The first call after key: the one before it started at ts or earlier. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_calls(&c[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || c[lo - 1].pid != pid || c[lo - 1].call.owner != tid)
		return NULL;
	for (const struct api_call *k = &c[lo - 1];; k = &c[k->parent - 1]) {
		if (ts < k->call.end)
			return k;
		if (!k->parent)
			return NULL;
	}
}

void api_launches_find(struct api_launches *l, const struct model *m, const uint8_t *outcome,
		       const uint32_t *spans, size_t n, uint64_t from, uint64_t to)
{
	size_t ncalls = 0, nspans = m->t.spans.len;
	struct api_call *calls = xmalloc((n + 1) * sizeof(*calls));

	l->call = xcalloc(nspans + 1, sizeof(*l->call));
	l->first = xcalloc(nspans + 2, sizeof(*l->first));
	for (size_t i = 0; i < n; i++) {
		const struct tr_span *sp = &m->t.spans.v[spans[i]];

		if (model_lane_class(m, sp->lane) == MODEL_LANE_CUDA_API &&
		    outcome[spans[i]] != ORIGIN_NONE)
			calls[ncalls++] = (struct api_call){
				.pid = m->t.lanes.v[sp->lane - 1].pid,
				.call = { .owner = sp->origin_tid, .span = spans[i],
					  .start = sp->start, .end = model_span_end(sp) },
			};
	}
	qsort(calls, ncalls, sizeof(*calls), cmp_calls);
	link_parents(calls, ncalls);
	/* Counted into first[call + 2], so that the prefix sum leaves first[call + 1] its start. */
	for (size_t i = 0; i < n; i++) {
		const struct tr_span *sp = &m->t.spans.v[spans[i]];
		const struct api_call *c;

		if (model_lane_class(m, sp->lane) != MODEL_LANE_CUDA_STREAM ||
		    !origin_of_thread(outcome[spans[i]]) ||
		    sp->origin_ts < from || sp->origin_ts >= to)
			continue;
		c = call_at(calls, ncalls, m->t.lanes.v[sp->lane - 1].pid, sp->origin_tid,
			    sp->origin_ts);
		if (!c)
			continue;
		l->call[spans[i]] = c->call.span + 1;
		l->first[c->call.span + 2]++;
	}
	free(calls);
	for (size_t s = 1; s <= nspans + 1; s++)
		l->first[s] += l->first[s - 1];
	l->launched = xmalloc((l->first[nspans + 1] + 1) * sizeof(*l->launched));
	/* The fill moves each first[call + 1] to its end, which is first[call + 2]'s start. */
	for (size_t i = 0; i < n; i++)
		if (l->call[spans[i]])
			l->launched[l->first[l->call[spans[i]]]++] = spans[i];
}

size_t owned_spans_outermost(struct owned_span *v, size_t n)
{
	size_t kept = 0;

	if (n)
		qsort(v, n, sizeof(*v), cmp_owned);
	for (size_t i = 0; i < n; i++)
		if (!kept || v[kept - 1].owner != v[i].owner || v[i].start >= v[kept - 1].end)
			v[kept++] = v[i];
	return kept;
}

void api_launches_free(struct api_launches *l)
{
	free(l->call);
	free(l->first);
	free(l->launched);
}

/* A change of a queue's length: one more at a launch, one less at an end. */
struct queue_edge {
	uint64_t ts;
	int delta;
};

static int cmp_queue_edges(const void *pa, const void *pb)
{
	const struct queue_edge *a = pa, *b = pb;

	return (a->ts > b->ts) - (a->ts < b->ts);
}

size_t stream_queue_steps(const struct model *m, const struct api_launches *l,
			  const uint32_t *spans, size_t n, uint64_t from, struct queue_step **steps)
{
	struct queue_edge *e = xmalloc((2 * n + 1) * sizeof(*e));
	size_t ne = 0, nsteps = 0, first = 0;
	uint64_t len = 0;

	for (size_t i = 0; i < n; i++) {
		const struct tr_span *sp = &m->t.spans.v[spans[i]];
		uint32_t call = l->call[spans[i]];
		uint64_t launched = sp->origin_tid ? sp->origin_ts : sp->start;

		if (model_span_class(m, sp) == MODEL_SPAN_OTHER)
			continue;
		if (call)
			launched = m->t.spans.v[call - 1].start;
		e[ne++] = (struct queue_edge){ launched < sp->start ? launched : sp->start, 1 };
		e[ne++] = (struct queue_edge){ model_span_end(sp), -1 };
	}
	if (ne)
		qsort(e, ne, sizeof(*e), cmp_queue_edges);
	*steps = xmalloc((ne + 1) * sizeof(**steps));
	/* The changes of one time together: one step, when they change the length. */
	for (size_t i = 0, end; i < ne; i = end) {
		uint64_t was = len;

		for (end = i; end < ne && e[end].ts == e[i].ts; end++)
			len += (uint64_t)(int64_t)e[end].delta;
		if (len != was)
			(*steps)[nsteps++] = (struct queue_step){ e[i].ts, len };
	}
	free(e);
	while (first + 1 < nsteps && (*steps)[first + 1].ts <= from)
		first++;
	if (first < nsteps && (*steps)[first].ts < from)
		(*steps)[first].ts = from;
	memmove(*steps, *steps + first, (nsteps - first) * sizeof(**steps));
	return nsteps - first;
}
