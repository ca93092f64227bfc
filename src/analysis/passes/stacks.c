/* SPDX-License-Identifier: MIT */
/* Functions of locations, sample filters, and counting samples by stack. */
#include "analysis/passes/passes.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/saturate.h"
#include "util/text.h"
#include "util/xalloc.h"

#define UNKNOWN_NAME "[unknown]"

static uint32_t func_id(struct funcs *f, uint32_t name, uint32_t dso)
{
	uint64_t key = (uint64_t)name << 32 | dso, id;
	struct func *fn;

	if (u64map_get(&f->index, key, &id))
		return (uint32_t)id;
	id = f->v.len;
	fn = VEC_PUSH(&f->v);
	fn->name = name;
	fn->dso = dso;
	u64map_put(&f->index, key, id);
	return (uint32_t)id;
}

/* The func of func id base at source line line (a names id; 0 is base itself). */
static uint32_t func_at_line(struct funcs *f, uint32_t base, uint32_t line)
{
	uint64_t key = (uint64_t)base << 32 | line, id;
	struct func *fn;

	if (!line)
		return base;
	if (u64map_get(&f->line_index, key, &id))
		return (uint32_t)id;
	id = f->v.len;
	fn = VEC_PUSH(&f->v);
	*fn = f->v.v[base];
	fn->line = line;
	u64map_put(&f->line_index, key, id);
	return (uint32_t)id;
}

/* Names ids of each dso's basename, by dso id; 0 for an unknown dso. */
static uint32_t *dso_names(struct funcs *f)
{
	const struct model *m = f->m;
	uint32_t *names = xcalloc(m->t.dsos.len + 1, sizeof(*names));

	for (size_t i = 0; i < m->t.dsos.len; i++) {
		const char *path = model_str(m, m->t.dsos.v[i].path);

		if (path && *path)
			names[i + 1] = strtab_intern(&f->names, path_basename(path));
	}
	return names;
}

/*
 * Where a Python location is: "file.py:line" by its file's basename, or
 * "file.py" when the line is unknown or not wanted.
 */
static const char *python_place(const struct model *m, uint32_t loc, bool with_line,
				char *buf, size_t size)
{
	const struct tr_loc *l = &m->t.locs.v[loc - 1];
	const char *path = model_str(m, m->t.dsos.v[l->dso - 1].path);
	const char *file = path && *path ? path_basename(path) : UNKNOWN_NAME;
	uint32_t n;
	const struct tr_symbol *sym = model_loc_symbols(m, loc, &n);

	if (with_line && n && sym->line)
		snprintf(buf, size, "%s:%" PRIu32, file, sym->line);
	else
		snprintf(buf, size, "%s", file);
	return buf;
}

/* A Python frame's func: "qualname (file.py:line)", the line only with FUNCS_PYTHON_LINES. */
static uint32_t python_func(struct funcs *f, uint32_t loc, const struct tr_symbol *sym,
			    uint32_t dso, unsigned flags)
{
	const char *name = model_str(f->m, sym->func);
	char place[256], label[512];

	python_place(f->m, loc, flags & FUNCS_PYTHON_LINES, place, sizeof(place));
	snprintf(label, sizeof(label), "%s (%s)", name ? name : UNKNOWN_NAME, place);
	return func_id(f, strtab_intern(&f->names, label), dso);
}

/* The names id of a symbol row's "file:line", by the file's basename; 0 without a line. */
static uint32_t srcline_id(struct funcs *f, const struct tr_symbol *sym)
{
	const char *path = sym->line ? model_str(f->m, sym->file) : NULL;
	char place[512];

	if (!path || !*path)
		return 0;
	snprintf(place, sizeof(place), "%s:%" PRIu32, path_basename(path), sym->line);
	return strtab_intern(&f->names, place);
}

