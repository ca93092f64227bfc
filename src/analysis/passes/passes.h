/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_PASSES_PASSES_H
#define GTRACE_ANALYSIS_PASSES_PASSES_H

/*
 * The passes over a loaded model that several views share: the functions
 * of stack nodes, sample filters, counting by stack, origin links, NVTX
 * ranges, order statistics, the call tree and the GPU PC samples joined.
 * Every aggregation is one pass over the samples that counts them per
 * (group of threads, leaf stack node), then a walk over those distinct
 * stacks: the work grows with the number of distinct stacks, not of
 * samples. Each view has a header of its own in views/.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "symbols/demangle.h"
#include "util/hashmap.h"
#include "util/vec.h"

/*
 * A recording whose recorder died before writing its names: whether it
 * lacks them, and how many the local files gave back.
 */
struct localnames_stats {
	size_t missing;		/* addresses without a name in the recording */
	size_t named;		/* of those, named from the local files */
	size_t stale_dsos;	/* files whose build-id is not the recorded one: not used */
	size_t missing_dsos;	/* files that could not be read */
};

bool localnames_needed(const struct model *m);
/* Names its addresses from the files at their recorded paths, under symfs when not NULL. */
void localnames_fill(struct model *m, const char *symfs, struct localnames_stats *st);

/*
 * The recorder keeps Rust names mangled: each function name of the symbols
 * table demangled (src/symbols/rust-demangle.h), with its hashes or not,
 * before any view reads it.
 */
void rustnames_demangle(struct model *m, bool hashes);

/* A function as the views show it: a name within a dso. */
struct func {
	uint32_t name;		/* id in funcs.names */
	uint32_t dso;		/* id in funcs.names: the dso's basename */
	uint32_t line;		/* id in funcs.names of "file:line" (FUNCS_SRCLINES); 0 none */
};

/*
 * The functions of every location. Without inline frames a location is its
 * outermost (non-inlined) function; with them, its whole inline chain. A
 * location without symbols becomes "[dso]+0xADDR" ("0xADDR" with no dso).
 * A Python frame is "qualname (file.py:line)" in dso "file.py", its file's
 * basename; without lines, "qualname (file.py)", one func for all its lines.
 * With FUNCS_SRCLINES a func is also its source line, "file:line" by the
 * file's basename: a frame's own line with inline frames (an outer frame's
 * is the call site of what is inlined into it), and without them the
 * innermost line of the location, where its instruction is, as addr2line
 * and perf say. A frame without a line has line 0, as do lane work's.
 */
struct funcs {
	const struct model *m;
	struct strtab names;	/* function, dso and thread names, by content */
	VEC(struct func) v;	/* by func id; a func id indexes v */
	struct u64map index;	/* name << 32 | dso -> func id */
	struct u64map line_index; /* func id << 32 | line -> func id of the func at that line */
	uint32_t *loc_first;	/* by loc id: its frames are frames.v[loc_first[loc] .. loc_first[loc + 1]) */
	VEC(uint32_t) frames;	/* func ids, innermost first */
	uint32_t unknown;	/* the func of a sample without any frame */
	uint32_t *lane_frame;	/* by lane id: names id of "[lane] NAME", 0 not made yet */
	uint32_t *span_frame;	/* by string id: names id of a span name, 0 not made yet */
	struct demangler demangler;
};

/* How funcs_init names the frames. */
enum funcs_flags {
	FUNCS_INLINE = 1 << 0,		/* inlined functions are frames of their own */
	FUNCS_PYTHON_LINES = 1 << 1,	/* a Python frame's name has its line */
	FUNCS_SRCLINES = 1 << 2,	/* a func is a function at a source line */
};

/* flags: enum funcs_flags. */
void funcs_init(struct funcs *f, const struct model *m, unsigned flags);
void funcs_free(struct funcs *f);

/* The func ids of a stack node's location, innermost first. */
const uint32_t *funcs_of_node(const struct funcs *f, uint32_t node, uint32_t *n);
const char *funcs_name(const struct funcs *f, uint32_t name_id);
/*
 * A stack node's caller: 0 for an outermost frame, and where a corrupt
 * file's parent does not come first.
 */
