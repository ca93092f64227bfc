/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_COLLECT_INTERNAL_H
#define GTRACE_RECORD_COLLECT_INTERNAL_H

/*
 * Shared by the files of the collector: collect.c (tasks, maps and the
 * records that are not samples; the collector made and freed),
 * collect-samples.c (samples unwound and their stacks interned),
 * collect-target.c (the rows the span channel brings) and collect-flush.c
 * (chunks handed to the writer, and their locs named). Not for the rest of
 * the recorder.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/file.h"
#include "record/collect.h"
#include "record/python.h"
#include "record/unwind-pool.h"
#include "util/hashmap.h"
#include "util/vec.h"

/*
 * Bytes of code images that count as one pending row: a chunk holds 64 MiB
 * of them before the drain waits, plus the one image that crossed, which
 * may be a quarter of what a chunk can hold; a larger one is over the cap.
 */
#define CUBIN_ROW_BYTES 16
#define CUBIN_MAX_ONE (TR_CHUNK_MAX_RAW / 4)

/* The dso of the kernel's frames, as perf names it. */
#define KERNEL_DSO_PATH "[kernel.kallsyms]"

enum counter {
	CNT_SAMPLES,
	CNT_LOST,
	CNT_THROTTLED,
	CNT_THREADS,
	CNT_PROCESSES,
	CNT_CHUNKS,
	CNT_MALFORMED,
	CNT_PROCESSES_RECOVERED,
	CNT_PROCESSES_UNRECOVERED,
	CNT_KERNEL_FRAMES,
	CNT_SWITCH_STACKS,
	CNT_UNWIND,	/* one per enum unwind_outcome */
	CNT_SYM_RESOLVED = CNT_UNWIND + UNWIND_OUTCOMES,
	CNT_SYM_UNRESOLVED,
	CNT_SYM_MISSING_DSO,
	CNT_SYM_REFUSED,
	CNT_SYM_JIT_MAPS_CUT,
	CNT_SYM_FILES_READ,
	CNT_SYM_CODE_KEPT,
	CNT_SYM_CODE_BYTES,
	CNT_SYM_CODE_CUT,
	CNT_SYM_KERNEL_HIDDEN,
	CNT_TARGET,	/* one per enum target_counter */
	CNT_PYTHON = CNT_TARGET + TARGET_COUNTERS,	/* one per enum py_outcome */
	CNT_PYTHON_FRAMES = CNT_PYTHON + PY_OUTCOMES,
	CNT_PYTHON_NAMES_OVER_BUDGET,
	CNT_PYTHON_READER,	/* one per enum py_counter */
	NCOUNTERS = CNT_PYTHON_READER + PY_COUNTERS
};

/*
 * The frames of a thread's last stack, outermost first, each with the node
 * it ends at: a thread's next stack most often differs from its last only
 * in the innermost frames, and takes the nodes of the frames they share
 * from here instead of interning them again. A slot holds while the maps
 * its native frames were named through do.
 */
#define PATH_CACHE_SLOTS 256

enum path_kind { PATH_NATIVE, PATH_LEAF, PATH_PYTHON };

struct path_step {
	uint64_t what;		/* a native frame's ip, or a Python frame's py_frame.func */
	uint64_t how;		/* enum path_kind; a Python frame's line above it, << 2 */
	uint32_t node;
};

struct path_slot {
	uint64_t generation;
	uint32_t tid, pid;
	VEC(struct path_step) steps;
};

struct collector {
	struct tr_tables *cur;		/* rows of the chunk being filled */
	struct chunk_writer *cw;
	const struct rec_layout *layout;
	struct addrspaces *as;
	struct unwinder *unwinder;
	struct pyreader *python;

	struct strtab strings;
	uint32_t strings_out;		/* ids up to this are in a chunk already */
	uint32_t dsos_out;

