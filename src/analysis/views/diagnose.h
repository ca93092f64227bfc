/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_DIAGNOSE_H
#define GTRACE_ANALYSIS_VIEWS_DIAGNOSE_H

/* diagnose: how the recording went (views/diagnose*.c). */

#include <stdio.h>

#include "analysis/passes/passes.h"

/*
 * The recording's health, from the container, meta and counters,
 * and how the spans' origins linked.
 */
void diagnose_print(FILE *out, const struct model *m, const char *path,
		    const struct origin_links *links);
/*
 * The same as one JSON document: the container, every meta pair, every
 * counter and the origin links (gtrace-diagnose(1) lists its keys).
 */
void diagnose_print_json(FILE *out, const struct model *m, const char *path,
			 const struct origin_links *links);

#endif