/* Appends the funcs of one location to f->frames, innermost first. */
static void add_loc_frames(struct funcs *f, uint32_t loc, const uint32_t *dso_name,
			   unsigned flags)
{
	const struct model *m = f->m;
	const struct tr_loc *l = &m->t.locs.v[loc - 1];
	uint32_t dso = l->dso <= m->t.dsos.len ? dso_name[l->dso] : 0;
	uint32_t unknown_dso = f->v.v[f->unknown].dso;	/* interned once by funcs_init */
	const struct tr_symbol *syms;
	uint32_t n;

	syms = model_loc_symbols(m, loc, &n);
	if (!n) {
		char name[256];

		if (dso)
			snprintf(name, sizeof(name), "[%s]+0x%" PRIx64,
				 funcs_name(f, dso), l->addr);
		else
			snprintf(name, sizeof(name), "0x%" PRIx64, l->addr);
		*VEC_PUSH(&f->frames) = func_id(f, strtab_intern(&f->names, name),
						dso ? dso : unknown_dso);
		return;
	}
	if (model_loc_is_python(m, loc)) {
		uint32_t fn = python_func(f, loc, syms, dso ? dso : unknown_dso, flags);

		if (flags & FUNCS_SRCLINES)
			fn = func_at_line(f, fn, funcs_python_line(f, loc));
		*VEC_PUSH(&f->frames) = fn;
		return;
	}
	/* The last row is the real function the others are inlined into. */
	for (uint32_t i = flags & FUNCS_INLINE ? 0 : n - 1; i < n; i++) {
		const char *name = model_str(m, syms[i].func);
		uint32_t fn = func_id(f, strtab_intern(&f->names, name ? name : UNKNOWN_NAME),
				      dso ? dso : unknown_dso);

		/* Without inline frames, the line of the instruction: the innermost row's. */
		if (flags & FUNCS_SRCLINES)
			fn = func_at_line(f, fn,
					  srcline_id(f, &syms[flags & FUNCS_INLINE ? i : 0]));
		*VEC_PUSH(&f->frames) = fn;
	}
}

uint32_t stack_caller(const struct model *m, uint32_t node)
{
	return node && m->t.nodes.v[node - 1].parent < node ? m->t.nodes.v[node - 1].parent : 0;
}

/*
 * The DSOs, by name prefix, whose frames a span's origin stack never names
 * as where it was queued from: gtrace's own injected code (libgtrace-target,
 * the CUDA agent), CUPTI, the driver and the CUDA runtime, which queue work
 * on the program's behalf. Then system code, named only when the stack
 * has nothing else: the C library, the loader and the vDSO, where a sample
 * taken a little after the origin finds the caller busy in a callee.
 */
static const char *const not_the_caller[] = {
	"libgtrace", "libcupti", "libcuda.", "libnvidia-", "libcudart", NULL,
};
static const char *const system_code[] = {
	"libc.so", "libc-", "ld-linux", "[vdso]", "linux-vdso", NULL,
};

static bool dso_has_prefix(const char *dso, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(dso, *prefixes, strlen(*prefixes)))
			return true;
	return false;
}

/*
 * The first frame of node's stack, leaf outward, that passes: with
 * program_only, neither gtrace's nor CUDA's nor system code; without it,
 * only not gtrace's nor CUDA's.
 */
static bool first_frame_of(const struct funcs *f, uint32_t node, bool program_only,
			   uint32_t *found)
{
	for (; node; node = stack_caller(f->m, node)) {
		uint32_t n;
		const uint32_t *fn = funcs_of_node(f, node, &n);

		for (uint32_t i = 0; i < n; i++) {
			const char *dso = funcs_name(f, f->v.v[fn[i]].dso);

			if (dso_has_prefix(dso, not_the_caller) ||
			    (program_only && dso_has_prefix(dso, system_code)))
				continue;
			*found = fn[i];
			return true;
		}
	}
	return false;
}

uint32_t funcs_queued_from(const struct funcs *f, uint32_t node)
{
	uint32_t n, from;
	const uint32_t *leaf = funcs_of_node(f, node, &n);

	if (first_frame_of(f, node, true, &from) || first_frame_of(f, node, false, &from))
		return from;
	return leaf[0];
}

