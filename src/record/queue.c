/* SPDX-License-Identifier: MIT */
#include "record/queue.h"

#include <stdbool.h>
#include <string.h>

void *rec_queue_reserve(struct rec_queue *q, size_t len)
{
	gbuf_reserve(&q->data, len);
	return q->data.data + q->data.len;
}

void rec_queue_commit(struct rec_queue *q, size_t len, uint64_t time)
{
	struct rec_ref *r = VEC_PUSH(&q->refs);

	r->time = time;
	r->seq = q->seq++;
	r->off = q->data.len;
	r->in_ring = NULL;
	q->data.len += len;
}

void rec_queue_add(struct rec_queue *q, const struct perf_event_header *h, uint64_t time,
		   uint32_t ring, uint64_t pos)
{
	*VEC_PUSH(&q->refs) = (struct rec_ref){
		.time = time, .seq = q->seq++, .in_ring = h, .ring_pos = pos, .ring = ring,
	};
}

void rec_queue_settle(struct rec_queue *q, size_t i, size_t len)
{
	q->refs.v[i].in_ring = NULL;
	q->refs.v[i].off = q->data.len;
	q->data.len += len;
}

static bool ref_before(const struct rec_ref *x, const struct rec_ref *y)
{
	return x->time != y->time ? x->time < y->time : x->seq < y->seq;
}

/* Merges the ordered runs a[lo, mid) and a[mid, hi) into to[lo, hi). */
static void merge_runs(const struct rec_ref *a, size_t lo, size_t mid, size_t hi,
		       struct rec_ref *to)
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi)
		to[k++] = ref_before(&a[j], &a[i]) ? a[j++] : a[i++];
	memcpy(to + k, a + i, (mid - i) * sizeof(*a));
	k += mid - i;
	memcpy(to + k, a + j, (hi - j) * sizeof(*a));
}

/*
 * Puts the refs in time order, then arrival. They come as runs already in
 * order: what the last flush left, then each ring's records as it wrote
 * them. Merging the runs pairwise takes n log(runs) steps where a sort
 * takes n log n, and none when the refs are one run.
 */
static void sort_refs(struct rec_queue *q)
{
	struct rec_ref *from = q->refs.v, *to, *swap;
	size_t n = q->refs.len, nruns;
	size_t *at;

	q->runs.len = 0;
	for (size_t i = 0; i < n; i++)
		if (!i || ref_before(&from[i], &from[i - 1]))
			*VEC_PUSH(&q->runs) = i;
	if (q->runs.len <= 1)
		return;
	nruns = q->runs.len;
	*VEC_PUSH(&q->runs) = n;
	q->merged.len = 0;
	VEC_RESERVE(&q->merged, n);
	to = q->merged.v;
	/* at[0 .. nruns] are the runs' starts and the end; each pass halves them. */
	at = q->runs.v;
	while (nruns > 1) {
		size_t out = 0, r;

		for (r = 0; r + 1 < nruns; r += 2) {
			merge_runs(from, at[r], at[r + 1], at[r + 2], to);
			at[out++] = at[r];
		}
		if (r < nruns) {
			memcpy(to + at[r], from + at[r], (n - at[r]) * sizeof(*from));
			at[out++] = at[r];
		}
		at[out] = n;
		nruns = out;
		swap = from;
		from = to;
		to = swap;
	}
	if (from != q->refs.v)
		memcpy(q->refs.v, from, n * sizeof(*from));
}

static const struct perf_event_header *ref_header(const struct rec_queue *q,
						  const struct rec_ref *r)
{
	return r->in_ring ? r->in_ring : (const struct perf_event_header *)(q->data.data + r->off);
}

void rec_queue_flush(struct rec_queue *q, uint64_t limit, rec_batch_fn fn, void *arg)
{
	size_t done = 0, live = 0;
	struct gbuf swap;

	if (!q->refs.len)
		return;
	sort_refs(q);
	q->ready.len = q->ready_times.len = 0;
	for (; done < q->refs.len && q->refs.v[done].time <= limit; done++) {
		*VEC_PUSH(&q->ready) = ref_header(q, &q->refs.v[done]);
		*VEC_PUSH(&q->ready_times) = q->refs.v[done].time;
	}
	if (done)
		fn(arg, q->ready.v, q->ready_times.v, done);

	memmove(q->refs.v, q->refs.v + done, (q->refs.len - done) * sizeof(*q->refs.v));
	q->refs.len -= done;
	for (size_t i = 0; i < q->refs.len; i++)
		if (!q->refs.v[i].in_ring)
			live += ref_header(q, &q->refs.v[i])->size;
	/*
	 * The records still waiting stay where they are until they fill less
	 * than half the buffer: each record is then moved at most about once.
	 */
	if (live * 2 > q->data.len)
		return;
	gbuf_reset(&q->spare);
	for (size_t i = 0; i < q->refs.len; i++) {
		struct rec_ref *r = &q->refs.v[i];
		const struct perf_event_header *h = ref_header(q, r);

		if (r->in_ring)
			continue;
		r->off = q->spare.len;
		gbuf_put(&q->spare, h, h->size);
	}
	swap = q->data;
	q->data = q->spare;
	q->spare = swap;
}

void rec_queue_visit(const struct rec_queue *q, size_t from, rec_fn fn, void *arg)
{
	for (size_t i = from; i < q->refs.len; i++)
		fn(arg, ref_header(q, &q->refs.v[i]), q->refs.v[i].time);
}

size_t rec_queue_len(const struct rec_queue *q)
{
	return q->refs.len;
}

void rec_queue_free(struct rec_queue *q)
{
	gbuf_free(&q->data);
	gbuf_free(&q->spare);
	VEC_FREE(&q->refs);
	VEC_FREE(&q->ready);
	VEC_FREE(&q->ready_times);
	VEC_FREE(&q->runs);
	VEC_FREE(&q->merged);
	memset(q, 0, sizeof(*q));
}
