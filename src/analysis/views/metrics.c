/* SPDX-License-Identifier: MIT */
/*
 * The metrics views: each series' statistics and sparkline in its unit
 * (report --metrics), and the figures threads, diff and export take of
 * them. A series' values come from model_metric_points in time order.
 */
#include "analysis/views/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contract/meta.h"
#include "contract/metrics.h"
#include "format/buf.h"
#include "format/file.h"
#include "util/json.h"
#include "util/text.h"
#include "util/xalloc.h"

/* NVML's clock event reasons, by bit (gtrace-format(5), METRICS). */
static const char *const reason_names[METRIC_REASONS] = {
	"gpu idle", "application clocks", "sw power cap", "hw slowdown", "sync boost",
	"sw thermal", "hw thermal", "power brake", "display clocks",
};

/* The eighths of a block, U+2581 to U+2588, in UTF-8. */
static const char *const bars[8] = {
	"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
	"\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88",
};

/* Decimals past this come from a damaged file: shown with this many. */
#define MAX_DECIMALS 9

enum metric_subject metric_subject(const struct tr_metric *s)
{
	return s->gpu ? METRIC_GPU : s->pid ? METRIC_PROCESS : METRIC_MACHINE;
}

const char *metric_process_name(const struct model *m, uint32_t pid)
{
	long main_thread = model_real_thread_index(m, pid);
	const char *name = main_thread >= 0 ? model_str(m, m->threads.v[main_thread].name) : NULL;

	for (size_t i = 0; (!name || !*name) && i < m->real_threads; i++)
		if (m->threads.v[i].pid == pid)
			name = model_str(m, m->threads.v[i].name);
	return name && *name ? name : NULL;
}

const char *metric_subject_label(char *buf, size_t size, const struct model *m,
				 const struct tr_metric *s)
{
	const char *name;

	switch (metric_subject(s)) {
	case METRIC_GPU:
		snprintf(buf, size, "GPU%" PRIu32, s->gpu - 1);
		break;
	case METRIC_PROCESS:
		name = metric_process_name(m, s->pid);
		if (name)
			snprintf(buf, size, "pid %" PRIu32 " (%s)", s->pid, name);
		else
			snprintf(buf, size, "pid %" PRIu32, s->pid);
		break;
	default:
		snprintf(buf, size, "machine");
	}
	return buf;
}

const char *metric_unit(const struct model *m, const struct tr_metric *s)
{
	const char *unit = model_str(m, s->unit);

	return unit ? unit : "";
}

bool metric_unit_is_average(const char *unit)
{
	size_t n = strlen(unit);

	return !strcmp(unit, "%") || (n >= 2 && !strcmp(unit + n - 2, "/s"));
}

void metric_stats(struct metric_stats *st, const struct model *m, uint32_t id)
{
	const struct tr_metric *s = &m->t.metrics.v[id - 1];
	double scale = pow(10, s->decimals), sum = 0;
	const struct model_point *p;
	uint64_t *v;

	memset(st, 0, sizeof(*st));
	st->id = id;
	st->mask = !strcmp(metric_unit(m, s), METRIC_UNIT_MASK);
	p = model_metric_points(m, id, &st->values);
	if (!st->values)
		return;
	v = xmalloc(st->values * sizeof(*v));
	for (size_t i = 0; i < st->values; i++) {
		v[i] = p[i].value;
		sum += (double)p[i].value;
		if (st->mask) {
			st->reasons |= p[i].value;
			st->flagged += (p[i].value & ~METRIC_MASK_IDLE) != 0;
		}
	}
	qsort(v, st->values, sizeof(*v), u64_cmp);
	st->min = (double)v[0] / scale;
	st->max = (double)v[st->values - 1] / scale;
	st->mean = sum / (double)st->values / scale;
	st->p95 = u64_quantile(v, st->values, 0.95) / scale;
	free(v);
}

double metric_flagged_percent(const struct metric_stats *st)
{
	return st->values ? 100.0 * (double)st->flagged / (double)st->values : 0;
}

