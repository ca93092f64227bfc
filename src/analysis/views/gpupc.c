/* SPDX-License-Identifier: MIT */
/*
 * report --gpu-pc: the kernels' hottest lines or SASS offsets with their
 * stall reasons, from the PC samples joined (passes/pcsamples.c).
 */
#include "analysis/views/gpupc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "contract/meta.h"
#include "util/json.h"
#include "util/text.h"
#include "util/xalloc.h"

#define STALLS_NAMED 3		/* per row; the rest are summed */
#define PLACE_WIDTH_MAX 48	/* a longer place pushes its row's stall reasons right */

static const struct {
	const char *name;
	const char *what;
} stall_reasons[] = {
	{ "long_scoreboard", "waiting for a global or local memory (L1TEX) result" },
	{ "short_scoreboard", "waiting for a shared memory or special math unit (MUFU) result" },
	{ "barrier", "waiting at __syncthreads() for the other warps of its block" },
	{ "membar", "waiting on a memory fence" },
	{ "math_pipe_throttle", "the math pipe it needs is busy" },
	{ "mio_throttle", "the queue to shared memory, special math and branch units is full" },
	{ "lg_throttle", "the queue for local and global memory instructions is full" },
	{ "tex_throttle", "the texture unit's queue is full" },
	{ "branch_resolving", "waiting for a branch target to be computed" },
	{ "dispatch_stall", "the dispatcher could not issue the instruction picked" },
	{ "drain", "waiting for its memory stores to drain before the warp exits" },
	{ "imc_miss", "waiting on a constant cache miss" },
	{ "no_instructions", "no instruction fetched: an instruction cache miss, or after a jump" },
	{ "not_selected", "ready, but the scheduler issued another warp's instruction" },
	{ "selected", "issuing an instruction: not a stall" },
	{ "sleeping", "all its threads asleep (__nanosleep) or yielding" },
	{ "wait", "waiting out the fixed latency of a dependency" },
	{ "misc", "another reason" },
	{ "warpgroup_arrive", "waiting at a warpgroup arrive or wait (Hopper matrix multiply)" },
};

const char *pc_stall_explain(const char *short_name)
{
	for (size_t i = 0; i < sizeof(stall_reasons) / sizeof(stall_reasons[0]); i++)
		if (!strcmp(stall_reasons[i].name, short_name))
			return stall_reasons[i].what;
	return NULL;
}

