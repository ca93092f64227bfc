/* SPDX-License-Identifier: MIT */
/*
 * report --time-buckets N: how each row moves over the run. The recording
 * (or the window it was cut to) is cut into N equal parts; each part's
 * report is built from the same model, and each of its rows adds its
 * count to the row of the whole report that is the same thread part,
 * name, function, range and Python place.
 */
#include "analysis/views/report-private.h"

#include <stdlib.h>

#include "util/hashmap.h"
#include "util/xalloc.h"

/* What tells two rows of reports of one model apart. */
struct row_identity {
	uint32_t thread, comm, func, nvtx, pyline;
};

static uint64_t identity_hash(const struct report_row *row)
{
	struct row_identity id = { row->thread, row->comm, row->func, row->nvtx, row->pyline };

	/* Not U64MAP_EMPTY, which no key may be. */
	return hash_bytes(&id, sizeof(id)) & ~(uint64_t)1;
}

static bool same_row(const struct report_row *a, const struct report_row *b)
{
	return a->thread == b->thread && a->comm == b->comm && a->func == b->func &&
	       a->nvtx == b->nvtx && a->pyline == b->pyline;
}

/* The recording's time the parts cut: its window when cut to one. */
static void bucket_range(const struct model *m, uint64_t *from, uint64_t *to)
{
	*from = m->window_to ? m->window_from : model_time_zero(m);
	*to = m->last_ts >= *from ? m->last_ts + 1 : *from + 1;
	if (m->window_to && m->window_to < *to)
		*to = m->window_to;
}

void report_buckets_fill(struct report *r, struct funcs *f, const struct report_opts *o)
{
	unsigned n = o->time_buckets;
	struct u64map rows = {0};	/* identity hash -> index in r->rows */
	uint64_t from, to;
	double part;

	bucket_range(f->m, &from, &to);
	part = (double)(to - from) / n;
	r->nbuckets = n;
	r->buckets = xcalloc(r->rows.len * n + 1, sizeof(*r->buckets));
	/* A row whose hash another took (one in 2^63) keeps empty parts. */
	for (size_t i = r->rows.len; i-- > 0;)
		u64map_put(&rows, identity_hash(&r->rows.v[i]), i);
	for (unsigned b = 0; b < n; b++) {
		uint64_t lo = from + (uint64_t)(part * b);
		uint64_t hi = b + 1 < n ? from + (uint64_t)(part * (b + 1)) : to;
		struct report p;

		if (hi <= lo)
			continue;
		report_build_window(&p, f, o, lo, hi);
		for (size_t k = 0; k < p.rows.len; k++) {
			const struct report_row *row = &p.rows.v[k];
			uint64_t at;

			if (u64map_get(&rows, identity_hash(row), &at) &&
			    same_row(&r->rows.v[at], row))
				r->buckets[at * n + b] = o->children ? row->children : row->self;
		}
		report_free(&p);
	}
	u64map_free(&rows);
}
