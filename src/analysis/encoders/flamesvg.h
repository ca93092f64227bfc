/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_ENCODERS_FLAMESVG_H
#define GTRACE_ANALYSIS_ENCODERS_FLAMESVG_H

/* flame's SVG: the call tree as a flame graph. */

#include <stdio.h>

#include "analysis/passes/passes.h"
#include "analysis/views/flamediff.h"

/*
 * A self-contained interactive SVG flame graph. With diff (built with t as
 * the new tree), each frame is coloured by its change: red grew, blue
 * shrank, white unchanged; NULL for the usual colours.
 */
void calltree_write_svg(FILE *out, const struct calltree *t, const struct funcs *f,
			const char *title, enum calltree_weight w, const struct flame_diff *diff);

#endif
