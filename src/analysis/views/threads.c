/* SPDX-License-Identifier: MIT */
/* The threads view: real threads by samples, then the lanes. */
#include "analysis/views/threads.h"
#include "analysis/views/metrics.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/text.h"
#include "util/xalloc.h"

static int cmp_by_samples(const void *pa, const void *pb, void *pctx)
{
	const struct model *m = pctx;
	const struct model_thread *a = &m->threads.v[*(const size_t *)pa];
	const struct model_thread *b = &m->threads.v[*(const size_t *)pb];

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static const char *thread_name(const struct model *m, const struct model_thread *th)
{
	const char *name = model_str(m, th->name);

	return name && *name ? name : "-";
}

/* How many of a real thread's names samples were taken under. */
static size_t sampled_names(const struct model *m, const struct model_thread *th)
{
	size_t n = 0;

	for (uint32_t i = th->first_name; !th->lane && i < th->first_name + th->names; i++)
		n += m->names.v[i].samples != 0;
	return n;
}

static const char *lane_kind(const struct model *m, const struct model_thread *th)
{
	const char *kind = model_str(m, m->t.lanes.v[th->lane - 1].kind);

	return kind && *kind ? kind : "-";
}

static void put_ms(FILE *out, bool known, uint64_t ns)
{
	if (known)
		fprintf(out, "  %10.1f", (double)ns / 1e6);
	else
		fprintf(out, "  %10s", "-");
}

/* First and last event, in seconds since the recording started. */
static void put_seen(FILE *out, const struct model *m, const struct model_thread *th)
{
	if (th->first_ts)
		fprintf(out, "  %9.3f  %9.3f\n", (double)(th->first_ts - m->start_ts) / 1e9,
			(double)(th->last_ts - m->start_ts) / 1e9);
	else
		fprintf(out, "  %9s  %9s\n", "-", "-");
}

static int name_width(const struct model *m, const size_t *idx, size_t n)
{
	int width = 4;

	for (size_t i = 0; i < n; i++) {
		int len = (int)strlen(text_escape(thread_name(m, &m->threads.v[idx[i]])));

		if (len > width)
			width = len;
	}
	return width;
}

/* What the view shows: threads, lanes and processes selected, and whether ranks. */
struct thread_rows {
	size_t *idx;		/* in m->threads: the real threads by samples, then the lanes */
	size_t real, lanes;	/* how many of each */
	struct metric_process *procs;	/* with metrics, busiest first */
	size_t nprocs;
	bool ranks;		/* several ranks loaded: a rank leads each row */
};

static void thread_rows(struct thread_rows *r, const struct model *m,
			const struct sample_filter *flt)
{
	size_t n = 0;
	struct metric_process *p = metrics_processes(m, &n);

	r->idx = xmalloc((m->threads.len + 1) * sizeof(*r->idx));
	r->real = r->lanes = r->nprocs = 0;
	for (size_t i = 0; i < m->threads.len; i++) {
		if (!filter_process(flt, m, m->threads.v[i].pid))
			continue;
		/* Cut to a window (--time): a thread with nothing in it is not shown. */
		if (i < m->real_threads && m->window_to && !m->threads.v[i].first_ts)
			continue;
		r->idx[r->real + r->lanes] = i;
		if (i < m->real_threads)
			r->real++;
		else
			r->lanes++;
	}
	if (r->real)
		qsort_r(r->idx, r->real, sizeof(*r->idx), cmp_by_samples, (void *)m);
	for (size_t i = 0; i < n; i++)
		if (filter_process(flt, m, p[i].pid))
			p[r->nprocs++] = p[i];
	r->procs = p;
	r->ranks = m->ranks.len > 1;
}

static void thread_rows_free(struct thread_rows *r)
{
	free(r->idx);
	free(r->procs);
}

/* The Rank column of process pid's row, or its header when header is set. */
static void put_rank(FILE *out, const struct thread_rows *r, const struct model *m,
		     uint32_t pid, bool header)
{
	if (!r->ranks)
		return;
	if (header)
		fprintf(out, "%5s ", "Rank");
	else
		fprintf(out, "%5" PRId64 " ", pid_rank(m, pid));
}

/* The same as a JSON member. */
static void json_rank(struct json *j, const struct thread_rows *r, const struct model *m,
		      uint32_t pid)
{
	if (r->ranks)
		json_int(j, "rank", pid_rank(m, pid));
}

/* The processes' peak RSS and CPU from their metrics, busiest first; none without metrics. */
static void put_processes(FILE *out, const struct model *m, const struct thread_rows *r)
{
	size_t n = r->nprocs;
	const struct metric_process *p = r->procs;
	int width = 4;
	char rss[64], cpu[64];

	for (size_t i = 0; i < n; i++) {
		const char *name = metric_process_name(m, p[i].pid);
		int len = name ? (int)strlen(text_escape(name)) : 1;

		width = len > width ? len : width;
	}
	if (n) {
		fputc('\n', out);
		put_rank(out, r, m, 0, true);
		fprintf(out, "%8s  %-*s  %10s  %9s\n", "PID", width, "Name", "Peak RSS", "Mean CPU");
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = metric_process_name(m, p[i].pid);

		put_rank(out, r, m, p[i].pid, false);
		fprintf(out, "%8" PRIu32 "  %-*s  %10s  %9s\n", p[i].pid, width,
			name ? text_escape(name) : "-",
			p[i].rss_known ? metric_format(rss, sizeof(rss), "KiB", 0, p[i].peak_rss_kib)
				       : "-",
			p[i].cpu_known ? metric_format(cpu, sizeof(cpu), "%", 1, p[i].cpu_percent)
				       : "-");
	}
}

/*
 * The threads of the first shown rows renamed while they were sampled:
 * a row per name their samples were taken under, in time order, the name
 * last, as it may hold spaces.
 */
static void put_renamed(FILE *out, const struct model *m, const struct thread_rows *r,
			size_t shown)
{
	fputc('\n', out);
	put_rank(out, r, m, 0, true);
	fprintf(out, "%8s %10s  %8s  %s\n", "PID", "TID", "Samples", "Sampled as");
	for (size_t i = 0; i < shown; i++) {
		const struct model_thread *th = &m->threads.v[r->idx[i]];

		if (sampled_names(m, th) < 2)
			continue;
		for (uint32_t n = th->first_name; n < th->first_name + th->names; n++) {
			const struct model_name *name = &m->names.v[n];
			const char *text = model_str(m, name->name);

			if (!name->samples)
				continue;
			put_rank(out, r, m, th->pid, false);
			fprintf(out, "%8" PRIu32 " %10" PRIu32 "  %8" PRIu64 "  %s\n", th->pid,
				th->tid, name->samples, text_escape(text && *text ? text : "-"));
		}
	}
}

/*
 * Whether the model knows why its threads were off the CPU: a recording
 * before the reasons has only unknown ones.
 */
static bool reasons_known(const struct model *m)
{
	for (size_t i = 0; i < m->real_threads; i++)
		if (m->threads.v[i].offcpu_reason_ns[TR_OFFCPU_BLOCKED] ||
		    m->threads.v[i].offcpu_reason_ns[TR_OFFCPU_PREEMPTED])
			return true;
	return false;
}

void threads_print(FILE *out, const struct model *m, const struct sample_filter *flt,
		   size_t limit, bool off_cpu)
{
	struct thread_rows r;
	size_t real, lanes, shown, renamed = 0, *idx;
	bool offcpu = m->header.features & TR_FEAT_OFFCPU;
	bool oncpu = offcpu || model_sample_period_ns(m);
	bool reasons = offcpu && reasons_known(m);
	int width, kind_width;

	thread_rows(&r, m, flt);
	real = r.real;
	lanes = r.lanes;
	shown = limit && limit < real ? limit : real;
	idx = r.idx;
	width = name_width(m, idx, shown);
	put_rank(out, &r, m, 0, true);
	fprintf(out, "%8s %10s  %-*s  %8s  %10s  %10s", "PID", "TID", width, "Name", "Samples",
		"On-CPU ms", "Off-CPU ms");
	if (off_cpu)
		fprintf(out, "  %10s  %12s", "Blocked ms", "Preempted ms");
	fprintf(out, "  %9s  %9s\n", "First s", "Last s");
	for (size_t i = 0; i < shown; i++) {
		const struct model_thread *th = &m->threads.v[idx[i]];

		put_rank(out, &r, m, th->pid, false);
		fprintf(out, "%8" PRIu32 " %10" PRIu32 "  %-*s  %8" PRIu64, th->pid, th->tid,
			width, text_escape(thread_name(m, th)), th->samples);
		renamed += sampled_names(m, th) > 1;
		put_ms(out, oncpu, model_thread_oncpu_ns(m, th));
		put_ms(out, offcpu, th->offcpu_ns);
		if (off_cpu) {
			put_ms(out, reasons, th->offcpu_reason_ns[TR_OFFCPU_BLOCKED]);
			fputs("  ", out);
			put_ms(out, reasons, th->offcpu_reason_ns[TR_OFFCPU_PREEMPTED]);
		}
		put_seen(out, m, th);
	}
	if (renamed)
		put_renamed(out, m, &r, shown);
	put_processes(out, m, &r);
	if (!lanes) {
		thread_rows_free(&r);
		return;
	}

	width = name_width(m, idx + real, lanes);
	kind_width = 4;
	for (size_t i = real; i < real + lanes; i++) {
		int len = (int)strlen(text_escape(lane_kind(m, &m->threads.v[idx[i]])));

		if (len > kind_width)
			kind_width = len;
	}
	fputc('\n', out);
	put_rank(out, &r, m, 0, true);
	fprintf(out, "%8s %10s  %-*s  %-*s  %8s  %10s  %9s  %9s\n", "PID", "TID",
		kind_width, "Kind", width, "Name", "Spans", "Target ms", "First s", "Last s");
	for (size_t i = real; i < real + lanes; i++) {
		const struct model_thread *th = &m->threads.v[idx[i]];
		char tid[16];

		/* In hex, so that a synthetic tid reads as one: 0xfff00000 and up. */
		snprintf(tid, sizeof(tid), "%#" PRIx32, th->tid);
		put_rank(out, &r, m, th->pid, false);
		fprintf(out, "%8" PRIu32 " %10s  %-*s  %-*s  %8" PRIu64, th->pid, tid,
			kind_width, text_escape(lane_kind(m, th)), width,
			text_escape(thread_name(m, th)), th->spans);
		put_ms(out, true, th->span_ns);
		put_seen(out, m, th);
	}
	thread_rows_free(&r);
}

/* ns as milliseconds, or null when not known. */
static void json_ms(struct json *j, const char *key, bool known, uint64_t ns)
{
	json_fixed_or_null(j, key, known, 3, (double)ns / 1e6);
}

/* First and last event in seconds since the start, null for none. */
static void json_seen(struct json *j, const struct model *m, const struct model_thread *th)
{
	if (th->first_ts) {
		json_fixed(j, "first_s", 6, (double)(th->first_ts - m->start_ts) / 1e9);
		json_fixed(j, "last_s", 6, (double)(th->last_ts - m->start_ts) / 1e9);
	} else {
		json_null(j, "first_s");
		json_null(j, "last_s");
	}
}

/* The rows of put_processes: null where a figure is not known. */
static void json_processes(struct json *j, const struct model *m, const struct thread_rows *r)
{
	const struct metric_process *p = r->procs;

	json_begin_array(j, "processes", JSON_LINES);
	for (size_t i = 0; i < r->nprocs; i++) {
		const char *name = metric_process_name(m, p[i].pid);

		json_begin_object(j, NULL, JSON_INLINE);
		json_rank(j, r, m, p[i].pid);
		json_uint(j, "pid", p[i].pid);
		json_string(j, "name", name ? name : "-");
		json_fixed_or_null(j, "peak_rss_kib", p[i].rss_known, 0, p[i].peak_rss_kib);
		json_fixed_or_null(j, "cpu_percent", p[i].cpu_known, 3, p[i].cpu_percent);
		json_end(j);
	}
	json_end(j);
}

void threads_print_json(FILE *out, const struct model *m, const struct sample_filter *flt,
			const char *path, size_t limit, bool off_cpu)
{
	struct thread_rows r;
	size_t real, shown, *idx;
	bool offcpu = m->header.features & TR_FEAT_OFFCPU;
	bool oncpu = offcpu || model_sample_period_ns(m);
	bool reasons = offcpu && reasons_known(m);
	struct json j;

	thread_rows(&r, m, flt);
	real = r.real;
	shown = limit && limit < real ? limit : real;
	idx = r.idx;

	json_begin_document(&j, out, 1);
	json_string(&j, "path", path);
	json_begin_array(&j, "threads", JSON_LINES);
	for (size_t i = 0; i < shown; i++) {
		const struct model_thread *th = &m->threads.v[idx[i]];

		json_begin_object(&j, NULL, JSON_INLINE);
		json_rank(&j, &r, m, th->pid);
		json_uint(&j, "pid", th->pid);
		json_uint(&j, "tid", th->tid);
		json_string(&j, "name", thread_name(m, th));
		json_uint(&j, "samples", th->samples);
		json_ms(&j, "oncpu_ms", oncpu, model_thread_oncpu_ns(m, th));
		json_ms(&j, "offcpu_ms", offcpu, th->offcpu_ns);
		if (off_cpu) {
			json_ms(&j, "blocked_ms", reasons,
				th->offcpu_reason_ns[TR_OFFCPU_BLOCKED]);
			json_ms(&j, "preempted_ms", reasons,
				th->offcpu_reason_ns[TR_OFFCPU_PREEMPTED]);
		}
		json_seen(&j, m, th);
		json_end(&j);
	}
	json_end(&j);
	json_processes(&j, m, &r);
	json_begin_array(&j, "lanes", JSON_LINES);
	for (size_t i = real; i < real + r.lanes; i++) {
		const struct model_thread *th = &m->threads.v[idx[i]];

		json_begin_object(&j, NULL, JSON_INLINE);
		json_rank(&j, &r, m, th->pid);
		json_uint(&j, "pid", th->pid);
		json_uint(&j, "tid", th->tid);
		json_string(&j, "kind", lane_kind(m, th));
		json_string(&j, "name", thread_name(m, th));
		json_uint(&j, "spans", th->spans);
		json_ms(&j, "target_ms", true, th->span_ns);
		json_seen(&j, m, th);
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
	thread_rows_free(&r);
}
