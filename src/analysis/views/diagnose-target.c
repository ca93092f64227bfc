/* SPDX-License-Identifier: MIT */
/*
 * diagnose's section on what target libraries sent (libgtrace-target and
 * the CUDA agent): their counters, their lanes, and how the spans'
 * origins linked to the CPU samples, overall and lane by lane.
 */
#include "analysis/views/diagnose-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/saturate.h"
#include "util/text.h"
#include "util/xalloc.h"

static void put_target_counters(FILE *out, const struct model *m)
{
	uint64_t target_ns = 0, dropped = 0;
	struct u64map pids = {0};

	for (size_t i = 0; i < m->t.spans.len; i++)
		target_ns = u64_sat_add(target_ns, m->t.spans.v[i].dur);
	for (size_t i = 0; i < m->t.lanes.len; i++)
		u64map_put(&pids, m->t.lanes.v[i].pid, 0);
	diag_field(out, "target:");
	fprintf(out, "%zu spans in %zu lane%s of %zu process%s, %.3f ms of target time\n",
		m->t.spans.len, m->t.lanes.len, m->t.lanes.len == 1 ? "" : "s",
		pids.len, pids.len == 1 ? "" : "es", (double)target_ns / 1e6);
	u64map_free(&pids);
	for (size_t i = 0; i < m->counters.len; i++) {
		const char *name = model_str(m, m->counters.v[i].name);
		uint64_t v = m->counters.v[i].value;

		if (!diag_has_prefix(name, TARGET_COUNTER_PREFIX))
			continue;
		fprintf(out, "  %-28s%12" PRIu64 "\n",
			text_escape(name + strlen(TARGET_COUNTER_PREFIX)), v);
		if (diag_has_prefix(name, TARGET_DROPPED_PREFIX))
			dropped += v;
	}
	diag_field(out, "spans dropped:");
	fprintf(out, "%" PRIu64 " (%.2f%% of %" PRIu64 " reported)\n", dropped,
		diag_percent(dropped, m->t.spans.len + dropped), m->t.spans.len + dropped);
	if (m->lanes_past_limit) {
		diag_field(out, "lanes not shown:");
		fprintf(out, "%" PRIu64 " (past the %u that have a thread id)\n", m->lanes_past_limit,
			TR_MAX_LANES);
	}
}

static void put_distances(FILE *out, const struct distance_stats *d)
{
	char min[32], avg[32], max[32];

	if (!d->count)
		return;
	fprintf(out, "  distance min %s, avg %s, max %s", diag_duration(min, sizeof(min), d->min),
		diag_duration(avg, sizeof(avg), d->sum / d->count),
		diag_duration(max, sizeof(max), d->max));
}

static void put_origins(FILE *out, const struct model *m, const struct origin_links *l)
{
	static const enum origin_outcome order[] = {
		ORIGIN_LINKED, ORIGIN_BAD_TID, ORIGIN_NO_THREAD, ORIGIN_NO_STACK,
		ORIGIN_TOO_FAR, ORIGIN_NONE,
	};
	char window[32];

	diag_field(out, "origin links:");
	fprintf(out, "window %s\n", diag_duration(window, sizeof(window), l->window_ns));
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		uint64_t n = l->counts[order[i]];

		fprintf(out, "  %-20s%10" PRIu64 " %7.2f%%", origin_outcome_name(order[i]), n,
			diag_percent(n, m->t.spans.len));
		if (order[i] == ORIGIN_LINKED)
			put_distances(out, &l->linked);
		else if (order[i] == ORIGIN_TOO_FAR)
			put_distances(out, &l->too_far);
		fputc('\n', out);
	}
}

static void put_lanes(FILE *out, const struct model *m, const struct origin_links *l)
{
	size_t nlanes = m->t.lanes.len;
	uint64_t *linked = xcalloc(nlanes + 1, sizeof(*linked));

	for (size_t i = 0; i < m->t.spans.len; i++) {
		uint32_t lane = m->t.spans.v[i].lane;

		if (lane && lane <= nlanes && l->outcome[i] == ORIGIN_LINKED)
			linked[lane]++;
	}
	fprintf(out, "lane spans:\n  %8s %10s %10s %12s %8s  %s\n", "PID", "TID", "Spans",
		"Target ms", "Linked", "Name");
	for (size_t ti = m->real_threads; ti < m->threads.len; ti++) {
		const struct model_thread *th = &m->threads.v[ti];
		const char *name = model_str(m, th->name);

		fprintf(out, "  %8" PRIu32 " %#10" PRIx32 " %10" PRIu64 " %12.3f %7.2f%%  %s\n",
			th->pid, th->tid, th->spans, (double)th->span_ns / 1e6,
			diag_percent(linked[th->lane], th->spans), text_escape(name && *name ? name : "-"));
	}
	free(linked);
}

/* Each lane's origins by outcome. */
static void put_lane_origins(FILE *out, const struct model *m, const struct origin_links *l)
{
	static const enum origin_outcome order[] = {
		ORIGIN_LINKED, ORIGIN_NONE, ORIGIN_BAD_TID, ORIGIN_NO_THREAD, ORIGIN_NO_STACK,
		ORIGIN_TOO_FAR,
	};
	size_t nlanes = m->t.lanes.len, norder = sizeof(order) / sizeof(order[0]);
	uint64_t (*counts)[ORIGIN_OUTCOMES] = xcalloc(nlanes + 1, sizeof(*counts));

	for (size_t i = 0; i < m->t.spans.len; i++) {
		uint32_t lane = m->t.spans.v[i].lane;

		if (lane && lane <= nlanes)
			counts[lane][l->outcome[i]]++;
	}
	fprintf(out, "origins by lane:\n  %8s %10s", "PID", "TID");
	for (size_t k = 0; k < norder; k++)
		fprintf(out, " %9s", origin_outcome_name(order[k]));
	fprintf(out, "  %s\n", "Name");
	for (size_t ti = m->real_threads; ti < m->threads.len; ti++) {
		const struct model_thread *th = &m->threads.v[ti];
		const char *name = model_str(m, th->name);

		fprintf(out, "  %8" PRIu32 " %#10" PRIx32, th->pid, th->tid);
		for (size_t k = 0; k < norder; k++)
			fprintf(out, " %9" PRIu64, counts[th->lane][order[k]]);
		fprintf(out, "  %s\n", text_escape(name && *name ? name : "-"));
	}
	free(counts);
}

/* Lanes and spans: what the target libraries sent, and where origins lead. */
void diag_target(FILE *out, const struct model *m, const struct origin_links *l)
{
	bool counters = false;

	for (size_t i = 0; i < m->counters.len; i++)
		counters |= diag_has_prefix(model_str(m, m->counters.v[i].name), TARGET_COUNTER_PREFIX);
	if (!counters && !m->t.lanes.len && !m->t.spans.len)
		return;
	put_target_counters(out, m);
	put_origins(out, m, l);
	if (m->t.lanes.len) {
		put_lanes(out, m, l);
		put_lane_origins(out, m, l);
	}
}