uint32_t stack_caller(const struct model *m, uint32_t node);
/*
 * The func a span whose origin linked to stack node node was queued from:
 * the innermost frame of the program itself, not gtrace's, CUDA's, the C
 * library's or the vDSO's; failing that, the innermost not gtrace's nor
 * CUDA's; failing that, the leaf.
 */
uint32_t funcs_queued_from(const struct funcs *f, uint32_t node);
/* The names id of a thread's name: its latest comm, or ":TID" when it has none. */
uint32_t funcs_thread_name(struct funcs *f, const struct model_thread *th);
/* The same for the name of string id name_id, one of those it had (model_name). */
uint32_t funcs_thread_named(struct funcs *f, const struct model_thread *th, uint32_t name_id);
/* The names id of a Python location's "file.py:line"; 0 for another location. */
uint32_t funcs_python_line(struct funcs *f, uint32_t loc);

/*
 * Lane work shows as frames of its own: a lane as LANE_FRAME_PREFIX and its
 * name, a span by its name, demangled (GPU kernels have C++ names).
 */
#define LANE_FRAME_PREFIX "[lane] "
/* The names id of lane id lane's frame. */
uint32_t funcs_lane_frame(struct funcs *f, uint32_t lane);
/* The names id of the frame of span name name (a string id). */
uint32_t funcs_span_frame(struct funcs *f, uint32_t name);
/*
 * The func of the spans named name on lane lane, for the views that list
 * funcs: the span's frame as its name, the lane's frame as its dso.
 */
uint32_t funcs_span(struct funcs *f, uint32_t lane, uint32_t name);

/* Which samples count. An empty list does not filter. */
struct sample_filter {
	VEC(uint32_t) pids;
	VEC(uint32_t) tids;
	VEC(char *) comms;
	VEC(char *) dsos;	/* basename of the sampled (leaf) location's dso */
	VEC(uint32_t) ranks;	/* of the model's ranks (model_rank.rank) */
};

enum filter_field {
	FILTER_PID,
	FILTER_TID,
	FILTER_COMM,
	FILTER_DSO,
	FILTER_RANK,
};

/* Adds a comma-separated list; -EINVAL for an empty item or a bad number. */
int filter_add(struct sample_filter *flt, enum filter_field field, const char *list);
void filter_free(struct sample_filter *flt);
/* Whether rank number rank passes the --rank list; true with no filter. */
bool filter_rank(const struct sample_filter *flt, int64_t rank);
/* Whether process pid passes the --pid and --rank lists; true with no filter. */
bool filter_process(const struct sample_filter *flt, const struct model *m, uint32_t pid);
/* The rank number (model_rank.rank) of the recording that process pid is in. */
int64_t pid_rank(const struct model *m, uint32_t pid);
/* Whether a thread passes the filter: --comm by its latest name. */
bool filter_thread(const struct sample_filter *flt, struct funcs *f,
		   const struct model_thread *th);
/* Whether its samples taken while it had the name of string id name do. */
bool filter_thread_named(const struct sample_filter *flt, struct funcs *f,
			 const struct model_thread *th, uint32_t name);
/* Whether a lane's work is selected: as a thread, and only without a dso filter. */
bool filter_lane(const struct sample_filter *flt, struct funcs *f,
		 const struct model_thread *lane);
/* By lane id (1 .. lanes): whether filter_lane selects the lane. Free it. */
bool *filter_lanes(struct funcs *f, const struct sample_filter *flt);
/*
 * Whether a span is selected: its lane is (lane_selected, by lane id, as
 * filter_lanes says), or the thread that queued it passes the filter:
 * --tid of a CPU thread selects the work it launched. All are with no filter.
 */
bool filter_span(const struct sample_filter *flt, struct funcs *f, const bool *lane_selected,
		 const struct tr_span *sp);
