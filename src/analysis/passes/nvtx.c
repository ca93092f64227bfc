/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges on the threads that opened them. Each thread's time is cut
 * wherever one of its ranges opens or closes; between two cuts the same
 * ranges are open, so a sample finds them with one binary search.
 *
 * Each NVTX domain's ranges are on a lane of their own (contract/lanes.h)
 * and nest apart from another's: the chain open at a time holds the
 * default domain's ranges, then each named domain's in the order of their
 * names, each domain's outermost first. Two domains' ranges that
 * overlap are never one's parent the other's child by when they opened.
 */
#include "analysis/passes/passes.h"

#include <stdlib.h>
#include <string.h>

#include "contract/attrs.h"
#include "contract/lanes.h"
#include "util/sorted.h"
#include "util/xalloc.h"

/* One range of one thread. */
struct range {
	uint32_t tid;
	uint32_t name;		/* string id */
	uint32_t domain;	/* as nvtx_chain's */
	uint32_t order;		/* its domain's: 0 the default, then by name from 1 */
	uint64_t start, end;
	uint64_t depth;		/* push/pop nesting, UINT64_MAX when not given */
	uint32_t span;		/* index in m->t.spans */
};

/*
 * By thread, then outermost first: the earlier start, the later end, the
 * smaller depth. Spans are written as ranges close, inner ones first, so
 * among equal ranges the later span is the outer one.
 */
static int cmp_ranges(const void *pa, const void *pb)
{
	const struct range *a = pa, *b = pb;
	int order;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	order = nesting_order(a->start, a->end, b->start, b->end);
	if (order)
		return order;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->span > b->span ? -1 : a->span < b->span;
}

/* An NVTX lane of a named domain. */
struct domain_lane {
	const char *domain;
	uint32_t lane;
};

static int cmp_domain_lanes(const void *pa, const void *pb)
{
	const struct domain_lane *a = pa, *b = pb;

	return strcmp(a->domain, b->domain);
}

/*
 * By lane id, the order of its domain among those that the recording's
 * NVTX lanes name: 0 the default domain's (and any other lane's), then 1
 * up by the domains' names, one number for a name that several
 * processes' lanes share.
 */
static uint32_t *domain_orders(const struct model *m)
{
	uint32_t *order = xcalloc(m->t.lanes.len + 1, sizeof(*order));
	VEC(struct domain_lane) named = {0};

	for (uint32_t lane = 1; lane <= m->t.lanes.len; lane++) {
		const char *domain = nvtx_lane_domain(model_str(m, m->t.lanes.v[lane - 1].name));

		if (domain && model_lane_class(m, lane) == MODEL_LANE_NVTX)
			*VEC_PUSH(&named) = (struct domain_lane){ domain, lane };
	}
	VEC_SORT(&named, cmp_domain_lanes);
	for (size_t i = 0; i < named.len; i++)
		order[named.v[i].lane] = i && !strcmp(named.v[i].domain, named.v[i - 1].domain)
						 ? order[named.v[i - 1].lane]
						 : (uint32_t)i + 1;
	VEC_FREE(&named);
	return order;
}

/* The ranges of spans on NVTX lanes with a real origin thread and a length. */
static struct range *collect_ranges(const struct model *m, size_t *n)
{
	uint32_t depth_key = model_string_id(m, NVTX_ATTR_DEPTH);
	uint32_t *order = domain_orders(m);
	VEC(struct range) ranges = {0};

	*n = 0;
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		struct range *r;

		if (model_lane_class(m, sp->lane) != MODEL_LANE_NVTX || !sp->dur ||
		    !sp->origin_tid || sp->origin_tid >= TR_SYNTHETIC_TID_BASE)
			continue;
		r = VEC_PUSH(&ranges);
		r->tid = sp->origin_tid;
		r->name = sp->name;
		r->order = order[sp->lane];
		r->domain = r->order ? m->t.lanes.v[sp->lane - 1].name : 0;
		r->start = sp->start;
		r->end = model_span_end(sp);
		if (!depth_key || !model_span_attr(m, (uint32_t)i + 1, depth_key, &r->depth))
			r->depth = UINT64_MAX;
		r->span = (uint32_t)i;
	}
	if (ranges.len)
		VEC_SORT(&ranges, cmp_ranges);
	free(order);
	*n = ranges.len;
	return ranges.v;
}

/* The interned chains: parent << 32 | frame -> chain id; domain << 32 | name -> frame id. */
struct chain_index {
	struct u64map chains, frames;
};

