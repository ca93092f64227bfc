/* SPDX-License-Identifier: MIT */
/* Order statistics that several views take of their values. */
#include "analysis/passes/passes.h"

#include <math.h>
#include <stdlib.h>

int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

double u64_quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n);

	return n ? (double)sorted[rank ? rank - 1 : 0] : 0;
}

double u64_median(const uint64_t *sorted, size_t n)
{
	if (!n)
		return 0;
	return ((double)sorted[(n - 1) / 2] + (double)sorted[n / 2]) / 2;
}

static int i64_cmp(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

int64_t i64_median(int64_t *v, size_t n)
{
	int64_t lo, hi;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), i64_cmp);
	lo = v[(n - 1) / 2];
	hi = v[n / 2];
	/* Their distance taken unsigned: it may pass INT64_MAX. */
	return lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
}
