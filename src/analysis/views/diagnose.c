/* SPDX-License-Identifier: MIT */
/*
 * The diagnose view: how the recording went. Everything comes from the
 * container, the meta pairs, the counters and the origin links; anything
 * missing prints as "n/a" so that a file from an interrupted or older
 * recorder still shows. The GPU sections are in diagnose-gpu.c, the Python
 * and metrics ones in diagnose-python-metrics.c.
 */
#include "analysis/views/diagnose.h"
#include "analysis/views/diagnose-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "contract/counters.h"
#include "contract/meta.h"
#include "contract/symbols.h"
#include "util/json.h"
#include "util/text.h"
#include "util/xalloc.h"

/* Meta keys with a line of their own, in print order, and their labels. */
static const struct {
	const char *key;
	const char *label;
} meta_lines[] = {
	{ META_COMMAND, "command" },
	{ META_EVENT, "event" },
	{ META_KERNEL_TIME, "kernel time" },
	{ META_FREQUENCY, "frequency (Hz)" },
	{ META_CALL_GRAPH, "call graph" },
	{ META_STACK_SIZE, "stack size" },
	{ META_KERNEL, "kernel" },
	{ META_PARANOID, "perf_event_paranoid" },
	{ META_GTRACE_VERSION, "gtrace version" },
	{ META_DURATION, NULL },	/* its own line, below */
	{ META_RECORDER_CPU_NS, NULL },	/* with the counts */
	{ META_RECORDER_NAMING_NS, NULL },
	{ META_METRICS_INTERVAL, NULL },	/* the metrics section */
	{ META_METRICS_NVML, NULL },
};

/* Counters with a line of their own; the rest are listed by name. */
static const char *const counter_lines[] = { COUNTER_SAMPLES, COUNTER_LOST, COUNTER_THROTTLED };

static const struct {
	uint64_t bit;
	const char *name;
} features[] = {
	{ TR_FEAT_CPU_SAMPLES, "cpu-samples" },
	{ TR_FEAT_DWARF_STACKS, "dwarf-stacks" },
	{ TR_FEAT_OFFCPU, "off-cpu" },
	{ TR_FEAT_SYMBOLS, "symbols" },
	{ TR_FEAT_LANES, "lanes" },
	{ TR_FEAT_GPU_PC, "gpu-pc" },
	{ TR_FEAT_METRICS, "metrics" },
};

/* A label in its column; a longer one keeps a space before its value. */
void diag_field(FILE *out, const char *label)
{
	label = text_escape(label);
	fprintf(out, strlen(label) < 22 ? "%-22s" : "%s ", label);
}

/* A value from the recording, then the end of its line. */
void diag_value(FILE *out, const char *value)
{
	fprintf(out, "%s\n", text_escape(value));
}

double diag_percent(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

static void put_counter(FILE *out, const struct model *m, const char *label,
			const char *name)
{
	uint64_t v;

	diag_field(out, label);
	if (model_counter(m, name, &v))
		fprintf(out, "%" PRIu64 "\n", v);
	else
		fprintf(out, "n/a\n");
}

static void put_container(FILE *out, const struct model *m, const char *path)
{
	char why[160];

	diag_field(out, "file:");
	diag_value(out, path);
	diag_field(out, "size:");
	fprintf(out, "%" PRIu64 " bytes\n", m->file_size);
	diag_field(out, "format version:");
	fprintf(out, "%" PRIu32 "\n", m->header.version);
	diag_field(out, "contents:");
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++)
		if (m->header.features & features[i].bit)
			fprintf(out, "%s ", features[i].name);
	fprintf(out, "(header features 0x%" PRIx64 ")\n", m->header.features);
	diag_field(out, "chunks:");
	fprintf(out, "%" PRIu64 " (%" PRIu64 " bytes compressed, %" PRIu64
		" decompressed, ratio %.2f)\n", m->chunks, m->compressed_bytes,
		m->payload_bytes, m->compressed_bytes ?
		(double)m->payload_bytes / (double)m->compressed_bytes : 0.0);
	diag_field(out, "decoded:");
	fprintf(out, "%" PRIu64 " bytes, %.1f times the file", m->budget.used,
		m->file_size ? (double)m->budget.used / (double)m->file_size : 0.0);
	if (m->budget.limit)
		fprintf(out, " (read limit %" PRIu64 " bytes)", m->budget.limit);
	fputc('\n', out);
	diag_field(out, "ended:");
	if (m->damage)
		fprintf(out, "truncated after chunk %" PRIu64 " (offset %" PRIu64 "): %s\n",
			m->chunks, m->damage_offset, model_damage_text(m, why, sizeof(why)));
	else
		fprintf(out, m->ended ? "cleanly\n" : "without an END chunk\n");
}

