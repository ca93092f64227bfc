/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_MODEL_MODEL_H
#define GTRACE_MODEL_MODEL_H

/*
 * A whole recording in memory: every chunk's rows appended into one
 * struct tr_tables, plus the indexes the offline commands share (threads,
 * lanes, symbols per location, counters). The model is the only reader of
 * the file; commands aggregate and print from it. It reads the contract's
 * lane kinds and span names too (src/contract/lanes.h, spans.h): each lane
 * is classified once at load (model_lane_class), and the views ask it.
 */

#include <stdbool.h>
#include <stdint.h>

#include "format/file.h"
#include "format/tables.h"
#include "util/hashmap.h"
#include "util/saturate.h"
#include "util/vec.h"

/*
 * A name a real thread had from ts on, from its TR_TASK_COMM and
 * TR_TASK_EXEC rows: a thread renamed (prctl, exec) has one per name.
 */
struct model_name {
	uint64_t ts;
	uint32_t name;		/* string id; 0 for a thread never named */
	uint64_t samples;	/* taken under this name */
};

/*
 * A thread, or a lane shown as a synthetic thread (lane != 0, tid =
 * TR_SYNTHETIC_TID_BASE + lane - 1). Times are CLOCK_MONOTONIC ns; a thread
 * with no timestamped event has first_ts == last_ts == 0.
 */
struct model_thread {
	uint32_t pid;
	uint32_t tid;
	uint32_t name;		/* string id: latest comm, or the lane's name */
	uint32_t lane;		/* lane id, 0 for a real thread */
	/* A real thread's names, in time order: names.v[first_name .. first_name + names); 1 or more. */
	uint32_t first_name, names;
	uint64_t samples;
	uint64_t first_ts;	/* first event seen: task, sample, switch, span */
	uint64_t last_ts;
	uint64_t offcpu_ns;	/* sum of its off-CPU intervals, at most UINT64_MAX */
	uint64_t offcpu_reason_ns[TR_OFFCPU_REASONS];	/* the same by enum tr_offcpu_reason */
	uint64_t spans;		/* lanes: number of spans */
	uint64_t span_ns;	/* lanes: sum of span durations, at most UINT64_MAX */
};

/*
 * What a lane is, from its kind (src/contract/lanes.h): classified once at
 * load, so that the views ask model_lane_class and never compare kinds.
 */
enum model_lane_class {
	MODEL_LANE_NONE,		/* no such lane: id 0, or past the lanes */
	MODEL_LANE_TARGET,		/* an application's, of a kind of its own or none */
	MODEL_LANE_CUDA_STREAM,		/* a GPU stream: kernels, copies, memsets */
	MODEL_LANE_CUDA_API,		/* CUDA runtime and driver API calls */
	MODEL_LANE_CUDA_WAIT,		/* the CPU waiting in a synchronizing call */
	MODEL_LANE_NVTX,		/* NVTX ranges of their origin threads */
	MODEL_LANE_CUDA_PC,		/* GPU PC sampling's windows */
	MODEL_LANE_KREGIONS,		/* kernel regions of a kernel's first blocks */
	MODEL_LANE_KREGION_STATS,	/* each collect's summary of a kernel's regions */
	MODEL_LANE_CLASSES
};

/*
 * What a span is where the views tell one lane's spans apart: on a CUDA
 * stream, by its name (src/contract/spans.h).
 */
enum model_span_class {
	MODEL_SPAN_OTHER,	/* not on a CUDA stream: its lane's class says */
	MODEL_SPAN_KERNEL,	/* named by its kernel */
	MODEL_SPAN_COPY,	/* CUDA_COPY_SPAN_PREFIX "<kind>]" */
	MODEL_SPAN_MEMSET,	/* CUDA_MEMSET_SPAN */
};

/* Where the symbol rows of one location are: symbols.v[first .. first+count). */
struct model_loc_syms {
	uint32_t first;
	uint32_t count;
};

/* Where the attribute rows of one span are: t.span_attrs.v[first .. first+count). */
struct model_span_attrs {
	uint32_t first;
	uint32_t count;
};

