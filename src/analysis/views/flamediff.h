/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_FLAMEDIFF_H
#define GTRACE_ANALYSIS_VIEWS_FLAMEDIFF_H

/* flame --diff: two call trees joined by path. */

#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"
#include "util/hashmap.h"
#include "util/vec.h"

/*
 * flame --diff: a base and a new call tree joined by path (the names from
 * the thread down to a frame), each path with its own weight in both. A
 * path is its caller's path and its name: the memory grows with the
 * frames, not with the length of their paths.
 */
struct flame_path {
	uint32_t caller;		/* path id, 0 for a thread's (or a rank's) */
	uint32_t name;			/* id in flame_diff.names */
};

struct flame_diff {
	struct strtab names;		/* frame names, escaped as folded stacks write them */
	struct u64map path_ids;		/* caller << 32 | name -> path id */
	VEC(struct flame_path) paths;	/* by path id - 1 */
	VEC(uint64_t) self[2];		/* by path id - 1: base [0], new [1] */
	uint64_t total[2];
	uint32_t *node_path;		/* by new tree node: its path id */
	double *delta;			/* by new tree node: change of self share, in [-1, 1] */
};

void flame_diff_build(struct flame_diff *d, const struct calltree *base, const struct funcs *fb,
		      const struct calltree *new, const struct funcs *fn, enum calltree_weight w);
/* A path's self weight as a share of its tree's (side 0 base, 1 new). */
double flame_diff_share(const struct flame_diff *d, uint32_t path, int side);
/* "path base new", one line per path with weight of its own in either. */
void flame_diff_print_folded(FILE *out, const struct flame_diff *d);
void flame_diff_free(struct flame_diff *d);

#endif
