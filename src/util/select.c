/* SPDX-License-Identifier: MIT */
#include "util/select.h"

#include <stdlib.h>

/* Below this many values a sort is as quick as partitioning. */
#define SELECT_SORT_BELOW 16

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t median_of_three(uint64_t a, uint64_t b, uint64_t c)
{
	if (a < b)
		return b < c ? b : a < c ? c : a;
	return a < c ? a : b < c ? c : b;
}

static void swap_u64(uint64_t *v, size_t i, size_t j)
{
	uint64_t t = v[i];

	v[i] = v[j];
	v[j] = t;
}

uint64_t u64_select(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;	/* k is in [lo, hi) */
	unsigned depth = 0, limit = 2 * (unsigned)(64 - __builtin_clzll((uint64_t)n | 1));

	while (hi - lo > SELECT_SORT_BELOW && depth++ < limit) {
		uint64_t pivot = median_of_three(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
		size_t lt = lo, i = lo, gt = hi;

		/* Three ways, [lo, lt) < pivot <= [lt, gt) <= pivot < [gt, hi): ties end it. */
		while (i < gt) {
			if (v[i] < pivot)
				swap_u64(v, lt++, i++);
			else if (v[i] > pivot)
				swap_u64(v, i, --gt);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pivot;
	}
	qsort(v + lo, hi - lo, sizeof(*v), cmp_u64);
	return v[k];
}