/* One value of a metric series: the quantity times 10^decimals of its tr_metric. */
struct model_point {
	uint64_t ts;
	uint64_t value;
};

/*
 * One recording of the model: a model read from several recordings (the
 * ranks of a job) has one per recording, in the order merged; one read
 * from one file has one. Its timestamps were moved by shift_ns onto the
 * first recording's CLOCK_MONOTONIC.
 */
struct model_rank {
	char *path;
	int64_t rank;		/* meta "rank", else its place among the recordings */
	bool has_rank;		/* the recording said its rank */
	int64_t local_rank;	/* meta "local-rank", else -1 */
	int64_t world_size;	/* meta "world-size", else -1 */
	int64_t shift_ns;	/* added to its timestamps */
	bool clock_pairs;	/* it and the first had clock pairs: shift_ns is theirs */
	int64_t drift_ns;	/* the shift its end pairs give minus the start pairs' */
	uint64_t start_ns, end_ns;	/* meta start-ns, end-ns + shift_ns; 0 unknown */
	VEC(struct tr_meta) meta;	/* its meta rows; the first's are m->t.meta */
	uint32_t first_metric;		/* the id of its first metric series; its are up to the next's */
	/* --align collectives: the collectives it was aligned by (0: not), and how far off they stay. */
	size_t aligned_by;
	int64_t residual_ns;
	/* Its rows in the tables with times, for model_shift_rank (model-internal.h). */
	struct model_rows {
		size_t first, n;
	} rows[6];
};

/*
 * What a folded load (model_load_folded) kept of a thread's rows that it
 * folded: the time of its last sample and the bounds of its off-CPU
 * intervals, whose time folded_offcpu sums. Times are 0 when it had none.
 */
struct model_folded_thread {
	uint32_t tid;
	uint64_t last_sample;
	bool offcpu;			/* it had off-CPU intervals (their time: folded_offcpu) */
	uint64_t offcpu_first, offcpu_last;
};

/*
 * Off-CPU time of one thread that went off the CPU in one stack for one
 * reason: what a folded load keeps of the offcpu rows, and what
 * model_offcpu_sums gives either way.
 */
struct model_offcpu_sum {
	uint32_t tid;
	uint32_t node;		/* the stack it last ran in, 0 unknown */
	uint32_t reason;	/* enum tr_offcpu_reason */
	uint64_t ns;		/* at most UINT64_MAX */
	uint64_t intervals;
};

struct model_offcpu_sums {
	VEC(struct model_offcpu_sum) v;
};

struct model {
	struct tr_tables t;
	/*
	 * Loaded folded: by row of t.samples, how many samples it stands for
	 * (model_sample_weight); empty when each row is one sample.
	 */
	VEC(uint64_t) sample_weights;
	/* Loaded folded: the threads whose rows were folded, t.offcpu left empty. */
	VEC(struct model_folded_thread) folded;
	/* Loaded folded: the offcpu rows summed by thread, stack and reason. */
	struct model_offcpu_sums folded_offcpu;
	struct tr_header header;

	/* The container, as read. */
	uint64_t file_size;
	uint64_t chunks;		/* chunks read whole */
	uint64_t compressed_bytes;	/* their frames */
	uint64_t payload_bytes;		/* their decompressed payloads */
	bool ended;			/* the END chunk was seen */
	int damage;			/* 0, or the error that stopped the reading */
	uint64_t damage_offset;		/* where the unreadable part starts */
	/*
	 * What reading it decoded, within what limit (0: none, as for tables
	 * filled by other means); with TR_ERR_BUDGET damage, its table says
	 * whose rows would have passed the limit (NULL: a chunk's payload).
	 * What is built from its blobs (cubins) stays within the limit too.
	 */
	struct tr_budget budget;