bool diag_has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool is_meta_line(const char *key)
{
	/* The CUDA and Python sections show theirs. */
	if (diag_has_prefix(key, META_CUDA_PREFIX) || diag_has_prefix(key, META_PYTHON_PREFIX))
		return true;
	for (size_t i = 0; i < sizeof(meta_lines) / sizeof(meta_lines[0]); i++)
		if (!strcmp(meta_lines[i].key, key))
			return true;
	return false;
}

/* The recording's length: its duration meta, else from the events read. */
double diag_recording_seconds(const struct model *m)
{
	const char *duration = model_meta(m, META_DURATION);

	return duration ? strtod(duration, NULL) : (double)(m->last_ts - m->start_ts) / 1e9;
}

static void put_meta(FILE *out, const struct model *m)
{

	for (size_t i = 0; i < sizeof(meta_lines) / sizeof(meta_lines[0]); i++) {
		const char *v = model_meta(m, meta_lines[i].key);
		char label[64];

		if (!meta_lines[i].label)
			continue;
		snprintf(label, sizeof(label), "%s:", meta_lines[i].label);
		diag_field(out, label);
		diag_value(out, v ? v : "n/a");
	}
	diag_field(out, "duration:");
	if (model_meta(m, META_DURATION))
		fprintf(out, "%s s\n", text_escape(model_meta(m, META_DURATION)));
	else	/* the recorder was stopped before it could write it */
		fprintf(out, "%.3f s (from the events read)\n", diag_recording_seconds(m));
	/* Keys this version has no line for, once each with their last value. */
	for (size_t i = 0; i < m->t.meta.len; i++) {
		const struct tr_meta *kv = &m->t.meta.v[i];
		char label[64];

		if (!kv->key || is_meta_line(kv->key) || model_meta(m, kv->key) != kv->value)
			continue;
		snprintf(label, sizeof(label), "%s:", kv->key);
		diag_field(out, label);
		diag_value(out, kv->value ? kv->value : "");
	}
}

/* The largest losses first. */
static int by_count_desc(const void *a, const void *b)
{
	const struct tr_loss *x = a, *y = b;

	return x->count != y->count ? (x->count < y->count ? 1 : -1)
				    : (x->ts > y->ts) - (x->ts < y->ts);
}

#define LOSSES_SHOWN 5

/* Where and when samples were lost: the largest reports, with the thread each came with. */
static void put_losses(FILE *out, const struct model *m)
{
	struct tr_loss *rows;
	size_t n = m->t.losses.len;

	if (!n)
		return;
	rows = xmalloc(n * sizeof(*rows));
	memcpy(rows, m->t.losses.v, n * sizeof(*rows));
	qsort(rows, n, sizeof(*rows), by_count_desc);
	for (size_t i = 0; i < n && i < LOSSES_SHOWN; i++) {
		long th = model_thread_index(m, rows[i].tid);

		fprintf(out, "  %10" PRIu64 " ending at %.3f s on CPU %" PRIu32 ", with thread %" PRIu32,
			rows[i].count,
			(double)(rows[i].ts > m->start_ts ? rows[i].ts - m->start_ts : 0) / 1e9,
			rows[i].cpu, rows[i].tid);
		if (th >= 0 && model_str(m, m->threads.v[th].name))
			fprintf(out, " (%s)", text_escape(model_str(m, m->threads.v[th].name)));
		fprintf(out, "\n");
	}
	if (n > LOSSES_SHOWN)
		fprintf(out, "  %10s in %zu more reports\n", "...", n - LOSSES_SHOWN);
	free(rows);
}

