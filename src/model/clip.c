/* SPDX-License-Identifier: MIT */
/*
 * A recording cut to a window of time: the rows of what happened in it,
 * intervals cut at its ends, so that every view of the model shows the
 * window alone. Names, stacks and symbols stay whole: they say what the
 * rows are, not when.
 */
#include <stdlib.h>
#include <string.h>

#include "model/model-internal.h"
#include "util/xalloc.h"

/* Cuts [*start, *start + *dur) to [from, to): false when nothing is left. */
static bool clip_interval(uint64_t from, uint64_t to, uint64_t *start, uint64_t *dur)
{
	uint64_t end = *start + *dur < *start ? UINT64_MAX : *start + *dur;

	if (end <= from || *start >= to || (*dur == 0 && *start < from))
		return false;
	if (*start < from)
		*start = from;
	if (end > to)
		end = to;
	*dur = end - *start;
	return true;
}

static bool in_window(uint64_t from, uint64_t to, uint64_t ts)
{
	return ts >= from && ts < to;
}

/* Keeps the rows of rows, a VEC of rows with a ts, that were taken in [from, to). */
#define KEEP_TAKEN_IN(rows, from, to)                                          \
	do {                                                                   \
		size_t kept_ = 0;                                              \
		for (size_t i_ = 0; i_ < (rows)->len; i_++)                    \
			if (in_window(from, to, (rows)->v[i_].ts))             \
				(rows)->v[kept_++] = (rows)->v[i_];            \
		(rows)->len = kept_;                                           \
	} while (0)

static void clip_offcpu(struct tr_tables *t, uint64_t from, uint64_t to)
{
	size_t n = 0;

	for (size_t i = 0; i < t->offcpu.len; i++) {
		struct tr_offcpu o = t->offcpu.v[i];
		uint64_t dur = o.end > o.start ? o.end - o.start : 0;

		if (!clip_interval(from, to, &o.start, &dur))
			continue;
		o.end = o.start + dur;
		t->offcpu.v[n++] = o;
	}
	t->offcpu.len = n;
}

/* The spans that overlap the window, cut to it; their attributes follow their new ids. */
static void clip_spans(struct tr_tables *t, uint64_t from, uint64_t to)
{
	size_t old = t->spans.len, n = 0;
	uint32_t *new_id = xcalloc(old + 1, sizeof(*new_id));

	for (size_t i = 0; i < t->spans.len; i++) {
		struct tr_span sp = t->spans.v[i];

		if (!clip_interval(from, to, &sp.start, &sp.dur))
			continue;
		t->spans.v[n++] = sp;
		new_id[i + 1] = (uint32_t)n;
	}
	t->spans.len = n;
	n = 0;
	for (size_t i = 0; i < t->span_attrs.len; i++) {
		struct tr_span_attr a = t->span_attrs.v[i];

		if (a.span > old || !new_id[a.span])
			continue;
		a.span = new_id[a.span];
		t->span_attrs.v[n++] = a;
	}
	t->span_attrs.len = n;
	free(new_id);
}

/* The metric readings taken in the window, each with its values. */
static void clip_metrics(struct tr_tables *t, uint64_t from, uint64_t to)
{
	size_t ticks = 0, values = 0, row = 0;

	for (size_t i = 0; i < t->metric_ticks.len && row < t->metric_values.len; i++) {
		struct tr_metric_tick tick = t->metric_ticks.v[i];
		size_t n = tick.values < t->metric_values.len - row ? tick.values
								      : t->metric_values.len - row;

		if (in_window(from, to, tick.ts)) {
			memmove(&t->metric_values.v[values], &t->metric_values.v[row],
				n * sizeof(*t->metric_values.v));
			values += n;
			t->metric_ticks.v[ticks++] = tick;
		}
		row += n;
	}
	t->metric_ticks.len = ticks;
	t->metric_values.len = values;
}

void model_clip(struct model *m, uint64_t from, uint64_t to)
{
	KEEP_TAKEN_IN(&m->t.samples, from, to);
	clip_offcpu(&m->t, from, to);
	clip_spans(&m->t, from, to);
	clip_metrics(&m->t, from, to);
	KEEP_TAKEN_IN(&m->t.losses, from, to);
	m->window_from = from;
	m->window_to = to;
	model_reindex(m);
}