	/* Indexes built from the tables. */
	VEC(struct model_thread) threads; /* real threads by first appearance, then lanes */
	VEC(struct model_name) names;	/* the real threads' names, thread by thread */
	size_t real_threads;		/* threads.v[0 .. real_threads) are real */
	uint64_t lanes_past_limit;	/* lane rows past TR_MAX_LANES: cut off t.lanes */
	struct u64map thread_by_tid;	/* tid -> index in threads */
	uint8_t *lane_class;		/* by lane id: enum model_lane_class; [0] none */
	uint8_t *stream_span_class;	/* by string id: enum model_span_class of a
					   CUDA stream's span of that name */
	struct model_loc_syms *loc_syms; /* by loc id; [0] unused */
	VEC(struct tr_counter) counters; /* one per name, last value wins */
	struct strtab texts;		/* distinct string texts, for model_string_id */
	VEC(uint32_t) text_string_id;	/* by texts id - 1: the first string id with it */
	struct strtab meta_keys;	/* distinct meta keys */
	size_t *meta_last;		/* by meta_keys id - 1: the index of its last row */
	struct model_span_attrs *span_attrs; /* by span id; [0] unused */
	/* The values of metric id i: metric_points[metric_first[i] .. metric_first[i + 1]), by time. */
	struct model_point *metric_points;
	uint32_t *metric_first;		/* by metric id, metrics.len + 2 entries; NULL if none */
	uint64_t first_ts, last_ts;	/* of all timestamped rows; 0 if none */
	uint64_t start_ts;		/* recording start (meta "start-ns"), else first_ts */
	uint64_t processes;		/* distinct pids of real threads */
	/* model_clip's window, from included, to excluded; to 0: none. */
	uint64_t window_from, window_to;

	VEC(struct model_rank) ranks;	/* at least one once loaded */
	/* From model_merge to model_merge_end: what the merges share. */
	struct u64map merged_ids;	/* every pid and tid of the recordings merged */
	uint64_t next_merged_id;	/* where the search for a free one goes on */
	struct u64map merged_counters;	/* counter name -> its row in t.counters */
	struct u64map rank_of_pid;	/* pid -> rank index + 1, for ranks after the first */
};

/*
 * Reads path into m. Returns 0 (check m->damage: a truncated or corrupt
 * tail leaves the chunks before it loaded), -ENODATA for an empty file, or
 * a negative errno / TR_ERR_* code (tr_strerror) with m empty.
 */
int model_load(struct model *m, const char *path);
/*
 * The same within limit bytes decoded (struct tr_budget) instead of
 * tr_budget_limit of the file's size; 0 for that default. Past the limit
 * the reading stops as at a damaged chunk: m->damage is -TR_ERR_BUDGET.
 */
int model_load_within(struct model *m, const char *path, uint64_t limit);

/*
 * The same, for views that count samples by thread, name and stack and
 * never read one sample's time, CPU or flags: the samples of each thread
 * that no span names as its origin are folded into one row per name and
 * stack, whose weight is their number, and every thread's off-CPU
 * intervals into its struct model_folded_thread, so that memory grows with
 * the distinct stacks rather than the samples. The threads that queued
 * work keep a row per sample, for origins and NVTX ranges. The file is
 * read twice: all but the samples, then the samples. A recording that
 * does not read whole (but one cut between chunks) is loaded as
 * model_load_within does. Not for model_merge.
 */
int model_load_folded(struct model *m, const char *path, uint64_t limit);

/*
 * The off-CPU intervals summed by thread, stack and reason, whether loaded
 * folded or not, in order of first sight (reasons past the known ones as
 * unknown); free out->v with VEC_FREE.
 */
void model_offcpu_sums(const struct model *m, struct model_offcpu_sums *out);

/* An off-CPU row's reason as views count it: one a newer recorder wrote is unknown. */
static inline uint32_t model_offcpu_reason(uint32_t reason)
{
	return reason < TR_OFFCPU_REASONS ? reason : TR_OFFCPU_UNKNOWN;
}

/* A span's end, its start and length saturated: a hostile length cannot wrap. */
static inline uint64_t model_span_end(const struct tr_span *sp)
{
	return u64_sat_add(sp->start, sp->dur);
}

