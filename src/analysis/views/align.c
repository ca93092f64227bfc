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
#include "analysis/views/ranks-private.h"

#include <stdlib.h>

#include "util/saturate.h"
#include "util/vec.h"

/* a - b for ends of spans (a hostile file's may be 2^64 apart), within int64. */
static int64_t end_gap(uint64_t a, uint64_t b)
{
	if (a >= b)
		return a - b > INT64_MAX ? INT64_MAX : (int64_t)(a - b);
	return b - a > INT64_MAX ? INT64_MIN : -(int64_t)(b - a);
}

/* A rank's end minus the first rank's, in one collective both ran. */
struct rank_gap {
	uint32_t rank;		/* index in m->ranks */
	int64_t ns;
};

static int cmp_rank_gaps(const void *pa, const void *pb)
{
	const struct rank_gap *a = pa, *b = pb;

	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/*
 * The first rank's end minus each other rank's, over the collectives they
 * both ran, in gaps by rank: one walk over the collectives for all ranks.
 * A collective has a kernel of each rank at most (nth numbers them).
 */
static size_t end_gaps(const struct collective_kernel *k, size_t n, struct rank_gap *gaps)
{
	size_t found = 0;

	for (size_t i = 0, end; i < n; i = end) {
		const struct collective_kernel *first = NULL;

		end = collective_end(k, n, i);
		for (size_t j = i; j < end && !first; j++)
			first = k[j].rank == 0 ? &k[j] : NULL;
		for (size_t j = i; first && j < end; j++)
			if (k[j].rank)
				gaps[found++] = (struct rank_gap){ k[j].rank,
								   end_gap(first->end, k[j].end) };
	}
	if (found)
		qsort(gaps, found, sizeof(*gaps), cmp_rank_gaps);
	return found;
}

size_t align_collectives(struct model *m, struct funcs *f)
{
	struct collective_kernel *k;
	size_t n = collective_kernels(f, &k), aligned = 0, found;
	struct rank_gap *gaps = xcalloc(n + 1, sizeof(*gaps));
	int64_t *ns = xcalloc(n + 1, sizeof(*ns)), *shift = xcalloc(m->ranks.len, sizeof(*shift));

	/* Every gap before any rank moves: funcs reads the model as it was. */
	found = end_gaps(k, n, gaps);
	for (size_t r = 0; r < m->ranks.len; r++)
		m->ranks.v[r].aligned_by = 0;
	for (size_t i = 0, end; i < found; i = end) {
		uint32_t r = gaps[i].rank;

		for (end = i; end < found && gaps[end].rank == r; end++)
			ns[end - i] = gaps[end].ns;
		m->ranks.v[r].aligned_by = end - i;
		shift[r] = i64_median(ns, end - i);
		for (size_t j = 0; j < end - i; j++) {
			int64_t off = i64_sat_sub(ns[j], shift[r]);

			ns[j] = off < 0 ? i64_sat_sub(0, off) : off;
		}
		m->ranks.v[r].residual_ns = i64_median(ns, end - i);
		aligned++;
	}
	if (aligned)
		model_shift_ranks(m, shift);
	free(shift);
	free(ns);
	free(gaps);
	free(k);
	return aligned;
}
