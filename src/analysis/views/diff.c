/* SPDX-License-Identifier: MIT */
/*
 * gtrace diff: the rows of two recordings joined by name, each compared by
 * a test that fits what it measures. CPU functions: self samples as shares
 * of all samples (a two-proportion z test) or as counts (a conditional
 * test of two Poisson counts). Spans: their durations as distributions
 * (the Mann-Whitney rank test), so that one slow instance among many does
 * not make a regression. Holm's step-down correction over all the rows
 * tested keeps the chance of any false alarm in the diff under 1 -
 * confidence.
 */
#include "analysis/views/diff.h"
#include "analysis/views/diff-private.h"
#include "analysis/views/metrics.h"
#include "analysis/views/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contract/attrs.h"
#include "contract/meta.h"
#include "util/saturate.h"
#include "util/json.h"
#include "util/text.h"
#include "util/utf8.h"
#include "util/xalloc.h"

static const char *const kind_names[DIFF_KINDS] = {
	[DIFF_CPU] = "cpu", [DIFF_KERNEL] = "kernel", [DIFF_COPY] = "copy",
	[DIFF_API] = "api", [DIFF_WAIT] = "wait", [DIFF_NVTX] = "nvtx",
	[DIFF_LANE] = "lane", [DIFF_THREAD] = "thread", [DIFF_METRIC] = "metric",
	[DIFF_RULE] = "rule", [DIFF_IDLE] = "idle",
};

static const char *const status_names[] = {
	[DIFF_SAME] = "same", [DIFF_REGRESSION] = "regression",
	[DIFF_IMPROVEMENT] = "improvement", [DIFF_ADDED] = "added",
	[DIFF_REMOVED] = "removed",
};

const char *diff_kind_name(enum diff_kind k)
{
	return (unsigned)k < DIFF_KINDS ? kind_names[k] : "?";
}

const char *diff_status_name(enum diff_status s)
{
	return (unsigned)s <= DIFF_REMOVED ? status_names[s] : "?";
}

#define KIND_BIT(k) (1u << (k))
#define GPU_KINDS (KIND_BIT(DIFF_KERNEL) | KIND_BIT(DIFF_COPY) | KIND_BIT(DIFF_API) | \
		   KIND_BIT(DIFF_WAIT))

int diff_parse_kinds(const char *list, unsigned *kinds)
{
	char *copy = xstrdup(list), *save = NULL, *word;
	int err = 0;

	*kinds = 0;
	for (word = strtok_r(copy, ",", &save); word && !err; word = strtok_r(NULL, ",", &save)) {
		unsigned bits = 0;

		if (!strcmp(word, "gpu"))
			bits = GPU_KINDS;
		else if (!strcmp(word, "lanes"))
			bits = KIND_BIT(DIFF_LANE);
		else if (!strcmp(word, "threads"))
			bits = KIND_BIT(DIFF_THREAD);
		else if (!strcmp(word, "metrics"))
			bits = KIND_BIT(DIFF_METRIC);
		else if (!strcmp(word, "findings"))
			bits = KIND_BIT(DIFF_RULE) | KIND_BIT(DIFF_IDLE);
		for (int k = 0; !bits && k < DIFF_KINDS; k++)
			if (!strcmp(word, kind_names[k]))
				bits = KIND_BIT(k);
		if (!bits)
			err = -EINVAL;
		*kinds |= bits;
	}
	free(copy);
	return err || !*kinds ? -EINVAL : 0;
}

/* ---- rows ---- */

/* What a name measured in one recording, before its row is made. */
struct entry {
	enum diff_kind kind;
	char *name, *where;
	uint64_t self, children;	/* cpu; threads: threads, on-CPU ns; metrics: values */
	uint64_t offcpu_ns;		/* threads */
	double value_sum;		/* metrics: of the values, in unit */
	char *unit;			/* metrics: a mask's is "%", its share of values with a reason */
	uint32_t decimals;		/* metrics */
	uint64_t bytes;			/* copies */
	VEC(uint64_t) durs;		/* spans */
};

