/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_ANNOTATE_H
#define GTRACE_ANALYSIS_VIEWS_ANNOTATE_H

/*
 * annotate: one function's self samples by its source lines, from the line
 * tables the recorder resolved. A sample counts for the function when its
 * innermost frame is the function (as report --no-children counts self);
 * it counts at the line of the function that its leaf address is on. Code
 * that the compiler inlined into the function counts at the line of the
 * function that called it: every line shown is the function's own, in its
 * own source file. A Python function's samples count by its Python lines.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"

struct annotate_opts {
	const struct sample_filter *filter;
	const char *symbol;	/* the function as report names it; NULL: the hottest */
	const char *source_dir;	/* where to look for the source files first; NULL: none */
	size_t limit;		/* lines to show: the N hottest, 0 all */
	bool asm_code;		/* --asm: its instructions too, from table codes */
};

/* One source line of the function and its samples. */
struct annotate_line {
	uint32_t file;		/* model string id of the source file, 0 unknown */
	uint32_t line;		/* 0 unknown */
	uint64_t samples;
};

/* The samples at one address of the function's native code. */
struct annotate_addr {
	uint32_t dso;		/* dso id */
	uint64_t addr;		/* ELF virtual address, as locs have it */
	uint64_t samples;
};

struct annotate {
	uint32_t func;		/* func id of the function (its dso: where it has most samples) */
	uint64_t samples;	/* the function's self samples */
	uint64_t total;		/* all the samples selected */
	VEC(struct annotate_line) lines;	/* by file name, then line */
	VEC(struct annotate_addr) addrs;	/* by dso, then address; native code only */
};

/*
 * Counts the selected samples of o->symbol, or of the function with the
 * most self samples (ties by name, as report sorts them). 0, or -ENOENT
 * when no selected sample's innermost frame is that function (or, with no
 * symbol, when there is no sample).
 */
int annotate_build(struct annotate *a, struct funcs *f, const struct annotate_opts *o);
/*
 * The lines in file order, each with its share of the function's samples
 * and, where its source file is readable, its text: the recorded path
 * under o->source_dir, then the same by its basename there, then the
 * recorded path itself; with o->asm_code, then the instructions of the
 * function's code that the recording kept, each with its share. The text,
 * as JSON the same with the keys gtrace-annotate(1) lists.
 */
void annotate_print(FILE *out, const struct annotate *a, struct funcs *f,
		    const struct annotate_opts *o, const char *path);
void annotate_print_json(FILE *out, const struct annotate *a, struct funcs *f,
			 const struct annotate_opts *o, const char *path);
void annotate_free(struct annotate *a);

#endif
