/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TARGET_KREGIONS_H
#define GTRACE_TARGET_KREGIONS_H

/*
 * Inside libgtrace-target: the decoder of kernel-regions buffers (their
 * layout is in gtrace/target.h) and the pure steps of gtrace_kr_submit,
 * apart so that tests can feed them synthetic buffers. GPU times are
 * %globaltimer nanoseconds.
 */

#include <stddef.h>
#include <stdint.h>

#define TGT_KR_BLOCKS_ENV "GTRACE_KR_BLOCKS"
#define TGT_KR_BLOCKS_DEFAULT 16	/* blocks per buffer shown on lanes of their own */

/* One region instance: a begin and the end that closes it, in one lane. */
struct tgt_kr_span {
	uint64_t block;			/* linear block index */
	uint32_t group;
	uint32_t region;
	uint64_t begin_ns, end_ns;
};

struct tgt_kr_decoded {
	uint32_t grid[3];		/* gridDim; zeros when no leader of block 0 ran */
	uint32_t block_dim[3];
	uint64_t capacity;		/* event slots */
	uint64_t events;		/* slots holding an event */
	uint64_t lost;			/* events not stored: no slot left */
	uint64_t bad;			/* events with a field out of range */
	uint64_t unmatched;		/* begins without an end, ends without a begin */
	uint64_t lanes;			/* (block, group) lanes with events */
	uint64_t collisions;		/* of them, written by two leaders: no spans taken */
	uint64_t finished;		/* of them, with a finish marker */
	struct tgt_kr_span *spans;	/* by block, group, begin, end */
	size_t n_spans;
};

/*
 * Decodes the n_words of a buffer, for regions below n_regions, into *out
 * (free with tgt_kr_decoded_free). Returns 0; -EINVAL when the words are
 * not a buffer (magic) or hold fewer slots than the header says were
 * claimed; -ENOMEM.
 */
int tgt_kr_decode(const uint64_t *words, size_t n_words, unsigned n_regions,
		  struct tgt_kr_decoded *out);
void tgt_kr_decoded_free(struct tgt_kr_decoded *d);

/* A region over all the blocks of one buffer. */
struct tgt_kr_stats {
	uint64_t instances;
	uint64_t sum_ns, min_ns, max_ns, median_ns;
	uint64_t first_ns, last_ns;	/* the first begin, the last end */
	uint64_t lanes;			/* (block, group) lanes it ran in */
	uint64_t blocks;		/* blocks it ran in */
	/* of its time per block (all groups and instances): imbalance is max / median */
	uint64_t block_median_ns, block_max_ns;
};

/* Fills stats[0 .. n_regions) from d's spans; 0 or -ENOMEM. */
int tgt_kr_region_stats(const struct tgt_kr_decoded *d, unsigned n_regions,
			struct tgt_kr_stats *stats);

/*
 * How many of d's spans, from the first, belong to its max_blocks lowest
 * blocks: those shown on lanes of their own. *capped_lanes: the (block,
 * group) lanes with spans past them.
 */
size_t tgt_kr_shown_spans(const struct tgt_kr_decoded *d, uint64_t max_blocks,
			  uint64_t *capped_lanes);

#endif