void funcs_init(struct funcs *f, const struct model *m, unsigned flags)
{
	size_t nlocs = m->t.locs.len;
	uint32_t unknown_name, *dso_name;

	memset(f, 0, sizeof(*f));
	f->m = m;
	unknown_name = strtab_intern(&f->names, UNKNOWN_NAME);
	f->unknown = func_id(f, unknown_name, unknown_name);
	dso_name = dso_names(f);
	f->loc_first = xcalloc(nlocs + 2, sizeof(*f->loc_first));
	for (uint32_t loc = 1; loc <= nlocs; loc++) {
		f->loc_first[loc] = (uint32_t)f->frames.len;
		add_loc_frames(f, loc, dso_name, flags);
	}
	f->loc_first[nlocs + 1] = (uint32_t)f->frames.len;
	free(dso_name);
	f->lane_frame = xcalloc(m->t.lanes.len + 1, sizeof(*f->lane_frame));
	f->span_frame = xcalloc(m->t.strings.len + 1, sizeof(*f->span_frame));
}

void funcs_free(struct funcs *f)
{
	strtab_free(&f->names);
	VEC_FREE(&f->v);
	u64map_free(&f->index);
	u64map_free(&f->line_index);
	free(f->loc_first);
	VEC_FREE(&f->frames);
	free(f->lane_frame);
	free(f->span_frame);
	demangler_free(&f->demangler);
}

const uint32_t *funcs_of_node(const struct funcs *f, uint32_t node, uint32_t *n)
{
	const struct model *m = f->m;
	uint32_t loc = node && node <= m->t.nodes.len ? m->t.nodes.v[node - 1].loc : 0;

	if (!loc || loc > m->t.locs.len) {
		*n = 1;
		return &f->unknown;
	}
	*n = f->loc_first[loc + 1] - f->loc_first[loc];
	return &f->frames.v[f->loc_first[loc]];
}

const char *funcs_name(const struct funcs *f, uint32_t name_id)
{
	const char *s = strtab_get(&f->names, name_id);

	return s ? s : UNKNOWN_NAME;
}

uint32_t funcs_thread_name(struct funcs *f, const struct model_thread *th)
{
	return funcs_thread_named(f, th, th->name);
}

uint32_t funcs_thread_named(struct funcs *f, const struct model_thread *th, uint32_t name_id)
{
	const char *name = model_str(f->m, name_id);
	char tid[16];

	if (name && *name)
		return strtab_intern(&f->names, name);
	snprintf(tid, sizeof(tid), ":%" PRIu32, th->tid);
	return strtab_intern(&f->names, tid);
}

uint32_t funcs_python_line(struct funcs *f, uint32_t loc)
{
	char place[256];

	if (!model_loc_is_python(f->m, loc))
		return 0;
	return strtab_intern(&f->names, python_place(f->m, loc, true, place, sizeof(place)));
}

uint32_t funcs_lane_frame(struct funcs *f, uint32_t lane)
{
	const struct model *m = f->m;
	uint32_t id = lane <= m->t.lanes.len ? lane : 0;

	if (!f->lane_frame[id]) {
		const char *name = id ? model_str(m, m->t.lanes.v[id - 1].name) : NULL;
		char label[256];

		snprintf(label, sizeof(label), LANE_FRAME_PREFIX "%s", name && *name ? name : "-");
		f->lane_frame[id] = strtab_intern(&f->names, label);
	}
	return f->lane_frame[id];
}

uint32_t funcs_span_frame(struct funcs *f, uint32_t name)
{
	uint32_t id = name <= f->m->t.strings.len ? name : 0;

	if (!f->span_frame[id]) {
		const char *text = model_str(f->m, id);
		char *plain = text ? demangle(&f->demangler, text) : NULL;

		f->span_frame[id] = strtab_intern(&f->names, plain ? plain
						  : text && *text ? text : "-");
		free(plain);
	}
	return f->span_frame[id];
}

