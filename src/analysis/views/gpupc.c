/* SPDX-License-Identifier: MIT */
/*
 * GPU PC samples: each bucket joined to the launch of its kernel, the CPU
 * sample (hence the stack) that launched it and the source line of its
 * instruction; then report --gpu-pc, the kernels' hottest lines or SASS
 * offsets with their stall reasons. Each cubin is parsed once and each
 * distinct instruction looked up once, so the work grows with the buckets
 * plus the distinct instructions, not with the samples they count.
 */
#include "analysis/passes/passes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "contract/attrs.h"
#include "contract/meta.h"
#include "symbols/cubin.h"
#include "util/json.h"
#include "util/text.h"
#include "util/xalloc.h"

/* The device's names for stall reasons: CUPTI's, then Nsight Compute's metrics'. */
static const char *const stall_prefixes[] = {
	"smsp__pcsamp_warps_issue_stalled_", "smsp__pcsamp_warp_stall_",
};
#define NOT_ISSUED_SUFFIX "_not_issued"
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

const char *pc_stall_short(const char *name)
{
	for (size_t i = 0; i < sizeof(stall_prefixes) / sizeof(stall_prefixes[0]); i++) {
		size_t len = strlen(stall_prefixes[i]);

		if (!strncmp(name, stall_prefixes[i], len) && name[len])
			return name + len;
	}
	return name;
}

/* The length of a stall reason's name without NOT_ISSUED_SUFFIX. */
static size_t reason_len(const char *short_name)
{
	size_t len = strlen(short_name), slen = strlen(NOT_ISSUED_SUFFIX);

	if (len > slen && !strcmp(short_name + len - slen, NOT_ISSUED_SUFFIX))
		return len - slen;
	return len;
}

bool pc_stall_not_issued(const char *name)
{
	return reason_len(name) != strlen(name);
}

const char *pc_stall_explain(const char *short_name)
{
	for (size_t i = 0; i < sizeof(stall_reasons) / sizeof(stall_reasons[0]); i++)
		if (!strcmp(stall_reasons[i].name, short_name))
			return stall_reasons[i].what;
	return NULL;
}

/* Whether stall (a string id) is a "_not_issued" variant; known: 0 not yet, 1 no, 2 yes. */
static bool not_issued_of(const struct model *m, uint8_t *known, uint32_t stall)
{
	uint32_t id = stall <= m->t.strings.len ? stall : 0;

	if (!known[id]) {
		const char *name = model_str(m, id);

		known[id] = name && pc_stall_not_issued(name) ? 2 : 1;
	}
	return known[id] == 2;
}

void pc_lines_init(struct pc_lines *l, const struct model *m)
{
	memset(l, 0, sizeof(*l));
	l->m = m;
	l->text_id = xcalloc(m->t.strings.len + 1, sizeof(*l->text_id));
	l->cubins = xcalloc(m->t.cubins.len + 1, sizeof(*l->cubins));
	l->cubin_outcome = xcalloc(m->t.cubins.len + 1, sizeof(*l->cubin_outcome));
	/* What the tables left of the read limit. */
	l->cubin_room = !m->budget.limit ? UINT64_MAX
		      : m->budget.limit > m->budget.used ? m->budget.limit - m->budget.used : 0;
}

void pc_lines_free(struct pc_lines *l)
{
	for (size_t id = 1; l->cubins && id <= l->m->t.cubins.len; id++)
		if (l->cubins[id])
			cubin_close(l->cubins[id]);
	free(l->cubins);
	free(l->cubin_outcome);
	free(l->text_id);
	VEC_FREE(&l->sites);
	strtab_free(&l->files);
	u64map_free(&l->functions);
	u64map_free(&l->pcs);
	u64map_free(&l->ids);
	memset(l, 0, sizeof(*l));
}

/* One id per function text: processes that interned a name apart share it. */
static uint32_t function_text_id(struct pc_lines *l, uint32_t function)
{
	const char *text;

	if (function > l->m->t.strings.len || !(text = model_str(l->m, function)))
		return 0;
	if (!l->text_id[function])
		l->text_id[function] = model_string_id(l->m, text);
	return l->text_id[function];
}

/* The parsed cubin of an id, or NULL with why in *outcome. */
static struct cubin *cubin_of(struct pc_lines *l, uint32_t id, enum pc_line_outcome *outcome)
{
	const struct tr_cubin *row;
	int err;