const char *metric_format(char *buf, size_t size, const char *unit, uint32_t decimals,
			  double v)
{
	static const char *const sizes[] = { "KiB", "MiB", "GiB", "TiB" };
	int digits = decimals < MAX_DECIMALS ? (int)decimals : MAX_DECIMALS;
	bool rate = !strcmp(unit, "KiB/s");
	size_t u = 0;

	if (!strcmp(unit, "%")) {
		snprintf(buf, size, "%.1f%%", v);
	} else if (rate || !strcmp(unit, "KiB")) {
		for (; fabs(v) >= 1024 && u + 1 < sizeof(sizes) / sizeof(sizes[0]); u++)
			v /= 1024;
		snprintf(buf, size, "%.*f %s%s", u ? 1 : 0, v, sizes[u], rate ? "/s" : "");
	} else if (!strcmp(unit, "W")) {
		snprintf(buf, size, "%.1f W", v);
	} else if (!strcmp(unit, "/s")) {
		snprintf(buf, size, "%.1f/s", v);
	} else {
		snprintf(buf, size, "%.*f%s%s", digits, v, *unit ? " " : "", unit);
	}
	return buf;
}

/* The name of reason bit bit; NULL past the METRIC_REASONS that NVML names. */
static const char *metric_reason_name(unsigned bit)
{
	return bit < METRIC_REASONS ? reason_names[bit] : NULL;
}

const char *metric_reason_names(char *buf, size_t size, uint64_t mask)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned bit = 0; bit < 64 && len < size; bit++) {
		const char *name = metric_reason_name(bit);
		int n;

		if (!(mask >> bit & 1))
			continue;
		if (name)
			n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", name);
		else
			n = snprintf(buf + len, size - len, "%sbit %#llx", len ? ", " : "",
				     1ull << bit);
		len += n > 0 ? (size_t)n : 0;
	}
	if (!len)
		snprintf(buf, size, "none");
	return buf;
}

void metrics_range(const struct model *m, uint64_t *from, uint64_t *to)
{
	*from = m->start_ts;
	*to = m->last_ts;
	for (size_t i = 0; i < m->t.metric_ticks.len; i++) {
		uint64_t ts = m->t.metric_ticks.v[i].ts;

		if (!*from || ts < *from)
			*from = ts;
		if (ts > *to)
			*to = ts;
	}
}

const char *metric_bar(double level)
{
	level = level < 0 ? 0 : level > 1 ? 1 : level;
	return bars[(int)(level * 7 + 0.5)];
}

unsigned metric_spark_width(const struct model *m)
{
	size_t half = m->t.metric_ticks.len / 2;

	return half < 1 ? 1 : half > METRIC_SPARK_WIDTH ? METRIC_SPARK_WIDTH : (unsigned)half;
}

const char *metric_sparkline(char *buf, const struct model *m, const struct metric_stats *st,
			     uint64_t from, uint64_t to, unsigned width)
{
	double sum[METRIC_SPARK_WIDTH] = {0}, span = (double)(to - from) + 1;
	double scale = pow(10, m->t.metrics.v[st->id - 1].decimals);
	size_t count[METRIC_SPARK_WIDTH] = {0}, n, len = 0;
	const struct model_point *p = model_metric_points(m, st->id, &n);

	if (width > METRIC_SPARK_WIDTH)
		width = METRIC_SPARK_WIDTH;
	for (size_t i = 0; i < n && width && to >= from; i++) {
		size_t b;

		if (p[i].ts < from || p[i].ts > to)
			continue;
		b = (size_t)((double)(p[i].ts - from) * width / span);
		b = b < width ? b : width - 1;
		sum[b] += st->mask ? (p[i].value & ~METRIC_MASK_IDLE) != 0
				   : (double)p[i].value / scale;
		count[b]++;
	}
	for (unsigned b = 0; b < width; b++) {
		double mean = count[b] ? sum[b] / (double)count[b] : 0, level = 0;

		if (!count[b]) {
			buf[len++] = ' ';
			continue;
		}
		if (st->mask)
			level = mean;
		else if (st->max > st->min)
			level = (mean - st->min) / (st->max - st->min);
		memcpy(buf + len, metric_bar(level), 3);
		len += 3;
	}
	buf[len] = '\0';
	return buf;
}

