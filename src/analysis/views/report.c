/* SPDX-License-Identifier: MIT */
/*
 * The by-symbol report: self and children counts per row of sort keys.
 * report-print.c prints it.
 */
#include "analysis/views/report.h"
#include "analysis/views/report-private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/saturate.h"
#include "util/xalloc.h"

static const char *const key_names[REPORT_KEYS] = {
	[KEY_COMM] = "comm",
	[KEY_DSO] = "dso",
	[KEY_SYMBOL] = "symbol",
	[KEY_PID] = "pid",
	[KEY_TID] = "tid",
	[KEY_NVTX] = "nvtx",
	[KEY_PYLINE] = "pyline",
	[KEY_RANK] = "rank",
	[KEY_SRCLINE] = "srcline",
};

/* Paired into a span name row's func part: no names id or pair id is this. */
#define SPAN_PART UINT32_MAX

int report_parse_keys(struct report_opts *o, const char *list)
{
	const char *p = list;

	o->nkeys = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		size_t k;

		for (k = 0; k < REPORT_KEYS; k++)
			if (strlen(key_names[k]) == len && !strncmp(p, key_names[k], len))
				break;
		if (k == REPORT_KEYS)
			return -EINVAL;
		for (size_t i = 0; i < o->nkeys; i++)
			if (o->keys[i] == k)
				return -EINVAL;
		o->keys[o->nkeys++] = (enum report_key)k;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/*
 * A group is what the thread keys and the NVTX and Python keys make of a
 * sample: its thread's part of the key tuple (by the name the thread had
 * when it was taken), its innermost range, and its innermost Python
 * frame's place.
 */
struct group {
	uint32_t thread;	/* a thread of the group */
	uint32_t comm;		/* string id of that thread's name then */
	uint32_t nvtx;		/* string id of the innermost range, 0 none */
	uint32_t pyline;	/* names id of "file.py:line", 0 none */
};

/* Everything report_build needs while walking the stacks. */
struct row_builder {
	struct report *r;
	struct u64map pairs;	/* key tuples -> ids */
	struct u64map group_ids; /* (thread part, range name) pair << 32 | pyline -> group */
	VEC(struct group) groups; /* by group - 1 */
	struct u64map rows;	/* group << 32 | func part -> row index */
	uint32_t *name_part;	/* by index in m->names; 0 filtered out */
	uint32_t *func_part;	/* by func id */
	uint32_t *part_thread;	/* by thread part: a thread having it */
	uint32_t *part_comm;	/* by thread part: string id of that thread's name */
	uint32_t *sample_group;	/* by sample index; 0 filtered out */
	uint32_t *cache_group;	/* by func id: group cache_row is for */
	uint32_t *cache_row;	/* by func id */
	bool queued_from;	/* span name rows are per func queued from */
	uint64_t from, to;	/* only the samples taken in [from, to); to 0: all */
};

bool report_has_key(const struct report_opts *o, enum report_key key)
{
	for (size_t k = 0; k < o->nkeys; k++)
		if (o->keys[k] == key)
			return true;
	return false;
}

static void make_thread_parts(struct row_builder *b, struct funcs *f,
			      const struct report_opts *o)
{
	const struct model *m = f->m;
	uint32_t shared = 0;

	b->name_part = xcalloc(m->names.len + 1, sizeof(*b->name_part));
	for (size_t ti = 0; ti < m->real_threads; ti++) {
		const struct model_thread *th = &m->threads.v[ti];

		for (uint32_t n = th->first_name; n < th->first_name + th->names; n++) {
			uint32_t part = 0, name = m->names.v[n].name;

			if (o->filter && !filter_thread_named(o->filter, f, th, name))
				continue;
			for (size_t k = 0; k < o->nkeys; k++) {
				if (o->keys[k] == KEY_COMM)
					part = u64map_pair_id(&b->pairs, part,
							      funcs_thread_named(f, th, name));
				else if (o->keys[k] == KEY_PID)
					part = u64map_pair_id(&b->pairs, part, th->pid);
				else if (o->keys[k] == KEY_TID)
					part = u64map_pair_id(&b->pairs, part, th->tid);
				else if (o->keys[k] == KEY_RANK)
					part = u64map_pair_id(&b->pairs, part,
							      (uint32_t)pid_rank(m, th->pid));
			}
			/* Without thread keys every thread shares one part, unlike any tuple's. */
			if (!part && !shared)
				shared = u64map_pair_id(&b->pairs, 0, 0);
			b->name_part[n] = part ? part : shared;
		}
	}
	b->part_thread = xcalloc(b->pairs.len + 1, sizeof(*b->part_thread));
	b->part_comm = xcalloc(b->pairs.len + 1, sizeof(*b->part_comm));
	/* The first thread of each part, and the name it had. */
	for (size_t ti = m->real_threads; ti-- > 0;) {
		const struct model_thread *th = &m->threads.v[ti];

		for (uint32_t n = th->first_name + th->names; n-- > th->first_name;) {
			if (b->name_part[n]) {
				b->part_thread[b->name_part[n]] = (uint32_t)ti;
				b->part_comm[b->name_part[n]] = m->names.v[n].name;
			}
		}
	}
}

/* The group of a thread part, a range name (0 none) and a pyline (0 none); ctx the builder. */
static uint32_t group_of(void *ctx, uint32_t part, uint32_t nvtx, uint32_t pyline)
{
	struct row_builder *b = ctx;
	uint32_t id = u64map_pair_id(&b->group_ids, u64map_pair_id(&b->pairs, part, nvtx),
				     pyline);

	if (id > b->groups.len) {
		struct group *g = VEC_PUSH(&b->groups);

		g->thread = b->part_thread[part];
		g->comm = b->part_comm[part];
		g->nvtx = nvtx;
		g->pyline = pyline;
	}
	return id;
}

/*
 * By stack node id: the names id of the place of the innermost Python
 * frame on its stack, 0 none.
 */
static uint32_t *node_pylines(struct funcs *f)
{
	const struct model *m = f->m;
	uint32_t *pyline = xcalloc(m->t.nodes.len + 1, sizeof(*pyline));

	/* Parents come first: a node inherits its parent's unless it is one. */
	for (uint32_t node = 1; node <= m->t.nodes.len; node++) {
		const struct tr_node *n = &m->t.nodes.v[node - 1];

		pyline[node] = funcs_python_line(f, n->loc);
		if (!pyline[node] && n->parent < node)
			pyline[node] = pyline[n->parent];
	}
	return pyline;
}

/*
 * The group of each sample: its thread part, and if they are keys its
 * innermost range and its innermost Python frame's place.
 */
static void make_sample_groups(struct row_builder *b, struct funcs *f,
			       const struct report_opts *o)
{
	const struct model *m = f->m;
	uint32_t *names = NULL;
	uint32_t *pylines = report_has_key(o, KEY_PYLINE) ? node_pylines(f) : NULL;
	struct nvtx_ranges ranges = {0};

	b->sample_group = groups_by_name(m, b->name_part);
	if (report_has_key(o, KEY_NVTX)) {
		nvtx_ranges_build(&ranges, m);
		/* Each sample's chain, then the name of its innermost range. */
		names = nvtx_sample_chains(&ranges, m);
		for (size_t i = 0; i < m->t.samples.len; i++)
			if (names[i])
				names[i] = ranges.chains.v[names[i] - 1].name;
		nvtx_ranges_free(&ranges);
	}
	split_sample_groups(m, b->sample_group, names, pylines, group_of, b);
	for (size_t i = 0; b->to && i < m->t.samples.len; i++)
		if (m->t.samples.v[i].ts < b->from || m->t.samples.v[i].ts >= b->to)
			b->sample_group[i] = 0;
	free(pylines);
	free(names);
}

static void make_func_parts(struct row_builder *b, const struct funcs *f,
			    const struct report_opts *o)
{
	b->func_part = xcalloc(f->v.len, sizeof(*b->func_part));
	for (size_t fi = 0; fi < f->v.len; fi++) {
		uint32_t part = 0;

		for (size_t k = 0; k < o->nkeys; k++) {
			if (o->keys[k] == KEY_DSO)
				part = u64map_pair_id(&b->pairs, part, f->v.v[fi].dso);
			else if (o->keys[k] == KEY_SYMBOL)
				part = u64map_pair_id(&b->pairs, part, f->v.v[fi].name);
			else if (o->keys[k] == KEY_SRCLINE)
				part = u64map_pair_id(&b->pairs, part, f->v.v[fi].line);
		}
		b->func_part[fi] = part;
	}
	b->cache_group = xcalloc(f->v.len, sizeof(*b->cache_group));
	b->cache_row = xcalloc(f->v.len, sizeof(*b->cache_row));
}

/* The row of a group and func part; a new one shows func, queued from *from if given. */
static uint32_t row_at(struct row_builder *b, uint32_t group, uint32_t part, uint32_t func,
		       const uint32_t *from)
{
	uint64_t key = (uint64_t)group << 32 | part, at;
	struct report_row *row;

	if (!u64map_get(&b->rows, key, &at)) {
		at = b->r->rows.len;
		u64map_put(&b->rows, key, at);
		row = VEC_PUSH(&b->r->rows);
		row->thread = b->groups.v[group - 1].thread;
		row->comm = b->groups.v[group - 1].comm;
		row->nvtx = b->groups.v[group - 1].nvtx;
		row->pyline = b->groups.v[group - 1].pyline;
		row->func = func;
		row->span = from != NULL;
		row->from = from ? *from : 0;
		row->made = (uint32_t)at;
	}
	return (uint32_t)at;
}

static uint32_t row_of(struct row_builder *b, uint32_t group, uint32_t func)
{
	/* Stacks come sorted by group: most lookups hit this cache. */
	if (b->cache_group[func] != group) {
		b->cache_group[func] = group;
		b->cache_row[func] = row_at(b, group, b->func_part[func], func, NULL);
	}
	return b->cache_row[func];
}

/*
 * The row of a span name queued from func from. Keys that tell it from a
 * function (dso, symbol) give it a row of its own; without them it shares
 * the functions' row, as all functions do.
 */
static uint32_t span_row_of(struct row_builder *b, uint32_t group, uint32_t span,
			    uint32_t from)
{
	uint32_t part = b->func_part[span];

	if (!part)
		return row_of(b, group, span);
	if (b->queued_from)
		part = u64map_pair_id(&b->pairs, part, b->func_part[from]);
	return row_at(b, group, u64map_pair_id(&b->pairs, part, SPAN_PART), span, &from);
}

/*
 * The tree of one group's stacks: their leaf nodes and the nodes above,
 * each reached once, so that the children pass is linear in the nodes of
 * the distinct stacks, not in their depths added up.
 */
struct group_tree {
	VEC(uint32_t) nodes;	/* stack nodes, in the order reached */
	uint32_t *reached;	/* by stack node: the last group that reached it */
	uint32_t *at;		/* by stack node: its index in nodes */
	VEC(size_t) stacks;	/* by index in nodes: its first stack count + 1, 0 none */
	VEC(uint32_t) leaf_row;	/* by stack count: its innermost row */
	VEC(uint64_t) count;	/* by index in nodes: samples (spans) at it and under it */
	VEC(uint64_t) target;	/* the same, target ns */
	VEC(uint32_t) kid_start; /* by index in nodes: its kids are kids[kid_start[i] ..] */
	VEC(uint32_t) kids;
	VEC(uint32_t) walk;	/* the nodes from a root down to the current one */
	VEC(uint32_t) next_kid;	/* by index in nodes: where its walk goes on */
	VEC(uint32_t) on_path;	/* by row: how many frames of the walk's path are the row's */
};

/*
 * Makes the rows of a stack's frames, innermost first, up to a node the
 * group reached already (whose callers' rows exist then), and adds the
 * nodes on the way to the group's tree.
 */
static void reach_stack(struct row_builder *b, struct group_tree *gt, const struct funcs *f,
			uint32_t group, uint32_t node)
{
	for (;;) {
		uint32_t n;
		const uint32_t *fn;

		if (gt->reached[node] == group)
			return;
		gt->reached[node] = group;
		gt->at[node] = (uint32_t)gt->nodes.len;
		*VEC_PUSH(&gt->nodes) = node;
		fn = funcs_of_node(f, node, &n);
		for (uint32_t i = 0; i < n; i++)
			row_of(b, group, fn[i]);
		if (!(node = stack_caller(f->m, node)))
			return;
	}
}

/* Each node's kids in the group's tree, and its own stacks' weight. */
static void link_group_tree(struct group_tree *gt, const struct model *m,
			    const struct stack_count *c, size_t first, size_t end)
{
	size_t n = gt->nodes.len;

	VEC_ZEROED(&gt->stacks, n);
	VEC_ZEROED(&gt->count, n);
	VEC_ZEROED(&gt->target, n);
	VEC_ZEROED(&gt->kid_start, n + 1);
	VEC_ZEROED(&gt->next_kid, n);
	VEC_ZEROED(&gt->kids, n);
	for (size_t i = end; i-- > first;) {
		uint32_t at = gt->at[c[i].node];

		gt->stacks.v[at] = i + 1;
		gt->count.v[at] += c[i].count;
		gt->target.v[at] = u64_sat_add(gt->target.v[at], c[i].target_ns);
	}
	/* Counted into kid_start[parent + 1]: the prefix sum leaves kid_start[i] as i's first. */
	for (size_t i = 0; i < n; i++) {
		uint32_t caller = stack_caller(m, gt->nodes.v[i]);

		if (caller)
			gt->kid_start.v[gt->at[caller] + 1]++;
	}
	for (size_t i = 0; i < n; i++)
		gt->kid_start.v[i + 1] += gt->kid_start.v[i];
	for (size_t i = 0; i < n; i++) {
		uint32_t caller = stack_caller(m, gt->nodes.v[i]);

		if (caller) {
			uint32_t at = gt->at[caller];

			gt->kids.v[gt->kid_start.v[at] + gt->next_kid.v[at]++] = (uint32_t)i;
		}
	}
	for (size_t i = 0; i < n; i++)
		gt->next_kid.v[i] = gt->kid_start.v[i];
}

/* The walk enters node i: its frames' rows are on the path once more. */
static void enter_node(struct row_builder *b, struct group_tree *gt, const struct funcs *f,
		       uint32_t group, uint32_t i)
{
	uint32_t n;
	const uint32_t *fn = funcs_of_node(f, gt->nodes.v[i], &n);

	*VEC_PUSH(&gt->walk) = i;
	for (uint32_t k = 0; k < n; k++)
		gt->on_path.v[row_of(b, group, fn[k])]++;
}

/*
 * The walk leaves node i, whose subtree is summed up: a span name row not
 * on the path counts its stacks; a row that leaves the path here was put
 * on it here, by its topmost frame, and counts the whole subtree.
 */
static void leave_node(struct row_builder *b, struct group_tree *gt, const struct funcs *f,
		       const struct stack_counts *sc, uint32_t group, uint32_t i)
{
	struct report_row *rows = b->r->rows.v;	/* all made: row_of only finds them */
	uint32_t node = gt->nodes.v[i], caller = stack_caller(f->m, node), n;
	const uint32_t *fn = funcs_of_node(f, node, &n);

	/* A node's stack counts are consecutive: its group's, sorted by node. */
	for (size_t s = gt->stacks.v[i]; s && s <= sc->c.len && sc->c.v[s - 1].node == node &&
	     sc->c.v[s - 1].group == group; s++) {
		const struct stack_count *c = &sc->c.v[s - 1];
		uint32_t leaf = gt->leaf_row.v[s - 1];

		if (c->span && !gt->on_path.v[leaf]) {
			rows[leaf].children += c->count;
			rows[leaf].target_children = u64_sat_add(rows[leaf].target_children,
								 c->target_ns);
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		uint32_t row = row_of(b, group, fn[k]);

		if (!--gt->on_path.v[row]) {
			rows[row].children += gt->count.v[i];
			rows[row].target_children = u64_sat_add(rows[row].target_children,
								gt->target.v[i]);
		}
	}
	gt->walk.len--;
	if (caller) {
		gt->count.v[gt->at[caller]] += gt->count.v[i];
		gt->target.v[gt->at[caller]] += gt->target.v[i];
	}
}

/* Children of the group's rows: a walk down its tree from each outermost node. */
static void add_group_children(struct row_builder *b, struct group_tree *gt,
			       const struct funcs *f, const struct stack_counts *sc,
			       uint32_t group, size_t first, size_t end)
{
	link_group_tree(gt, f->m, sc->c.v, first, end);
	while (gt->on_path.len < b->r->rows.len)
		*VEC_PUSH(&gt->on_path) = 0;
	for (uint32_t root = 0; root < gt->nodes.len; root++) {
		if (stack_caller(f->m, gt->nodes.v[root]))
			continue;
		enter_node(b, gt, f, group, root);
		while (gt->walk.len) {
			uint32_t i = gt->walk.v[gt->walk.len - 1];

			if (gt->next_kid.v[i] < gt->kid_start.v[i + 1])
				enter_node(b, gt, f, group, gt->kids.v[gt->next_kid.v[i]++]);
			else
				leave_node(b, gt, f, sc, group, i);
		}
	}
}

/*
 * Self to each distinct stack's innermost frame, and with children, each
 * row's stacks with it anywhere on their path, once each. Lane work's
 * innermost frame is its span name, called from the stack.
 */
static void add_stacks(struct row_builder *b, const struct funcs *f,
		       const struct stack_counts *sc, bool children)
{
	struct group_tree gt = {0};
	size_t nodes = f->m->t.nodes.len + 1;

	gt.reached = xcalloc(nodes, sizeof(*gt.reached));
	gt.at = xcalloc(nodes, sizeof(*gt.at));
	VEC_ZEROED(&gt.leaf_row, sc->c.len);
	/* Stack counts come sorted by group: one group's tree at a time. */
	for (size_t first = 0, end; first < sc->c.len; first = end) {
		uint32_t group = sc->c.v[first].group;

		gt.nodes.len = 0;
		for (end = first; end < sc->c.len && sc->c.v[end].group == group; end++) {
			const struct stack_count *c = &sc->c.v[end];
			uint32_t n;
			const uint32_t *fn = funcs_of_node(f, c->node, &n);
			/* Rows are made in the order of the stacks and their frames. */
			uint32_t leaf = c->span ? span_row_of(b, group, c->span,
								  funcs_queued_from(f, c->node))
						: row_of(b, group, fn[0]);

			b->r->rows.v[leaf].self += c->count;
			b->r->rows.v[leaf].target_self = u64_sat_add(b->r->rows.v[leaf].target_self,
								      c->target_ns);
			gt.leaf_row.v[end] = leaf;
			if (children)
				reach_stack(b, &gt, f, group, c->node);
		}
		if (children)
			add_group_children(b, &gt, f, sc, group, first, end);
	}
	free(gt.reached);
	free(gt.at);
	VEC_FREE(&gt.nodes);
	VEC_FREE(&gt.stacks);
	VEC_FREE(&gt.leaf_row);
	VEC_FREE(&gt.count);
	VEC_FREE(&gt.target);
	VEC_FREE(&gt.kid_start);
	VEC_FREE(&gt.kids);
	VEC_FREE(&gt.walk);
	VEC_FREE(&gt.next_kid);
	VEC_FREE(&gt.on_path);
}


struct sort_ctx {
	const struct funcs *f;
	bool children;
	bool by_target;		/* lane work: by target time first */
};

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_rows(const void *pa, const void *pb, void *pctx)
{
	const struct report_row *a = pa, *b = pb;
	const struct sort_ctx *ctx = pctx;
	const struct func *fa = &ctx->f->v.v[a->func], *fb = &ctx->f->v.v[b->func];
	int c;

	if (ctx->by_target && ctx->children &&
	    (c = cmp_u64_desc(a->target_children, b->target_children)))
		return c;
	/* A span name is its callers' leaf: after them, when they tie. */
	if (ctx->children && a->span != b->span)
		return a->span ? 1 : -1;
	if (ctx->by_target && (c = cmp_u64_desc(a->target_self, b->target_self)))
		return c;
	if (ctx->children && (c = cmp_u64_desc(a->children, b->children)))
		return c;
	if ((c = cmp_u64_desc(a->self, b->self)))
		return c;
	if ((c = strcmp(funcs_name(ctx->f, fa->name), funcs_name(ctx->f, fb->name))))
		return c;
	if ((c = strcmp(funcs_name(ctx->f, fa->dso), funcs_name(ctx->f, fb->dso))))
		return c;
	if ((c = strcmp(range_name(ctx->f->m, a->nvtx), range_name(ctx->f->m, b->nvtx))))
		return c;
	if ((c = strcmp(pyline_name(ctx->f, a->pyline), pyline_name(ctx->f, b->pyline))))
		return c;
	if ((c = strcmp(srcline_name(ctx->f, fa->line), srcline_name(ctx->f, fb->line))))
		return c;
	if (a->span && b->span &&
	    (c = strcmp(funcs_name(ctx->f, ctx->f->v.v[a->from].name),
			funcs_name(ctx->f, ctx->f->v.v[b->from].name))))
		return c;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return a->comm < b->comm ? -1 : a->comm > b->comm;
}

/* The row made for a group's func, UINT32_MAX none; ctx the builder. */
static uint32_t made_row(void *ctx, uint32_t group, uint32_t func)
{
	struct row_builder *b = ctx;
	uint64_t at;

	return u64map_get(&b->rows, (uint64_t)group << 32 | b->func_part[func], &at)
		? (uint32_t)at : UINT32_MAX;
}

/* Rows sorted by the share they show: those under percent_limit leave the end. */
static void prune_rows(struct report *r, const struct report_opts *o)
{
	while (r->rows.len && o->percent_limit > 0) {
		const struct report_row *row = &r->rows.v[r->rows.len - 1];
		uint64_t n = o->children ? row->children : row->self;

		if (r->total && 100.0 * (double)n / (double)r->total >= o->percent_limit)
			break;
		r->rows.len--;
	}
}

/*
 * The rows of the samples, or with links, of the lane work queued from
 * their stacks; to != 0: of the samples taken in [from, to) only, with
 * neither pruning nor graphs.
 */
static void build_rows(struct report *r, struct funcs *f, const struct report_opts *o,
		       const struct origin_links *links, uint64_t from, uint64_t to)
{
	struct row_builder b = { .r = r, .from = from, .to = to };
	struct stack_counts sc;
	struct sort_ctx ctx = { .f = f, .children = o->children, .by_target = links != NULL };

	memset(r, 0, sizeof(*r));
	make_thread_parts(&b, f, o);
	make_sample_groups(&b, f, o);
	/* Lane work makes the funcs of its span names: before the funcs' parts. */
	if (links)
		count_lane_work(&sc, f, o->filter, b.sample_group, links);
	else
		count_stacks(&sc, f, o->filter, b.sample_group);
	make_func_parts(&b, f, o);
	b.queued_from = r->queued_from = links && report_has_key(o, KEY_SYMBOL);
	r->total = sc.total;
	r->target_ns = sc.target_ns;
	add_stacks(&b, f, &sc, o->children);
	if (r->rows.len)
		qsort_r(r->rows.v, r->rows.len, sizeof(*r->rows.v), cmp_rows, &ctx);
	if (!links && !to) {
		size_t made = r->rows.len;

		prune_rows(r, o);
		report_graphs_build(r, f, o, made, &sc, made_row, &b);
	}

	stack_counts_free(&sc);
	u64map_free(&b.pairs);
	u64map_free(&b.group_ids);
	VEC_FREE(&b.groups);
	u64map_free(&b.rows);
	free(b.name_part);
	free(b.part_comm);
	free(b.func_part);
	free(b.part_thread);
	free(b.sample_group);
	free(b.cache_group);
	free(b.cache_row);
}

void report_build(struct report *r, struct funcs *f, const struct report_opts *o)
{
	build_rows(r, f, o, NULL, 0, 0);
	if (o->time_buckets)
		report_buckets_fill(r, f, o);
}

void report_build_window(struct report *r, struct funcs *f, const struct report_opts *o,
			 uint64_t from, uint64_t to)
{
	build_rows(r, f, o, NULL, from, to);
}

void report_build_lane_work(struct report *r, struct funcs *f, const struct report_opts *o,
			    const struct origin_links *links)
{
	build_rows(r, f, o, links, 0, 0);
}

void report_free(struct report *r)
{
	free(r->buckets);
	for (size_t i = 0; i < r->ngraphs; i++)
		calltree_free(&r->graphs[i]);
	free(r->graphs);
	VEC_FREE(&r->rows);
}