/*
 * By stack node id (0 .. nodes): whether a sample ending there passes the
 * dso filter. NULL, meaning all pass, when there is no dso filter.
 */
bool *filter_nodes(const struct funcs *f, const struct sample_filter *flt);

/*
 * Where each span's origin leads. A span has no origin when its origin tid
 * and time are both 0; otherwise the origin is joined to the sample with a
 * stack of that thread nearest in time, if it is within the window.
 */
enum origin_outcome {
	ORIGIN_NONE,		/* no origin */
	ORIGIN_LINKED,		/* a sample with a stack within the window */
	ORIGIN_BAD_TID,		/* tid 0 with a time, or a synthetic tid */
	ORIGIN_NO_THREAD,	/* a tid the recording never saw */
	ORIGIN_NO_STACK,	/* the thread has no sample with a stack */
	ORIGIN_TOO_FAR,		/* its nearest such sample is outside the window */
	ORIGIN_OUTCOMES
};

/* Distances in ns between origins and their nearest samples. */
struct distance_stats {
	uint64_t count;
	uint64_t min, max, sum;
};

struct origin_links {
	uint64_t window_ns;
	uint8_t *outcome;	/* by span index: enum origin_outcome */
	uint32_t *sample;	/* by span index: the linked sample's index + 1, else 0 */
	uint64_t counts[ORIGIN_OUTCOMES];
	struct distance_stats linked, too_far;
};

/* Four sampling periods, or 4 ms when the sampling rate is unknown. */
uint64_t origins_default_window(const struct model *m);
/* O(spans log samples): each thread's samples are indexed once. */
void origins_link(struct origin_links *l, const struct model *m, uint64_t window_ns);
void origins_free(struct origin_links *l);
/* "linked", "bad_tid", ...: the names the views print. */
const char *origin_outcome_name(enum origin_outcome o);

/*
 * An origin of a real thread at a real time, linked to a sample or not:
 * what the call that queued a span and its queue delay need.
 */
static inline bool origin_of_thread(enum origin_outcome o)
{
	return o != ORIGIN_NONE && o != ORIGIN_BAD_TID;
}

/* qsort's ascending order of uint64_t values. */
int u64_cmp(const void *pa, const void *pb);
/* The value at quantile q of n sorted values, by nearest rank; 0 for none. */
double u64_quantile(const uint64_t *sorted, size_t n, double q);
/* The median of n sorted values: the middle one, or the mean of the middle two; 0 for none. */
double u64_median(const uint64_t *sorted, size_t n);
/*
 * The median of n values, which it sorts, in whole units: the middle one,
 * or halfway between the middle two rounded down; 0 for none.
 */
int64_t i64_median(int64_t *v, size_t n);

/*
 * NVTX ranges: a span on a lane of kind "nvtx" is a range of its origin
 * thread, open from its start until its end. The ranges open at one time
 * form a chain, interned like stack nodes: chain 0 is no range, chain c
 * (chains.v[c - 1]) its innermost range's name under its parent chain.
 * The default domain's ranges come first, then each named domain's
 * (passes/nvtx.c).
 */
/* Nesting past which NVTX ranges count as their outermost NVTX_MAX_DEPTH. */
#define NVTX_MAX_DEPTH 256

struct nvtx_chain {
	uint32_t parent;	/* chain id, 0 for an outermost range */
	uint32_t name;		/* string id of the innermost range's name */
	uint32_t domain;	/* its lane's name's string id for a named domain, 0 the default */
	uint32_t depth;		/* 0 for an outermost range */
};

/* From start until the thread's next segment, the chain open. */
struct nvtx_segment {
	uint64_t start;
	uint32_t chain;
};

/*
 * The call tree's frame of a range: the prefix, then its name; a named
 * domain's range's "[nvtx DOMAIN] NAME".
 */
#define NVTX_FRAME_PREFIX "[nvtx] "
#define NVTX_DOMAIN_FRAME_PREFIX "[nvtx "
#define NVTX_DOMAIN_FRAME_SUFFIX "] "