static uint32_t chain_child(struct nvtx_ranges *r, struct chain_index *index, uint32_t parent,
			    const struct range *range)
{
	uint32_t id;

	/* Real programs nest a few ranges; a damaged file must not nest without end. */
	if (parent && r->chains.v[parent - 1].depth >= NVTX_MAX_DEPTH)
		return parent;
	id = u64map_pair_id(&index->chains, parent,
			    u64map_pair_id(&index->frames, range->domain, range->name));
	if (id > r->chains.len) {
		struct nvtx_chain *c = VEC_PUSH(&r->chains);

		c->parent = parent;
		c->name = range->name;
		c->domain = range->domain;
		c->depth = parent ? r->chains.v[parent - 1].depth + 1 : 0;
	}
	return id;
}

/* Cuts one thread's time, ranges[0 .. n) sorted outermost first. */
static void cut_thread(struct nvtx_ranges *r, struct chain_index *index,
		       const struct range *ranges, size_t n)
{
	VEC(const struct range *) open = {0};	/* by domain, then outermost first */
	uint64_t *ends = xmalloc(n * sizeof(*ends));
	size_t next_open = 0, next_end = 0;

	for (size_t i = 0; i < n; i++)
		ends[i] = ranges[i].end;
	qsort(ends, n, sizeof(*ends), u64_cmp);
	while (next_end < n) {
		uint64_t at = ends[next_end];
		uint32_t chain = 0;
		size_t kept = 0;

		if (next_open < n && ranges[next_open].start < at)
			at = ranges[next_open].start;
		while (next_end < n && ends[next_end] == at)
			next_end++;
		for (size_t i = 0; i < open.len; i++)
			if (open.v[i]->end > at)
				open.v[kept++] = open.v[i];
		open.len = kept;
		while (next_open < n && ranges[next_open].start == at) {
			const struct range *opened = &ranges[next_open++];
			size_t k = open.len;

			/* After its domain's open ranges, before those of later domains. */
			VEC_PUSH(&open);
			for (; k && open.v[k - 1]->order > opened->order; k--)
				open.v[k] = open.v[k - 1];
			open.v[k] = opened;
		}
		for (size_t i = 0; i < open.len; i++)
			chain = chain_child(r, index, chain, open.v[i]);
		if (r->segs.len == r->seg_start.v[r->seg_start.len - 1] ||
		    r->segs.v[r->segs.len - 1].chain != chain) {
			struct nvtx_segment *seg = VEC_PUSH(&r->segs);

			seg->start = at;
			seg->chain = chain;
		}
	}
	free(ends);
	VEC_FREE(&open);
}

void nvtx_ranges_build(struct nvtx_ranges *r, const struct model *m)
{
	struct chain_index index = {0};
	size_t n;
	struct range *ranges = collect_ranges(m, &n);

	memset(r, 0, sizeof(*r));
	*VEC_PUSH(&r->seg_start) = 0;
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && ranges[end].tid == ranges[i].tid; end++)
			;
		u64map_put(&r->threads, ranges[i].tid, r->seg_start.len - 1);
		cut_thread(r, &index, ranges + i, end - i);
		*VEC_PUSH(&r->seg_start) = r->segs.len;
	}
	u64map_free(&index.chains);
	u64map_free(&index.frames);
	free(ranges);
}

uint32_t nvtx_chain_at(const struct nvtx_ranges *r, uint32_t tid, uint64_t ts)
{
	const struct nvtx_segment *lo, *hi, *first;
	uint64_t k;

	if (!u64map_get(&r->threads, tid, &k))
		return 0;
	first = lo = r->segs.v + r->seg_start.v[k];
	hi = r->segs.v + r->seg_start.v[k + 1];
	while (lo < hi) {	/* the first segment starting after ts */
		const struct nvtx_segment *mid = lo + (hi - lo) / 2;

		if (mid->start <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == first ? 0 : lo[-1].chain;
}

uint32_t *nvtx_sample_chains(const struct nvtx_ranges *r, const struct model *m)
{
	uint32_t *chains = xcalloc(m->t.samples.len + 1, sizeof(*chains));

	if (!r->chains.len)
		return chains;
	for (size_t i = 0; i < m->t.samples.len; i++)
		chains[i] = nvtx_chain_at(r, m->t.samples.v[i].tid, m->t.samples.v[i].ts);
	return chains;
}

void nvtx_ranges_free(struct nvtx_ranges *r)
{
	VEC_FREE(&r->chains);
	u64map_free(&r->threads);
	VEC_FREE(&r->seg_start);
	VEC_FREE(&r->segs);
}
