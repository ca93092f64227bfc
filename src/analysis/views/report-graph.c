/* SPDX-License-Identifier: MIT */
/*
 * The call graph under each row of the by-symbol report, as perf report's
 * -g: a call tree (calltree.c, flame's) per row printed, of the stacks
 * that made the row.
 */
#include "analysis/views/report.h"
#include "analysis/views/report-private.h"

#include <stdlib.h>

#include "util/xalloc.h"

/* One stack's frames, innermost first, the printed row of each, and its nodes. */
struct stack_frames {
	VEC(uint32_t) func;	/* by frame: func id */
	VEC(uint32_t) row;	/* by frame: its row's position if printed, else UINT32_MAX */
	VEC(uint32_t) at_node;	/* by frame: the index of its stack node in nodes */
	VEC(uint32_t) nodes;	/* the stack nodes, innermost first */
	VEC(uint32_t) node_first; /* by index in nodes: its innermost frame; then the end */
};

struct graph_builder {
	struct report *r;
	struct funcs *f;
	struct u64map *kids;	/* by row printed: its tree's kids */
	/*
	 * With children, row << 32 | stack node -> the row's tree node where
	 * the stack's path is at that stack node: stacks through one node
	 * share their path above it.
	 */
	struct u64map memo;
	uint32_t *pos;		/* by made index: its position if printed, else UINT32_MAX */
	uint32_t *stamp;	/* by row printed: the last stack + 1 that added to its tree */
	uint32_t *cache_group;	/* by func id: the group cache_row is of, 0 none */
	uint32_t *cache_row;	/* by func id: its row's position in that group */
	struct stack_frames s;
	uint64_t bound;		/* the frames the graphs may walk */
	uint64_t frames_left;	/* of those, not walked yet */
	uint64_t nodes_left;	/* the nodes they may still make */
};

/*
 * Takes n frames of the bounds, which make n nodes at most; false, cutting
 * the graphs short, past either.
 */
static bool take_frames(struct graph_builder *g, uint64_t n, bool making)
{
	if (n > g->frames_left || (making && n > g->nodes_left)) {
		g->frames_left = 0;
		g->r->graphs_cut = g->bound;
		return false;
	}
	g->frames_left -= n;
	return true;
}

/* Reads a stack's frames and their rows: all, or the leaf's only; false past the bound. */
static bool read_stack(struct graph_builder *g, uint32_t group, uint32_t node,
		       report_row_fn *row_of, void *ctx, bool all_rows)
{
	struct stack_frames *s = &g->s;

	s->func.len = s->row.len = s->at_node.len = s->nodes.len = s->node_first.len = 0;
	for (;; node = stack_caller(g->f->m, node)) {
		uint32_t n;
		const uint32_t *fn = funcs_of_node(g->f, node, &n);

		if (!take_frames(g, n, false))
			return false;
		*VEC_PUSH(&s->node_first) = (uint32_t)s->func.len;
		for (uint32_t i = 0; i < n; i++) {
			bool wanted = all_rows || !s->func.len;

			/* Stacks come sorted by group: most lookups hit the cache. */
			if (wanted && g->cache_group[fn[i]] != group) {
				uint32_t made = row_of(ctx, group, fn[i]);

				g->cache_group[fn[i]] = group;
				g->cache_row[fn[i]] = made == UINT32_MAX ? UINT32_MAX
								     : g->pos[made];
			}
			*VEC_PUSH(&s->func) = fn[i];
			*VEC_PUSH(&s->row) = wanted ? g->cache_row[fn[i]] : UINT32_MAX;
			*VEC_PUSH(&s->at_node) = (uint32_t)s->nodes.len;
		}
		*VEC_PUSH(&s->nodes) = node;
		if (!stack_caller(g->f->m, node)) {
			*VEC_PUSH(&s->node_first) = (uint32_t)s->func.len;
			return true;
		}
	}
}

/*
 * Goes on from tree node at of row's tree along the frames from index
 * from to index to (either way), one node a frame; UINT32_MAX past the
 * bounds.
 */
static uint32_t add_path(struct graph_builder *g, uint32_t row, uint32_t at, size_t from,
			 size_t to)
{
	struct calltree *t = &g->r->graphs[row];
	size_t had = t->nodes.len, n = (from < to ? to - from : from - to) + 1;

	/* Frames past GRAPH_MAX_DEPTH fold into the deepest node. */
	if (n > GRAPH_MAX_DEPTH - t->nodes.v[at].depth)
		n = GRAPH_MAX_DEPTH - t->nodes.v[at].depth;
	if (!take_frames(g, n, true))
		return UINT32_MAX;
	for (size_t k = 0, i = from; k < n; k++, i = from < to ? i + 1 : i - 1)
		at = calltree_child(t, &g->kids[row], at, g->f->v.v[g->s.func.v[i]].name);
	g->nodes_left -= t->nodes.len - had;
	return at;
}

/* The count at the end of a path, unless the bounds cut it short. */
static void add_count(struct graph_builder *g, uint32_t row, uint32_t at, uint64_t count)
{
	if (at != UINT32_MAX && !g->r->graphs_cut)
		g->r->graphs[row].nodes.v[at].self += count;
}

static bool memo_get(struct graph_builder *g, uint32_t row, uint32_t node, uint32_t *at)
{
	uint64_t v;

	if (!u64map_get(&g->memo, (uint64_t)row << 32 | node, &v))
		return false;
	*at = (uint32_t)v;
	return true;
}