/* The entries of both recordings, joined by kind, where and name. */
struct joined {
	struct strtab keys;		/* "kind\x1fwhere\x1fname" -> id */
	VEC(struct entry) side[2];	/* side[s].v[id - 1]; kind 0 with no name: absent */
};

/* The id of the entry of that kind, where and name, made in both sides. */
static uint32_t entry_id(struct joined *j, int side, enum diff_kind kind, const char *where,
			 const char *name)
{
	size_t len = strlen(where) + strlen(name) + 8;
	char *key = xmalloc(len);
	uint32_t id;

	snprintf(key, len, "%d\x1f%s\x1f%s", (int)kind, where, name);
	id = strtab_intern(&j->keys, key);
	free(key);
	for (int s = 0; s < 2; s++) {
		while (j->side[s].len < id) {
			struct entry *e = VEC_PUSH(&j->side[s]);

			memset(e, 0, sizeof(*e));
		}
	}
	if (!j->side[side].v[id - 1].name) {
		struct entry *e = &j->side[side].v[id - 1];

		e->kind = kind;
		e->name = xstrdup(name);
		e->where = xstrdup(where);
	}
	return id;
}

static struct entry *entry_of(struct joined *j, int side, enum diff_kind kind,
			      const char *where, const char *name)
{
	uint32_t id = entry_id(j, side, kind, where, name);	/* may move the entries */

	return &j->side[side].v[id - 1];
}

static void add_cpu(struct joined *j, int side, struct funcs *f, const struct diff_opts *o,
		    uint64_t *samples)
{
	struct report_opts ro = { .children = true, .filter = o->filter };
	struct report r;

	report_parse_keys(&ro, "dso,symbol");
	report_build(&r, f, &ro);
	*samples = r.total;
	for (size_t i = 0; i < r.rows.len; i++) {
		const struct report_row *row = &r.rows.v[i];
		const struct func *fn = &f->v.v[row->func];
		struct entry *e = entry_of(j, side, DIFF_CPU, funcs_name(f, fn->dso),
					   funcs_name(f, fn->name));

		e->self += row->self;
		e->children += row->children;
	}
	report_free(&r);
}

/* Threads by name: pids and tids change from run to run, names do not. */
static void add_threads(struct joined *j, int side, struct funcs *f)
{
	const struct model *m = f->m;

	for (size_t i = 0; i < m->real_threads; i++) {
		const struct model_thread *th = &m->threads.v[i];
		struct entry *e = entry_of(j, side, DIFF_THREAD, "",
					   funcs_name(f, funcs_thread_name(f, th)));

		e->self++;
		e->children = u64_sat_add(e->children, model_thread_oncpu_ns(m, th));
		e->offcpu_ns = u64_sat_add(e->offcpu_ns, th->offcpu_ns);
	}
}

/*
 * Metric series by subject and name; a process by its name, as pids
 * change from run to run: those of one name pool their values.
 */
static void add_metrics(struct joined *j, int side, struct funcs *f)
{
	const struct model *m = f->m;

	for (uint32_t id = 1; id <= m->t.metrics.len; id++) {
		const struct tr_metric *s = &m->t.metrics.v[id - 1];
		const char *name = model_str(m, s->name), *comm;
		struct metric_stats st;
		struct entry *e;
		char where[64];

		metric_stats(&st, m, id);
		if (!st.values || !name)
			continue;
		if (metric_subject(s) != METRIC_PROCESS)
			metric_subject_label(where, sizeof(where), m, s);
		else if ((comm = metric_process_name(m, s->pid)))
			snprintf(where, sizeof(where), "%s", comm);
		else
			snprintf(where, sizeof(where), "pid %" PRIu32, s->pid);
		e = entry_of(j, side, DIFF_METRIC, where, name);
		if (!e->unit) {
			e->unit = xstrdup(st.mask ? "%" : metric_unit(m, s));
			e->decimals = s->decimals;
		}
		e->self += st.values;
		e->value_sum += st.mask ? 100.0 * (double)st.flagged : st.mean * (double)st.values;
	}
}

