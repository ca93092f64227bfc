/* SPDX-License-Identifier: MIT */
/*
 * flame --diff: two call trees joined by path, the names from the thread
 * down to a frame. Each path's own weight in both trees gives the folded
 * stacks with two counts (the form difffolded.pl makes) and, as a change
 * of share, the colour of each frame of the new tree's flame graph.
 */
#include "analysis/views/flamediff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "util/xalloc.h"

/* One tree's walk: its side, and the path id of each of its nodes walked. */
struct diff_walk {
	struct flame_diff *d;
	int side;
	const struct calltree *t;
	const struct funcs *f;
	uint32_t *node_path;	/* by node; the root's 0 */
};

/* A node's path: its caller's, walked before it, and its name. */
static void add_path(void *ctx, uint32_t node, const char *path, uint64_t self)
{
	struct diff_walk *dw = ctx;
	struct flame_diff *d = dw->d;
	const struct calltree_node *n = &dw->t->nodes.v[node];
	uint32_t caller = dw->node_path[n->parent];
	uint32_t name = strtab_intern(&d->names, text_escape_folded(funcs_name(dw->f, n->name)));
	uint32_t id = u64map_pair_id(&d->path_ids, caller, name);

	if (id > d->paths.len) {
		*VEC_PUSH(&d->paths) = (struct flame_path){ caller, name };
		*VEC_PUSH(&d->self[0]) = 0;
		*VEC_PUSH(&d->self[1]) = 0;
	}
	d->self[dw->side].v[id - 1] += self;
	d->total[dw->side] += self;
	dw->node_path[node] = id;
}

void flame_diff_build(struct flame_diff *d, const struct calltree *base, const struct funcs *fb,
		      const struct calltree *new, const struct funcs *fn, enum calltree_weight w)
{
	struct diff_walk dw = { .d = d, .side = 1, .t = new, .f = fn };
	double most = 0;

	memset(d, 0, sizeof(*d));
	d->node_path = xcalloc(new->nodes.len + 1, sizeof(*d->node_path));
	d->delta = xcalloc(new->nodes.len + 1, sizeof(*d->delta));
	dw.node_path = d->node_path;
	calltree_walk_paths(new, fn, w, add_path, &dw);
	dw = (struct diff_walk){ .d = d, .side = 0, .t = base, .f = fb };
	dw.node_path = xcalloc(base->nodes.len + 1, sizeof(*dw.node_path));
	calltree_walk_paths(base, fb, w, add_path, &dw);
	free(dw.node_path);
	/* Each frame's change of share, scaled so that the largest is 1 or -1. */
	for (size_t i = 0; i < new->nodes.len; i++) {
		uint32_t id = d->node_path[i];

		if (!id)
			continue;
		d->delta[i] = flame_diff_share(d, id, 1) - flame_diff_share(d, id, 0);
		if (fabs(d->delta[i]) > most)
			most = fabs(d->delta[i]);
	}
	for (size_t i = 0; most > 0 && i < new->nodes.len; i++)
		d->delta[i] /= most;
}

double flame_diff_share(const struct flame_diff *d, uint32_t path, int side)
{
	return d->total[side] ? (double)d->self[side].v[path - 1] / (double)d->total[side] : 0;
}

void flame_diff_print_folded(FILE *out, const struct flame_diff *d)
{
	VEC(uint32_t) names = {0};	/* of a path, innermost first */

	for (uint32_t id = 1; id <= d->paths.len; id++) {
		if (!d->self[0].v[id - 1] && !d->self[1].v[id - 1])
			continue;
		names.len = 0;
		for (uint32_t p = id; p; p = d->paths.v[p - 1].caller)
			*VEC_PUSH(&names) = d->paths.v[p - 1].name;
		for (size_t k = names.len; k-- > 0;) {
			fputs(strtab_get(&d->names, names.v[k]), out);
			fputc(k ? ';' : ' ', out);
		}
		fprintf(out, "%" PRIu64 " %" PRIu64 "\n", d->self[0].v[id - 1], d->self[1].v[id - 1]);
	}
	VEC_FREE(&names);
}

void flame_diff_free(struct flame_diff *d)
{
	strtab_free(&d->names);
	u64map_free(&d->path_ids);
	VEC_FREE(&d->paths);
	VEC_FREE(&d->self[0]);
	VEC_FREE(&d->self[1]);
	free(d->node_path);
	free(d->delta);
}
