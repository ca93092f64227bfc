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

/* One stack's frames, innermost first, and the printed row of each. */
struct stack_frames {
	VEC(uint32_t) func;	/* func ids */
	VEC(uint32_t) row;	/* position of its row among those printed, else UINT32_MAX */
};

struct graph_builder {
	struct report *r;
	struct funcs *f;
	struct u64map *kids;	/* by row printed: its tree's kids */
	uint32_t *pos;		/* by made index: its position if printed, else UINT32_MAX */
	uint32_t *stamp;	/* by row printed: the last stack + 1 that added to its tree */
	struct stack_frames s;
};

static void read_stack(struct graph_builder *g, uint32_t group, uint32_t node,
		       report_row_fn *row_of, void *ctx, bool all_rows)
{
	g->s.func.len = g->s.row.len = 0;
	for (; ; node = stack_caller(g->f->m, node)) {
		uint32_t n;
		const uint32_t *fn = funcs_of_node(g->f, node, &n);

		for (uint32_t i = 0; i < n; i++) {
			uint32_t made = all_rows || !g->s.func.len ? row_of(ctx, group, fn[i])
								   : UINT32_MAX;

			*VEC_PUSH(&g->s.func) = fn[i];
			*VEC_PUSH(&g->s.row) = made == UINT32_MAX ? UINT32_MAX : g->pos[made];
		}
		if (!stack_caller(g->f->m, node))
			break;
	}
}

/*
 * Adds count to row's tree along the frames from index from to index to
 * (either way), one node a frame.
 */
static void add_path(struct graph_builder *g, uint32_t row, size_t from, size_t to,
		     uint64_t count)
{
	struct calltree *t = &g->r->graphs[row];
	uint32_t at = 0;

	for (size_t i = from;; i = from < to ? i + 1 : i - 1) {
		at = calltree_child(t, &g->kids[row], at, g->f->v.v[g->s.func.v[i]].name);
		if (i == to)
			break;
	}
	t->nodes.v[at].self += count;
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
			add_path(g, row, 0, last, count);
		else
			add_path(g, row, last, 0, count);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = o->graph == GRAPH_CALLEE ? k : last - k;
		uint32_t row = g->s.row.v[i];

		if (row == UINT32_MAX || g->stamp[row] == stack + 1)
			continue;
		g->stamp[row] = stack + 1;
		add_path(g, row, i, o->graph == GRAPH_CALLEE ? last : 0, count);
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
	/* Rows pruned by --percent-limit are no more in r->rows: none printed. */
	g.pos = xmalloc(made * sizeof(*g.pos));
	for (size_t i = 0; i < made; i++)
		g.pos[i] = UINT32_MAX;
	for (size_t i = 0; i < shown; i++)
		g.pos[r->rows.v[i].made] = (uint32_t)i;
	for (size_t i = 0; i < shown; i++)
		VEC_PUSH(&r->graphs[i].nodes)->name = all;
	for (size_t i = 0; i < sc->c.len; i++) {
		read_stack(&g, sc->c.v[i].group, sc->c.v[i].node, row_of, ctx, o->children);
		add_stack(&g, o, (uint32_t)i, sc->c.v[i].count);
	}
	for (size_t i = 0; i < shown; i++) {
		calltree_finish(&r->graphs[i], f);
		u64map_free(&g.kids[i]);
	}
	free(g.kids);
	free(g.stamp);
	free(g.pos);
	VEC_FREE(&g.s.func);
	VEC_FREE(&g.s.row);
}
