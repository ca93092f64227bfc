/* SPDX-License-Identifier: MIT */
/* Order statistics that several views take of their values. */
#include "analysis/analysis.h"

#include <math.h>

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
