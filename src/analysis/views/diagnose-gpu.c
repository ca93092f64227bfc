/* SPDX-License-Identifier: MIT */
/*
 * The diagnose view's GPU sections: what became of CUDA collection, GPU PC
 * sampling and kernel regions.
 */
#include "analysis/views/diagnose-private.h"
#include "analysis/views/gpu-explain.h"
#include "analysis/views/gpupc.h"

#include <inttypes.h>
#include <string.h>

#include "contract/attrs.h"
#include "contract/counters.h"
#include "contract/meta.h"
#include "util/saturate.h"
#include "util/text.h"

/* CUDA meta keys in print order; the devices go before cuda.flush. */
static const char *const cuda_meta_lines[] = {
	META_CUDA_INJECTION, META_CUDA_DRIVER, META_CUDA_STATUS, META_CUDA_CUPTI_VERSION,
	META_CUDA_DRIVER_VERSION,
};

/* CUDA counters listed in order: CUPTI's records and what became of them; any others follow. */
#define CUDA_LINES_LAST CUDA_CNT_NULL_BUFFERS

/* GPU PC sampling's meta keys and counters: its section says them in words. */
static const char *const pc_meta_lines[] = {
	META_CUDA_PC_STATUS, META_CUDA_PC_MODE, META_CUDA_PC_PERIOD, META_CUDA_PC_RATE,
};
#define PC_LINES_FIRST CUDA_CNT_PC_PAIRS
#define PC_LINES_LAST CUDA_CNT_PC_CUBINS_OVER_CAP

/* Counters that mean GPU work is missing or misplaced, said in their words. */
static const struct counter_name *const cuda_problems[] = {
	&cuda_counters[CUDA_CNT_DROPPED], &cuda_counters[CUDA_CNT_NO_TIMESTAMP],
	&cuda_counters[CUDA_CNT_INCOMPLETE], &cuda_counters[CUDA_CNT_CAUSALITY],
	&cuda_counters[CUDA_CNT_NO_ORIGIN], &cuda_counters[CUDA_CNT_NULL_BUFFERS],
};

/* Whether lane id lane is one the CUDA agent makes. */
static bool is_cuda_lane(const struct model *m, uint32_t lane)
{
	switch (model_lane_class(m, lane)) {
	case MODEL_LANE_CUDA_STREAM:
	case MODEL_LANE_CUDA_API:
	case MODEL_LANE_CUDA_WAIT:
	case MODEL_LANE_NVTX:
	case MODEL_LANE_CUDA_PC:
		return true;
	default:
		return false;
	}
}

static bool has_cuda(const struct model *m)
{
	for (size_t i = 0; i < m->t.meta.len; i++)
		if (m->t.meta.v[i].key && diag_has_prefix(m->t.meta.v[i].key, META_CUDA_PREFIX))
			return true;
	for (size_t i = 0; i < m->counters.len; i++)
		if (diag_has_prefix(model_str(m, m->counters.v[i].name), CUDA_COUNTER_PREFIX))
			return true;
	for (uint32_t lane = 1; lane <= m->t.lanes.len; lane++)
		if (is_cuda_lane(m, lane))
			return true;
	return false;
}

static bool is_listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

bool diag_is_cuda_meta_line(const char *key)
{
	if (is_listed(cuda_meta_lines, sizeof(cuda_meta_lines) / sizeof(cuda_meta_lines[0]), key) ||
	    is_listed(pc_meta_lines, sizeof(pc_meta_lines) / sizeof(pc_meta_lines[0]), key))
		return true;
	return !strcmp(key, META_CUDA_FLUSH) || diag_has_prefix(key, META_CUDA_DEVICE_PREFIX);
}

/* What the GPU lanes hold: streams, kernels, copies and their GPU time. */
static void put_cuda_lanes(FILE *out, const struct model *m)
{
	uint64_t streams = 0, spans = 0, ns = 0;

	for (size_t ti = m->real_threads; ti < m->threads.len; ti++) {
		const struct model_thread *th = &m->threads.v[ti];

		if (model_lane_class(m, th->lane) != MODEL_LANE_CUDA_STREAM)
			continue;
		streams++;
		spans += th->spans;
		ns = u64_sat_add(ns, th->span_ns);
	}
	diag_field(out, "GPU lanes:");
	fprintf(out, "%" PRIu64 " stream%s, %" PRIu64 " spans, %.3f ms of GPU time\n",
		streams, streams == 1 ? "" : "s", spans, (double)ns / 1e6);
}

