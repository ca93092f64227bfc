/* SPDX-License-Identifier: MIT */
/*
 * What each lane is, from its kind, and what each span on a CUDA stream
 * is, from its name: the contract's names (src/contract/lanes.h, spans.h)
 * read once, at load, where the views would each compare them again.
 */
#include "model/model-internal.h"

#include <string.h>

#include "contract/lanes.h"
#include "contract/spans.h"
#include "util/xalloc.h"

static const char *const lane_kinds[MODEL_LANE_CLASSES] = {
	[MODEL_LANE_CUDA_STREAM] = CUDA_LANE_KIND,
	[MODEL_LANE_CUDA_API] = CUDA_API_LANE_KIND,
	[MODEL_LANE_CUDA_WAIT] = CUDA_WAIT_LANE_KIND,
	[MODEL_LANE_NVTX] = NVTX_LANE_KIND,
	[MODEL_LANE_CUDA_PC] = CUDA_PC_LANE_KIND,
	[MODEL_LANE_KREGIONS] = KREGIONS_LANE_KIND,
	[MODEL_LANE_KREGION_STATS] = KREGIONS_STATS_LANE_KIND,
};

static enum model_lane_class class_of_kind(const char *kind)
{
	for (int c = 0; kind && c < MODEL_LANE_CLASSES; c++)
		if (lane_kinds[c] && !strcmp(kind, lane_kinds[c]))
			return (enum model_lane_class)c;
	return MODEL_LANE_TARGET;
}

/* A span of a CUDA stream named name (NULL: a string id that names none). */
static enum model_span_class class_of_stream_span(const char *name)
{
	if (name && !strncmp(name, CUDA_COPY_SPAN_PREFIX, strlen(CUDA_COPY_SPAN_PREFIX)))
		return MODEL_SPAN_COPY;
	if (name && !strcmp(name, CUDA_MEMSET_SPAN))
		return MODEL_SPAN_MEMSET;
	return MODEL_SPAN_KERNEL;
}

void model_classify_lanes(struct model *m)
{
	m->lane_class = xcalloc(m->t.lanes.len + 1, sizeof(*m->lane_class));
	for (size_t i = 0; i < m->t.lanes.len; i++)
		m->lane_class[i + 1] = (uint8_t)class_of_kind(model_str(m, m->t.lanes.v[i].kind));
	m->stream_span_class = xcalloc(m->t.strings.len + 1, sizeof(*m->stream_span_class));
	for (size_t id = 0; id <= m->t.strings.len; id++)
		m->stream_span_class[id] = (uint8_t)class_of_stream_span(model_str(m, (uint32_t)id));
}

enum model_lane_class model_lane_class(const struct model *m, uint32_t lane)
{
	return lane && lane <= m->t.lanes.len ? (enum model_lane_class)m->lane_class[lane]
					      : MODEL_LANE_NONE;
}

enum model_span_class model_span_class(const struct model *m, const struct tr_span *sp)
{
	if (model_lane_class(m, sp->lane) != MODEL_LANE_CUDA_STREAM)
		return MODEL_SPAN_OTHER;
	if (sp->name > m->t.strings.len)
		return MODEL_SPAN_KERNEL;
	return (enum model_span_class)m->stream_span_class[sp->name];
}

bool model_stream_gpu(const struct model *m, uint32_t lane, uint32_t *gpu)
{
	return model_lane_class(m, lane) == MODEL_LANE_CUDA_STREAM &&
	       cuda_lane_device(model_str(m, m->t.lanes.v[lane - 1].name), gpu);
}

bool model_span_is_copy(const struct model *m, const struct tr_span *sp)
{
	enum model_span_class c = model_span_class(m, sp);

	return c == MODEL_SPAN_COPY || c == MODEL_SPAN_MEMSET;
}

const struct model_thread *model_lane_thread(const struct model *m, uint32_t lane)
{
	/* index_lanes makes them after the real threads, in lane order. */
	return &m->threads.v[m->real_threads + lane - 1];
}
