/* SPDX-License-Identifier: MIT */
/*
 * The diagnose view's sections on what was read beside the CPU stacks: the
 * Python stacks and the metrics.
 */
#include "analysis/views/diagnose-private.h"
#include "analysis/views/metrics.h"

#include <inttypes.h>
#include <stdlib.h>

#include "contract/counters.h"
#include "contract/meta.h"
#include "util/json.h"

/* The metrics reader's counters, in the words of the metrics section. */
static const struct counter_name *const metrics_counter_lines[] = {
	&metrics_counters[METRICS_TICKS], &metrics_counters[METRICS_MISSED],
	&metrics_counters[METRICS_PROCESSES], &metrics_counters[METRICS_READ_FAILED],
};

static uint64_t counter_or_0(const struct model *m, const char *name)
{
	uint64_t v = 0;

	model_counter(m, name, &v);
	return v;
}

/*
 * How the Python stacks of the samples were read: found processes, then
 * the samples of their threads by outcome, in words and as counters.
 */
void diag_python(FILE *out, const struct model *m)
{
	uint64_t all = 0, matched = counter_or_0(m, python_counters[PYTHON_MATCHED].name);
	uint64_t frames = counter_or_0(m, python_counters[PYTHON_FRAMES].name);
	uint64_t unsupported = counter_or_0(m, python_counters[PYTHON_UNSUPPORTED].name);
	uint64_t over_budget = counter_or_0(m, python_counters[PYTHON_OVER_BUDGET].name);

	for (int i = 0; i < PYTHON_OUTCOMES; i++)
		all += counter_or_0(m, python_counters[i].name);
	if (!all)
		return;
	diag_field(out, "Python:");
	fprintf(out, "%" PRIu64 " of %" PRIu64 " samples of CPython processes had their "
		"Python stack read (%.1f%%), %.1f frames each", matched, all,
		diag_percent(matched, all), matched ? (double)frames / (double)matched : 0.0);
	if (unsupported)
		fprintf(out, "; %" PRIu64 " of a version gtrace cannot read", unsupported);
	if (over_budget)
		fprintf(out, "; %" PRIu64 " past what one sample may read", over_budget);
	fprintf(out, "\n");
	diag_meta_keys(out, m, META_PYTHON_PROCESS_PREFIX, false);
	for (int i = 0; i < PYTHON_COUNTERS; i++) {
		const char *name = python_counters[i].name;
		uint64_t v;

		if (model_counter(m, name, &v))
			fprintf(out, "  %-30s%10" PRIu64 "\n", name, v);
	}
}

/* The mean time between two metric ticks; false with fewer than two. */
static bool tick_spacing(const struct model *m, uint64_t *ns)
{
	size_t n = m->t.metric_ticks.len;
	uint64_t first, last;

	if (n < 2)
		return false;
	first = last = m->t.metric_ticks.v[0].ts;
	for (size_t i = 1; i < n; i++) {
		uint64_t ts = m->t.metric_ticks.v[i].ts;

		first = ts < first ? ts : first;
		last = ts > last ? ts : last;
	}
	*ns = (last - first) / (n - 1);
	return true;
}

/*
 * The metrics: the interval asked for and the one kept, the series, how
 * the reading went and what it cost, and what became of GPU metrics. One
 * line for a recording without them.
 */
void diag_metrics(FILE *out, const struct model *m)
{
	const char *interval = model_meta(m, META_METRICS_INTERVAL);
	const char *nvml = model_meta(m, META_METRICS_NVML);
	size_t subjects[METRIC_SUBJECTS] = {0}, ticks = m->t.metric_ticks.len;
	struct metrics_storage stored;
	uint64_t cpu_ns, made, spacing;
	char buf[32];

	diag_field(out, "metrics:");
	if (!interval && !m->t.metrics.len) {
		fprintf(out, "none (recorded with --no-metrics, or by a gtrace without them)\n");
		return;
	}
	if (interval)
		fprintf(out, "every %s", diag_duration(buf, sizeof(buf), strtoull(interval, NULL, 10)));
	else
		fprintf(out, "every n/a");
	fprintf(out, ", %zu ticks", ticks);
	if (tick_spacing(m, &spacing))
		fprintf(out, " %s apart on average", diag_duration(buf, sizeof(buf), spacing));
	fputc('\n', out);
	for (size_t i = 0; i < m->t.metrics.len; i++)
		subjects[metric_subject(&m->t.metrics.v[i])]++;
	metrics_storage(m, &stored);
	diag_field(out, "metric series:");
	fprintf(out, "%zu: %zu of the machine, %zu of processes, %zu of GPUs; %zu values",
		m->t.metrics.len, subjects[METRIC_MACHINE], subjects[METRIC_PROCESS],
		subjects[METRIC_GPU], stored.values);
	if (stored.values)
		fprintf(out, ", %.2f bytes each encoded, %.2f compressed",
			(double)stored.encoded / (double)stored.values,
			(double)stored.compressed / (double)stored.values);
	fputc('\n', out);
	diag_counts_line(out, m, "metric readings:", metrics_counter_lines,
			sizeof(metrics_counter_lines) / sizeof(metrics_counter_lines[0]), false);
	fputc('\n', out);
	diag_field(out, "metrics CPU:");
	if (model_counter(m, metrics_counters[METRICS_CPU_NS].name, &cpu_ns)) {
		/* Per reading the recorder made; the file's ticks when it did not say. */
		if (!model_counter(m, metrics_counters[METRICS_TICKS].name, &made) || !made)
			made = ticks;
		fprintf(out, "%.3f ms", (double)cpu_ns / 1e6);
		if (made)
			fprintf(out, ", %s per tick", diag_duration(buf, sizeof(buf), cpu_ns / made));
		fputc('\n', out);
	} else {
		fprintf(out, "n/a\n");
	}
	diag_field(out, "GPU metrics:");
	diag_value(out, nvml ? nvml : "n/a");
}

/* The metrics section's figures; the reader's counters are under "counters". */
void diag_json_metrics(struct json *j, const struct model *m)
{
	const char *interval = model_meta(m, META_METRICS_INTERVAL);
	struct metrics_storage stored;
	uint64_t spacing;

	metrics_storage(m, &stored);
	json_begin_object(j, "metrics", JSON_INLINE);
	json_bool(j, "recorded", interval || m->t.metrics.len);
	if (interval)
		json_uint(j, "interval_ns", strtoull(interval, NULL, 10));
	else
		json_null(j, "interval_ns");
	json_uint(j, "ticks", m->t.metric_ticks.len);
	if (tick_spacing(m, &spacing))
		json_uint(j, "spacing_ns", spacing);
	else
		json_null(j, "spacing_ns");
	json_uint(j, "series", m->t.metrics.len);
	json_uint(j, "values", stored.values);
	json_uint(j, "encoded_bytes", stored.encoded);
	json_uint(j, "compressed_bytes", stored.compressed);
	json_string(j, "nvml", model_meta(m, META_METRICS_NVML));
	json_end(j);
}