/*
 * What the recorder spent of the CPU while recording, in all, naming
 * addresses, reading metrics, and per sample for the rest.
 */
static void put_recorder_cpu(FILE *out, const struct model *m)
{
	const char *v = model_meta(m, META_RECORDER_CPU_NS);
	const char *naming = model_meta(m, META_RECORDER_NAMING_NS);
	double ns = v ? strtod(v, NULL) : 0, naming_ns = naming ? strtod(naming, NULL) : 0;
	uint64_t metrics_ns = 0;
	bool metrics = model_counter(m, metrics_counters[METRICS_CPU_NS].name, &metrics_ns);

	diag_field(out, "recorder CPU:");
	if (!v) {
		fprintf(out, "n/a\n");
		return;
	}
	fprintf(out, "%.3f s while recording", ns / 1e9);
	if (naming)
		fprintf(out, " (%.3f s naming addresses%s", naming_ns / 1e9, metrics ? ", " : ")");
	else if (metrics)
		fprintf(out, " (");
	if (metrics)
		fprintf(out, "%.3f s reading metrics)", (double)metrics_ns / 1e9);
	if (m->t.samples.len)
		fprintf(out, ", %.2f us per sample",
			(ns - naming_ns - (double)metrics_ns) / 1e3 / (double)m->t.samples.len);
	fprintf(out, "\n");
}

/* Processes whose FORK record was lost, read from /proc at their first sample, or not. */
static void put_recovered(FILE *out, const struct model *m)
{
	uint64_t found = 0, not_found = 0;

	model_counter(m, COUNTER_PROCESSES_RECOVERED, &found);
	model_counter(m, COUNTER_PROCESSES_UNRECOVERED, &not_found);
	if (found || not_found)
		fprintf(out, " (%" PRIu64 " unannounced, found in /proc; %" PRIu64 " not found)",
			found, not_found);
	fputc('\n', out);
}

static void put_counts(FILE *out, const struct model *m)
{
	uint64_t truncated = 0;

	for (size_t i = 0; i < m->t.samples.len; i++)
		truncated += !!(m->t.samples.v[i].flags & TR_SAMPLE_TRUNCATED);
	diag_field(out, "samples:");
	fprintf(out, "%zu\n", m->t.samples.len);
	put_counter(out, m, "samples counted:", COUNTER_SAMPLES);
	diag_field(out, "truncated stacks:");
	fprintf(out, "%" PRIu64 " (%.2f%%)\n", truncated,
		diag_percent(truncated, m->t.samples.len));
	diag_field(out, "threads:");
	fprintf(out, "%zu\n", m->real_threads);
	diag_field(out, "processes:");
	fprintf(out, "%" PRIu64, m->processes);
	put_recovered(out, m);
	put_recorder_cpu(out, m);
	put_counter(out, m, "lost records:", COUNTER_LOST);
	put_losses(out, m);
	put_counter(out, m, "throttled:", COUNTER_THROTTLED);
	diag_field(out, "lanes:");
	fprintf(out, "%zu\n", m->t.lanes.len);
	diag_field(out, "spans:");
	fprintf(out, "%zu\n", m->t.spans.len);
}

