/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_ANNOTATE_PRIVATE_H
#define GTRACE_ANALYSIS_VIEWS_ANNOTATE_PRIVATE_H

/* What annotate's files share: the lines (annotate.c) and the instructions (annotate-asm.c). */

#include <stdint.h>
#include <stdio.h>

#include "analysis/views/annotate.h"
#include "util/json.h"

/* n as a percentage of of; 0 when of is. */
double annotate_share(uint64_t n, uint64_t of);

/*
 * The instructions of each block of code the recording kept (table codes)
 * that a sample of the function fell in, each with its share of the
 * function's samples; as text after the lines, or as the member "code".
 */
void annotate_print_asm(FILE *out, const struct annotate *a, const struct model *m);
void annotate_json_asm(struct json *j, const struct annotate *a, const struct model *m);

#endif