static double percent(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

const char *pc_lines_describe(char *buf, size_t size, const uint64_t samples[PC_LINE_OUTCOMES])
{
	static const char *const without[PC_LINE_OUTCOMES] = {
		[PC_LINE_NO_IMAGE] = "whose cubin was not kept",
		[PC_LINE_BAD_IMAGE] = "whose cubin gtrace cannot read",
		[PC_LINE_OVER_LIMIT] = "whose cubin would pass the read limit",
		[PC_LINE_NO_LINEINFO] = "whose cubin has no line table (nvcc -lineinfo)",
		[PC_LINE_UNKNOWN] = "at an offset without a line",
	};
	uint64_t all = 0;
	size_t len;

	for (int o = 0; o < PC_LINE_OUTCOMES; o++)
		all += samples[o];
	snprintf(buf, size, "%" PRIu64 " of %" PRIu64 " samples (%.2f%%) at a source line",
		 samples[PC_LINE_KNOWN], all, percent(samples[PC_LINE_KNOWN], all));
	for (int o = PC_LINE_KNOWN + 1, first = 1; o < PC_LINE_OUTCOMES; o++) {
		if (!samples[o] || (len = strlen(buf)) >= size)
			continue;
		snprintf(buf + len, size - len, "%s%" PRIu64 " %s", first ? "; " : ", ",
			 samples[o], without[o]);
		first = 0;
	}
	return buf;
}

/* The samples of one stall reason in one row, while the report is built. */
struct cell {
	uint32_t row;
	uint32_t stall;
	uint64_t samples, not_issued;
};

struct report_order {
	const struct pc_view *v;
	const struct funcs *f;
	bool sass;
};

static int cmp_names(const struct funcs *f, uint32_t a, uint32_t b)
{
	return a == b ? 0 : strcmp(funcs_name(f, a), funcs_name(f, b));
}

/* Each row's stall reasons together, most samples first. */
static int cmp_cells(const void *pa, const void *pb, void *pctx)
{
	const struct cell *a = pa, *b = pb;
	const struct report_order *o = pctx;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return cmp_names(o->f, a->stall, b->stall);
}

/* Kernels by samples, each kernel's rows by samples, then by place or pc. */
static int cmp_rows(const void *pa, const void *pb, void *pctx)
{
	const struct pc_row *a = pa, *b = pb;
	const struct report_order *o = pctx;
	const struct pc_kernel *ka = &o->v->kernels.v[a->kernel], *kb = &o->v->kernels.v[b->kernel];
	const struct pc_site *sa = &o->v->lines.sites.v[a->site];
	const struct pc_site *sb = &o->v->lines.sites.v[b->site];
	int c;

	if (ka->samples != kb->samples)
		return ka->samples > kb->samples ? -1 : 1;
	if ((c = cmp_names(o->f, ka->name, kb->name)))
		return c;
	if (a->kernel != b->kernel)
		return a->kernel < b->kernel ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	/* Lines by file and number, before the places without one, those by pc. */
	if (!o->sass && (sa->outcome == PC_LINE_KNOWN) != (sb->outcome == PC_LINE_KNOWN))
		return sa->outcome == PC_LINE_KNOWN ? -1 : 1;
	if (!o->sass && sa->outcome == PC_LINE_KNOWN) {
		if ((c = strcmp(strtab_get(&o->v->lines.files, sa->file),
				strtab_get(&o->v->lines.files, sb->file))))
			return c;
		return sa->line < sb->line ? -1 : sa->line > sb->line;
	}
	if (sa->pc != sb->pc)
		return sa->pc < sb->pc ? -1 : 1;
	return sa->cubin < sb->cubin ? -1 : sa->cubin > sb->cubin;
}

/* Sorts the cells and hands each row its run of them. */
static void add_stalls(struct pc_report *r, struct cell *cells, size_t n,
		       struct report_order *o)
{
	if (n)
		qsort_r(cells, n, sizeof(*cells), cmp_cells, o);
	for (size_t i = 0; i < n; i++) {
		struct pc_row *row = &r->rows.v[cells[i].row];
		struct pc_stall_count *sc = VEC_PUSH(&r->stalls);

		if (!row->stalls)
			row->stall_first = r->stalls.len - 1;
		row->stalls++;
		sc->stall = cells[i].stall;
		sc->samples = cells[i].samples;
		sc->not_issued = cells[i].not_issued;
	}
}

void pc_report_build(struct pc_report *r, const struct pc_view *v, const struct funcs *f,
		     bool sass)
{
	struct report_order o = { .v = v, .f = f, .sass = sass };
	struct u64map row_ids = {0}, cell_ids = {0};
	VEC(struct cell) cells = {0};

	memset(r, 0, sizeof(*r));
	r->sass = sass;
	r->samples = v->samples;
	for (size_t i = 0; i < v->entries.len; i++) {
		const struct pc_entry *e = &v->entries.v[i];
		uint32_t row = u64map_pair_id(&row_ids, e->kernel,
					      sass ? e->site : v->places.v[e->site]);
		uint32_t cell;

		if (row > r->rows.len) {
			struct pc_row *nr = VEC_PUSH(&r->rows);

			nr->kernel = e->kernel;
			nr->site = e->site;
		}
		cell = u64map_pair_id(&cell_ids, row - 1, e->stall);
		if (cell > cells.len) {
			struct cell *c = VEC_PUSH(&cells);

			c->row = row - 1;
			c->stall = e->stall;
		}
		if (e->not_issued) {
			cells.v[cell - 1].not_issued += e->count;
		} else {
			cells.v[cell - 1].samples += e->count;
			r->rows.v[row - 1].samples += e->count;
		}
	}
	add_stalls(r, cells.v, cells.len, &o);
	if (r->rows.len)
		qsort_r(r->rows.v, r->rows.len, sizeof(*r->rows.v), cmp_rows, &o);
	for (size_t i = 0; i < r->rows.len; i++) {
		struct pc_kernel_row *k = r->kernels.len ? &r->kernels.v[r->kernels.len - 1] : NULL;

		if (!k || k->kernel != r->rows.v[i].kernel) {
			k = VEC_PUSH(&r->kernels);
			k->kernel = r->rows.v[i].kernel;
			k->samples = v->kernels.v[k->kernel].samples;
			k->row_first = i;
		}
		k->rows++;
	}
	VEC_FREE(&cells);
	u64map_free(&row_ids);
	u64map_free(&cell_ids);
}

void pc_report_free(struct pc_report *r)
{
	VEC_FREE(&r->kernels);
	VEC_FREE(&r->rows);
	VEC_FREE(&r->stalls);
}

static size_t shown(size_t n, size_t limit)
{
	return limit && limit < n ? limit : n;
}

/* A row's place: its line, or with --sass its offset and, when known, line. */
static const char *row_label(char *buf, size_t size, const struct pc_report *r,
			     const struct pc_view *v, const struct funcs *f,
			     const struct pc_row *row)
{
	const struct pc_site *s = &v->lines.sites.v[row->site];
	const char *place = funcs_name(f, v->places.v[row->site]);

	if (!r->sass)
		return place;
	if (s->outcome == PC_LINE_KNOWN)
		snprintf(buf, size, "0x%04" PRIx64 "  %s", s->pc, place);
	else
		snprintf(buf, size, "0x%04" PRIx64, s->pc);
	return buf;
}

/*
 * "long_scoreboard 61.2% (not issued 57.4%), selected 20.0%, wait 10.0%,
 * 2 others 8.8%"
 */
static void stall_text(char *buf, size_t size, const struct pc_report *r,
		       const struct funcs *f, const struct pc_row *row)
{
	uint64_t rest = row->samples;
	size_t len = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < row->stalls && k < STALLS_NAMED && len < size; k++) {
		const struct pc_stall_count *sc = &r->stalls.v[row->stall_first + k];

		len += (size_t)snprintf(buf + len, size - len, "%s%s %.1f%%", k ? ", " : "",
					funcs_name(f, sc->stall),
					percent(sc->samples, row->samples));
		if (sc->not_issued && len < size)
			len += (size_t)snprintf(buf + len, size - len, " (not issued %.1f%%)",
						percent(sc->not_issued, row->samples));
		rest -= sc->samples < rest ? sc->samples : rest;
	}
	if (row->stalls > STALLS_NAMED && len < size)
		snprintf(buf + len, size - len, ", %zu other%s %.1f%%", row->stalls - STALLS_NAMED,
			 row->stalls - STALLS_NAMED == 1 ? "" : "s", percent(rest, row->samples));
}