/* The agent counts a problem once it happens: with the agent running, no counter is none. */
static void put_cuda_problems(FILE *out, const struct model *m)
{
	bool any = false, known = model_meta(m, META_CUDA_STATUS) != NULL;

	diag_field(out, "GPU record problems:");
	for (size_t i = 0; i < sizeof(cuda_problems) / sizeof(cuda_problems[0]); i++) {
		uint64_t v;

		if (!model_counter(m, cuda_problems[i]->name, &v))
			continue;
		known = true;
		if (!v)
			continue;
		fprintf(out, "%s%" PRIu64 " %s", any ? ", " : "", v, cuda_problems[i]->words);
		any = true;
	}
	fprintf(out, "%s\n", any ? "" : known ? "none" : "n/a");
}

static bool is_cuda_counter_line(const char *name)
{
	for (int c = 0; c < CUDA_COUNTERS; c++)
		if ((c <= CUDA_LINES_LAST || (c >= PC_LINES_FIRST && c <= PC_LINES_LAST)) &&
		    !strcmp(cuda_counters[c].name, name))
			return true;
	return false;
}

static void put_cuda_counters(FILE *out, const struct model *m)
{
	for (int c = 0; c <= CUDA_LINES_LAST; c++) {
		uint64_t v;

		if (model_counter(m, cuda_counters[c].name, &v))
			fprintf(out, "  %-30s%10" PRIu64 "\n", cuda_counters[c].name, v);
	}
	for (size_t i = 0; i < m->counters.len; i++) {
		const char *name = model_str(m, m->counters.v[i].name);

		if (diag_has_prefix(name, CUDA_COUNTER_PREFIX) && !is_cuda_counter_line(name))
			fprintf(out, "  %-30s%10" PRIu64 "\n", text_escape(name),
				m->counters.v[i].value);
	}
}

/*
 * What became of GPU collection, in words first, then the agent's and the
 * recorder's facts and counts under their own names.
 */
void diag_cuda(FILE *out, const struct model *m)
{
	char why[512];

	if (!has_cuda(m))
		return;
	diag_field(out, "CUDA:");
	diag_value(out, cuda_explain(m, why, sizeof(why)) ? why
		  : "the recording says nothing about CUDA collection");
	for (size_t i = 0; i < sizeof(cuda_meta_lines) / sizeof(cuda_meta_lines[0]); i++)
		diag_meta_line(out, cuda_meta_lines[i], model_meta(m, cuda_meta_lines[i]));
	diag_meta_keys(out, m, META_CUDA_DEVICE_PREFIX, false);
	diag_meta_line(out, META_CUDA_FLUSH, model_meta(m, META_CUDA_FLUSH));
	diag_meta_keys(out, m, META_CUDA_PREFIX, true);
	put_cuda_lanes(out, m);
	put_cuda_problems(out, m);
	put_cuda_counters(out, m);
}

/*
 * A PC sampling counter's value as text. The agent writes a count once it
 * is not 0: with its status there, a missing one is 0; without, n/a.
 */
static const char *pc_count_text(char *buf, size_t size, const struct model *m,
				 const char *name)
{
	return diag_count_text(buf, size, m, name, model_meta(m, META_CUDA_PC_STATUS) != NULL);
}

static void put_pc_settings(FILE *out, const struct model *m)
{
	const char *mode = model_meta(m, META_CUDA_PC_MODE);
	const char *period = model_meta(m, META_CUDA_PC_PERIOD);
	const char *rate = model_meta(m, META_CUDA_PC_RATE);

	diag_field(out, "PC mode:");
	diag_value(out, mode ? mode : "n/a");
	diag_field(out, "PC period:");
	if (period)
		fprintf(out, "a sample every 2^%s cycles\n", text_escape(period));
	else
		fprintf(out, "n/a\n");
	diag_field(out, "PC rate:");
	if (!rate)
		fprintf(out, "n/a\n");
	else if (!strcmp(rate, "0"))
		fprintf(out, "always on\n");
	else
		fprintf(out, "about %s pairs a second, in sampling windows\n", text_escape(rate));
}