/* How many samples row i of m->t.samples stands for: 1 unless loaded folded. */
static inline uint64_t model_sample_weight(const struct model *m, size_t i)
{
	return m->sample_weights.len ? m->sample_weights.v[i] : 1;
}

/*
 * Appends the recording in from (loaded by model_load) to m as one more
 * rank, and frees from. Its timestamps move onto m's clock by the clock
 * pairs both recorded (meta clock-start: CLOCK_REALTIME and
 * CLOCK_MONOTONIC read together), so that recordings from several
 * machines line up as well as their clocks agree; its pids and tids that m
 * uses already are renumbered from MODEL_MERGED_PID_BASE up; its strings
 * take the ids of m's of the same text; its counters add to m's. m's
 * indexes are out of date until model_merge_end, which builds them once,
 * however many recordings were merged (a merge costs its recording).
 */
void model_merge(struct model *m, struct model *from);
void model_merge_end(struct model *m);
#define MODEL_MERGED_PID_BASE 0x400000u	/* above Linux's largest pid */

/*
 * "REALTIME MONOTONIC", a clock pair of meta clock-start or clock-end:
 * their difference, the monotonic clock's offset; false when pair is NULL
 * or not such a pair.
 */
bool model_clock_offset(const char *pair, int64_t *offset);

/* The index in m->ranks of the recording that process pid is in. */
size_t model_rank_of(const struct model *m, uint32_t pid);
/* The index in m->ranks of the recording whose series metric id is. */
size_t model_metric_rank(const struct model *m, uint32_t metric);
/* The last value of key in rank index r's own meta, or NULL. */
const char *model_rank_meta(const struct model *m, size_t r, const char *key);
/*
 * Moves each rank index r's timestamps by delta[r] ns more (its shift_ns
 * grows by it), for a finer alignment than the clock pairs'; indexes are
 * rebuilt, once.
 */
void model_shift_ranks(struct model *m, const int64_t *delta);

/*
 * Cuts m to [from, to) in CLOCK_MONOTONIC ns: the samples, metric readings
 * and losses taken in it, the off-CPU intervals and spans that overlap it,
 * cut at its ends; names, stacks and symbols stay. Threads and lanes are
 * seen only in it. Indexes are rebuilt. Not for a model loaded folded.
 */
void model_clip(struct model *m, uint64_t from, uint64_t to);

/* Builds the indexes from m->t, for tables filled by other means (tests). */
void model_index(struct model *m);
/* Indexes the symbol rows again, after rows were added to m->t.symbols. */
void model_index_symbols(struct model *m);

void model_free(struct model *m);

/* What m->damage says, in words: tr_strerror's, or which table passed the read limit. */
const char *model_damage_text(const struct model *m, char *buf, size_t size);

/* The string with that id, or NULL for 0 or an id out of range. */
const char *model_str(const struct model *m, uint32_t id);
/* The last value recorded for key, or NULL. */
const char *model_meta(const struct model *m, const char *key);
/* False when the recording has no counter of that name. */
bool model_counter(const struct model *m, const char *name, uint64_t *value);

/* The id of string s, or 0 when the recording has no such string. */
uint32_t model_string_id(const struct model *m, const char *s);

/*
 * The value of the attribute keyed key_sid (a string id) of span span_id
 * (row index + 1 in m->t.spans); false when the span has none.
 */
bool model_span_attr(const struct model *m, uint32_t span_id, uint32_t key_sid,
		     uint64_t *value);

/* The values of metric id (row index + 1 in m->t.metrics), in time order; NULL when none. */
const struct model_point *model_metric_points(const struct model *m, uint32_t metric, size_t *n);
/*
 * The reading of metric id's recording just before ts: where a value read
 * at ts that is an average since the reading before began; 0 when none.
 */
uint64_t model_metric_tick_before(const struct model *m, uint32_t metric, uint64_t ts);
/* The id of the series of that name, pid and gpu (index + 1, 0 none), or 0. */
uint32_t model_metric_find(const struct model *m, const char *name, uint32_t pid, uint32_t gpu);

