/* SPDX-License-Identifier: MIT */
/* report --gpu's tables (gpu.c builds them) as text and as JSON. */
#include "analysis/views/gpu.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "contract/attrs.h"
#include "contract/lanes.h"
#include "contract/spans.h"
#include "symbols/demangle.h"
#include "util/json.h"
#include "util/text.h"
#include "util/xalloc.h"

static double percent(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

static size_t rows_shown(const struct gpu_table *t, size_t limit)
{
	return limit && limit < t->rows.len ? limit : t->rows.len;
}

static const char *name_or_dash(const struct model *m, uint32_t id)
{
	const char *s = model_str(m, id);

	return s && *s ? s : "-";
}

/* "128x1x1", or "-" when the kernel records did not say. */
static void format_dims(char *buf, size_t size, const uint64_t *dim)
{
	if (dim[0] == KERNEL_CONFIG_UNKNOWN)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%" PRIu64 "x%" PRIu64 "x%" PRIu64, dim[0], dim[1], dim[2]);
}

static void format_occupancy(char *buf, size_t size, const struct kernel_config *c)
{
	uint64_t lim = c->limiter;
	const char *why = lim < CUDA_OCC_LIMITERS ? cuda_occupancy_limiter_names[lim] : NULL;

	if (c->occupancy == KERNEL_CONFIG_UNKNOWN)
		snprintf(buf, size, "-");
	else if (why)
		snprintf(buf, size, "%.1f%% %s", (double)c->occupancy / 10, why);
	else
		snprintf(buf, size, "%.1f%%", (double)c->occupancy / 10);
}

/* A header's start: its "#", then with several ranks the Rank column's title. */
static void put_rank_header(FILE *out, const struct model *m)
{
	fputc('#', out);
	if (m->ranks.len > 1)
		fprintf(out, "%5s ", "Rank");
}

/* A row's Rank column with several ranks, as wide as put_rank_header's. */
static void put_rank(FILE *out, const struct model *m, uint32_t rank)
{
	if (m->ranks.len > 1)
		fprintf(out, "%6" PRId64, m->ranks.v[rank].rank);
}

/* The time columns shared by the kernel, API and wait tables. */
static void put_stats_header(FILE *out, const char *count)
{
	fprintf(out, "%8s %10s %9s %10s %10s %10s %10s %10s", "Time(%)", "Total ms", count,
		"Avg us", "Med us", "Min us", "Max us", "StdDev us");
}

static void put_stats(FILE *out, const struct gpu_stats *st, uint64_t all_ns)
{
	fprintf(out, " %7.2f%% %10.3f %9" PRIu64 " %10.3f %10.3f %10.3f %10.3f %10.3f",
		percent(st->total_ns, all_ns), (double)st->total_ns / 1e6, st->count,
		(double)st->total_ns / (double)st->count / 1e3, st->median_ns / 1e3,
		(double)st->min_ns / 1e3, (double)st->max_ns / 1e3, st->stddev_ns / 1e3);
}

struct kernel_text {
	char grid[64], block[64], regs[24], occupancy[48];
};

static void kernel_text(struct kernel_text *k, const struct gpu_row *row)
{
	const struct kernel_config *c = &row->config;

	format_dims(k->grid, sizeof(k->grid), c->grid);
	/* A marker for a group launched in more than one configuration. */
	if (row->configs > 1 && strlen(k->grid) + 2 <= sizeof(k->grid))
		strcat(k->grid, "*");
	format_dims(k->block, sizeof(k->block), c->block);
	if (c->regs == KERNEL_CONFIG_UNKNOWN)
		snprintf(k->regs, sizeof(k->regs), "-");
	else
		snprintf(k->regs, sizeof(k->regs), "%" PRIu64, c->regs);
	format_occupancy(k->occupancy, sizeof(k->occupancy), c);
}

static int max_int(int a, int b)
{
	return a > b ? a : b;
}

static void put_kernels(FILE *out, const struct gpu_table *t, const struct model *m,
			size_t limit)
{
	struct demangler d = {0};
	size_t rows = rows_shown(t, limit);
	int wg = 7, wb = 8, wr = 4, wo = 9;	/* the headers' widths */
	bool varies = false;
	struct kernel_text k;

	fprintf(out, "# CUDA kernels: %" PRIu64 " instance%s of %zu kernel%s, "
		"%.3f ms of GPU time\n#\n",
		t->count, t->count == 1 ? "" : "s", t->rows.len, t->rows.len == 1 ? "" : "s",
		(double)t->total_ns / 1e6);
	for (size_t i = 0; i < rows; i++) {
		kernel_text(&k, &t->rows.v[i]);
		wg = max_int(wg, (int)strlen(k.grid));
		wb = max_int(wb, (int)strlen(k.block));
		wr = max_int(wr, (int)strlen(k.regs));
		wo = max_int(wo, (int)strlen(k.occupancy));
		varies |= t->rows.v[i].configs > 1;
	}
	put_rank_header(out, m);
	put_stats_header(out, "Instances");
	fprintf(out, "  %-*s  %-*s  %*s  %-*s  %s\n#\n", wg, "GridXYZ", wb, "BlockXYZ", wr, "Regs",
		wo, "Occupancy", "Name");
	for (size_t i = 0; i < rows; i++) {
		const struct gpu_row *row = &t->rows.v[i];
		const char *name = name_or_dash(m, row->name);
		char *plain = demangle(&d, name);

		kernel_text(&k, row);
		put_rank(out, m, row->rank);
		put_stats(out, &row->st, t->total_ns);
		fprintf(out, "  %-*s  %-*s  %*s  %-*s  %s\n", wg, k.grid, wb, k.block, wr, k.regs,
			wo, k.occupancy, text_escape(plain ? plain : name));
		free(plain);
	}
	if (varies)
		fprintf(out, "# * launched in several configurations; "
			"the most frequent is shown\n");
	demangler_free(&d);
}

/* The kind of copy a row's span name says, in buf. */
static void copy_kind(char *buf, size_t size, const struct model *m, uint32_t name_id)
{
	int len;
	const char *kind = cuda_copy_span_kind(model_str(m, name_id), &len);

	snprintf(buf, size, "%.*s", len, kind);
}

/* Bytes in decimal units, like the GB/s beside them: "512 B", "1.500 MB". */
static void format_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *const units[] = { "kB", "MB", "GB", "TB", "PB" };
	double v = (double)bytes;
	size_t u = 0;

	if (bytes < 1000) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return;
	}
	for (v /= 1000; v >= 1000 && u + 1 < sizeof(units) / sizeof(units[0]); u++)
		v /= 1000;
	snprintf(buf, size, "%.3f %s", v, units[u]);
}