/* analyze's findings and idle causes, of the kinds selected. */
static void add_findings(struct joined *j, int side, struct funcs *f, const struct diff_opts *o)
{
	size_t n;
	struct diff_figure *fig = diff_findings(f, o, &n);

	for (size_t i = 0; i < n; i++) {
		struct entry *e;

		if (!(o->kinds & KIND_BIT(fig[i].kind)))
			continue;
		e = entry_of(j, side, fig[i].kind, fig[i].where, fig[i].name);
		e->self++;
		e->children = u64_sat_add(e->children, fig[i].ns);
	}
	free(fig);
}

/* The kind of a span, by its lane's class, or DIFF_KINDS for lanes left out. */
static enum diff_kind span_kind(const struct model *m, const struct tr_span *sp)
{
	switch (model_lane_class(m, sp->lane)) {
	case MODEL_LANE_CUDA_STREAM:
		return model_span_is_copy(m, sp) ? DIFF_COPY : DIFF_KERNEL;
	case MODEL_LANE_CUDA_API:
		return DIFF_API;
	case MODEL_LANE_CUDA_WAIT:
		return DIFF_WAIT;
	case MODEL_LANE_NVTX:
		return DIFF_NVTX;
	/* Each block's regions: their summaries (lane work too) are compared. */
	case MODEL_LANE_KREGIONS:
		return DIFF_KINDS;
	default:
		return DIFF_LANE;
	}
}

/* The entry id of a lane's spans of one name; 0 for spans left out. */
static uint32_t span_entry(struct joined *j, int side, struct funcs *f, unsigned kinds,
			   const struct tr_span *sp)
{
	const struct model *m = f->m;
	const char *raw = model_str(m, sp->name), *where = "";
	enum diff_kind kind;

	if (!raw || !sp->lane || sp->lane > m->t.lanes.len)
		return 0;
	kind = span_kind(m, sp);
	if (kind == DIFF_KINDS || !(kinds & KIND_BIT(kind)))
		return 0;
	/* GPU work by name over every stream: stream numbers change between runs. */
	if (kind == DIFF_NVTX || kind == DIFF_LANE)
		where = model_str(m, m->t.lanes.v[sp->lane - 1].name);
	return entry_id(j, side, kind, where ? where : "",
			funcs_name(f, funcs_span_frame(f, sp->name)));
}

static void add_spans(struct joined *j, int side, struct funcs *f, unsigned kinds)
{
	const struct model *m = f->m;
	uint32_t bytes_key = model_string_id(m, CUDA_ATTR_BYTES);
	struct u64map by_span = {0};	/* lane << 32 | name -> entry id, 0 left out */

	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		uint64_t key = (uint64_t)sp->lane << 32 | sp->name, id;
		struct entry *e;

		/* A lane and a name decide the entry: look it up once, not per span. */
		if (!u64map_get(&by_span, key, &id)) {
			id = span_entry(j, side, f, kinds, sp);
			u64map_put(&by_span, key, id);
		}
		if (!id)
			continue;
		e = &j->side[side].v[id - 1];
		*VEC_PUSH(&e->durs) = sp->dur;
		if (e->kind == DIFF_COPY && bytes_key) {
			uint64_t bytes;

			if (model_span_attr(m, (uint32_t)i + 1, bytes_key, &bytes))
				e->bytes = u64_sat_add(e->bytes, bytes);
		}
	}
	u64map_free(&by_span);
}

static void span_side(struct diff_side *d, struct entry *e)
{
	uint64_t *v = e->durs.v;
	size_t n = e->durs.len;
	double sum = 0;

	qsort(v, n, sizeof(*v), u64_cmp);
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	d->count = n;
	d->ms = sum / 1e6;
	d->mean_ns = n ? sum / (double)n : 0;
	d->median_ns = u64_median(v, n);
	d->p95_ns = u64_quantile(v, n, 0.95);
	d->bytes = e->bytes;
}