/* The pairs (buckets) and samples in the file, against what the agent sent. */
static void put_pc_kept(FILE *out, const struct model *m, const uint64_t lines[PC_LINE_OUTCOMES])
{
	uint64_t samples = 0;
	char pairs_sent[24], samples_sent[24];
	double seconds = diag_recording_seconds(m);

	for (int o = 0; o < PC_LINE_OUTCOMES; o++)
		samples += lines[o];
	diag_field(out, "PC kept:");
	fprintf(out, "%zu pairs, %" PRIu64 " samples (the agent sent %s pairs, %s samples)\n",
		m->t.pc_samples.len, samples,
		pc_count_text(pairs_sent, sizeof(pairs_sent), m,
			      cuda_counters[CUDA_CNT_PC_PAIRS].name),
		pc_count_text(samples_sent, sizeof(samples_sent), m,
			      cuda_counters[CUDA_CNT_PC_SAMPLES].name));
	diag_field(out, "PC pairs/s:");
	if (seconds > 0)
		fprintf(out, "%.1f kept per second of recording\n",
			(double)m->t.pc_samples.len / seconds);
	else
		fprintf(out, "n/a\n");
}

static void put_pc_getdata(FILE *out, const struct model *m)
{
	uint64_t calls = 0, ns = 0;
	bool known = model_counter(m, cuda_counters[CUDA_CNT_PC_GETDATA].name, &calls) ||
		     model_meta(m, META_CUDA_PC_STATUS);

	model_counter(m, cuda_counters[CUDA_CNT_PC_GETDATA_NS].name, &ns);
	diag_field(out, "PC GetData:");
	if (!known)
		fprintf(out, "n/a\n");
	else if (!calls)
		fprintf(out, "0 calls\n");
	else
		fprintf(out, "%" PRIu64 " calls, %.3f us each\n", calls,
			(double)ns / (double)calls / 1e3);
}

static void put_pc_cubins(FILE *out, const struct model *m)
{
	static const struct counter_name *const cubins[] = {
		&cuda_counters[CUDA_CNT_PC_CUBINS], &cuda_counters[CUDA_CNT_PC_CUBINS_OVER_CAP],
		&cuda_counters[CUDA_CNT_PC_CUBINS_UNSENT],
		&cuda_counters[CUDA_CNT_PC_CUBINS_CUT_SHORT],
	};
	uint64_t bytes = 0;

	for (size_t i = 0; i < m->t.cubins.len; i++)
		bytes += m->t.cubins.v[i].image.len;
	diag_counts_line(out, m, "PC cubins:", cubins, sizeof(cubins) / sizeof(cubins[0]),
			model_meta(m, META_CUDA_PC_STATUS) != NULL);
	fprintf(out, "; %zu kept, %" PRIu64 " bytes\n", m->t.cubins.len, bytes);
}

/*
 * GPU PC sampling: its status, settings, windows, what was kept and lost,
 * what draining the samples cost, the cubins, and how many samples have a
 * source line. One line for a CUDA recording that did not request it.
 */
void diag_pc(FILE *out, const struct model *m)
{
	static const struct counter_name *const windows[] = {
		&cuda_counters[CUDA_CNT_PC_WINDOWS], &cuda_counters[CUDA_CNT_PC_WINDOWS_FAILED],
		&cuda_counters[CUDA_CNT_PC_REFUSED],
	};
	static const struct counter_name *const drops[] = {
		&cuda_counters[CUDA_CNT_PC_DROPPED], &cuda_counters[CUDA_CNT_PC_BUFFER_FULL],
		&cuda_counters[CUDA_CNT_PC_UNSENT],
	};
	const char *status = model_meta(m, META_CUDA_PC_STATUS);
	bool requested = status || m->t.pc_samples.len || (m->header.features & TR_FEAT_GPU_PC);
	uint64_t lines[PC_LINE_OUTCOMES];
	char buf[512];

	if (!requested && !has_cuda(m))
		return;
	diag_field(out, "GPU PC sampling:");
	if (!requested) {
		fprintf(out, "not requested (gtrace record --gpu-pc-sampling)\n");
		return;
	}
	diag_value(out, status ? status : pc_explain(m, buf, sizeof(buf)));
	pc_lines_count(m, lines);
	put_pc_settings(out, m);
	diag_counts_line(out, m, "PC windows:", windows, 3, status != NULL);
	fputc('\n', out);
	put_pc_kept(out, m, lines);
	diag_counts_line(out, m, "PC drops:", drops, 3, status != NULL);
	fputc('\n', out);
	put_pc_getdata(out, m);
	put_pc_cubins(out, m);
	diag_field(out, "PC source lines:");
	fprintf(out, "%s\n", pc_lines_describe(buf, sizeof(buf), lines));
}