bool metric_selected(struct funcs *f, const struct sample_filter *flt, const struct tr_metric *s,
		     uint32_t rank)
{
	const struct model *m = f->m;
	struct model_thread stand_in = { .pid = s->pid, .tid = s->pid };
	long main_thread;

	if (!flt)
		return true;
	if (metric_subject(s) != METRIC_PROCESS)
		return rank >= m->ranks.len || filter_rank(flt, m->ranks.v[rank].rank);
	main_thread = model_real_thread_index(m, s->pid);
	return filter_thread(flt, f, main_thread >= 0 ? &m->threads.v[main_thread] : &stand_in);
}

const char *metrics_explain(const struct model *m, char *buf, size_t size)
{
	for (uint32_t id = 1; id <= m->t.metrics.len; id++) {
		size_t n;

		if (model_metric_points(m, id, &n))
			return NULL;
	}
	if (!model_meta(m, META_METRICS_INTERVAL) && !m->t.metrics.len)
		snprintf(buf, size, "it was recorded with --no-metrics, or by a gtrace without them");
	else
		snprintf(buf, size, "the recording ended before the first reading");
	return buf;
}

/*
 * By recording, then the machine first, then each process by pid, then
 * each GPU; each's series as recorded.
 */
static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct model *m = ctx;
	const struct metric_stats *a = pa, *b = pb;
	const struct tr_metric *x = &m->t.metrics.v[a->id - 1], *y = &m->t.metrics.v[b->id - 1];
	enum metric_subject sx = metric_subject(x), sy = metric_subject(y);

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

void metrics_report_build(struct metrics_report *r, struct funcs *f,
			  const struct sample_filter *flt)
{
	const struct model *m = f->m;

	memset(r, 0, sizeof(*r));
	for (uint32_t id = 1; id <= m->t.metrics.len; id++) {
		uint32_t rank = (uint32_t)model_metric_rank(m, id);

		if (!metric_selected(f, flt, &m->t.metrics.v[id - 1], rank))
			continue;
		metric_stats(VEC_PUSH(&r->rows), m, id);
		r->rows.v[r->rows.len - 1].rank = rank;
	}
	if (r->rows.len)
		qsort_r(r->rows.v, r->rows.len, sizeof(*r->rows.v), cmp_rows, (void *)m);
	metrics_range(m, &r->from, &r->to);
	r->width = metric_spark_width(m);
}

void metrics_report_free(struct metrics_report *r)
{
	VEC_FREE(&r->rows);
}

static const char *series_name(const struct model *m, const struct metric_stats *st)
{
	const char *name = model_str(m, m->t.metrics.v[st->id - 1].name);

	return name && *name ? name : "-";
}

/* Whether row i starts a subject: a recording, a pid and a GPU number tell them apart. */
static bool new_subject(const struct metrics_report *r, const struct model *m, size_t i)
{
	const struct tr_metric *s, *prev;

	if (!i)
		return true;
	s = &m->t.metrics.v[r->rows.v[i].id - 1];
	prev = &m->t.metrics.v[r->rows.v[i - 1].id - 1];
	return r->rows.v[i].rank != r->rows.v[i - 1].rank || s->pid != prev->pid ||
	       s->gpu != prev->gpu;
}

/* The interval asked for, in ms; < 0 when the recording does not say. */
static double interval_ms(const struct model *m)
{
	const char *interval = model_meta(m, META_METRICS_INTERVAL);

	return interval ? strtod(interval, NULL) / 1e6 : -1;
}

static void put_header(FILE *out, const struct metrics_report *r, const struct model *m,
		       const char *path)
{
	double every = interval_ms(m);

	fprintf(out, "# File: %s\n# Metrics: %zu series", text_escape(path), r->rows.len);
	if (every >= 0)
		fprintf(out, ", read every %g ms", every);
	fprintf(out, ", %zu ticks over %.3f s\n", m->t.metric_ticks.len,
		(double)(r->to - r->from) / 1e9);
	fprintf(out, "# Over time: %u parts of %.3f s, each the mean of its values from the "
		"series' min (%s) to its max (%s); blank: none\n", r->width,
		(double)(r->to - r->from) / r->width / 1e9, bars[0], bars[7]);
	for (size_t i = 0; i < r->rows.len; i++) {
		if (r->rows.v[i].mask) {
			fprintf(out, "# %s: the share of a part's readings with a reason other "
				"than gpu idle\n", text_escape(series_name(m, &r->rows.v[i])));
			break;
		}
	}
	fprintf(out, "#\n");
}

