/* SPDX-License-Identifier: MIT */
/*
 * --align collectives: the clock pairs line recordings of several machines
 * up only as well as the machines' clocks agree, a millisecond or worse
 * without PTP. The kernels of a collective end together on every rank (each
 * waits for the last to arrive), so the ends of the collectives two ranks
 * both ran say how far apart their clocks are. Each rank after the first
 * moves by the median of the first's ends minus its own; what is left, the
 * median distance of its ends from the first's, is the residual error.
 */
#include "analysis/ranks.h"

#include <stdlib.h>

#include "util/saturate.h"
#include "util/vec.h"

static int cmp_i64(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	return a < b ? -1 : a > b;
}

/* Halfway between the middle two, their distance taken unsigned: it may pass INT64_MAX. */
static int64_t median(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	if (n % 2)
		return v[n / 2];
	return v[n / 2 - 1] + (int64_t)(((uint64_t)v[n / 2] - (uint64_t)v[n / 2 - 1]) / 2);
}

/* a - b for ends of spans (a hostile file's may be 2^64 apart), within int64. */
static int64_t end_gap(uint64_t a, uint64_t b)
{
	if (a >= b)
		return a - b > INT64_MAX ? INT64_MAX : (int64_t)(a - b);
	return b - a > INT64_MAX ? INT64_MIN : -(int64_t)(b - a);
}

/* For rank index r: the first rank's end minus r's, over the collectives both ran. */
static size_t end_gaps(const struct collective_kernel *k, size_t n, uint32_t r, int64_t *gaps)
{
	size_t found = 0;

	for (size_t i = 0, end; i < n; i = end) {
		const struct collective_kernel *first = NULL, *mine = NULL;

		end = collective_end(k, n, i);
		for (size_t j = i; j < end; j++) {
			if (k[j].rank == 0 && !first)
				first = &k[j];
			if (k[j].rank == r && !mine)
				mine = &k[j];
		}
		if (first && mine)
			gaps[found++] = end_gap(first->end, mine->end);
	}
	return found;
}

size_t align_collectives(struct model *m, struct funcs *f)
{
	struct collective_kernel *k;
	size_t n = collective_kernels(f, &k), aligned = 0;
	int64_t *gaps = xcalloc(n + 1, sizeof(*gaps)), *shift;

	/* Every gap before any rank moves: funcs reads the model as it was. */
	shift = xcalloc(m->ranks.len, sizeof(*shift));
	for (uint32_t r = 1; r < m->ranks.len; r++) {
		size_t found = end_gaps(k, n, r, gaps);

		m->ranks.v[r].aligned_by = found;
		if (!found)
			continue;
		shift[r] = median(gaps, found);
		for (size_t i = 0; i < found; i++) {
			int64_t off = i64_sat_sub(gaps[i], shift[r]);

			gaps[i] = off < 0 ? i64_sat_sub(0, off) : off;
		}
		m->ranks.v[r].residual_ns = median(gaps, found);
		aligned++;
	}
	for (uint32_t r = 1; r < m->ranks.len; r++)
		if (m->ranks.v[r].aligned_by)
			model_shift_rank(m, r, shift[r]);
	free(shift);
	free(gaps);
	free(k);
	return aligned;
}
