/* SPDX-License-Identifier: MIT */
/*
 * Correlation id -> (tid, CLOCK_MONOTONIC at API enter), for the GPU records
 * that arrive later. Ids grow by one per call, so a direct-mapped table
 * indexed by the id keeps the latest ORIGIN_SLOTS calls: an entry lives
 * until a call that many later takes its slot, and is never removed on use
 * (all kernels of a graph launch share its id). Writers are the calling
 * application threads, readers the threads that complete buffers; each slot
 * is a small seqlock, so neither waits.
 */
#include "cuda/agent.h"

#include <errno.h>
#include <stdlib.h>

/*
 * An origin must outlive the wait for its record's buffer: up to a flush
 * period (1 s) after the buffer's last work ended, plus the time the buffer
 * took to fill. A fast launching loop makes about 300k launches a second,
 * each two ids (runtime call and the driver call in it): 2^21 slots hold
 * 2M calls, about 3 s of such a loop. 16 bytes each: 32 MiB, touched as
 * calls come, so a short program pays only for the calls it made.
 */
#define ORIGIN_SLOTS (1u << 21)

struct origin_slot {
	uint32_t correlation;	/* 0 while being written */
	uint32_t tid;
	uint64_t ts;
};

static struct origin_slot *slots;

int origins_init(void)
{
	if (!slots)
		slots = calloc(ORIGIN_SLOTS, sizeof(*slots));
	return slots ? 0 : -ENOMEM;
}

void origins_put(uint32_t correlation, uint32_t tid, uint64_t ts)
{
	struct origin_slot *s = &slots[correlation & (ORIGIN_SLOTS - 1)];

	__atomic_store_n(&s->correlation, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&s->tid, tid, __ATOMIC_RELAXED);
	__atomic_store_n(&s->ts, ts, __ATOMIC_RELAXED);
	__atomic_store_n(&s->correlation, correlation, __ATOMIC_RELEASE);
}

bool origins_get(uint32_t correlation, gtrace_origin *o)
{
	struct origin_slot *s = &slots[correlation & (ORIGIN_SLOTS - 1)];

	if (!correlation || __atomic_load_n(&s->correlation, __ATOMIC_ACQUIRE) != correlation)
		return false;
	o->tid = __atomic_load_n(&s->tid, __ATOMIC_RELAXED);
	o->ts_ns = __atomic_load_n(&s->ts, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	/* Rewritten meanwhile: the reading may mix two calls. */
	return __atomic_load_n(&s->correlation, __ATOMIC_RELAXED) == correlation;
}
