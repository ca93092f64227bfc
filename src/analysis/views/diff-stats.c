/* SPDX-License-Identifier: MIT */
/*
 * gtrace diff's statistics: the normal distribution's tail and its
 * inverse, and the three tests diff.c picks by what a row measures.
 */
#include "analysis/views/diff.h"

#include <math.h>

double diff_normal_p(double z)
{
	return erfc(fabs(z) / sqrt(2.0));
}

double diff_normal_z(double p)
{
	double lo = 0, hi = 40;

	/* diff_normal_p falls as z grows: bisect to well under a printed digit. */
	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (diff_normal_p(mid) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double diff_proportion_test(uint64_t k1, uint64_t n1, uint64_t k2, uint64_t n2)
{
	double p1, p2, pooled, se;

	if (!n1 || !n2)
		return 1;
	p1 = (double)k1 / (double)n1;
	p2 = (double)k2 / (double)n2;
	pooled = (double)(k1 + k2) / (double)(n1 + n2);
	se = sqrt(pooled * (1 - pooled) * (1.0 / (double)n1 + 1.0 / (double)n2));
	return se > 0 ? diff_normal_p((p2 - p1) / se) : 1;
}

double diff_count_test(uint64_t k1, uint64_t k2)
{
	/* Given k1 + k2, k2 is binomial with p 1/2 when the rates are equal. */
	return k1 + k2 ? diff_normal_p(((double)k2 - (double)k1) / sqrt((double)(k1 + k2))) : 1;
}

double diff_rank_test(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	double n = (double)(na + nb), rank_sum = 0, ties = 0, u, mean, var;
	size_t i = 0, j = 0;

	if (na < 2 || nb < 2)
		return 1;
	/* Both sorted: walk them as one, giving each run of equal values its mean rank. */
	while (i < na || j < nb) {
		uint64_t v = j == nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
		size_t ia = 0, ib = 0;
		double first = (double)(i + j) + 1, t;

		while (i < na && a[i] == v) {
			i++;
			ia++;
		}
		while (j < nb && b[j] == v) {
			j++;
			ib++;
		}
		t = (double)(ia + ib);
		rank_sum += (double)ia * (first + (t - 1) / 2);
		ties += t * t * t - t;
	}
	u = rank_sum - (double)na * ((double)na + 1) / 2;
	mean = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (var <= 0)
		return 1;
	/* With the continuity correction, towards the mean. */
	return diff_normal_p((fabs(u - mean) > 0.5 ? fabs(u - mean) - 0.5 : 0) / sqrt(var));
}