static void cpu_side(struct diff_side *d, const struct entry *e, uint64_t samples,
		     uint64_t period_ns)
{
	d->count = e->self;
	d->children = e->children;
	d->share = samples ? 100.0 * (double)e->self / (double)samples : 0;
	d->ms = (double)e->self * (double)period_ns / 1e6;
}

static void thread_side(struct diff_side *d, const struct entry *e)
{
	d->count = e->self;
	d->ms = (double)e->children / 1e6;
	d->offcpu_ms = (double)e->offcpu_ns / 1e6;
}

static void metric_side(struct diff_side *d, const struct entry *e)
{
	d->count = e->self;
	d->mean = e->self ? e->value_sum / (double)e->self : 0;
}

/* The relative change from base to new; 0, marked from_zero, from a base of 0. */
static double relative(struct diff_row *row, double base, double new)
{
	row->from_zero = !(base > 0) && new > 0;
	return base > 0 ? new / base - 1 : 0;
}

/* The row of one name; a and b are its entries in base and new (NULL: absent). */
static void make_row(struct diff *d, struct diff_row *row, struct entry *a, struct entry *b,
		     const uint64_t *period, const struct diff_opts *o)
{
	const struct entry *any = a ? a : b;
	/* Base time as if the base recording had been as long as the new one. */
	double scale = o->normalize_total && d->base.ms > 0 ? d->new.ms / d->base.ms : 1;

	memset(row, 0, sizeof(*row));
	row->kind = any->kind;
	row->name = xstrdup(any->name);
	row->where = xstrdup(any->where);
	row->p = 1;
	if (row->kind == DIFF_CPU) {
		if (a)
			cpu_side(&row->base, a, d->base.samples, period[0]);
		if (b)
			cpu_side(&row->new, b, d->new.samples, period[1]);
		if (o->normalize_total) {
			row->change = relative(row, row->base.share, row->new.share);
			row->p = diff_proportion_test(row->base.count, d->base.samples,
						      row->new.count, d->new.samples);
		} else {
			row->change = relative(row, row->base.ms, row->new.ms);
			row->p = diff_count_test(row->base.count, row->new.count);
		}
		row->tested = a && b && a->self + b->self;
		/* Scaled as a share of the new recording's samples. */
		row->impact_ms = fabs(row->new.ms - (o->normalize_total ?
				      row->base.share / 100 * (double)d->new.samples *
				      (double)period[1] / 1e6 : row->base.ms));
	} else if (row->kind == DIFF_THREAD || row->kind == DIFF_RULE || row->kind == DIFF_IDLE) {
		/* One figure per recording: shown, not tested; analyze's are not scaled. */
		if (row->kind != DIFF_THREAD)
			scale = 1;
		if (a)
			thread_side(&row->base, a);
		if (b)
			thread_side(&row->new, b);
		row->change = relative(row, row->base.ms * scale, row->new.ms);
		row->impact_ms = fabs(row->new.ms - row->base.ms * scale);
	} else if (row->kind == DIFF_METRIC) {
		/* One figure per recording, not time: shown, not tested. */
		if (a)
			metric_side(&row->base, a);
		if (b)
			metric_side(&row->new, b);
		row->unit = xstrdup(any->unit);
		row->decimals = any->decimals;
		row->change = relative(row, row->base.mean, row->new.mean);
	} else {
		if (a)
			span_side(&row->base, a);
		if (b)
			span_side(&row->new, b);
		row->change = relative(row, row->base.median_ns, row->new.median_ns);
		if (a && b)
			row->p = diff_rank_test(a->durs.v, a->durs.len, b->durs.v, b->durs.len);
		row->tested = a && b && a->durs.len >= 2 && b->durs.len >= 2;
		row->impact_ms = fabs(row->new.ms - row->base.ms * scale);
	}
	row->status = !a ? DIFF_ADDED : !b ? DIFF_REMOVED : DIFF_SAME;
}