static void put_unwinding(FILE *out, const struct model *m)
{
	size_t plen = strlen(UNWIND_COUNTER_PREFIX);
	uint64_t all = 0;

	for (size_t i = 0; i < m->counters.len; i++) {
		const char *name = model_str(m, m->counters.v[i].name);

		if (!strncmp(name, UNWIND_COUNTER_PREFIX, plen))
			all += m->counters.v[i].value;
	}
	diag_field(out, "unwinding:");
	fprintf(out, all ? "%" PRIu64 " stacks\n" : "n/a\n", all);
	for (size_t i = 0; i < m->counters.len; i++) {
		const char *name = model_str(m, m->counters.v[i].name);
		uint64_t v = m->counters.v[i].value;

		if (!strncmp(name, UNWIND_COUNTER_PREFIX, plen))
			fprintf(out, "  %-20s%10" PRIu64 " %7.2f%%\n", text_escape(name + plen), v,
				diag_percent(v, all));
	}
}

/* Whether loc's function has only the name of the unwind entry that covers it. */
static bool unwind_entry_named(const struct model *m, uint32_t loc)
{
	uint32_t n;
	const struct tr_symbol *syms = model_loc_symbols(m, loc, &n);

	for (uint32_t i = 0; i < n; i++) {
		const char *func = model_str(m, syms[i].func);

		if (func && strstr(func, SYMBOL_UNWIND_ENTRY_MARK))
			return true;
	}
	return false;
}

static void put_symbols(FILE *out, const struct model *m)
{
	uint64_t locs = m->t.locs.len, resolved = 0, unmapped = 0, leaf_resolved = 0;
	uint64_t leaf_unwind_entry = 0;
	/* By loc: whether it names no function, a symbol's, or only its unwind entry's. */
	enum { UNNAMED, SYMBOL, UNWIND_ENTRY } *named = xcalloc(locs + 1, sizeof(*named));

	for (uint32_t loc = 1; loc <= locs; loc++) {
		if (!m->loc_syms[loc].count) {
			/* No file to name it from: a process's old image in an exec, a map missed. */
			unmapped += !m->t.locs.v[loc - 1].dso;
			continue;
		}
		resolved++;
		named[loc] = unwind_entry_named(m, loc) ? UNWIND_ENTRY : SYMBOL;
	}
	for (size_t i = 0; i < m->t.samples.len; i++) {
		uint32_t node = m->t.samples.v[i].node;
		uint32_t loc = node && node <= m->t.nodes.len ? m->t.nodes.v[node - 1].loc : 0;

		if (!loc || loc > locs || named[loc] == UNNAMED)
			continue;
		leaf_resolved++;
		leaf_unwind_entry += named[loc] == UNWIND_ENTRY;
	}
	free(named);
	diag_field(out, "symbols:");
	fprintf(out, "%" PRIu64 " of %" PRIu64 " locations resolved (%.2f%%)", resolved, locs,
		diag_percent(resolved, locs));
	if (unmapped)
		fprintf(out, ", %" PRIu64 " outside every mapping", unmapped);
	fputc('\n', out);
	diag_field(out, "leaf resolved:");
	fprintf(out, "%" PRIu64 " of %zu samples (%.2f%%)", leaf_resolved,
		m->t.samples.len, diag_percent(leaf_resolved, m->t.samples.len));
	if (leaf_unwind_entry)
		fprintf(out, ", %" PRIu64 " (%.2f%%) named by an unwind entry only",
			leaf_unwind_entry, diag_percent(leaf_unwind_entry, m->t.samples.len));
	fputc('\n', out);
}

/* A duration in the unit that reads best: "850 ns", "12.500 us", "4.000 ms". */
const char *diag_duration(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.3f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.3f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
	return buf;
}

/* A signed duration: "+1.250 ms", "-3.000 s", "0 ns". */
static const char *signed_duration(char *buf, size_t size, int64_t ns)
{
	char abs[32];

	diag_duration(abs, sizeof(abs), ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns);
	snprintf(buf, size, "%s%s", ns > 0 ? "+" : ns < 0 ? "-" : "", abs);
	return buf;
}

