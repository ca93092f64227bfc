/* SPDX-License-Identifier: MIT */
/*
 * When each GPU was busy, for export's busy row: the union of the
 * exported kernels, copies and memsets of its streams. The spans of every
 * GPU are sorted once, by GPU then start; a GPU's busy intervals are then
 * one pass over its run, each span joining the interval it overlaps or
 * touches.
 */
#include "analysis/encoders/export-emitter.h"

#include <stdlib.h>

#include "util/xalloc.h"

struct busy_span {
	uint64_t gpu;		/* export_gpu_key */
	uint64_t start, end;
};

static int cmp_busy_spans(const void *pa, const void *pb)
{
	const struct busy_span *a = pa, *b = pb;

	if (a->gpu != b->gpu)
		return a->gpu < b->gpu ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

void export_busy_find(struct export_busy *b, const struct model *m, const uint32_t *spans,
		      size_t n)
{
	size_t nlanes = m->t.lanes.len;
	/* By lane: its GPU's key + 1, 0 for a lane that is no GPU's stream. */
	uint64_t *lane_gpu = xcalloc(nlanes + 1, sizeof(*lane_gpu));

	for (uint32_t lane = 1; lane <= nlanes; lane++) {
		uint32_t gpu;

		if (model_stream_gpu(m, lane, &gpu))
			lane_gpu[lane] = export_gpu_key(m->t.lanes.v[lane - 1].pid, gpu) + 1;
	}
	*b = (struct export_busy){ .v = xmalloc((n + 1) * sizeof(*b->v)) };
	for (size_t i = 0; i < n; i++) {
		const struct tr_span *sp = &m->t.spans.v[spans[i]];

		if (sp->lane && sp->lane <= nlanes && lane_gpu[sp->lane])
			b->v[b->n++] = (struct busy_span){
				.gpu = lane_gpu[sp->lane] - 1,
				.start = sp->start,
				/* A file's start + dur may wrap: a busy slice must not. */
				.end = model_span_end(sp),
			};
	}
	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), cmp_busy_spans);
	free(lane_gpu);
}

size_t export_busy_first(const struct export_busy *b, uint64_t gpu)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->v[mid].gpu < gpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool export_busy_next(const struct export_busy *b, uint64_t gpu, size_t *at,
		      struct export_busy_interval *out)
{
	size_t i = *at;

	if (i >= b->n || b->v[i].gpu != gpu)
		return false;
	*out = (struct export_busy_interval){ .start = b->v[i].start, .end = b->v[i].end };
	for (; i < b->n && b->v[i].gpu == gpu && b->v[i].start <= out->end; i++) {
		if (b->v[i].end > out->end)
			out->end = b->v[i].end;
		out->spans++;
	}
	*at = i;
	return true;
}

void export_busy_free(struct export_busy *b)
{
	free(b->v);
	*b = (struct export_busy){0};
}
