/* SPDX-License-Identifier: MIT */
/* The by-symbol report (report.c builds it) as a table and as JSON. */
#include "analysis/views/report.h"
#include "analysis/views/report-private.h"
#include "analysis/views/metrics.h"

#include <inttypes.h>
#include <string.h>

#include "contract/meta.h"
#include "util/json.h"
#include "util/text.h"

static const char *const key_headers[REPORT_KEYS] = {
	[KEY_COMM] = "Command",
	[KEY_DSO] = "DSO",
	[KEY_SYMBOL] = "Symbol",
	[KEY_PID] = "Pid",
	[KEY_TID] = "Tid",
	[KEY_NVTX] = "NVTX range",
	[KEY_PYLINE] = "Python line",
	[KEY_RANK] = "Rank",
	[KEY_SRCLINE] = "Source line",
};

#define QUEUED_FROM "Queued from"
/* Before each line of a row's call graph: under the value columns. */
#define GRAPH_PREFIX "            "

/* The text of one key column of a row. */
static const char *key_text(const struct report_row *row, enum report_key k,
			    struct funcs *f, char *buf, size_t size)
{
	const struct model_thread *th = &f->m->threads.v[row->thread];

	switch (k) {
	case KEY_COMM:
		return funcs_name(f, funcs_thread_named(f, th, row->comm));
	case KEY_DSO:
		return funcs_name(f, f->v.v[row->func].dso);
	case KEY_SYMBOL:
		return funcs_name(f, f->v.v[row->func].name);
	case KEY_PID:
		snprintf(buf, size, "%" PRIu32, th->pid);
		return buf;
	case KEY_TID:
		snprintf(buf, size, "%" PRIu32, th->tid);
		return buf;
	case KEY_RANK:
		snprintf(buf, size, "%" PRId64, pid_rank(f->m, th->pid));
		return buf;
	case KEY_NVTX:
		return range_name(f->m, row->nvtx);
	case KEY_PYLINE:
		return pyline_name(f, row->pyline);
	case KEY_SRCLINE:
		return srcline_name(f, f->v.v[row->func].line);
	default:
		return "";
	}
}