/* The lanes of region spans and of their summaries, and the largest clock error of those. */
struct kr_lanes {
	size_t lanes, stats_lanes;
	bool clock_known;
	uint64_t clock_error_ns;
};

static void count_kr_lanes(struct kr_lanes *k, const struct model *m)
{
	uint32_t error_key = model_string_id(m, KR_ATTR_CLOCK_ERROR_NS);

	memset(k, 0, sizeof(*k));
	for (uint32_t lane = 1; lane <= m->t.lanes.len; lane++) {
		k->lanes += model_lane_class(m, lane) == MODEL_LANE_KREGIONS;
		k->stats_lanes += model_lane_class(m, lane) == MODEL_LANE_KREGION_STATS;
	}
	for (size_t i = 0; k->stats_lanes && error_key && i < m->t.spans.len; i++) {
		uint64_t ns;

		if (model_lane_class(m, m->t.spans.v[i].lane) != MODEL_LANE_KREGION_STATS ||
		    !model_span_attr(m, (uint32_t)i + 1, error_key, &ns))
			continue;
		k->clock_known = true;
		k->clock_error_ns = ns > k->clock_error_ns ? ns : k->clock_error_ns;
	}
}

/*
 * Kernel regions (gtrace-kernel-regions(3)): the collects' counts in
 * words, the lanes they made, and how well their times are placed. One
 * line for a CUDA recording without any.
 */
void diag_kernel_regions(FILE *out, const struct model *m)
{
	static const struct counter_name *const collected[] = {
		&kr_counters[KR_BUFFERS], &kr_counters[KR_EVENTS], &kr_counters[KR_LANES_CAPPED],
	};
	static const struct counter_name *const lost[] = {
		&kr_counters[KR_OVERFLOWED], &kr_counters[KR_EVENTS_LOST],
	};
	static const struct counter_name *const unmatched[] = {
		&kr_counters[KR_UNMATCHED], &kr_counters[KR_COLLISIONS],
	};
	static const struct counter_name *const bad[] = {
		&kr_counters[KR_BAD_EVENTS], &kr_counters[KR_BAD_BUFFERS],
	};
	bool counted = false;
	struct kr_lanes k;
	char buf[32];

	for (size_t i = 0; i < m->counters.len; i++)
		counted |= diag_has_prefix(model_str(m, m->counters.v[i].name), KR_COUNTER_PREFIX);
	count_kr_lanes(&k, m);
	if (!counted && !k.lanes && !k.stats_lanes) {
		if (has_cuda(m)) {
			diag_field(out, "Kernel regions:");
			fprintf(out, "none collected (gtrace_kr_collect, gtrace-kernel-regions(3))\n");
		}
		return;
	}
	diag_counts_line(out, m, "Kernel regions:", collected, 3, false);
	fprintf(out, "; %zu region lanes, %zu summary lanes\n", k.lanes, k.stats_lanes);
	diag_counts_line(out, m, "KR overflows:", lost, 2, false);
	fputc('\n', out);
	diag_counts_line(out, m, "KR mismatches:", unmatched, 2, false);
	fputc('\n', out);
	diag_counts_line(out, m, "KR undecodable:", bad, 2, false);
	fputc('\n', out);
	diag_field(out, "KR clock error:");
	if (k.clock_known)
		fprintf(out, "at most %s\n", diag_duration(buf, sizeof(buf), k.clock_error_ns));
	else
		fprintf(out, "n/a\n");
}