uint32_t funcs_span(struct funcs *f, uint32_t lane, uint32_t name)
{
	return func_id(f, funcs_span_frame(f, name), funcs_lane_frame(f, lane));
}

int filter_add(struct sample_filter *flt, enum filter_field field, const char *list)
{
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");

		if (!len)
			return -EINVAL;
		if (field == FILTER_PID || field == FILTER_TID || field == FILTER_RANK) {
			/* Hex too, as threads shows the synthetic tids of lanes. */
			bool hex = !strncasecmp(p, "0x", 2);
			const char *digits = hex ? p + 2 : p;
			unsigned char first = (unsigned char)*digits;
			char *end;
			unsigned long v;

			if (!(hex ? isxdigit(first) : isdigit(first)))
				return -EINVAL;
			errno = 0;
			v = strtoul(digits, &end, hex ? 16 : 10);
			if (errno || end != p + len || v > UINT32_MAX)
				return -EINVAL;
			if (field == FILTER_PID)
				*VEC_PUSH(&flt->pids) = (uint32_t)v;
			else if (field == FILTER_TID)
				*VEC_PUSH(&flt->tids) = (uint32_t)v;
			else
				*VEC_PUSH(&flt->ranks) = (uint32_t)v;
		} else if (field == FILTER_COMM) {
			*VEC_PUSH(&flt->comms) = xstrndup(p, len);
		} else {
			*VEC_PUSH(&flt->dsos) = xstrndup(p, len);
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

void filter_free(struct sample_filter *flt)
{
	for (size_t i = 0; i < flt->comms.len; i++)
		free(flt->comms.v[i]);
	for (size_t i = 0; i < flt->dsos.len; i++)
		free(flt->dsos.v[i]);
	VEC_FREE(&flt->pids);
	VEC_FREE(&flt->tids);
	VEC_FREE(&flt->comms);
	VEC_FREE(&flt->dsos);
	VEC_FREE(&flt->ranks);
}

static bool has_id(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool has_str(char *const *strs, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(strs[i], s))
			return true;
	return false;
}

int64_t pid_rank(const struct model *m, uint32_t pid)
{
	return m->ranks.v[model_rank_of(m, pid)].rank;
}

bool filter_rank(const struct sample_filter *flt, int64_t rank)
{
	return !flt || !flt->ranks.len || has_id(flt->ranks.v, flt->ranks.len, (uint32_t)rank);
}

bool filter_process(const struct sample_filter *flt, const struct model *m, uint32_t pid)
{
	if (flt && flt->pids.len && !has_id(flt->pids.v, flt->pids.len, pid))
		return false;
	return filter_rank(flt, pid_rank(m, pid));
}

bool filter_thread(const struct sample_filter *flt, struct funcs *f,
		   const struct model_thread *th)
{
	return filter_thread_named(flt, f, th, th->name);
}

bool filter_thread_named(const struct sample_filter *flt, struct funcs *f,
			 const struct model_thread *th, uint32_t name)
{
	if (!filter_process(flt, f->m, th->pid))
		return false;
	if (flt->tids.len && !has_id(flt->tids.v, flt->tids.len, th->tid))
		return false;
	return !flt->comms.len || has_str(flt->comms.v, flt->comms.len,
					  funcs_name(f, funcs_thread_named(f, th, name)));
}

bool filter_lane(const struct sample_filter *flt, struct funcs *f,
		 const struct model_thread *lane)
{
	return !flt || (!flt->dsos.len && filter_thread(flt, f, lane));
}

bool *filter_lanes(struct funcs *f, const struct sample_filter *flt)
{
	const struct model *m = f->m;
	bool *selected = xcalloc(m->t.lanes.len + 1, sizeof(*selected));

	for (uint32_t lane = 1; lane <= m->t.lanes.len; lane++)
		selected[lane] = filter_lane(flt, f, model_lane_thread(m, lane));
	return selected;
}

bool filter_span(const struct sample_filter *flt, struct funcs *f, const bool *lane_selected,
		 const struct tr_span *sp)
{
	const struct model *m = f->m;
	long ti;

	if (!flt || lane_selected[sp->lane])
		return true;
	if (!sp->origin_tid || sp->origin_tid >= TR_SYNTHETIC_TID_BASE)
		return false;
	ti = model_real_thread_index(m, sp->origin_tid);
	return ti >= 0 && filter_thread(flt, f, &m->threads.v[ti]);
}

bool *filter_nodes(const struct funcs *f, const struct sample_filter *flt)
{
	const struct model *m = f->m;
	bool *ok;

	if (!flt || !flt->dsos.len)
		return NULL;
	ok = xcalloc(m->t.nodes.len + 1, sizeof(*ok));

	for (uint32_t node = 0; node <= m->t.nodes.len; node++) {
		uint32_t n;
		const uint32_t *fn = funcs_of_node(f, node, &n);
		const char *dso = funcs_name(f, f->v.v[fn[0]].dso);

		ok[node] = has_str(flt->dsos.v, flt->dsos.len, dso);
	}
	return ok;
}

static int cmp_stack_count(const void *a, const void *b)
{
	const struct stack_count *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->span < y->span ? -1 : x->span > y->span;
}

uint32_t *groups_by_name(const struct model *m, const uint32_t *name_group)
{
	uint32_t *groups = xcalloc(m->t.samples.len + 1, sizeof(*groups));
	const struct model_thread *th = NULL;

	for (size_t i = 0; i < m->t.samples.len; i++) {
		const struct tr_sample *s = &m->t.samples.v[i];

		/* Samples come in runs of one thread: one lookup a run. */
		if (i == 0 || s->tid != s[-1].tid) {
			long ti = model_real_thread_index(m, s->tid);

			th = ti >= 0 ? &m->threads.v[ti] : NULL;
		}
		/* One name, as most threads have: no search. */
		if (th && th->names == 1)
			groups[i] = name_group[th->first_name];
		else if (th)
			groups[i] = name_group[model_name_at(m, th, s->ts)];
	}
	return groups;
}

void split_sample_groups(const struct model *m, uint32_t *sample_group,
			 const uint32_t *by_sample, const uint32_t *by_node,
			 uint32_t (*group_of)(void *ctx, uint32_t group, uint32_t sample_key,
					      uint32_t node_key),
			 void *ctx)
{
	uint32_t last_in = 0, last_sample_key = 0, last_node_key = 0, last = 0;

	for (size_t i = 0; i < m->t.samples.len; i++) {
		uint32_t in = sample_group[i], node = m->t.samples.v[i].node;
		uint32_t sample_key = by_sample ? by_sample[i] : 0;
		uint32_t node_key = by_node && node <= m->t.nodes.len ? by_node[node] : 0;

		if (!in)
			continue;
		/* Most samples are like the one before: no lookup. */
		if (!last || in != last_in || sample_key != last_sample_key ||
		    node_key != last_node_key) {
			last_in = in;
			last_sample_key = sample_key;
			last_node_key = node_key;
			last = group_of(ctx, in, sample_key, node_key);
		}
		sample_group[i] = last;
	}
}

uint32_t *groups_by_sample(const struct model *m, const uint32_t *thread_group)
{
	uint32_t *name_group = xcalloc(m->names.len + 1, sizeof(*name_group)), *groups;

	for (size_t ti = 0; ti < m->real_threads; ti++) {
		const struct model_thread *th = &m->threads.v[ti];

		for (uint32_t k = 0; k < th->names; k++)
			name_group[th->first_name + k] = thread_group[ti];
	}
	groups = groups_by_name(m, name_group);
	free(name_group);
	return groups;
}

/*
 * Adds count and target_ns to the (group, node, span) entry; index maps
 * key, unique to those, to entries.
 */
static void add_count(struct stack_counts *sc, struct u64map *index, uint64_t key,
		      uint32_t group, uint32_t node, uint32_t span, uint64_t count,
		      uint64_t target_ns)
{
	uint64_t at;
	struct stack_count *c;

	sc->total = u64_sat_add(sc->total, count);
	sc->target_ns = u64_sat_add(sc->target_ns, target_ns);
	if (u64map_get(index, key, &at)) {
		c = &sc->c.v[at];
	} else {
		u64map_put(index, key, sc->c.len);
		c = VEC_PUSH(&sc->c);
		c->group = group;
		c->node = node;
		c->span = span;
	}
	c->count = u64_sat_add(c->count, count);
	c->target_ns = u64_sat_add(c->target_ns, target_ns);
}

static void sort_counts(struct stack_counts *sc)
{
	if (sc->c.len)
		VEC_SORT(&sc->c, cmp_stack_count);
}

void count_stacks(struct stack_counts *sc, const struct funcs *f,
		  const struct sample_filter *flt, const uint32_t *sample_group)
{
	const struct model *m = f->m;
	bool *node_ok = filter_nodes(f, flt);
	struct u64map index = {0};	/* group << 32 | node -> index in sc->c */

	memset(sc, 0, sizeof(*sc));
	for (size_t i = 0; i < m->t.samples.len; i++) {
		uint32_t node = m->t.samples.v[i].node;

		if (node > m->t.nodes.len)
			node = 0;
		if (sample_group[i] && (!node_ok || node_ok[node]))
			add_count(sc, &index, (uint64_t)sample_group[i] << 32 | node,
				  sample_group[i], node, 0, model_sample_weight(m, i), 0);
	}
	u64map_free(&index);
	free(node_ok);
	sort_counts(sc);
}

struct lane_work *lane_work_select(const struct funcs *f, const struct sample_filter *flt,
				   const uint32_t *sample_group,
				   const struct origin_links *links, size_t *n)
{
	const struct model *m = f->m;
	bool *node_ok = filter_nodes(f, flt);
	VEC(struct lane_work) work = {0};

	for (size_t i = 0; i < m->t.spans.len; i++) {
		uint32_t lane = m->t.spans.v[i].lane, group, node;
		struct lane_work *w;

		/* An NVTX range is not work queued: its origin is where it opened. */
		if (!links->sample[i] || !lane || lane > m->t.lanes.len ||
		    model_lane_class(m, lane) == MODEL_LANE_NVTX)
			continue;
		node = m->t.samples.v[links->sample[i] - 1].node;
		if (node > m->t.nodes.len)
			node = 0;
		group = sample_group[links->sample[i] - 1];
		if (!group || (node_ok && !node_ok[node]))
			continue;
		w = VEC_PUSH(&work);
		w->group = group;
		w->node = node;
		w->span = (uint32_t)i;
	}
	free(node_ok);
	*n = work.len;
	return work.v;
}

void count_lane_work(struct stack_counts *sc, struct funcs *f,
		     const struct sample_filter *flt, const uint32_t *sample_group,
		     const struct origin_links *links)
{
	struct u64map index = {0}, pairs = {0};	/* pairs: (node, span) -> id */
	size_t n;
	struct lane_work *work = lane_work_select(f, flt, sample_group, links, &n);

	memset(sc, 0, sizeof(*sc));
	for (size_t i = 0; i < n; i++) {
		const struct tr_span *sp = &f->m->t.spans.v[work[i].span];
		uint32_t span = funcs_span(f, sp->lane, sp->name);
		uint32_t pair = u64map_pair_id(&pairs, work[i].node, span);

		add_count(sc, &index, (uint64_t)work[i].group << 32 | pair, work[i].group,
			  work[i].node, span, 1, sp->dur);
	}
	u64map_free(&index);
	u64map_free(&pairs);
	free(work);
	sort_counts(sc);
}

void stack_counts_free(struct stack_counts *sc)
{
	VEC_FREE(&sc->c);
}