static double percent(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* The widths of the key columns, over the rows printed. */
static void key_widths(int *width, const struct report *r, size_t rows, struct funcs *f,
		       const struct report_opts *o)
{
	char buf[32];

	for (size_t k = 0; k < o->nkeys; k++) {
		width[k] = (int)strlen(key_headers[o->keys[k]]);
		for (size_t i = 0; i < rows; i++) {
			int len = (int)strlen(text_escape(key_text(&r->rows.v[i], o->keys[k], f,
								   buf, sizeof(buf))));

			if (len > width[k])
				width[k] = len;
		}
	}
}

/*
 * The key columns of a row, or their headers when row is NULL; then last,
 * unless it is NULL, and the newline.
 */
static void put_keys(FILE *out, const struct report_row *row, const int *width,
		     struct funcs *f, const struct report_opts *o, const char *last)
{
	char buf[32];

	for (size_t k = 0; k < o->nkeys; k++)
		fprintf(out, "  %-*s", k + 1 < o->nkeys || last ? width[k] : 0,
			row ? text_escape(key_text(row, o->keys[k], f, buf, sizeof(buf)))
			    : key_headers[o->keys[k]]);
	if (last)
		fprintf(out, "  %s", text_escape(last));
	fputc('\n', out);
}

/* The Queued from column of a row: the func a span name's row was queued from. */
static const char *queued_from(const struct report *r, const struct report_row *row,
			       const struct funcs *f)
{
	return r->queued_from && row->span ? funcs_name(f, f->v.v[row->from].name) : NULL;
}

static size_t rows_shown(const struct report *r, const struct report_opts *o)
{
	return o->limit && o->limit < r->rows.len ? o->limit : r->rows.len;
}

/* The value columns before the keys: the samples' percentages, or lane work in ms. */
struct value_columns {
	const char *children, *self, *count;	/* headers */
	int children_width;
	/* Prints the children column, when shown, and the self column of a row. */
	void (*put)(FILE *out, const struct report *r, const struct report_row *row,
		    bool children);
};

static void put_sample_values(FILE *out, const struct report *r, const struct report_row *row,
			      bool children)
{
	if (children)
		fprintf(out, " %9.2f%%", percent(row->children, r->total));
	fprintf(out, " %9.2f%%", percent(row->self, r->total));
}

static void put_lane_work_values(FILE *out, const struct report *r,
				 const struct report_row *row, bool children)
{
	if (children)
		fprintf(out, " %11.3f", (double)row->target_children / 1e6);
	fprintf(out, " %10.3f", (double)row->target_self / 1e6);
}

/* The Over time column's width: its header's at least. */
static int buckets_width(const struct report *r)
{
	return r->nbuckets > 9 ? (int)r->nbuckets : 9;
}

/* Row i's Over time: a bar a part, as high as its count against the row's highest. */
static void put_buckets(FILE *out, const struct report *r, size_t i)
{
	const uint64_t *count = &r->buckets[i * r->nbuckets];
	uint64_t most = 0;

	for (unsigned b = 0; b < r->nbuckets; b++)
		most = count[b] > most ? count[b] : most;
	fputc(' ', out);
	for (unsigned b = 0; b < r->nbuckets; b++)
		fputs(count[b] ? metric_bar((double)count[b] / (double)most) : " ", out);
	fprintf(out, "%*s", buckets_width(r) - (int)r->nbuckets, "");
}

/* The column headers, then the rows shown: values, count, keys. */
static void print_table(FILE *out, const struct report *r, struct funcs *f,
			const struct report_opts *o, const struct value_columns *c)
{
	size_t rows = rows_shown(r, o);
	int width[REPORT_KEYS] = {0};

	key_widths(width, r, rows, f, o);
	/* The '#' takes the place of the rows' leading space. */
	if (o->children)
		fprintf(out, "#%*s", c->children_width, c->children);
	fprintf(out, "%s%10s %8s", o->children ? " " : "#", c->self, c->count);
	if (r->nbuckets)
		fprintf(out, " %-*s", buckets_width(r), "Over time");
	put_keys(out, NULL, width, f, o, r->queued_from ? QUEUED_FROM : NULL);
	fprintf(out, "#\n");

	for (size_t i = 0; i < rows; i++) {
		const struct report_row *row = &r->rows.v[i];

		c->put(out, r, row, o->children);
		fprintf(out, " %8" PRIu64, o->children ? row->children : row->self);
		if (r->nbuckets)
			put_buckets(out, r, i);
		put_keys(out, row, width, f, o, queued_from(r, row, f));
		if (i < r->ngraphs) {
			calltree_print_under(out, &r->graphs[i], f, o->percent_limit >= 0
					     ? o->percent_limit : GRAPH_DEFAULT_PERCENT,
					     r->total, GRAPH_PREFIX);
			fputc('\n', out);
		}
	}
}

void report_print(FILE *out, const struct report *r, struct funcs *f,
		  const struct report_opts *o, const char *path)
{
	static const struct value_columns samples = {
		"Children", "Self", "Samples", 10, put_sample_values,
	};
	const char *event = model_meta(f->m, META_EVENT);

	fprintf(out, "# Samples: %" PRIu64 " of event '%s'\n", r->total,
		event ? text_escape(event) : "unknown");
	fprintf(out, "# File: %s\n", text_escape(path));
	if (r->graphs_cut)
		fprintf(out, "# Call graphs cut short: they may walk %" PRIu64 " frames and make %"
			PRIu64 " nodes, all rows together; fewer rows (-n, --percent-limit)"
			" make them whole\n", r->graphs_cut, GRAPH_MAX_NODES);
	fprintf(out, "#\n");
	print_table(out, r, f, o, &samples);
}

void report_print_lane_work(FILE *out, const struct report *r, struct funcs *f,
			    const struct report_opts *o)
{
	static const struct value_columns lane_work = {
		"Children ms", "Self ms", "Spans", 11, put_lane_work_values,
	};

	fprintf(out, "#\n# Lane work queued from these threads: %" PRIu64
		" spans, %.3f ms of target time, not in the percentages above\n#\n",
		r->total, (double)r->target_ns / 1e6);
	print_table(out, r, f, o, &lane_work);
}

/* The JSON names of the keys: those of --sort. */
static const char *const key_json[REPORT_KEYS] = {
	[KEY_COMM] = "comm", [KEY_DSO] = "dso", [KEY_SYMBOL] = "symbol", [KEY_PID] = "pid",
	[KEY_TID] = "tid", [KEY_NVTX] = "nvtx", [KEY_PYLINE] = "pyline", [KEY_RANK] = "rank",
	[KEY_SRCLINE] = "srcline",
};

/* A row's key as a JSON member: the numbers as numbers. */
static void json_sort_key(struct json *j, const struct report_row *row, enum report_key k,
		     struct funcs *f)
{
	const struct model_thread *th = &f->m->threads.v[row->thread];
	char buf[32];

	if (k == KEY_PID)
		json_uint(j, key_json[k], th->pid);
	else if (k == KEY_TID)
		json_uint(j, key_json[k], th->tid);
	else if (k == KEY_RANK)
		json_int(j, key_json[k], pid_rank(f->m, th->pid));
	else
		json_string(j, key_json[k], key_text(row, k, f, buf, sizeof(buf)));
}

/* The rows shown of r, each with its values and its keys. */
static void json_rows(struct json *j, const struct report *r, struct funcs *f,
		      const struct report_opts *o, bool lane_work)
{
	size_t rows = rows_shown(r, o);

	json_begin_array(j, "rows", JSON_LINES);
	for (size_t i = 0; i < rows; i++) {
		const struct report_row *row = &r->rows.v[i];
		const char *from = queued_from(r, row, f);

		json_begin_object(j, NULL, JSON_INLINE);
		if (lane_work) {
			json_uint(j, "spans_self", row->self);
			json_uint(j, "spans_children", row->children);
			json_fixed(j, "self_ms", 6, (double)row->target_self / 1e6);
			json_fixed(j, "children_ms", 6, (double)row->target_children / 1e6);
		} else {
			json_uint(j, "self", row->self);
			json_uint(j, "children", row->children);
			json_fixed(j, "self_percent", 4, percent(row->self, r->total));
			json_fixed(j, "children_percent", 4, percent(row->children, r->total));
		}
		for (size_t k = 0; k < o->nkeys; k++)
			json_sort_key(j, row, o->keys[k], f);
		if (from)
			json_string(j, "queued_from", from);
		if (r->nbuckets) {
			json_begin_array(j, "over_time", JSON_INLINE);
			for (unsigned b = 0; b < r->nbuckets; b++)
				json_uint(j, NULL, r->buckets[i * r->nbuckets + b]);
			json_end(j);
		}
		json_end(j);
	}
	json_end(j);
}

void report_print_json(FILE *out, const struct report *samples, const struct report *lane_work,
		       const struct lane_report *lanes, struct funcs *f,
		       const struct report_opts *o, const char *path)
{
	struct json j;

	json_begin_document(&j, out, 1);
	json_string(&j, "path", path);
	json_string(&j, "event", model_meta(f->m, META_EVENT));
	json_uint(&j, "samples", samples->total);
	json_rows(&j, samples, f, o, false);
	json_begin_object(&j, "lane_work", JSON_INLINE);
	json_uint(&j, "spans", lane_work->total);
	json_fixed(&j, "target_ms", 6, (double)lane_work->target_ns / 1e6);
	json_rows(&j, lane_work, f, o, true);
	json_end(&j);
	lane_report_print_json(&j, lanes, f->m, o->limit);
	json_end(&j);
}