/*
 * analyze's rows, untested: a finding the new recording adds is a
 * regression, one it drops an improvement; an idle cause (absent: 0) that
 * grew or shrank past the threshold and by DIFF_IDLE_FLOOR_NS or more is
 * one too, and otherwise the same.
 */
static void analyze_status(struct diff_row *row, const struct diff_opts *o)
{
	double grown_ns = (row->new.ms - row->base.ms) * 1e6;

	if (row->kind == DIFF_RULE && row->status != DIFF_SAME)
		row->status = row->status == DIFF_ADDED ? DIFF_REGRESSION : DIFF_IMPROVEMENT;
	else if (row->kind == DIFF_IDLE)
		row->status = fabs(grown_ns) < DIFF_IDLE_FLOOR_NS ||
			      (row->base.ms > 0 && fabs(row->change) <= o->threshold) ? DIFF_SAME :
			      grown_ns > 0 ? DIFF_REGRESSION : DIFF_IMPROVEMENT;
}

static int cmp_p(const void *pa, const void *pb, void *ctx)
{
	const struct diff_row *rows = ctx;
	double a = rows[*(const size_t *)pa].p, b = rows[*(const size_t *)pb].p;

	return a < b ? -1 : a > b;
}

/* Holm's step-down: the k-th smallest p-value of m must be under alpha / (m - k). */
static void holm(struct diff *d, double alpha)
{
	size_t *order = xmalloc((d->rows.len + 1) * sizeof(*order)), m = 0;

	for (size_t i = 0; i < d->rows.len; i++)
		if (d->rows.v[i].tested)
			order[m++] = i;
	qsort_r(order, m, sizeof(*order), cmp_p, d->rows.v);
	for (size_t k = 0; k < m; k++) {
		struct diff_row *row = &d->rows.v[order[k]];

		if (row->p > alpha / (double)(m - k))
			break;
		row->significant = true;
	}
	d->tested = m;
	free(order);
}

static int cmp_impact(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	int by_name = strcmp(a->name, b->name);

	if (a->impact_ms != b->impact_ms)
		return a->impact_ms > b->impact_ms ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return by_name ? by_name : strcmp(a->where, b->where);
}

static void free_entries(struct joined *j)
{
	for (int s = 0; s < 2; s++) {
		for (size_t i = 0; i < j->side[s].len; i++) {
			free(j->side[s].v[i].name);
			free(j->side[s].v[i].where);
			free(j->side[s].v[i].unit);
			VEC_FREE(&j->side[s].v[i].durs);
		}
		VEC_FREE(&j->side[s]);
	}
	strtab_free(&j->keys);
}

static void describe(struct diff_recording *r, const struct model *m, uint64_t samples)
{
	r->samples = samples;
	r->ms = m->last_ts > m->start_ts ? (double)(m->last_ts - m->start_ts) / 1e6 : 0;
	r->command = model_meta(m, META_COMMAND);
}

