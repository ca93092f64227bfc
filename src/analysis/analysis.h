/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_ANALYSIS_H
#define GTRACE_ANALYSIS_ANALYSIS_H

/*
 * Aggregations over a loaded model and the writers that print them. Every
 * aggregation is one pass over the samples that counts them per (group of
 * threads, leaf stack node), then a walk over those distinct stacks: the
 * work grows with the number of distinct stacks, not of samples.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "util/hashmap.h"
#include "util/vec.h"

/* A function as the views show it: a name within a dso. */
struct func {
	uint32_t name;		/* id in funcs.names */
	uint32_t dso;		/* id in funcs.names: the dso's basename */
};

/*
 * The functions of every location. Without inline frames a location is its
 * outermost (non-inlined) function; with them, its whole inline chain. A
 * location without symbols becomes "[dso]+0xADDR" ("0xADDR" with no dso).
 */
struct funcs {
	const struct model *m;
	struct strtab names;	/* function, dso and thread names, by content */
	VEC(struct func) v;	/* by func id; a func id indexes v */
	struct u64map index;	/* name << 32 | dso -> func id */
	uint32_t *loc_first;	/* by loc id: its frames are frames.v[loc_first[loc] .. loc_first[loc + 1]) */
	VEC(uint32_t) frames;	/* func ids, innermost first */
	uint32_t unknown;	/* the func of a sample without any frame */
};

void funcs_init(struct funcs *f, const struct model *m, bool inline_frames);
void funcs_free(struct funcs *f);

/* The func ids of a stack node's location, innermost first. */
const uint32_t *funcs_of_node(const struct funcs *f, uint32_t node, uint32_t *n);
const char *funcs_name(const struct funcs *f, uint32_t name_id);
/* The names id of a thread's name: its comm, or ":TID" when it has none. */
uint32_t funcs_thread_name(struct funcs *f, const struct model_thread *th);

/* Which samples count. An empty list does not filter. */
struct sample_filter {
	VEC(uint32_t) pids;
	VEC(uint32_t) tids;
	VEC(char *) comms;
	VEC(char *) dsos;	/* basename of the sampled (leaf) location's dso */
};

enum filter_field {
	FILTER_PID,
	FILTER_TID,
	FILTER_COMM,
	FILTER_DSO,
};

/* Adds a comma-separated list; -EINVAL for an empty item or a bad number. */
int filter_add(struct sample_filter *flt, enum filter_field field, const char *list);
void filter_free(struct sample_filter *flt);
bool filter_thread(const struct sample_filter *flt, struct funcs *f,
		   const struct model_thread *th);

/* Samples of one group of threads that ended in one stack node. */
struct stack_count {
	uint32_t group;
	uint32_t node;
	uint64_t count;
};

struct stack_counts {
	VEC(struct stack_count) c;	/* sorted by group, then node */
	uint64_t total;			/* samples counted */
};

/*
 * Counts the samples of real threads by (thread_group[thread index], leaf
 * node); group 0 leaves a thread's samples out. Applies the dso filter.
 */
void count_stacks(struct stack_counts *sc, const struct funcs *f,
		  const struct sample_filter *flt, const uint32_t *thread_group);
void stack_counts_free(struct stack_counts *sc);

/* report: one row per distinct value of the sort keys. */
enum report_key {
	KEY_COMM,
	KEY_DSO,
	KEY_SYMBOL,
	KEY_PID,
	KEY_TID,
	REPORT_KEYS
};

struct report_opts {
	enum report_key keys[REPORT_KEYS];
	size_t nkeys;
	bool children;		/* compute and sort by Children */
	bool inline_frames;
	size_t limit;		/* rows to print, 0 all */
	const struct sample_filter *filter;
};

/* Parses "comm,dso,symbol"; -EINVAL for an unknown or repeated key. */
int report_parse_keys(struct report_opts *o, const char *list);

struct report_row {
	uint32_t thread;	/* a thread of the row: its comm, pid, tid */
	uint32_t func;		/* a func of the row: its dso, symbol */
	uint64_t self;		/* samples whose innermost frame is the row's */
	uint64_t children;	/* samples with the row anywhere on the stack, once each */
};

struct report {
	VEC(struct report_row) rows;	/* sorted, first row printed first */
	uint64_t total;
};

void report_build(struct report *r, struct funcs *f, const struct report_opts *o);
void report_print(FILE *out, const struct report *r, struct funcs *f,
		  const struct report_opts *o, const char *path);
void report_free(struct report *r);

/*
 * The merged call tree: the root holds all samples, its children are thread
 * names, theirs the outermost functions and so on down to the leaves.
 */
struct calltree_node {
	uint32_t parent;	/* index; the root is 0 and its own parent */
	uint32_t name;		/* id in funcs.names */
	uint32_t depth;		/* root 0, thread names 1 */
	uint64_t self;		/* samples that ended here */
	uint64_t total;		/* self plus the children's totals */
};

struct calltree {
	VEC(struct calltree_node) nodes;
	uint32_t *kid_start;	/* children of i: kids[kid_start[i] .. kid_start[i + 1]) */
	uint32_t *kids;		/* by total, descending */
};

void calltree_build(struct calltree *t, struct funcs *f, const struct sample_filter *flt);
void calltree_free(struct calltree *t);
/* An indented tree, pruning nodes under min_percent of all samples. */
void calltree_print(FILE *out, const struct calltree *t, const struct funcs *f,
		    double min_percent);
/* Collapsed stacks: "thread;outer;...;leaf count", one line per leaf. */
void calltree_print_folded(FILE *out, const struct calltree *t, const struct funcs *f);
/* A self-contained interactive SVG flame graph. */
void calltree_write_svg(FILE *out, const struct calltree *t, const struct funcs *f,
			const char *title);

/* threads: the real threads by samples (at most limit, 0 all), then every lane. */
void threads_print(FILE *out, const struct model *m, size_t limit);

/* diagnose: the recording's health, from the container, meta and counters. */
void diagnose_print(FILE *out, const struct model *m, const char *path);

#endif
