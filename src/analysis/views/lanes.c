/* SPDX-License-Identifier: MIT */
/* The report of lanes: their spans by name, in target time, not samples. */
#include "analysis/views/report.h"
#include "analysis/views/report-private.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "util/saturate.h"
#include "util/json.h"
#include "util/text.h"
#include "util/xalloc.h"

static int cmp_lane_rows(const void *pa, const void *pb, void *pctx)
{
	const struct lane_row *a = pa, *b = pb;
	const struct model *m = pctx;
	const char *na = model_str(m, a->name), *nb = model_str(m, b->name);
	int c;

	if (a->target_ns != b->target_ns)
		return a->target_ns > b->target_ns ? -1 : 1;
	if (a->lane != b->lane)
		return a->lane < b->lane ? -1 : 1;
	if ((c = strcmp(na ? na : "", nb ? nb : "")))
		return c;
	return a->name < b->name ? -1 : a->name > b->name;
}

void lane_report_build(struct lane_report *r, struct funcs *f, const struct sample_filter *flt)
{
	const struct model *m = f->m;
	size_t nlanes = m->t.lanes.len;
	bool *selected = filter_lanes(f, flt);
	struct u64map rows = {0};	/* lane << 32 | name -> row index */

	memset(r, 0, sizeof(*r));
	for (uint32_t lane = 1; lane <= nlanes; lane++)
		r->lanes += selected[lane];
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		uint64_t key = (uint64_t)sp->lane << 32 | sp->name, at;
		struct lane_row *row;

		if (!sp->lane || sp->lane > nlanes || !selected[sp->lane])
			continue;
		if (u64map_get(&rows, key, &at)) {
			row = &r->rows.v[at];
		} else {
			u64map_put(&rows, key, r->rows.len);
			row = VEC_PUSH(&r->rows);
			row->lane = sp->lane;
			row->name = sp->name;
			row->min_ns = sp->dur;
		}
		row->spans++;
		row->target_ns = u64_sat_add(row->target_ns, sp->dur);
		if (sp->dur < row->min_ns)
			row->min_ns = sp->dur;
		if (sp->dur > row->max_ns)
			row->max_ns = sp->dur;
		r->spans++;
		r->target_ns = u64_sat_add(r->target_ns, sp->dur);
	}
	if (r->rows.len)
		qsort_r(r->rows.v, r->rows.len, sizeof(*r->rows.v), cmp_lane_rows, (void *)m);
	u64map_free(&rows);
	free(selected);
}

void lane_report_free(struct lane_report *r)
{
	VEC_FREE(&r->rows);
}

static const char *str_or_dash(const struct model *m, uint32_t id)
{
	const char *s = model_str(m, id);

	return s && *s ? s : "-";
}

void lane_report_print(FILE *out, const struct lane_report *r, const struct model *m,
		       const char *path, size_t limit)
{
	size_t rows = limit && limit < r->rows.len ? limit : r->rows.len;
	struct demangler d = {0};
	int width = 4;

	for (size_t i = 0; i < rows; i++) {
		const struct model_thread *th = model_lane_thread(m, r->rows.v[i].lane);
		int len = (int)strlen(text_escape(str_or_dash(m, th->name)));

		if (len > width)
			width = len;
	}
	if (!path)
		fprintf(out, "#\n");
	fprintf(out, "# Lane spans: %" PRIu64 " in %zu lane%s, %.3f ms of target time\n",
		r->spans, r->lanes, r->lanes == 1 ? "" : "s", (double)r->target_ns / 1e6);
	if (path)
		fprintf(out, "# File: %s\n", text_escape(path));
	fprintf(out, "#\n#%10s %8s %8s %10s %10s %10s  %-*s  %s\n#\n", "Target ms",
		"Of lane", "Spans", "Avg us", "Min us", "Max us", width, "Lane", "Span");
	for (size_t i = 0; i < rows; i++) {
		const struct lane_row *row = &r->rows.v[i];
		const struct model_thread *th = model_lane_thread(m, row->lane);
		const char *name = str_or_dash(m, row->name);
		char *plain = demangle(&d, name);	/* GPU kernels have C++ names */

		fprintf(out, " %10.3f %7.2f%% %8" PRIu64 " %10.3f %10.3f %10.3f  %-*s  %s\n",
			(double)row->target_ns / 1e6,
			th->span_ns ? 100.0 * (double)row->target_ns / (double)th->span_ns : 0.0,
			row->spans, (double)row->target_ns / (double)row->spans / 1e3,
			(double)row->min_ns / 1e3, (double)row->max_ns / 1e3, width,
			text_escape(str_or_dash(m, th->name)), text_escape(plain ? plain : name));
		free(plain);
	}
	demangler_free(&d);
}

void lane_report_print_json(struct json *j, const struct lane_report *r,
			    const struct model *m, size_t limit)
{
	size_t rows = limit && limit < r->rows.len ? limit : r->rows.len;
	struct demangler d = {0};

	json_begin_object(j, "lanes", JSON_INLINE);
	json_uint(j, "lanes", r->lanes);
	json_uint(j, "spans", r->spans);
	json_fixed(j, "target_ms", 6, (double)r->target_ns / 1e6);
	json_begin_array(j, "rows", JSON_LINES);
	for (size_t i = 0; i < rows; i++) {
		const struct lane_row *row = &r->rows.v[i];
		const struct model_thread *th = model_lane_thread(m, row->lane);
		const char *name = str_or_dash(m, row->name);
		char *plain = demangle(&d, name);

		json_begin_object(j, NULL, JSON_INLINE);
		json_string(j, "lane", str_or_dash(m, th->name));
		json_uint(j, "tid", th->tid);
		json_string(j, "span", plain ? plain : name);
		json_uint(j, "spans", row->spans);
		json_fixed(j, "target_ms", 6, (double)row->target_ns / 1e6);
		json_fixed(j, "lane_percent", 4,
			   th->span_ns ? 100.0 * (double)row->target_ns / (double)th->span_ns : 0.0);
		json_fixed(j, "avg_us", 3, (double)row->target_ns / (double)row->spans / 1e3);
		json_fixed(j, "min_us", 3, (double)row->min_ns / 1e3);
		json_fixed(j, "max_us", 3, (double)row->max_ns / 1e3);
		json_end(j);
		free(plain);
	}
	json_end(j);
	json_end(j);
	demangler_free(&d);
}