/* The stall reasons the rows shown name, once each in order. */
struct shown_reasons {
	struct u64map seen;	/* names id -> 1 */
	VEC(uint32_t) names;	/* names ids */
	bool not_issued;	/* some have a part not issued */
};

static void note_reasons(struct shown_reasons *sr, const struct pc_report *r,
			 const struct pc_row *row)
{
	for (size_t k = 0; k < row->stalls && k < STALLS_NAMED; k++) {
		const struct pc_stall_count *sc = &r->stalls.v[row->stall_first + k];
		uint64_t seen;

		sr->not_issued |= sc->not_issued != 0;
		if (u64map_get(&sr->seen, sc->stall, &seen))
			continue;
		u64map_put(&sr->seen, sc->stall, 1);
		*VEC_PUSH(&sr->names) = sc->stall;
	}
}

static void put_header(FILE *out, const struct pc_report *r, const struct pc_view *v,
		       const char *path)
{
	const char *mode = model_meta(v->lines.m, META_CUDA_PC_MODE);
	const char *period = model_meta(v->lines.m, META_CUDA_PC_PERIOD);
	char lines[256];

	fprintf(out, "# File: %s\n", text_escape(path));
	fprintf(out, "# GPU PC samples: %" PRIu64 " in %zu kernel%s", r->samples,
		r->kernels.len, r->kernels.len == 1 ? "" : "s");
	if (mode)
		fprintf(out, ", %s", text_escape(mode));
	if (period)
		fprintf(out, ", a sample every 2^%s cycles", text_escape(period));
	fprintf(out, "\n# %s\n", pc_lines_describe(lines, sizeof(lines), v->by_outcome));
	fprintf(out, "# Share: a kernel's of all samples; a %s's of its kernel's\n#\n",
		r->sass ? "SASS offset" : "line");
}

static void put_explanations(FILE *out, const struct funcs *f, const struct shown_reasons *sr)
{
	const char *not_issued = "(not issued)";
	int width = sr->not_issued ? (int)strlen(not_issued) : 0;

	for (size_t i = 0; i < sr->names.len; i++)
		if ((int)strlen(text_escape(funcs_name(f, sr->names.v[i]))) > width)
			width = (int)strlen(text_escape(funcs_name(f, sr->names.v[i])));
	if (sr->names.len)
		fprintf(out, "#\n# Stall reasons:\n");
	for (size_t i = 0; i < sr->names.len; i++) {
		const char *name = funcs_name(f, sr->names.v[i]);
		const char *means = pc_stall_explain(name);

		fprintf(out, "#   %-*s  %s\n", width, text_escape(name),
			means ? means : "(not known to gtrace)");
	}
	if (sr->not_issued)
		fprintf(out, "#   %-*s  the part of a reason's samples taken on a cycle when no "
			"instruction was issued\n", width, not_issued);
}