void diff_build(struct diff *d, struct funcs *base, struct funcs *new,
		const struct diff_opts *o)
{
	struct funcs *f[2] = { base, new };
	uint64_t samples[2] = {0}, period[2];
	struct joined j = {0};

	memset(d, 0, sizeof(*d));
	for (int s = 0; s < 2; s++) {
		period[s] = model_sample_period_ns(f[s]->m);
		if (o->kinds & KIND_BIT(DIFF_CPU))
			add_cpu(&j, s, f[s], o, &samples[s]);
		add_spans(&j, s, f[s], o->kinds);
		if (o->kinds & KIND_BIT(DIFF_THREAD))
			add_threads(&j, s, f[s]);
		if (o->kinds & KIND_BIT(DIFF_METRIC))
			add_metrics(&j, s, f[s]);
		if (o->kinds & (KIND_BIT(DIFF_RULE) | KIND_BIT(DIFF_IDLE)))
			add_findings(&j, s, f[s], o);
	}
	describe(&d->base, base->m, samples[0]);
	describe(&d->new, new->m, samples[1]);
	for (size_t i = 0; i < j.side[0].len; i++) {
		struct entry *a = &j.side[0].v[i], *b = &j.side[1].v[i];

		/* A function that only calls others: its callees' rows tell. */
		if ((a->name ? a : b)->kind == DIFF_CPU && !a->self && !b->self)
			continue;
		make_row(d, VEC_PUSH(&d->rows), a->name ? a : NULL, b->name ? b : NULL,
			 period, o);
	}
	holm(d, 1 - o->confidence);
	for (size_t i = 0; i < d->rows.len; i++) {
		struct diff_row *row = &d->rows.v[i];

		/* From 0, a change has no relative size: it is past any threshold. */
		if (row->status == DIFF_SAME && row->significant &&
		    (row->from_zero || fabs(row->change) > o->threshold))
			row->status = row->from_zero || row->change > 0 ? DIFF_REGRESSION :
					DIFF_IMPROVEMENT;
		analyze_status(row, o);
		d->by_status[row->status]++;
	}
	VEC_SORT(&d->rows, cmp_impact);
	free_entries(&j);
}

void diff_free(struct diff *d)
{
	for (size_t i = 0; i < d->rows.len; i++) {
		free(d->rows.v[i].name);
		free(d->rows.v[i].where);
		free(d->rows.v[i].unit);
	}
	VEC_FREE(&d->rows);
}

size_t diff_regressions(const struct diff *d, unsigned kinds)
{
	size_t n = 0;

	for (size_t i = 0; i < d->rows.len; i++)
		n += d->rows.v[i].status == DIFF_REGRESSION && (kinds & KIND_BIT(d->rows.v[i].kind));
	return n;
}

/* ---- output ---- */

/* The compared figure of one side, for the tables: a share, a time or a median. */
static void figure(char *buf, size_t size, const struct diff_row *row,
		   const struct diff_side *s, const struct diff_opts *o)
{
	if (!s->count && !s->ms)
		snprintf(buf, size, "-");
	else if (row->kind == DIFF_METRIC)
		metric_format(buf, size, row->unit, row->decimals, s->mean);
	else if (row->kind == DIFF_CPU && o->normalize_total)
		snprintf(buf, size, "%.2f%%", s->share);
	else if (row->kind == DIFF_CPU || row->kind == DIFF_THREAD)
		snprintf(buf, size, "%.1fms", s->ms);
	else if (row->kind == DIFF_RULE || row->kind == DIFF_IDLE)
		snprintf(buf, size, "%.3fms", s->ms);
	else if (s->median_ns >= 1e6)
		snprintf(buf, size, "%.3fms", s->median_ns / 1e6);
	else
		snprintf(buf, size, "%.1fus", s->median_ns / 1e3);
}

static void change_text(char *buf, size_t size, const struct diff_row *row)
{
	if (row->status == DIFF_ADDED || row->status == DIFF_REMOVED)
		snprintf(buf, size, "%s", diff_status_name(row->status));
	else if (row->from_zero)
		snprintf(buf, size, "from 0");
	else
		snprintf(buf, size, "%+.1f%%", 100 * row->change);
}

static void print_header(FILE *out, const struct diff *d, const struct diff_opts *o,
			 const char *base_path, const char *new_path, const char *lead)
{
	fprintf(out, "%sgtrace diff: '%s' -> '%s'\n", lead, text_escape(base_path),
		text_escape(new_path));
	fprintf(out, "%snormalize %s, confidence %g%%, threshold %g%%; %zu rows, %zu tested: "
		"%zu regression%s, %zu improvement%s, %zu added, %zu removed\n",
		lead, o->normalize_total ? "total" : "none", 100 * o->confidence,
		100 * o->threshold, d->rows.len, d->tested, d->by_status[DIFF_REGRESSION],
		d->by_status[DIFF_REGRESSION] == 1 ? "" : "s", d->by_status[DIFF_IMPROVEMENT],
		d->by_status[DIFF_IMPROVEMENT] == 1 ? "" : "s", d->by_status[DIFF_ADDED],
		d->by_status[DIFF_REMOVED]);
}