static void put_copies(FILE *out, const struct gpu_table *t, const struct model *m,
		       size_t limit)
{
	size_t rows = rows_shown(t, limit);
	char bytes[32], kind[64];

	format_bytes(bytes, sizeof(bytes), t->bytes);
	fprintf(out, "#\n# CUDA copies: %" PRIu64 " copies and memsets, %s, "
		"%.3f ms of GPU time\n#\n",
		t->count, bytes, (double)t->total_ns / 1e6);
	put_rank_header(out, m);
	fprintf(out, "%8s %10s %9s %12s %10s %10s %10s %10s  %s\n#\n", "Time(%)", "Total ms",
		"Count", "Bytes", "Avg us", "GB/s", "Min GB/s", "Max GB/s", "Kind");
	for (size_t i = 0; i < rows; i++) {
		const struct gpu_row *row = &t->rows.v[i];

		format_bytes(bytes, sizeof(bytes), row->bytes);
		copy_kind(kind, sizeof(kind), m, row->name);
		put_rank(out, m, row->rank);
		fprintf(out, " %7.2f%% %10.3f %9" PRIu64 " %12s %10.3f %10.3f %10.3f %10.3f  %s\n",
			percent(row->st.total_ns, t->total_ns), (double)row->st.total_ns / 1e6,
			row->st.count, bytes,
			(double)row->st.total_ns / (double)row->st.count / 1e3,
			row->st.total_ns ? (double)row->bytes / (double)row->st.total_ns : 0.0,
			row->min_gbps, row->max_gbps, text_escape(kind));
	}
}

static void put_calls(FILE *out, const struct gpu_table *t, const struct model *m,
		      const char *title, size_t limit)
{
	size_t rows = rows_shown(t, limit);

	fprintf(out, "#\n# %s: %" PRIu64 " call%s, %.3f ms\n#\n", title, t->count,
		t->count == 1 ? "" : "s", (double)t->total_ns / 1e6);
	put_rank_header(out, m);
	put_stats_header(out, "Calls");
	fprintf(out, "  %s\n#\n", "Name");
	for (size_t i = 0; i < rows; i++) {
		put_rank(out, m, t->rows.v[i].rank);
		put_stats(out, &t->rows.v[i].st, t->total_ns);
		fprintf(out, "  %s\n", text_escape(name_or_dash(m, t->rows.v[i].name)));
	}
}

