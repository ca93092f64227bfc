/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_KR_ENCODE_H
#define GTRACE_TESTS_KR_ENCODE_H

/*
 * Kernel-regions buffers filled without a GPU: an encoder that stores
 * exactly as the markers of gtrace/kernel-regions.cuh do, one leader at a
 * time, for tests/unit/test-kregions.c and bench/kr-submit.c.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <gtrace/target.h>

/* A buffer as gtrace_kr_alloc leaves it. */
static inline uint64_t *buffer_new(uint64_t capacity)
{
	uint64_t *w = calloc(GTRACE_KR_HEADER_WORDS + capacity * GTRACE_KR_SLOT_WORDS, sizeof(*w));

	if (!w) {
		printf("  out of memory\n");
		exit(1);
	}
	w[GTRACE_KR_HDR_MAGIC] = GTRACE_KR_MAGIC;
	w[GTRACE_KR_HDR_CAPACITY] = capacity;
	return w;
}

static inline size_t buffer_words(const uint64_t *w)
{
	return GTRACE_KR_HEADER_WORDS + w[GTRACE_KR_HDR_CAPACITY] * GTRACE_KR_SLOT_WORDS;
}

struct kr_dim3 {
	uint32_t x, y, z;
};

struct launch {
	struct kr_dim3 grid, block;
};

/* A leader's markers, storing as kernel-regions.cuh does. */
struct leader {
	uint64_t *buf;
	uint64_t lane, slot, capacity;
};

static inline uint64_t field(uint64_t value, uint64_t mask)
{
	return value < mask ? value : mask;
}

static inline struct leader leader_init(uint64_t *buf, const struct launch *l, struct kr_dim3 block_idx,
				 struct kr_dim3 thread_idx, unsigned group)
{
	uint64_t block = block_idx.x +
			 (uint64_t)l->grid.x * (block_idx.y + (uint64_t)l->grid.y * block_idx.z);
	uint64_t thread = thread_idx.x + l->block.x * (thread_idx.y + l->block.y * thread_idx.z);
	struct leader k = { buf, 0, 0, buf[GTRACE_KR_HDR_CAPACITY] };

	k.lane = field(group, GTRACE_KR_GROUP_MASK) << GTRACE_KR_GROUP_SHIFT |
		 thread << GTRACE_KR_THREAD_SHIFT |
		 field(block, GTRACE_KR_BLOCK_MASK) << GTRACE_KR_BLOCK_SHIFT;
	k.slot = buf[GTRACE_KR_HDR_CLAIMED]++;
	if (block == 0) {
		buf[GTRACE_KR_HDR_GRID] = l->grid.x | (uint64_t)l->grid.y << 32 |
					  (uint64_t)l->grid.z << 48;
		buf[GTRACE_KR_HDR_BLOCK] = l->block.x | (uint64_t)l->block.y << 16 |
					   (uint64_t)l->block.z << 32;
	}
	return k;
}

static inline void record(struct leader *k, uint64_t kind, unsigned region, uint64_t ns)
{
	uint64_t *event;

	if (k->slot >= k->capacity) {
		k->buf[GTRACE_KR_HDR_LOST]++;
		return;
	}
	event = k->buf + GTRACE_KR_HEADER_WORDS + k->slot * GTRACE_KR_SLOT_WORDS;
	event[0] = ns;
	event[1] = k->lane | kind |
		   field(region, GTRACE_KR_REGION_MASK) << GTRACE_KR_REGION_SHIFT;
	k->slot = k->buf[GTRACE_KR_HDR_CLAIMED]++;
}

static inline void begin(struct leader *k, unsigned region, uint64_t ns)
{
	record(k, GTRACE_KR_BEGIN, region, ns);
}

static inline void end(struct leader *k, unsigned region, uint64_t ns)
{
	record(k, GTRACE_KR_END, region, ns);
}

static inline void finish(struct leader *k, uint64_t ns)
{
	record(k, GTRACE_KR_FINISH, 0, ns);
}

/* A one-dimensional launch of blocks of 32 threads per group. */
static inline struct launch launch_1d(uint32_t blocks, unsigned groups)
{
	return (struct launch){ { blocks, 1, 1 }, { 32 * groups, 1, 1 } };
}

/* The leader of group in block of a launch_1d: the group's first thread. */
static inline struct leader leader_1d(uint64_t *buf, const struct launch *l, uint32_t block,
			       unsigned group)
{
	return leader_init(buf, l, (struct kr_dim3){ block, 0, 0 }, (struct kr_dim3){ 32 * group, 0, 0 },
			   group);
}

#endif