/* The name with where it is: "func (dso)", "lane: name". */
static void full_name(char *buf, size_t size, const struct diff_row *row)
{
	if (!*row->where)
		snprintf(buf, size, "%s", row->name);
	else if (row->kind == DIFF_CPU)
		snprintf(buf, size, "%s (%s)", row->name, row->where);
	else
		snprintf(buf, size, "%s: %s", row->where, row->name);
}

/* A row's texts that the text and Markdown tables share. */
struct cells {
	char base[32], new[32], change[32], p[32], name[1024];
};

static void row_cells(struct cells *c, const struct diff_row *row, const struct diff_opts *o)
{
	figure(c->base, sizeof(c->base), row, &row->base, o);
	figure(c->new, sizeof(c->new), row, &row->new, o);
	change_text(c->change, sizeof(c->change), row);
	/* A row shown, not tested, has no p-value to print. */
	if (row->tested)
		snprintf(c->p, sizeof(c->p), "%.2g", row->p);
	else
		snprintf(c->p, sizeof(c->p), "-");
	full_name(c->name, sizeof(c->name), row);
}

static void print_text(FILE *out, const struct diff *d, const struct diff_opts *o,
		       const char *base_path, const char *new_path, size_t limit)
{
	size_t n = limit && limit < d->rows.len ? limit : d->rows.len;

	print_header(out, d, o, base_path, new_path, "# ");
	fprintf(out, "#\n# %-6s %10s %10s %12s %12s %9s %10s %9s  %-11s  %s\n#\n", "Kind",
		"Base n", "New n", "Base", "New", "Change", "Impact ms", "p", "Status", "Name");
	for (size_t i = 0; i < n; i++) {
		const struct diff_row *row = &d->rows.v[i];
		struct cells c;

		row_cells(&c, row, o);
		fprintf(out, "  %-6s %10" PRIu64 " %10" PRIu64 " %12s %12s %9s %10.3f %9s%s %-11s  %s\n",
			diff_kind_name(row->kind), row->base.count, row->new.count,
			text_escape(c.base), text_escape(c.new), c.change, row->impact_ms, c.p,
			row->significant ? "*" : " ", diff_status_name(row->status),
			text_escape(c.name));
	}
	if (n < d->rows.len)
		fprintf(out, "# ... %zu more rows (-n)\n", d->rows.len - n);
}

/* A table cell: the characters that would end it escaped. */
static void put_md_ascii(FILE *out, char c)
{
	if (c == '|' || c == '\\' || c == '`' || c == '*' || c == '_' || c == '<')
		fputc('\\', out);
	fputc(c == '\n' ? ' ' : c, out);
}