void pc_report_print(FILE *out, const struct pc_report *r, const struct pc_view *v,
		     const struct funcs *f, const char *path, size_t limit)
{
	const char *where = r->sass ? "Kernel, SASS offset and line" : "Kernel, source line";
	int width = (int)strlen(where);
	struct shown_reasons reasons = {0};
	char label[512], stalls[512];

	put_header(out, r, v, path);
	for (size_t k = 0; k < shown(r->kernels.len, limit); k++) {
		const struct pc_kernel_row *kr = &r->kernels.v[k];

		for (size_t i = 0; i < shown(kr->rows, limit); i++) {
			const struct pc_row *row = &r->rows.v[kr->row_first + i];
			int len = 2 + (int)strlen(text_escape(row_label(label, sizeof(label), r, v,
									 f, row)));

			if (len > width && len <= PLACE_WIDTH_MAX)
				width = len;
		}
	}
	fprintf(out, "#%9s %8s  %-*s  %s\n#\n", "Samples", "Share", width, where, "Stall reasons");
	for (size_t k = 0; k < shown(r->kernels.len, limit); k++) {
		const struct pc_kernel_row *kr = &r->kernels.v[k];

		fprintf(out, "%10" PRIu64 " %7.2f%%  %s\n", kr->samples,
			percent(kr->samples, r->samples),
			text_escape(funcs_name(f, v->kernels.v[kr->kernel].name)));
		for (size_t i = 0; i < shown(kr->rows, limit); i++) {
			const struct pc_row *row = &r->rows.v[kr->row_first + i];

			stall_text(stalls, sizeof(stalls), r, f, row);
			fprintf(out, "%10" PRIu64 " %7.2f%%    %-*s  %s\n", row->samples,
				percent(row->samples, kr->samples), width - 2,
				text_escape(row_label(label, sizeof(label), r, v, f, row)),
				text_escape(stalls));
			note_reasons(&reasons, r, row);
		}
	}
	put_explanations(out, f, &reasons);
	u64map_free(&reasons.seen);
	VEC_FREE(&reasons.names);
}

void pc_report_print_json(FILE *out, const struct pc_report *r, const struct pc_view *v,
			  const struct funcs *f, const char *path, size_t limit)
{
	struct json j;

	json_begin_document(&j, out, 1);
	json_string(&j, "path", path);
	json_uint(&j, "samples", r->samples);
	json_bool(&j, "sass", r->sass);
	json_begin_array(&j, "kernels", JSON_LINES);
	for (size_t k = 0; k < shown(r->kernels.len, limit); k++) {
		const struct pc_kernel_row *kr = &r->kernels.v[k];

		json_begin_object(&j, NULL, JSON_INLINE);
		json_string(&j, "name", funcs_name(f, v->kernels.v[kr->kernel].name));
		json_uint(&j, "samples", kr->samples);
		json_begin_array(&j, "rows", JSON_LINES);
		for (size_t i = 0; i < shown(kr->rows, limit); i++) {
			const struct pc_row *row = &r->rows.v[kr->row_first + i];
			const struct pc_site *site = &v->lines.sites.v[row->site];

			json_begin_object(&j, NULL, JSON_INLINE);
			json_string(&j, "place", funcs_name(f, v->places.v[row->site]));
			if (r->sass)
				json_uint(&j, "pc", site->pc);
			json_uint(&j, "samples", row->samples);
			json_begin_array(&j, "stalls", JSON_INLINE);
			for (size_t s = 0; s < row->stalls; s++) {
				const struct pc_stall_count *sc = &r->stalls.v[row->stall_first + s];

				json_begin_object(&j, NULL, JSON_INLINE);
				json_string(&j, "reason", funcs_name(f, sc->stall));
				json_uint(&j, "samples", sc->samples);
				json_uint(&j, "not_issued", sc->not_issued);
				json_end(&j);
			}
			json_end(&j);
			json_end(&j);
		}
		json_end(&j);
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
}
