/* SPDX-License-Identifier: MIT */
#include "record/queue.h"

#include <stdlib.h>
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

static int ref_cmp(const void *a, const void *b)
{
	const struct rec_ref *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
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
	qsort(q->refs.v, q->refs.len, sizeof(*q->refs.v), ref_cmp);
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
	memset(q, 0, sizeof(*q));
}