/* The four statistics, or for a mask how often it had a reason and which. */
static void put_values(FILE *out, const struct model *m, const struct metric_stats *st)
{
	const struct tr_metric *s = &m->t.metrics.v[st->id - 1];
	const char *unit = metric_unit(m, s);
	const double v[] = { st->min, st->mean, st->p95, st->max };
	char buf[64], reasons[256];

	if (st->mask && st->values) {
		fprintf(out, "  throttled in %.1f%% of %zu readings; reasons seen: %s\n",
			metric_flagged_percent(st), st->values,
			metric_reason_names(reasons, sizeof(reasons), st->reasons));
		return;
	}
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		fprintf(out, " %11s", st->values ? text_escape(metric_format(buf, sizeof(buf), unit,
									     s->decimals, v[i])) : "-");
	fputc('\n', out);
}

/* The rows printed: at most limit, 0 all. */
static size_t rows_shown(const struct metrics_report *r, size_t limit)
{
	return limit && limit < r->rows.len ? limit : r->rows.len;
}

void metrics_report_print(FILE *out, const struct metrics_report *r, const struct model *m,
			  const char *path, size_t limit)
{
	int name_width = 6, spark_width = r->width > 9 ? (int)r->width : 9;
	char subject[512], spark[METRIC_SPARK_SIZE];
	size_t rows = rows_shown(r, limit);

	for (size_t i = 0; i < rows; i++) {
		int len = (int)strlen(text_escape(series_name(m, &r->rows.v[i])));

		name_width = len > name_width ? len : name_width;
	}
	put_header(out, r, m, path);
	fprintf(out, "#  %-*s  %-*s %11s %11s %11s %11s\n#\n", name_width, "Series", spark_width,
		"Over time", "Min", "Mean", "P95", "Max");
	for (size_t i = 0; i < rows; i++) {
		const struct metric_stats *st = &r->rows.v[i];

		if (new_subject(r, m, i)) {
			if (m->ranks.len > 1)
				fprintf(out, "rank %" PRId64 ": ", m->ranks.v[st->rank].rank);
			fprintf(out, "%s\n", text_escape(metric_subject_label(subject, sizeof(subject),
									      m, &m->t.metrics.v[st->id - 1])));
		}
		/* The sparkline is width characters of three bytes: padded by hand. */
		fprintf(out, "   %-*s  %s%*s", name_width, text_escape(series_name(m, st)),
			metric_sparkline(spark, m, st, r->from, r->to, r->width),
			spark_width - (int)r->width, "");
		put_values(out, m, st);
	}
}

static void json_row(struct json *j, const struct model *m, const struct metric_stats *st)
{
	static const char *const subjects[] = {
		[METRIC_MACHINE] = "machine", [METRIC_PROCESS] = "process", [METRIC_GPU] = "gpu",
	};
	const struct tr_metric *s = &m->t.metrics.v[st->id - 1];
	enum metric_subject subject = metric_subject(s);
	bool stats = st->values && !st->mask;

	json_begin_object(j, NULL, JSON_INLINE);
	if (m->ranks.len > 1)
		json_int(j, "rank", m->ranks.v[st->rank].rank);
	json_string(j, "subject", subjects[subject]);
	if (subject == METRIC_PROCESS)
		json_uint(j, "pid", s->pid);
	else
		json_null(j, "pid");
	json_string(j, "comm", subject == METRIC_PROCESS ? metric_process_name(m, s->pid) : NULL);
	if (subject == METRIC_GPU)
		json_uint(j, "gpu", s->gpu - 1);
	else
		json_null(j, "gpu");
	json_string(j, "name", series_name(m, st));
	json_string(j, "unit", metric_unit(m, s));
	json_uint(j, "values", st->values);
	json_fixed_or_null(j, "min", stats, 3, st->min);
	json_fixed_or_null(j, "mean", stats, 3, st->mean);
	json_fixed_or_null(j, "p95", stats, 3, st->p95);
	json_fixed_or_null(j, "max", stats, 3, st->max);
	if (st->mask) {
		json_fixed_or_null(j, "throttled_percent", st->values, 3, metric_flagged_percent(st));
		json_begin_array(j, "reasons", JSON_INLINE);
		for (unsigned bit = 0; bit < 64; bit++) {
			const char *name = metric_reason_name(bit);
			char other[32];

			if (!(st->reasons >> bit & 1))
				continue;
			snprintf(other, sizeof(other), "bit %#llx", 1ull << bit);
			json_string(j, NULL, name ? name : other);
		}
		json_end(j);
	}
	json_end(j);
}