/* What lane id lane is: MODEL_LANE_NONE for 0 or an id past the lanes. */
enum model_lane_class model_lane_class(const struct model *m, uint32_t lane);
/*
 * Whether lane is a CUDA stream of a GPU its name gives (CUDA_DEVICE_LANE_PREFIX
 * "<d> stream <s>"), and *gpu that d: the streams analyze and export's busy
 * rows put together by device.
 */
bool model_stream_gpu(const struct model *m, uint32_t lane, uint32_t *gpu);
/* What span sp is: MODEL_SPAN_OTHER unless it is on a CUDA stream. */
enum model_span_class model_span_class(const struct model *m, const struct tr_span *sp);
/* Whether sp is a copy or a memset: the GPU's memory work, which views table apart. */
bool model_span_is_copy(const struct model *m, const struct tr_span *sp);
/* The synthetic thread of lane id lane, 1 .. lanes. */
const struct model_thread *model_lane_thread(const struct model *m, uint32_t lane);

/* The index in m->threads of tid, or -1. Lanes are found by their synthetic tid. */
long model_thread_index(const struct model *m, uint32_t tid);
/* The same for a real thread only: -1 for a lane or an unknown tid. */
long model_real_thread_index(const struct model *m, uint32_t tid);

/*
 * The index in m->names of the name real thread th had at ts: of its last
 * name given at or before ts; its first before any. O(log its names).
 */
size_t model_name_at(const struct model *m, const struct model_thread *th, uint64_t ts);

/* The symbol rows of loc, innermost frame first; *n == 0 when unresolved. */
const struct tr_symbol *model_loc_symbols(const struct model *m, uint32_t loc, uint32_t *n);

/* Whether loc is a Python frame: a location in a TR_DSO_PYTHON file. */
bool model_loc_is_python(const struct model *m, uint32_t loc);

/* Whether loc is a kernel frame: a location in a TR_DSO_KERNEL dso. */
bool model_loc_is_kernel(const struct model *m, uint32_t loc);

/* How the stacks show the Python frames merged into them. */
enum model_python_view {
	MODEL_PYTHON_ON,	/* each Python frame in place of the C frame running it */
	MODEL_PYTHON_OFF,	/* native frames only */
	MODEL_PYTHON_BOTH,	/* every frame, as recorded */
};

/*
 * Rewrites m's stack nodes, and the leaf nodes of the samples and off-CPU
 * intervals, into the view, in one pass: a new prefix tree, identical
 * stacks merged, parents first. Python off drops the Python frames; on
 * hides a native frame wherever its child on the stack is a Python frame
 * (the interpreter's eval loop running it): one that ran only Python
 * frames stays a node that no sample ends in. no_kernel leaves out the
 * kernel's frames (views' --no-kernel): each stack as its user part, the
 * rows that ended in the kernel ending where it was entered. What the
 * recording has nothing to rewrite for (no Python or no kernel frames,
 * or both views) is left as it is.
 */
void model_view_stacks(struct model *m, enum model_python_view view, bool no_kernel);

/*
 * A thread's on-CPU time. With context switches recorded (TR_FEAT_OFFCPU),
 * the exact figure: its lifetime in the trace (first to last event) minus
 * its off-CPU intervals. Without them, samples times the sampling period
 * (meta "frequency"), an estimate good to one period per sample. 0 for a lane.
 */
uint64_t model_thread_oncpu_ns(const struct model *m, const struct model_thread *th);

/* The sampling period from meta "frequency" (Hz), or 0 when unknown. */
uint64_t model_sample_period_ns(const struct model *m);

/*
 * The CLOCK_MONOTONIC ns that the timelines show as 0: the recording's
 * start, or its first event if earlier.
 */
uint64_t model_time_zero(const struct model *m);
/* Whether the recording has an event in [start_ns, end_ns) after model_time_zero. */
bool model_window_has_events(const struct model *m, uint64_t start_ns, uint64_t end_ns);

#endif
