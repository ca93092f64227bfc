/* SPDX-License-Identifier: MIT */
/*
 * Feeds arbitrary words to the kernel-regions decoder of libgtrace-target,
 * as a GPU that wrote anything into its buffer would: the input's first
 * two bytes are the number of regions, the rest the buffer's words, its
 * magic set. Whatever the words, the decoder and the statistics must not
 * crash, and their results must hold together.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gtrace/target.h>

#include "target/kregions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tgt_kr_stats stats[GTRACE_KR_MAX_REGIONS];
	struct tgt_kr_decoded d;
	uint64_t *words, capped, instances = 0;
	size_t n_words;
	uint16_t n_regions;

	if (size < sizeof(n_regions))
		return 0;
	memcpy(&n_regions, data, sizeof(n_regions));
	n_regions %= GTRACE_KR_MAX_REGIONS + 1;
	data += sizeof(n_regions);
	size -= sizeof(n_regions);
	n_words = size / sizeof(*words);
	/* Exactly the words, so that a read past them shows under ASan. */
	words = malloc((n_words ? n_words : 1) * sizeof(*words));
	if (!words)
		abort();
	memcpy(words, data, n_words * sizeof(*words));
	if (n_words > GTRACE_KR_HDR_MAGIC)
		words[GTRACE_KR_HDR_MAGIC] = GTRACE_KR_MAGIC;
	if (!tgt_kr_decode(words, n_words, n_regions, &d)) {
		if (d.n_spans * 2 > d.events || d.collisions > d.lanes || d.finished > d.lanes)
			abort();
		for (size_t i = 0; i < d.n_spans; i++)
			if (d.spans[i].region >= n_regions)
				abort();
		if (!tgt_kr_region_stats(&d, n_regions, stats)) {
			for (unsigned r = 0; r < n_regions; r++)
				instances += stats[r].instances;
			if (instances != d.n_spans)
				abort();
		}
		if (tgt_kr_shown_spans(&d, n_words % 32, &capped) > d.n_spans)
			abort();
		tgt_kr_decoded_free(&d);
	}
	free(words);
	return 0;
}