struct nvtx_ranges {
	VEC(struct nvtx_chain) chains;
	struct u64map threads;	/* tid -> k: segs.v[seg_start.v[k] .. seg_start.v[k + 1]) */
	VEC(size_t) seg_start;
	VEC(struct nvtx_segment) segs;
};

void nvtx_ranges_build(struct nvtx_ranges *r, const struct model *m);
/* The chain open on thread tid at ts; 0 for none. O(log ranges of the thread). */
uint32_t nvtx_chain_at(const struct nvtx_ranges *r, uint32_t tid, uint64_t ts);
/* By sample index, the chain open on its thread when it was taken. Free it. */
uint32_t *nvtx_sample_chains(const struct nvtx_ranges *r, const struct model *m);
void nvtx_ranges_free(struct nvtx_ranges *r);

/*
 * Samples of one group of threads that ended in one stack node; or, for
 * lane work, the spans of one name and lane queued from there and their
 * target time.
 */
struct stack_count {
	uint32_t group;
	uint32_t node;
	uint32_t span;		/* lane work: the spans' funcs_span; samples: 0 */
	uint64_t count;
	uint64_t target_ns;
};

struct stack_counts {
	VEC(struct stack_count) c;	/* sorted by group, node, span */
	uint64_t total;			/* samples (spans) counted */
	uint64_t target_ns;		/* lane work: their target time */
};

/*
 * By sample index, the group of its thread: thread_group[thread index];
 * 0 for samples of lanes and unknown tids. Free it.
 */
uint32_t *groups_by_sample(const struct model *m, const uint32_t *thread_group);
/*
 * The same by the name its thread had when it was taken: name_group[index
 * in m->names], so that a thread renamed puts its samples in the group of
 * each name.
 */
uint32_t *groups_by_name(const struct model *m, const uint32_t *name_group);
/*
 * Splits the samples' groups (sample_group, by sample index; 0 leaves a
 * sample out) in place by two keys more: by_sample[sample index] and
 * by_node[its leaf node] (NULL: 0 for all). Each sample's group becomes
 * group_of(ctx, group, its by_sample key, its by_node key), called once
 * for each run of samples alike (samples come in runs of one thread and
 * stack).
 */
void split_sample_groups(const struct model *m, uint32_t *sample_group,
			 const uint32_t *by_sample, const uint32_t *by_node,
			 uint32_t (*group_of)(void *ctx, uint32_t group, uint32_t sample_key,
					      uint32_t node_key),
			 void *ctx);

/*
 * Counts the samples by (sample_group[sample index], leaf node); group 0
 * leaves a sample out. Applies the dso filter.
 */
void count_stacks(struct stack_counts *sc, const struct funcs *f,
		  const struct sample_filter *flt, const uint32_t *sample_group);
void stack_counts_free(struct stack_counts *sc);

/*
 * The lane work queued from the samples of nonzero sample_group (spans
 * whose origin linked to such a sample that passes the dso filter; NVTX
 * ranges are not work), counted by (group, node, funcs_span of the span's
 * lane and name): count spans, target_ns their durations.
 */
void count_lane_work(struct stack_counts *sc, struct funcs *f,
		     const struct sample_filter *flt, const uint32_t *sample_group,
		     const struct origin_links *links);

/*
 * The merged call tree: the root holds all samples, its children are thread
 * names, theirs the outermost functions and so on down to the leaves. With
 * several ranks loaded, the root's children are the ranks, "rank N", and
 * all of a rank's work (threads, lanes, kernels) hangs under its own.
 * Lane work is weighed in target time, never in samples: a selected lane is
 * a child "[lane] NAME" of the root with its span names under it, and the
 * lane work queued from a selected thread hangs the same way under the
 * stack its origin linked to. Kernel regions hang by region name under
 * "[kernel] NAME" at the root, all blocks and groups together; their
 * summaries are left out.
 */
/* Tree depth past which frames fold into the deepest node (recorded stacks stay far below). */
#define CALLTREE_MAX_DEPTH 8192