static void print_markdown(FILE *out, const struct diff *d, const struct diff_opts *o,
			   const char *base_path, const char *new_path, size_t limit)
{
	size_t n = limit && limit < d->rows.len ? limit : d->rows.len;

	print_header(out, d, o, base_path, new_path, "");
	fprintf(out, "\n| Status | Kind | Name | Base | New | Change | Impact ms | p |\n"
		"| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
	for (size_t i = 0; i < n; i++) {
		const struct diff_row *row = &d->rows.v[i];
		const char *bold = row->status == DIFF_REGRESSION ? "**" : "";
		struct cells c;

		row_cells(&c, row, o);
		fprintf(out, "| %s%s%s | %s | ", bold, diff_status_name(row->status), bold,
			diff_kind_name(row->kind));
		utf8_fput(out, text_escape(c.name), put_md_ascii);
		fprintf(out, " | %s | %s | %s | %.3f | %s%s |\n", text_escape(c.base),
			text_escape(c.new), c.change,
			row->impact_ms, c.p, row->significant ? " \\*" : "");
	}
	if (n < d->rows.len)
		fprintf(out, "\n%zu more rows not shown.\n", d->rows.len - n);
}

static void json_side(struct json *j, const char *key, const struct diff_row *row,
		      const struct diff_side *s)
{
	json_begin_object(j, key, JSON_INLINE);
	json_uint(j, "count", s->count);
	if (row->kind == DIFF_METRIC) {
		json_fixed(j, "mean", 6, s->mean);
		json_end(j);
		return;
	}
	json_fixed(j, "ms", 6, s->ms);
	if (row->kind == DIFF_RULE || row->kind == DIFF_IDLE) {
		json_end(j);
		return;
	}
	if (row->kind == DIFF_CPU) {
		json_uint(j, "children", s->children);
		json_fixed(j, "share", 6, s->share);
	} else if (row->kind == DIFF_THREAD) {
		json_fixed(j, "offcpu_ms", 6, s->offcpu_ms);
	} else {
		json_fixed(j, "mean_ns", 1, s->mean_ns);
		json_fixed(j, "median_ns", 1, s->median_ns);
		json_fixed(j, "p95_ns", 1, s->p95_ns);
	}
	/* Bytes over the copies' time: what the copy engines achieved. */
	if (row->kind == DIFF_COPY) {
		json_uint(j, "bytes", s->bytes);
		json_fixed(j, "gbps", 3, s->ms > 0 ? (double)s->bytes / (s->ms * 1e6) : 0.0);
	}
	json_end(j);
}

static void json_recording(struct json *j, const char *key, const char *path,
			   const struct diff_recording *r)
{
	json_begin_object(j, key, JSON_INLINE);
	json_string(j, "path", path);
	json_string(j, "command", r->command);
	json_uint(j, "samples", r->samples);
	json_fixed(j, "ms", 3, r->ms);
	json_end(j);
}

static void print_json(FILE *out, const struct diff *d, const struct diff_opts *o,
		       const char *base_path, const char *new_path)
{
	struct json j;

	json_begin_document(&j, out, 1);
	json_recording(&j, "base", base_path, &d->base);
	json_recording(&j, "new", new_path, &d->new);
	json_begin_object(&j, "options", JSON_INLINE);
	json_string(&j, "normalize", o->normalize_total ? "total" : "none");
	json_general(&j, "confidence", 6, o->confidence);
	json_general(&j, "threshold", 6, o->threshold);
	json_end(&j);
	json_uint(&j, "tested", d->tested);
	json_uint(&j, "regressions", d->by_status[DIFF_REGRESSION]);
	json_uint(&j, "improvements", d->by_status[DIFF_IMPROVEMENT]);
	json_begin_array(&j, "rows", JSON_LINES);
	for (size_t i = 0; i < d->rows.len; i++) {
		const struct diff_row *row = &d->rows.v[i];

		json_begin_object(&j, NULL, JSON_INLINE);
		json_string(&j, "kind", diff_kind_name(row->kind));
		json_string(&j, "name", row->name);
		json_string(&j, "where", row->where);
		if (row->unit)
			json_string(&j, "unit", row->unit);
		json_string(&j, "status", diff_status_name(row->status));
		json_fixed(&j, "change", 6, row->change);
		json_general(&j, "p", 6, row->p);
		json_bool(&j, "tested", row->tested);
		json_bool(&j, "significant", row->significant);
		json_fixed(&j, "impact_ms", 6, row->impact_ms);
		/* The two sides on a line of their own, under the row's first key. */
		json_break(&j, 5);
		json_side(&j, "base", row, &row->base);
		json_side(&j, "new", row, &row->new);
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
}

void diff_print(FILE *out, const struct diff *d, const struct diff_opts *o,
		enum diff_format format, const char *base_path, const char *new_path,
		size_t limit)
{
	switch (format) {
	case DIFF_TEXT:
		print_text(out, d, o, base_path, new_path, limit);
		break;
	case DIFF_JSON:
		print_json(out, d, o, base_path, new_path);
		break;
	case DIFF_MARKDOWN:
		print_markdown(out, d, o, base_path, new_path, limit);
		break;
	}
}
