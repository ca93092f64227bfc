/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_SORTED_H
#define GTRACE_UTIL_SORTED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Of n elements of size bytes at v, sorted by the uint64_t at offset key
 * in each, how many have a key at or below addr: the index of the first
 * one above it. Inline, so that size and key fold into the search.
 */
static inline size_t sorted_at_or_below(const void *v, size_t n, size_t size, size_t key,
					uint64_t addr)
{
	const unsigned char *base = v;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at;

		memcpy(&at, base + mid * size + key, sizeof(at));
		if (at <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Intervals of one owner in nesting order: the earlier start first, and of
 * two that start together the longer, the outer one. 0 when both bounds
 * are the same.
 */
static inline int nesting_order(uint64_t a_start, uint64_t a_end, uint64_t b_start,
				uint64_t b_end)
{
	if (a_start != b_start)
		return a_start < b_start ? -1 : 1;
	if (a_end != b_end)
		return a_end > b_end ? -1 : 1;
	return 0;
}

#endif