	if (!id || id > l->m->t.cubins.len) {
		*outcome = PC_LINE_NO_IMAGE;
		return NULL;
	}
	if (!l->cubin_outcome[id]) {
		row = &l->m->t.cubins.v[id - 1];
		err = cubin_open(&l->cubins[id], row->image.data, row->image.len, &l->cubin_room);
		if (err)
			l->cubin_outcome[id] = (err == -EFBIG ? PC_LINE_OVER_LIMIT
							       : PC_LINE_BAD_IMAGE) + 1;
		else if (!cubin_has_lines(l->cubins[id]))
			l->cubin_outcome[id] = PC_LINE_NO_LINEINFO + 1;
		else
			l->cubin_outcome[id] = PC_LINE_KNOWN + 1;
	}
	*outcome = (enum pc_line_outcome)(l->cubin_outcome[id] - 1);
	return *outcome == PC_LINE_KNOWN ? l->cubins[id] : NULL;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static void look_up(struct pc_lines *l, struct pc_site *s)
{
	enum pc_line_outcome outcome;
	const struct cubin *c = cubin_of(l, s->cubin, &outcome);
	const char *function = model_str(l->m, s->function);
	struct cubin_line at;

	s->outcome = (uint8_t)outcome;
	if (!c)
		return;
	if (!function || cubin_lookup(c, function, s->pc, &at) || !at.file || !at.line) {
		s->outcome = PC_LINE_UNKNOWN;
		return;
	}
	s->file = strtab_intern(&l->files, basename_of(at.file));
	s->line = at.line;
}

uint32_t pc_lines_site(struct pc_lines *l, const struct tr_pc_sample *b)
{
	uint32_t function = function_text_id(l, b->function);
	uint32_t fid = u64map_pair_id(&l->functions, b->cubin, function);
	uint32_t pc_id = u64map_pair_id(&l->pcs, (uint32_t)(b->pc >> 32), (uint32_t)b->pc);
	uint64_t key = (uint64_t)fid << 32 | pc_id, at;
	struct pc_site *s;

	if (u64map_get(&l->ids, key, &at))
		return (uint32_t)at - 1;
	s = VEC_PUSH(&l->sites);
	s->cubin = b->cubin;
	s->function = function;
	s->pc = b->pc;
	look_up(l, s);
	u64map_put(&l->ids, key, l->sites.len);
	return (uint32_t)(l->sites.len - 1);
}

void pc_lines_count(const struct model *m, uint64_t samples[PC_LINE_OUTCOMES])
{
	uint8_t *not_issued = xcalloc(m->t.strings.len + 1, sizeof(*not_issued));
	struct pc_lines l;

	memset(samples, 0, PC_LINE_OUTCOMES * sizeof(*samples));
	pc_lines_init(&l, m);
	for (size_t i = 0; i < m->t.pc_samples.len; i++) {
		const struct tr_pc_sample *b = &m->t.pc_samples.v[i];
		uint32_t site;

		if (not_issued_of(m, not_issued, b->stall))
			continue;
		site = pc_lines_site(&l, b);	/* before reading sites, which it may move */
		samples[l.sites.v[site].outcome] += b->count;
	}
	pc_lines_free(&l);
	free(not_issued);
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

/*
 * The kernel spans of the "cuda" lanes by launch, (pid, correlation), and
 * by kernel: a graph's kernels share their launch's correlation, and a
 * launch of many is looked up as fast as a launch of one.
 */
struct launches {
	struct u64map ids;	/* pid << 32 | correlation -> launch id, from 1 */
	struct u64map spans;	/* launch id << 32 | kernel's names id -> the launch's first
				   span of that kernel, index + 1; names id 0: its first span */
};

/* Adds key -> span unless key has a span already. */
static void first_span(struct u64map *spans, uint64_t key, size_t span)
{
	uint64_t known;

	if (!u64map_get(spans, key, &known))
		u64map_put(spans, key, span + 1);
}

static void launches_build(struct launches *ls, struct funcs *f)
{
	const struct model *m = f->m;
	uint32_t key = model_string_id(m, CUDA_ATTR_CORRELATION);

	memset(ls, 0, sizeof(*ls));
	if (!key)
		return;
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		uint64_t correlation, launch, id;

		if (model_lane_class(m, sp->lane) != MODEL_LANE_CUDA_STREAM ||
		    !model_span_attr(m, (uint32_t)i + 1, key, &correlation) ||
		    !correlation || correlation > UINT32_MAX)
			continue;
		launch = (uint64_t)m->t.lanes.v[sp->lane - 1].pid << 32 | correlation;
		if (!u64map_get(&ls->ids, launch, &id)) {
			id = ls->ids.len + 1;
			u64map_put(&ls->ids, launch, id);
		}
		first_span(&ls->spans, id << 32, i);
		first_span(&ls->spans, id << 32 | funcs_span_frame(f, sp->name), i);
	}
}

static void launches_free(struct launches *ls)
{
	u64map_free(&ls->ids);
	u64map_free(&ls->spans);
}

/*
 * The span index + 1 of a bucket's launch: of the launch's spans, the
 * first of its kernel's name (names id), else the first; 0 for none.
 */
static uint32_t launch_span(const struct launches *ls, const struct tr_pc_sample *b,
			    uint32_t kernel_name)
{
	uint64_t id, span;

	if (!b->correlation || !u64map_get(&ls->ids, (uint64_t)b->pid << 32 | b->correlation, &id))
		return 0;
	if (!u64map_get(&ls->spans, id << 32 | kernel_name, &span))
		u64map_get(&ls->spans, id << 32, &span);
	return (uint32_t)span;
}

/* A bucket joined to no launch has no thread or lane to select it by: --pid and --rank only. */
static bool unjoined_selected(const struct sample_filter *flt, const struct model *m,
			      uint32_t pid)
{
	if (flt && (flt->tids.len || flt->comms.len || flt->dsos.len))
		return false;
	return filter_process(flt, m, pid);
}

static uint32_t kernel_of(struct pc_view *v, struct u64map *ids, uint32_t name)
{
	uint64_t at;

	if (u64map_get(ids, name, &at))
		return (uint32_t)at;
	VEC_PUSH(&v->kernels)->name = name;
	u64map_put(ids, name, v->kernels.len - 1);
	return (uint32_t)(v->kernels.len - 1);
}

/* The names id of a stall reason's short name less "_not_issued", cached by string id. */
static uint32_t stall_of(struct funcs *f, uint32_t *cache, uint32_t stall)
{
	uint32_t id = stall <= f->m->t.strings.len ? stall : 0;

	if (!cache[id]) {
		const char *name = model_str(f->m, id);
		const char *short_name = name && *name ? pc_stall_short(name) : "-";
		char *reason = xstrndup(short_name, reason_len(short_name));

		cache[id] = strtab_intern(&f->names, reason);
		free(reason);
	}
	return cache[id];
}

/* The place of an entry's site, made when the site is new. */
static void add_place(struct pc_view *v, struct funcs *f, const struct pc_entry *e)
{
	const struct pc_site *s = &v->lines.sites.v[e->site];
	const char *name = funcs_name(f, v->kernels.v[e->kernel].name);
	size_t size = strlen(name) + 32;
	char *label;

	if (e->site < v->places.len)
		return;
	label = xmalloc(size);
	if (s->outcome == PC_LINE_KNOWN)
		snprintf(label, size, "%s:%" PRIu32, strtab_get(&v->lines.files, s->file), s->line);
	else
		snprintf(label, size, "%s+0x%" PRIx64, name, s->pc);
	*VEC_PUSH(&v->places) = strtab_intern(&f->names, label);
	free(label);
}

void pc_view_build(struct pc_view *v, struct funcs *f, const struct sample_filter *flt,
		   const struct origin_links *links)
{
	const struct model *m = f->m;
	bool *lane_selected;
	uint32_t *stall_name = xcalloc(m->t.strings.len + 1, sizeof(*stall_name));
	uint8_t *not_issued = xcalloc(m->t.strings.len + 1, sizeof(*not_issued));
	struct u64map kernel_ids = {0};	/* names id -> kernel index */
	struct launches ls;

	memset(v, 0, sizeof(*v));
	pc_lines_init(&v->lines, m);
	launches_build(&ls, f);
	lane_selected = filter_lanes(f, flt);
	for (size_t i = 0; i < m->t.pc_samples.len; i++) {
		const struct tr_pc_sample *b = &m->t.pc_samples.v[i];
		uint32_t name = funcs_span_frame(f, b->function);
		uint32_t span = launch_span(&ls, b, name);
		struct pc_entry *e;

		if (span ? !filter_span(flt, f, lane_selected, &m->t.spans.v[span - 1])
			 : !unjoined_selected(flt, m, b->pid))
			continue;
		e = VEC_PUSH(&v->entries);
		e->kernel = kernel_of(v, &kernel_ids, name);
		e->site = pc_lines_site(&v->lines, b);
		e->stall = stall_of(f, stall_name, b->stall);
		e->not_issued = not_issued_of(m, not_issued, b->stall);
		e->span = span;
		e->origin = span && links ? links->sample[span - 1] : 0;
		e->pid = b->pid;
		e->count = b->count;
		add_place(v, f, e);
		if (e->not_issued)
			continue;
		v->kernels.v[e->kernel].samples += b->count;
		v->samples += b->count;
		v->joined += span ? b->count : 0;
		v->by_outcome[v->lines.sites.v[e->site].outcome] += b->count;
	}
	launches_free(&ls);
	u64map_free(&kernel_ids);
	free(not_issued);
	free(stall_name);
	free(lane_selected);
}

void pc_view_free(struct pc_view *v)
{
	pc_lines_free(&v->lines);
	VEC_FREE(&v->kernels);
	VEC_FREE(&v->entries);
	VEC_FREE(&v->places);
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