	VEC(struct tr_loc) locs;	/* every loc so far: locs.v[id - 1] */
	struct u64map loc_ids;		/* hash of (dso, addr) -> loc id, probed on collision */
	struct u64map node_ids;		/* parent << 32 | loc -> node id */
	uint32_t nodes;
	uint64_t python_name_bytes;	/* of the distinct names of Python code */
	uint64_t python_over_budget;	/* the names past PYTHON_NAME_BYTES, once needed */
	struct u64map python_files;	/* file string id -> its dso id */

	struct u64map switched_out;	/* tid -> time it went off the CPU, 0 if running */
	struct u64map switch_why;	/* tid -> enum tr_offcpu_reason << 32 | node, at its switch-out */
	struct u64map last_node;	/* tid -> leaf node of its last sample */
	struct u64map switch_node;	/* tid -> leaf node of its switch's sample, till its switch-out */
	uint32_t kernel_dso;		/* KERNEL_DSO_PATH's id, once a kernel frame came */
	struct u64map comms;		/* tid -> string id of its name */
	struct u64map live_threads;	/* pid -> threads not yet exited */
	struct u64map unrecoverable;	/* pid -> 1 when sampled unannounced and not in /proc */
	process_fn on_process;		/* told of processes coming and going, or NULL */
	void *on_process_arg;

	uint64_t counters[NCOUNTERS];
	uint32_t counter_names[NCOUNTERS];
	bool symbolized;		/* every loc named: the symbol counters are final */
	struct symbolizer *sym;		/* created at the first naming */
	uint32_t named;			/* locs 1 .. named have been named */
	VEC(uint8_t) loc_sampled;	/* by loc id - 1: 1 when a sample's innermost frame */
	struct u64map code_kept;	/* dso << 44 | function start -> 1: its code is written */
	uint32_t locs_flushed;		/* locs in the chunks handed so far */
	uint64_t naming_ns;		/* CPU time spent naming */
	bool target_counted;	/* the target.* counters are worth writing */
	bool python_counted;	/* ... and the python.* ones */
	uint32_t lanes;
	uint32_t spans;			/* span ids up to this are taken */
	struct u64map cubin_ids;	/* crc -> cubin id, 0 when over the cap */
	VEC(uint64_t) cubins_coming;	/* crcs of the images wanted and on their way */
	uint32_t cubins, cubins_refused;
	uint64_t pc_buckets;
	uint64_t cubin_max;
	uint64_t cubin_bytes;		/* kept, and on their way: held against the cap */
	uint64_t cubin_bytes_pending;	/* in the chunk being filled */
	uint32_t over_cap_name;		/* string id of cuda.pc.cubins-over-cap */
	uint32_t cut_short_name;	/* ... of cuda.pc.cubins-cut-short */
	/* Counters named by the target's processes: sums over processes. */
	VEC(struct tr_counter) target_sums;
	struct u64map target_sum_index;	/* name -> index in target_sums */

	struct path_slot paths[PATH_CACHE_SLOTS];	/* by tid */

	/* Samples the pool unwound ahead, taken in order by collector_take_sample. */
	struct unwind_pool *pool;
	struct unwind_job *jobs;	/* UNWIND_AHEAD of them */
	size_t njobs, next_job;

	/* Scratch for one sample, reused: no allocation per sample. */
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct py_stack python_stack;
	VEC(struct path_step) path;
};

/* Emits a dso row for every dso the address spaces have created since. */
void collector_sync_dsos(struct collector *c);

/* Forgets what the unwinders keep of a process that exec'd or exited. */
void collector_forget_pid(struct collector *c, uint32_t pid);

/* A PERF_RECORD_SAMPLE made a sample row, its stack interned. */
void collector_take_sample(struct collector *c, const struct perf_event_header *h);

/*
 * Names a code object the Python reader met: name << 32 | file (string
 * ids), within PYTHON_NAME_BYTES of names not seen before.
 */
uint64_t collector_name_python_code(void *arg, const char *func, const char *file);

/* Closes the chunk early when it grows large, and waits rather than grow without bound. */
void collector_flush_if_large(struct collector *c);

#endif