struct calltree_node {
	uint32_t parent;	/* index; the root is 0 and its own parent */
	uint32_t name;		/* id in funcs.names */
	uint32_t depth;		/* root 0, thread names 1 (2 under a rank's node) */
	bool lane;		/* a lane or span name node */
	uint64_t self;		/* samples that ended here */
	uint64_t total;		/* self plus the children's totals */
	uint64_t target_self;	/* ns of the spans of this span name node (idle: of its samples) */
	uint64_t target_total;
	uint64_t spans_self;	/* (idle: its samples) */
	uint64_t spans_total;
};

/* What the folded stacks and the SVG weigh. */
enum calltree_weight {
	WEIGHT_SAMPLES,
	WEIGHT_TARGET,		/* ns of lane work */
	WEIGHT_GPU_IDLE,	/* ns of GPU idle (calltree_build_idle) */
};

struct calltree {
	VEC(struct calltree_node) nodes;
	uint32_t *kid_start;	/* children of i: kids[kid_start[i] .. kid_start[i + 1]) */
	uint32_t *kids;		/* by total, descending */
};

/* A node's total weight. */
uint64_t calltree_weight_total(const struct calltree_node *n, enum calltree_weight w);

/*
 * links may be NULL: no lane work under the stacks. The NVTX ranges open
 * at a sample are frames "[nvtx] NAME" between its thread name and its
 * outermost frame, outermost range first.
 */
void calltree_build(struct calltree *t, struct funcs *f, const struct sample_filter *flt,
		    const struct origin_links *links);
/* The same, with the NVTX range frames only when nvtx_frames is set. */
void calltree_build_ranges(struct calltree *t, struct funcs *f, const struct sample_filter *flt,
			   const struct origin_links *links, bool nvtx_frames);
/*
 * The selected samples weighed by idle_ns[sample index] in place of 1:
 * the ns of a node's samples are its target_self, their count its
 * spans_self, as lane work's are; samples of no weight are left out, and
 * no lane work is added.
 */
void calltree_build_idle(struct calltree *t, struct funcs *f, const struct sample_filter *flt,
			 const uint64_t *idle_ns, bool nvtx_frames);
void calltree_free(struct calltree *t);
/*
 * An indented tree, pruning nodes under min_percent of all samples and of
 * all target time. Lane work shows target ms and spans in place of the
 * percentage and samples.
 */
void calltree_print(FILE *out, const struct calltree *t, const struct funcs *f,
		    double min_percent);
/*
 * The root's subtrees, each line after prefix, its shares of all samples
 * and pruned under min_percent of them: report's call graph under a row.
 */
void calltree_print_under(FILE *out, const struct calltree *t, const struct funcs *f,
			  double min_percent, uint64_t all, const char *prefix);
/*
 * A tree of other paths (report's call graphs), on the same code: a root
 * named root pushed on t->nodes, calltree_child for each frame under its
 * parent (kids indexes them), self counts set, then calltree_finish.
 */
uint32_t calltree_child(struct calltree *t, struct u64map *kids, uint32_t parent, uint32_t name);
/* Totals up the tree and lists each node's children, largest first. */
void calltree_finish(struct calltree *t, const struct funcs *f);
/* Collapsed stacks: "thread;outer;...;leaf weight", one line per leaf. */
void calltree_print_folded(FILE *out, const struct calltree *t, const struct funcs *f,
			   enum calltree_weight w);
/*
 * Calls fn for each node of some weight but the root, parents first in the
 * folded stacks' order, with its path: the names from the thread down to
 * it, each escaped as text_escape_folded does (util/text.h), joined by
 * ';', and its own weight.
 */
typedef void calltree_path_fn(void *ctx, uint32_t node, const char *path, uint64_t self);
void calltree_walk_paths(const struct calltree *t, const struct funcs *f, enum calltree_weight w,
			 calltree_path_fn *fn, void *ctx);