/* Whether rank index r's drift was measured: it and the first have end pairs too. */
static bool drift_known(const struct model *m, size_t r)
{
	return r && m->ranks.v[r].clock_pairs && model_rank_meta(m, 0, META_CLOCK_END) &&
	       model_rank_meta(m, r, META_CLOCK_END);
}

static const char *rank_host(const struct model *m, size_t r)
{
	const char *host = model_rank_meta(m, r, META_HOSTNAME);

	return host && *host ? host : "-";
}

/*
 * Several recordings read as one: each one's rank, host and file, and how
 * its times were moved onto the first's clock. The shift comes from the
 * clock pairs (CLOCK_REALTIME and CLOCK_MONOTONIC read together) of both,
 * so it is as good as the machines' time sync; the drift, how much it
 * changed between their start and end pairs, is how far to trust it.
 */
static void put_ranks(FILE *out, const struct model *m)
{
	int host_width = 4;
	char shift[48], drift[48], residual[48];
	size_t aligned = 0;

	if (m->ranks.len < 2)
		return;
	for (size_t r = 0; r < m->ranks.len; r++) {
		int len = (int)strlen(text_escape(rank_host(m, r)));

		host_width = len > host_width ? len : host_width;
	}
	diag_field(out, "ranks:");
	fprintf(out, "%zu recordings, on the clock of the first; shifted by their clock pairs, "
		"as good as the machines' time sync", m->ranks.len);
	for (size_t r = 1; r < m->ranks.len; r++)
		aligned += m->ranks.v[r].aligned_by != 0;
	if (aligned)
		fprintf(out, ", then by their collective kernels' ends (--align collectives)");
	fputc('\n', out);
	fprintf(out, "  %6s  %-*s  %14s  %14s  ", "Rank", host_width, "Host", "Shift", "Drift");
	if (aligned)
		fprintf(out, "%14s  %14s  ", "Collectives", "Residual");
	fprintf(out, "File\n");
	for (size_t r = 0; r < m->ranks.len; r++) {
		const struct model_rank *k = &m->ranks.v[r];

		if (!r)
			snprintf(shift, sizeof(shift), "clock base");
		else if (!k->clock_pairs)
			snprintf(shift, sizeof(shift), "no clock pairs");
		else
			signed_duration(shift, sizeof(shift), k->shift_ns);
		if (drift_known(m, r))
			signed_duration(drift, sizeof(drift), k->drift_ns);
		else
			snprintf(drift, sizeof(drift), "-");
		fprintf(out, "  %6" PRId64 "  %-*s  %14s  %14s  ", k->rank, host_width,
			text_escape(rank_host(m, r)), shift, drift);
		if (aligned && k->aligned_by) {
			signed_duration(residual, sizeof(residual), k->residual_ns);
			fprintf(out, "%14zu  %14s  ", k->aligned_by, residual);
		} else if (aligned) {
			fprintf(out, "%14s  %14s  ", "-", "-");
		}
		diag_value(out, k->path ? k->path : "-");
	}
}

void diag_meta_line(FILE *out, const char *key, const char *value)
{
	char label[64];

	snprintf(label, sizeof(label), "%s:", key);
	diag_field(out, label);
	diag_value(out, value ? value : "n/a");
}

/* The last value of each key with prefix (or only others: none of diag_is_cuda_meta_line's). */
void diag_meta_keys(FILE *out, const struct model *m, const char *prefix, bool others)
{
	for (size_t i = 0; i < m->t.meta.len; i++) {
		const struct tr_meta *kv = &m->t.meta.v[i];

		if (!kv->key || !diag_has_prefix(kv->key, prefix) ||
		    model_meta(m, kv->key) != kv->value ||
		    (others && diag_is_cuda_meta_line(kv->key)))
			continue;
		diag_meta_line(out, kv->key, kv->value ? kv->value : "");
	}
}

