/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_QUEUE_H
#define GTRACE_RECORD_QUEUE_H

/*
 * Puts the records of all per-CPU rings into one timestamp order. Each ring
 * is in order by itself, but a thread's fork on one CPU and its first sample
 * on another only make sense in the order they happened, so records are
 * queued here and handed on only once no ring can still deliver an older one.
 * A record is queued where it lies in its ring, which keeps its space until
 * it is handed on, or copied here: one that wraps around the ring's end, or
 * one moved out to free the ring.
 */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "format/buf.h"
#include "util/vec.h"

struct rec_ref {
	uint64_t time;
	uint64_t seq;		/* arrival order: keeps equal times stable */
	size_t off;		/* into data, unless in_ring */
	const struct perf_event_header *in_ring;	/* a record left in its ring, or NULL */
	uint64_t ring_pos;	/* in_ring's position in its ring */
	uint32_t ring;		/* in_ring's ring */
};

struct rec_queue {
	struct gbuf data;	/* the records, each at an 8-byte aligned offset */
	struct gbuf spare;	/* swapped with data when compacting */
	VEC(struct rec_ref) refs;
	VEC(const struct perf_event_header *) ready;	/* a flush's batch */
	VEC(uint64_t) ready_times;
	VEC(size_t) runs;		/* sorting's: where each ordered run starts */
	VEC(struct rec_ref) merged;	/* sorting's: runs merged, then merged again */
	uint64_t seq;
};

/*
 * Room for a record of up to len bytes to copy in, valid until the next
 * call; rec_queue_commit then queues the len bytes (a multiple of 8, at
 * most those reserved) that it took, with its time.
 */
void *rec_queue_reserve(struct rec_queue *q, size_t len);
void rec_queue_commit(struct rec_queue *q, size_t len, uint64_t time);

/*
 * Queues record h where it lies, at position pos of ring: it must stay
 * there until handed on, or until rec_queue_settle takes a copy.
 */
void rec_queue_add(struct rec_queue *q, const struct perf_event_header *h, uint64_t time,
		   uint32_t ring, uint64_t pos);
/*
 * The i-th record still queued now lies in the room rec_queue_reserve gave,
 * as its len bytes there (a multiple of 8), not in its ring.
 */
void rec_queue_settle(struct rec_queue *q, size_t i, size_t len);

typedef void (*rec_fn)(void *arg, const struct perf_event_header *h, uint64_t time);
/* Records handed over together, oldest first: hs[i] with its time times[i]. */
typedef void (*rec_batch_fn)(void *arg, const struct perf_event_header *const *hs,
			     const uint64_t *times, size_t n);

/* Hands every queued record with time <= limit to fn, in one batch. */
void rec_queue_flush(struct rec_queue *q, uint64_t limit, rec_batch_fn fn, void *arg);
/* Hands the records queued from the from-th on to fn, in arrival order. */
void rec_queue_visit(const struct rec_queue *q, size_t from, rec_fn fn, void *arg);
size_t rec_queue_len(const struct rec_queue *q);
void rec_queue_free(struct rec_queue *q);

#endif