void metrics_report_print_json(FILE *out, const struct metrics_report *r,
			       const struct model *m, const char *path, size_t limit)
{
	double every = interval_ms(m);
	size_t rows = rows_shown(r, limit);
	struct json j;

	json_begin_document(&j, out, 1);
	json_string(&j, "path", path);
	json_fixed_or_null(&j, "interval_ms", every >= 0, 3, every);
	json_uint(&j, "ticks", m->t.metric_ticks.len);
	json_begin_array(&j, "series", JSON_LINES);
	for (size_t i = 0; i < rows; i++)
		json_row(&j, m, &r->rows.v[i]);
	json_end(&j);
	json_end(&j);
}

/* The busiest first, those without a CPU figure last, then by pid. */
static int cmp_processes(const void *pa, const void *pb)
{
	const struct metric_process *a = pa, *b = pb;

	if (a->cpu_known != b->cpu_known)
		return a->cpu_known ? -1 : 1;
	if (a->cpu_percent != b->cpu_percent)
		return a->cpu_percent > b->cpu_percent ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

struct metric_process *metrics_processes(const struct model *m, size_t *n)
{
	uint32_t rss = model_string_id(m, SERIES_PROC_RSS);
	uint32_t user = model_string_id(m, SERIES_PROC_CPU_USER);
	uint32_t system = model_string_id(m, SERIES_PROC_CPU_SYSTEM);
	VEC(struct metric_process) rows = {0};
	struct u64map row_of = {0};	/* pid -> index in rows */

	for (uint32_t id = 1; id <= m->t.metrics.len; id++) {
		const struct tr_metric *s = &m->t.metrics.v[id - 1];
		struct metric_process *p;
		struct metric_stats st;
		uint64_t at;

		if (metric_subject(s) != METRIC_PROCESS)
			continue;
		if (!u64map_get(&row_of, s->pid, &at)) {
			at = rows.len;
			u64map_put(&row_of, s->pid, at);
			VEC_PUSH(&rows)->pid = s->pid;
		}
		p = &rows.v[at];
		if (!s->name || (s->name != rss && s->name != user && s->name != system))
			continue;
		metric_stats(&st, m, id);
		if (!st.values)
			continue;
		if (s->name != rss) {
			p->cpu_percent += st.mean;
			p->cpu_known = true;
		} else if (st.max > 0) {	/* 0: read as it exited, by older recorders */
			p->peak_rss_kib = p->rss_known && p->peak_rss_kib > st.max ? p->peak_rss_kib
										  : st.max;
			p->rss_known = true;
		}
	}
	u64map_free(&row_of);
	VEC_SORT(&rows, cmp_processes);
	*n = rows.len;
	return rows.v;
}

void metrics_storage(const struct model *m, struct metrics_storage *st)
{
	/* The model's rows, borrowed: this table set is not freed. */
	struct tr_tables only = {
		.metrics = m->t.metrics,
		.metric_ticks = m->t.metric_ticks,
		.metric_values = m->t.metric_values,
	};
	struct gbuf out = {0};

	tr_tables_encode(&only, &out);
	st->values = m->t.metric_values.len;
	st->encoded = out.len;
	st->compressed = out.len ? tr_compressed_size(out.data, out.len) : 0;
	gbuf_free(&out);
}