/* Each entry takes a node of the bound: the memo grows as the trees do. */
static void memo_put(struct graph_builder *g, uint32_t row, uint32_t node, uint32_t at)
{
	if (at == UINT32_MAX || !take_frames(g, 1, true))
		return;
	g->nodes_left--;
	u64map_put(&g->memo, (uint64_t)row << 32 | node, at);
}

/*
 * Callee order: the path from frame i out to the outermost frame, the
 * same for every stack through i's node when i is row's innermost frame.
 */
static void add_callers(struct graph_builder *g, uint32_t row, size_t i, uint64_t count)
{
	uint32_t node = g->s.nodes.v[g->s.at_node.v[i]], at;

	if (!take_frames(g, 1, false))
		return;
	if (!memo_get(g, row, node, &at)) {
		at = add_path(g, row, 0, i, g->s.func.len - 1);
		memo_put(g, row, node, at);
	}
	add_count(g, row, at, count);
}

/*
 * Caller order: the path from frame i, row's outermost, in to the leaf.
 * Each stack node's part of it is the same for every stack through that
 * node: it goes on from the innermost node whose part is made.
 */
static void add_callees(struct graph_builder *g, uint32_t row, size_t i, uint64_t count)
{
	const struct stack_frames *s = &g->s;
	uint32_t top = s->at_node.v[i], k, at = UINT32_MAX;

	for (k = 0; k <= top; k++) {
		if (!take_frames(g, 1, false))
			return;
		if (memo_get(g, row, s->nodes.v[k], &at))
			break;
	}
	if (at == UINT32_MAX) {
		/* Nothing made yet: from row's frame in to its node's innermost. */
		k = top;
		at = add_path(g, row, 0, i, s->node_first.v[k]);
		memo_put(g, row, s->nodes.v[k], at);
	}
	/* Each node under k, from its outermost frame in to its innermost. */
	while (k-- > 0 && !g->r->graphs_cut) {
		at = add_path(g, row, at, s->node_first.v[k + 1] - 1, s->node_first.v[k]);
		memo_put(g, row, s->nodes.v[k], at);
	}
	add_count(g, row, at, count);
}

/*
 * One stack's count into the graphs of its rows. Without children, the
 * leaf's row's: callee order from the leaf out, caller order in to it.
 * With children, each row on it once: callee order from its innermost
 * frame out to the outermost, caller order from its outermost frame in to
 * the leaf, so that a recursive function's graph holds its recursion.
 */
static void add_stack(struct graph_builder *g, const struct report_opts *o, uint32_t stack,
		      uint64_t count)
{
	size_t n = g->s.func.len, last = n - 1;

	if (!o->children) {
		uint32_t row = g->s.row.v[0];

		if (row == UINT32_MAX)
			return;
		if (o->graph == GRAPH_CALLEE)
			add_count(g, row, add_path(g, row, 0, 0, last), count);
		else
			add_count(g, row, add_path(g, row, 0, last, 0), count);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = o->graph == GRAPH_CALLEE ? k : last - k;
		uint32_t row = g->s.row.v[i];

		if (row == UINT32_MAX || g->stamp[row] == stack + 1)
			continue;
		g->stamp[row] = stack + 1;
		if (o->graph == GRAPH_CALLEE)
			add_callers(g, row, i, count);
		else
			add_callees(g, row, i, count);
	}
}

void report_graphs_build(struct report *r, struct funcs *f, const struct report_opts *o,
			 size_t made, const struct stack_counts *sc, report_row_fn *row_of,
			 void *ctx)
{
	struct graph_builder g = { .r = r, .f = f };
	size_t shown = o->limit && o->limit < r->rows.len ? o->limit : r->rows.len;
	uint32_t all = strtab_intern(&f->names, "all");

	if (o->graph == GRAPH_NONE || !shown)
		return;
	r->ngraphs = shown;
	r->graphs = xcalloc(shown, sizeof(*r->graphs));
	g.kids = xcalloc(shown, sizeof(*g.kids));
	g.stamp = xcalloc(shown, sizeof(*g.stamp));
	g.cache_group = xcalloc(f->v.len, sizeof(*g.cache_group));
	g.cache_row = xcalloc(f->v.len, sizeof(*g.cache_row));
	/* Rows pruned by --percent-limit are no more in r->rows: none printed. */
	g.pos = xmalloc(made * sizeof(*g.pos));
	for (size_t i = 0; i < made; i++)
		g.pos[i] = UINT32_MAX;
	for (size_t i = 0; i < shown; i++)
		g.pos[r->rows.v[i].made] = (uint32_t)i;
	for (size_t i = 0; i < shown; i++)
		VEC_PUSH(&r->graphs[i].nodes)->name = all;
	g.bound = g.frames_left = o->graph_frames ? o->graph_frames : GRAPH_MAX_FRAMES;
	g.nodes_left = GRAPH_MAX_NODES;
	for (size_t i = 0; i < sc->c.len && !r->graphs_cut; i++)
		if (read_stack(&g, sc->c.v[i].group, sc->c.v[i].node, row_of, ctx, o->children))
			add_stack(&g, o, (uint32_t)i, sc->c.v[i].count);
	for (size_t i = 0; i < shown; i++) {
		calltree_finish(&r->graphs[i], f);
		u64map_free(&g.kids[i]);
	}
	u64map_free(&g.memo);
	free(g.kids);
	free(g.stamp);
	free(g.cache_group);
	free(g.cache_row);
	free(g.pos);
	VEC_FREE(&g.s.func);
	VEC_FREE(&g.s.row);
	VEC_FREE(&g.s.at_node);
	VEC_FREE(&g.s.nodes);
	VEC_FREE(&g.s.node_first);
}