/* The kernel's name that starts a kernel-regions lane's name, as the text shows it. */
static const char *region_kernel(const struct model *m, const struct kregion_row *row,
				 char **copy)
{
	const char *lane = name_or_dash(m, row->lane_name);

	free(*copy);
	*copy = xstrndup(lane, kregions_lane_kernel_len(lane));
	return text_escape(*copy);
}

static void put_regions(FILE *out, const struct gpu_report *r, const struct model *m,
			size_t limit)
{
	size_t rows = limit && limit < r->regions.len ? limit : r->regions.len;
	int wk = 6;	/* "Kernel" */
	char *kernel = NULL;

	if (!r->regions.len)
		return;
	for (size_t i = 0; i < rows; i++)
		wk = max_int(wk, (int)strlen(region_kernel(m, &r->regions.v[i], &kernel)));
	fprintf(out, "#\n# Kernel regions: %zu region%s of %zu kernel%s, %" PRIu64 " collect%s\n"
		"# Kernel%%: the region's time per (block, group) lane over its kernel's GPU time;"
		" Imbalance: its slowest block over its median block\n#\n",
		r->regions.len, r->regions.len == 1 ? "" : "s", r->region_kernels,
		r->region_kernels == 1 ? "" : "s", r->region_collects,
		r->region_collects == 1 ? "" : "s");
	put_rank_header(out, m);
	fprintf(out, "%10s %10s %10s %10s %10s %8s %9s  %-*s  %s\n#\n", "Instances", "Avg us",
		"Med us", "Min us", "Max us", "Kernel%", "Imbalance", wk, "Kernel", "Region");
	for (size_t i = 0; i < rows; i++) {
		const struct kregion_row *row = &r->regions.v[i];
		char share[16] = "-", imbalance[16] = "-";

		if (row->kernel_ns)
			snprintf(share, sizeof(share), "%.2f%%",
				 100.0 * row->lane_ns / (double)row->kernel_ns);
		if (row->block_median_ns > 0)
			snprintf(imbalance, sizeof(imbalance), "%.2fx",
				 (double)row->block_max_ns / row->block_median_ns);
		put_rank(out, m, row->rank);
		fprintf(out, " %10" PRIu64 " %10.3f %10.3f %10.3f %10.3f %8s %9s  %-*s  %s\n",
			row->instances, (double)row->sum_ns / (double)row->instances / 1e3,
			row->median_ns / 1e3, (double)row->min_ns / 1e3, (double)row->max_ns / 1e3,
			share, imbalance, wk, region_kernel(m, row, &kernel),
			text_escape(name_or_dash(m, row->region)));
	}
	free(kernel);
}

void gpu_report_print(FILE *out, const struct gpu_report *r, const struct model *m,
		      const char *path, size_t limit)
{
	fprintf(out, "# File: %s\n", text_escape(path));
	put_kernels(out, &r->kernels, m, limit);
	put_regions(out, r, m, limit);
	put_copies(out, &r->copies, m, limit);
	put_calls(out, &r->api, m, "CUDA API", limit);
	put_calls(out, &r->waits, m, "CPU waiting on the GPU (synchronizing calls)", limit);
}

/* A row's rank as its first JSON member, with several ranks only. */
static void json_rank(struct json *j, const struct model *m, uint32_t rank)
{
	if (m->ranks.len > 1)
		json_int(j, "rank", m->ranks.v[rank].rank);
}

/* The statistics of a row's durations, as JSON members. */
static void json_stats(struct json *j, const struct gpu_stats *st)
{
	json_uint(j, "count", st->count);
	json_fixed(j, "total_ms", 6, (double)st->total_ns / 1e6);
	json_fixed(j, "avg_us", 3,
		   st->count ? (double)st->total_ns / (double)st->count / 1e3 : 0.0);
	json_fixed(j, "median_us", 3, st->median_ns / 1e3);
	json_fixed(j, "min_us", 3, (double)st->min_ns / 1e3);
	json_fixed(j, "max_us", 3, (double)st->max_ns / 1e3);
	json_fixed(j, "stddev_us", 3, st->stddev_ns / 1e3);
}