/* A counter's value as text; a missing one is 0 when missing_is_zero, else n/a. */
const char *diag_count_text(char *buf, size_t size, const struct model *m, const char *name,
			    bool missing_is_zero)
{
	uint64_t v = 0;

	if (!model_counter(m, name, &v) && !missing_is_zero)
		return "n/a";
	snprintf(buf, size, "%" PRIu64, v);
	return buf;
}

/* label, then each of the n counters' counts with its words: "3 sent, 1 over the cap". */
void diag_counts_line(FILE *out, const struct model *m, const char *label,
		      const struct counter_name *const *counters, size_t n,
		      bool missing_is_zero)
{
	char buf[24];

	diag_field(out, label);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s %s", i ? ", " : "",
			diag_count_text(buf, sizeof(buf), m, counters[i]->name, missing_is_zero),
			counters[i]->words);
}

static bool is_counter_line(const char *name)
{
	if (diag_has_prefix(name, UNWIND_COUNTER_PREFIX) || diag_has_prefix(name, TARGET_COUNTER_PREFIX) ||
	    diag_has_prefix(name, CUDA_COUNTER_PREFIX) || diag_has_prefix(name, PYTHON_COUNTER_PREFIX) ||
	    diag_has_prefix(name, KR_COUNTER_PREFIX))
		return true;
	for (size_t i = 0; i < sizeof(counter_lines) / sizeof(counter_lines[0]); i++)
		if (!strcmp(counter_lines[i], name))
			return true;
	for (int i = 0; i < METRICS_COUNTERS; i++)
		if (!strcmp(metrics_counters[i].name, name))
			return true;
	return !strcmp(name, COUNTER_PROCESSES_RECOVERED) ||
	       !strcmp(name, COUNTER_PROCESSES_UNRECOVERED);
}

static void put_other_counters(FILE *out, const struct model *m)
{
	bool header = false;

	for (size_t i = 0; i < m->counters.len; i++) {
		const char *name = model_str(m, m->counters.v[i].name);

		if (is_counter_line(name))
			continue;
		if (!header) {
			fprintf(out, "other counters:\n");
			header = true;
		}
		fprintf(out, "  %-30s%10" PRIu64 "\n", text_escape(name), m->counters.v[i].value);
	}
}

void diagnose_print(FILE *out, const struct model *m, const char *path,
		    const struct origin_links *links)
{
	put_container(out, m, path);
	put_ranks(out, m);
	put_meta(out, m);
	put_counts(out, m);
	put_unwinding(out, m);
	put_symbols(out, m);
	diag_target(out, m, links);
	diag_cuda(out, m);
	diag_pc(out, m);
	diag_kernel_regions(out, m);
	diag_python(out, m);
	diag_metrics(out, m);
	put_other_counters(out, m);
}

/* One origin outcome's count and, where kept, its distances. */
static void json_origin(struct json *j, const char *name, uint64_t count,
			const struct distance_stats *d)
{
	json_begin_object(j, name, JSON_INLINE);
	json_uint(j, "count", count);
	if (d) {
		json_uint(j, "min_ns", d->count ? d->min : 0);
		json_fixed(j, "mean_ns", 1, d->count ? (double)d->sum / (double)d->count : 0.0);
		json_uint(j, "max_ns", d->max);
	}
	json_end(j);
}

/* The recordings read, as put_ranks shows them; one for a model of one file. */
static void json_ranks(struct json *j, const struct model *m)
{
	json_begin_array(j, "ranks", JSON_LINES);
	for (size_t r = 0; r < m->ranks.len; r++) {
		const struct model_rank *k = &m->ranks.v[r];

		json_begin_object(j, NULL, JSON_INLINE);
		json_int(j, "rank", k->rank);
		json_bool(j, "has_rank", k->has_rank);
		json_string(j, "host", model_rank_meta(m, r, META_HOSTNAME));
		json_string(j, "path", k->path);
		json_bool(j, "clock_pairs", k->clock_pairs);
		json_int(j, "shift_ns", k->shift_ns);
		if (drift_known(m, r))
			json_int(j, "drift_ns", k->drift_ns);
		else
			json_null(j, "drift_ns");
		json_uint(j, "aligned_by", k->aligned_by);
		if (k->aligned_by)
			json_int(j, "residual_ns", k->residual_ns);
		else
			json_null(j, "residual_ns");
		json_end(j);
	}
	json_end(j);
}

