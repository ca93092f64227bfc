/* SPDX-License-Identifier: MIT */
/*
 * GPU PC samples: each bucket joined to the launch of its kernel, the CPU
 * sample (hence the stack) that launched it and the source line of its
 * instruction, for report --gpu-pc (views/gpupc.c), flame --gpu-pc
 * (calltree.c) and diagnose. Each cubin is parsed once and each distinct
 * instruction looked up once, so the work grows with the buckets plus the
 * distinct instructions, not with the samples they count.
 */
#include "analysis/passes/passes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "contract/attrs.h"
#include "symbols/cubin.h"
#include "util/text.h"
#include "util/xalloc.h"

/* The device's names for stall reasons: CUPTI's, then Nsight Compute's metrics'. */
static const char *const stall_prefixes[] = {
	"smsp__pcsamp_warps_issue_stalled_", "smsp__pcsamp_warp_stall_",
};
#define NOT_ISSUED_SUFFIX "_not_issued"

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

static void pc_lines_init(struct pc_lines *l, const struct model *m)
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

static void pc_lines_free(struct pc_lines *l)
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
	s->file = strtab_intern(&l->files, path_basename(at.file));
	s->line = at.line;
}

/* The index in l->sites of a bucket's instruction, looked up on first sight. */
static uint32_t pc_lines_site(struct pc_lines *l, const struct tr_pc_sample *b)
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