/* A value of a kernel's configuration, null where its record lacked it. */
static void json_config(struct json *j, const char *key, uint64_t v)
{
	if (v == KERNEL_CONFIG_UNKNOWN)
		json_null(j, key);
	else
		json_uint(j, key, v);
}

static void json_dims(struct json *j, const char *key, const uint64_t *dims)
{
	json_begin_array(j, key, JSON_INLINE);
	for (int d = 0; d < 3; d++)
		json_config(j, NULL, dims[d]);
	json_end(j);
}

/* A table's rows, each with its name (demangled), its statistics and what its kind adds. */
static void json_table(struct json *j, const char *key, const struct gpu_table *t,
		       const struct model *m, size_t limit, bool kernels, bool copies)
{
	struct demangler d = {0};
	size_t rows = rows_shown(t, limit);
	char kind[64];

	json_begin_object(j, key, JSON_INLINE);
	json_uint(j, "count", t->count);
	json_fixed(j, "total_ms", 6, (double)t->total_ns / 1e6);
	if (copies)
		json_uint(j, "bytes", t->bytes);
	json_begin_array(j, "rows", JSON_LINES);
	for (size_t i = 0; i < rows; i++) {
		const struct gpu_row *row = &t->rows.v[i];
		const char *name = name_or_dash(m, row->name);
		char *plain = kernels ? demangle(&d, name) : NULL;

		json_begin_object(j, NULL, JSON_INLINE);
		json_rank(j, m, row->rank);
		if (copies) {
			copy_kind(kind, sizeof(kind), m, row->name);
			json_string(j, "name", kind);
		} else {
			json_string(j, "name", plain ? plain : name);
		}
		free(plain);
		json_stats(j, &row->st);
		if (kernels) {
			json_dims(j, "grid", row->config.grid);
			json_dims(j, "block", row->config.block);
			json_config(j, "regs", row->config.regs);
			json_config(j, "occupancy_permille", row->config.occupancy);
			json_uint(j, "configs", row->configs);
		}
		if (copies) {
			json_uint(j, "bytes", row->bytes);
			json_fixed(j, "gbps", 3, row->st.total_ns ?
				   (double)row->bytes / (double)row->st.total_ns : 0.0);
			json_fixed(j, "min_gbps", 3, row->min_gbps);
			json_fixed(j, "max_gbps", 3, row->max_gbps);
		}
		json_end(j);
	}
	json_end(j);
	json_end(j);
	demangler_free(&d);
}

static void json_regions(struct json *j, const struct gpu_report *r, const struct model *m,
			 size_t limit)
{
	size_t rows = limit && limit < r->regions.len ? limit : r->regions.len;

	json_begin_array(j, "kernel_regions", JSON_LINES);
	for (size_t i = 0; i < rows; i++) {
		const struct kregion_row *row = &r->regions.v[i];
		const char *lane = name_or_dash(m, row->lane_name);
		char *kernel = xstrndup(lane, kregions_lane_kernel_len(lane));

		json_begin_object(j, NULL, JSON_INLINE);
		json_rank(j, m, row->rank);
		json_string(j, "kernel", kernel);
		free(kernel);
		json_string(j, "region", name_or_dash(m, row->region));
		json_uint(j, "instances", row->instances);
		json_fixed(j, "avg_us", 3, (double)row->sum_ns / (double)row->instances / 1e3);
		json_fixed(j, "median_us", 3, row->median_ns / 1e3);
		json_fixed(j, "min_us", 3, (double)row->min_ns / 1e3);
		json_fixed(j, "max_us", 3, (double)row->max_ns / 1e3);
		json_ratio_or_null(j, "kernel_percent", 4, 100.0 * row->lane_ns,
				   (double)row->kernel_ns);
		json_ratio_or_null(j, "imbalance", 4, (double)row->block_max_ns,
				   row->block_median_ns);
		json_end(j);
	}
	json_end(j);
}

void gpu_report_print_json(FILE *out, const struct gpu_report *r, const struct model *m,
			   const char *path, size_t limit)
{
	struct json j;

	json_begin_document(&j, out, 1);
	json_string(&j, "path", path);
	json_table(&j, "kernels", &r->kernels, m, limit, true, false);
	json_table(&j, "copies", &r->copies, m, limit, false, true);
	json_table(&j, "api", &r->api, m, limit, false, false);
	json_table(&j, "waits", &r->waits, m, limit, false, false);
	json_regions(&j, r, m, limit);
	json_end(&j);
}