struct pc_view;
/*
 * The GPU PC samples of v as a call tree weighed in samples: each bucket
 * under the stack that launched its kernel (thread name, NVTX range frames
 * when nvtx_frames, functions), then "[kernel] NAME", its source line (or
 * function+0xOFF), its stall reason ("_not_issued" buckets, parts of
 * their reason's samples, left out). A bucket whose launch did not link to
 * a sample of a selected thread hangs its kernel at the root.
 */
void calltree_build_pc(struct calltree *t, struct funcs *f, const struct sample_filter *flt,
		       const struct pc_view *v, bool nvtx_frames);
/*
 * GPU PC samples (gtrace record --gpu-pc-sampling): buckets of samples of
 * one stall reason at one instruction of a kernel, table pc_samples. The
 * instruction is an offset in the kernel's function; its source line comes
 * from the code image (table cubins) when the cubin was kept and built
 * with -lineinfo. A reason's "_not_issued" variant counts the part of its
 * samples taken on a cycle when no instruction was issued: those buckets
 * are no more samples, and the totals leave them out.
 */
/* The frame of a kernel in the PC samples' call tree: the prefix, then its name. */
#define KERNEL_FRAME_PREFIX "[kernel] "

/* What became of an instruction's source line. */
enum pc_line_outcome {
	PC_LINE_KNOWN,		/* a file and line */
	PC_LINE_NO_IMAGE,	/* the cubin was not kept (cubin id 0) */
	PC_LINE_BAD_IMAGE,	/* the cubin would not parse */
	PC_LINE_OVER_LIMIT,	/* parsing the cubin would pass the model's read limit */
	PC_LINE_NO_LINEINFO,	/* the cubin has no line table (built without -lineinfo) */
	PC_LINE_UNKNOWN,	/* the function or offset is not in the cubin's line table */
	PC_LINE_OUTCOMES
};

/* A distinct instruction: (cubin, function, pc), and its source line. */
struct pc_site {
	uint32_t cubin;		/* cubin id, 0 when the image was not kept */
	uint32_t function;	/* string id of its symbol name: the first with that text */
	uint64_t pc;		/* byte offset from the function's start */
	uint32_t file;		/* id in pc_lines.files: the source file's basename; 0 none */
	uint32_t line;		/* 0 unknown */
	uint8_t outcome;	/* enum pc_line_outcome */
};

struct cubin;
/* The sites of the buckets looked up so far; each cubin is parsed once. */
struct pc_lines {
	const struct model *m;
	VEC(struct pc_site) sites;
	struct strtab files;
	struct u64map functions;	/* (cubin, function) -> dense id */
	struct u64map pcs;		/* (pc >> 32, pc) -> dense id */
	struct u64map ids;		/* (function id, pc id) -> site index + 1 */
	uint32_t *text_id;		/* by string id: model_string_id of its text, 0 not yet */
	struct cubin **cubins;		/* by cubin id: parsed on first use */
	uint8_t *cubin_outcome;		/* by cubin id: 0 not tried, else outcome + 1 */
	uint64_t cubin_room;		/* what parsing the cubins may still take: all
					   of them together, with the tables, stay
					   within the model's read limit */
};

/* The samples of the recording, by the outcome of their line. */
void pc_lines_count(const struct model *m, uint64_t samples[PC_LINE_OUTCOMES]);

/* The name of a stall reason without the device's prefix: "long_scoreboard". */
const char *pc_stall_short(const char *name);
/* Whether a stall reason's name (short or not) is a "_not_issued" variant. */
bool pc_stall_not_issued(const char *name);

/* The kernels of the selected buckets: one per function name. */
struct pc_kernel {
	uint32_t name;		/* names id of its demangled name, as funcs_span_frame */
	uint64_t samples;
};

/* A selected bucket, joined to its kernel's launch and its source line. */
struct pc_entry {
	uint32_t kernel;	/* index in pc_view.kernels */
	uint32_t site;		/* index in pc_view.lines.sites */
	uint32_t stall;		/* names id: the stall reason's short name, less "_not_issued" */
	bool not_issued;	/* a "_not_issued" bucket: part of its reason's samples */
	uint32_t span;		/* the launch's kernel span index + 1; 0 not joined */
	uint32_t origin;	/* the launching CPU sample's index + 1 (origin_links); 0 none */
	uint32_t pid;		/* the bucket's process */
	uint64_t count;
};