/* What the file is: its size, version, features, chunks and how it ended. */
static void json_file(struct json *j, const struct model *m, const char *path)
{
	char why[160];

	json_begin_object(j, "file", JSON_INLINE);
	json_string(j, "path", path);
	json_uint(j, "size", m->file_size);
	json_uint(j, "format_version", m->header.version);
	json_begin_array(j, "features", JSON_INLINE);
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++)
		if (m->header.features & features[i].bit)
			json_string(j, NULL, features[i].name);
	json_end(j);
	json_uint(j, "chunks", m->chunks);
	json_uint(j, "compressed_bytes", m->compressed_bytes);
	json_uint(j, "payload_bytes", m->payload_bytes);
	json_uint(j, "decoded_bytes", m->budget.used);
	json_uint(j, "read_limit", m->budget.limit);
	json_string(j, "ended", m->damage ? "truncated" : m->ended ? "cleanly" : "without-end");
	if (m->damage) {
		json_string(j, "damage", model_damage_text(m, why, sizeof(why)));
		json_uint(j, "damage_offset", m->damage_offset);
	}
	json_end(j);
}

void diagnose_print_json(FILE *out, const struct model *m, const char *path,
			 const struct origin_links *links)
{
	struct strtab keys = {0};
	struct json j;

	json_begin_document(&j, out, 1);
	json_file(&j, m, path);
	/* Each key once, with its last value, in the order first written. */
	json_begin_object(&j, "meta", JSON_LINES);
	for (size_t i = 0; i < m->t.meta.len; i++) {
		const char *key = m->t.meta.v[i].key;

		if (strtab_find(&keys, key))
			continue;
		strtab_intern(&keys, key);
		json_string(&j, key, model_meta(m, key));
	}
	strtab_free(&keys);
	json_end(&j);
	json_begin_object(&j, "counters", JSON_LINES);
	for (size_t i = 0; i < m->counters.len; i++) {
		const char *name = model_str(m, m->counters.v[i].name);

		json_uint(&j, name ? name : "", m->counters.v[i].value);
	}
	json_end(&j);
	json_begin_object(&j, "recorded", JSON_INLINE);
	json_uint(&j, "samples", m->t.samples.len);
	json_uint(&j, "threads", m->real_threads);
	json_uint(&j, "processes", m->processes);
	json_uint(&j, "lanes", m->threads.len - m->real_threads);
	json_uint(&j, "spans", m->t.spans.len);
	json_end(&j);
	json_begin_array(&j, "losses", JSON_LINES);
	for (size_t i = 0; i < m->t.losses.len; i++) {
		const struct tr_loss *l = &m->t.losses.v[i];

		json_begin_object(&j, NULL, JSON_INLINE);
		json_uint(&j, "ts", l->ts);
		json_uint(&j, "cpu", l->cpu);
		json_uint(&j, "tid", l->tid);
		json_uint(&j, "count", l->count);
		json_end(&j);
	}
	json_end(&j);
	json_begin_object(&j, "origins", JSON_LINES);
	json_uint(&j, "window_ns", links->window_ns);
	for (int o = 0; o < ORIGIN_OUTCOMES; o++)
		json_origin(&j, origin_outcome_name((enum origin_outcome)o), links->counts[o],
			    o == ORIGIN_LINKED ? &links->linked :
			    o == ORIGIN_TOO_FAR ? &links->too_far : NULL);
	json_end(&j);
	json_ranks(&j, m);
	diag_json_metrics(&j, m);
	json_end(&j);
}
