/* SPDX-License-Identifier: MIT */
/*
 * flame --diff: two call trees joined by path, the names from the thread
 * down to a frame. Each path's own weight in both trees gives the folded
 * stacks with two counts (the form difffolded.pl makes) and, as a change
 * of share, the colour of each frame of the new tree's flame graph.
 */
#include "analysis/analysis.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

struct diff_walk {
	struct flame_diff *d;
	int side;
};

static void add_path(void *ctx, uint32_t node, const char *path, uint64_t self)
{
	struct diff_walk *dw = ctx;
	struct flame_diff *d = dw->d;
	uint32_t id = strtab_intern(&d->paths, path);

	while (d->self[0].len < id) {
		*VEC_PUSH(&d->self[0]) = 0;
		*VEC_PUSH(&d->self[1]) = 0;
	}
	d->self[dw->side].v[id - 1] += self;
	d->total[dw->side] += self;
	if (dw->side == 1)
		d->node_path[node] = id;
}

void flame_diff_build(struct flame_diff *d, const struct calltree *base, const struct funcs *fb,
		      const struct calltree *new, const struct funcs *fn, enum calltree_weight w)
{
	struct diff_walk dw = { .d = d };
	double most = 0;

	memset(d, 0, sizeof(*d));
	d->node_path = xcalloc(new->nodes.len + 1, sizeof(*d->node_path));
	d->delta = xcalloc(new->nodes.len + 1, sizeof(*d->delta));
	dw.side = 1;
	calltree_walk_paths(new, fn, w, add_path, &dw);
	dw.side = 0;
	calltree_walk_paths(base, fb, w, add_path, &dw);
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
	for (uint32_t id = 1; id <= d->self[0].len; id++)
		if (d->self[0].v[id - 1] || d->self[1].v[id - 1])
			fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", strtab_get(&d->paths, id),
				d->self[0].v[id - 1], d->self[1].v[id - 1]);
}

void flame_diff_free(struct flame_diff *d)
{
	strtab_free(&d->paths);
	VEC_FREE(&d->self[0]);
	VEC_FREE(&d->self[1]);
	free(d->node_path);
	free(d->delta);
}