/*
 * The PC samples joined, in one pass: a bucket joins the kernel span of its
 * launch, on a "cuda" lane of its process with the same "correlation"
 * attribute (and, for a graph's kernels that share one, the same name);
 * through that span's origin link, the CPU sample, hence the stack, that
 * launched it. A bucket of correlation 0 (continuous mode) joins no launch:
 * its kernel is its function.
 */
struct pc_view {
	struct pc_lines lines;
	VEC(struct pc_kernel) kernels;
	VEC(struct pc_entry) entries;	/* in bucket order */
	VEC(uint32_t) places;		/* by site: names id of "file:line" (basename),
					   else "function+0xOFF" */
	uint64_t samples;		/* of the entries, "_not_issued" ones left out */
	uint64_t joined;		/* of those, joined to their launch */
	uint64_t by_outcome[PC_LINE_OUTCOMES];	/* of those, by their line's outcome */
};

/*
 * Selects the buckets as filter_span does through their launch (the
 * launching thread, or the kernel's lane); a bucket joined to no launch is
 * selected by --pid only. links may be NULL: no origins.
 */
void pc_view_build(struct pc_view *v, struct funcs *f, const struct sample_filter *flt,
		   const struct origin_links *links);
void pc_view_free(struct pc_view *v);

/* One span of lane work and the stack its origin linked to. */
struct lane_work {
	uint32_t group;		/* sample_group of the linked sample */
	uint32_t node;		/* the linked sample's leaf node */
	uint32_t span;		/* index in m->t.spans */
};

/*
 * The lane work queued from the samples of nonzero sample_group: the spans
 * whose origin linked to such a sample that passes the dso filter, in span
 * order; *n of them. NVTX ranges are not work: they are left out. Free the
 * array.
 */
struct lane_work *lane_work_select(const struct funcs *f, const struct sample_filter *flt,
				   const uint32_t *sample_group,
				   const struct origin_links *links, size_t *n);

/*
 * The CUDA API call that queued each kernel, copy and memset (launches.c),
 * by span index: call[span] the call's span + 1, 0 none; a call's work is
 * launched[first[call] .. first[call + 1]).
 */
struct api_launches {
	uint32_t *call;
	uint32_t *first;
	uint32_t *launched;
};

/*
 * Finds them among spans (n indexes in m->t.spans), for work with an
 * origin of a real thread (outcome by span index) in the window [from, to).
 */
void api_launches_find(struct api_launches *l, const struct model *m, const uint8_t *outcome,
		       const uint32_t *spans, size_t n, uint64_t from, uint64_t to);
void api_launches_free(struct api_launches *l);

/* A span's time and whose it is: a call's thread, a work's process. */
struct owned_span {
	uint32_t owner;
	uint32_t span;
	uint64_t start, end;
};

/*
 * Sorts v[0 .. n) by owner, then nesting order, and keeps of each owner's
 * spans that nest (cudaMemcpy's cuMemcpy_v2 in it) the outermost: how many
 * are left, in that order, which is each owner's order by end too.
 */
size_t owned_spans_outermost(struct owned_span *v, size_t n);

/* A step of a stream's queue length: len from ts on. */
struct queue_step {
	uint64_t ts;
	uint64_t len;
};

/*
 * One CUDA stream's queue length over time (launches.c): how many of the
 * kernels, copies and memsets among spans[0 .. n) (indexes in m->t.spans,
 * of one stream lane) were launched and had not ended. Each counts from
 * its launch call's start (l), else its origin's time when it has one,
 * else its own start (never later than that), to its end. *steps gets a
 * step at each time the length changes, by time, the last back to 0,
 * those before from as one at from (the length then); returns their
 * count. Free *steps.
 */
size_t stream_queue_steps(const struct model *m, const struct api_launches *l,
			  const uint32_t *spans, size_t n, uint64_t from, struct queue_step **steps);

#endif
