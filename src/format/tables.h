/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_FORMAT_TABLES_H
#define GTRACE_FORMAT_TABLES_H

/*
 * The rows of a gtrace file. A recording is a sequence of chunks; each data
 * chunk carries the rows appended to each table since the previous chunk, so
 * every table is the concatenation of its rows over all chunks in file order.
 * Tables whose rows are referred to by id (strings, dsos, locs, nodes, lanes)
 * number them 1, 2, ... in that order; id 0 always means "none".
 *
 * man/gtrace-format.5 specifies the encoding; this header is the in-memory
 * shape shared by the writer (gtrace record) and the loader (src/model/).
 */

#include <stddef.h>
#include <stdint.h>

#include "format/buf.h"
#include "format/file.h"
#include "util/vec.h"

/* Thread ids at or above this are synthetic: lanes of non-CPU work. */
#define TR_SYNTHETIC_TID_BASE 0xFFF00000u
/* The lanes that have a synthetic tid: readers show no more. */
#define TR_MAX_LANES (UINT32_MAX - TR_SYNTHETIC_TID_BASE + 1)

/* A key/value pair about the recording: "command", "event", ... */
struct tr_meta {
	char *key;
	char *value;
};

enum tr_task_kind {
	TR_TASK_NEW = 1,	/* thread or process appeared; arg = parent tid (0 unknown) */
	TR_TASK_COMM = 2,	/* thread got a name (exec, prctl); arg = string id */
	TR_TASK_EXIT = 3,	/* thread exited; arg unused */
	TR_TASK_EXEC = 4,	/* process exec'd; arg = string id of the new command */
};

/* A thread's life events, in timestamp order per thread. */
struct tr_task {
	uint64_t ts;
	uint32_t pid;
	uint32_t tid;
	uint32_t kind;		/* enum tr_task_kind */
	uint32_t arg;
};

enum tr_dso_flags {
	TR_DSO_ANON = 1 << 0,	/* anonymous or JIT memory: addresses are absolute */
	TR_DSO_VDSO = 1 << 1,
	TR_DSO_KERNEL = 1 << 2,
	TR_DSO_MISSING = 1 << 3, /* the file could not be opened when symbolizing */
	TR_DSO_PYTHON = 1 << 4,	/* a Python source file: see struct tr_loc */
};

#define TR_BUILD_ID_MAX 20

/* A mapped object: an ELF file, the vdso, or one process's anonymous code. */
struct tr_dso {
	uint32_t path;		/* string id */
	uint32_t pid;		/* owning process for TR_DSO_ANON, else 0 */
	uint32_t flags;		/* enum tr_dso_flags */
	uint32_t build_id_len;
	uint8_t build_id[TR_BUILD_ID_MAX];
};

/*
 * A code location: an address inside a dso. For file-backed dsos, addr is the
 * ELF virtual address (what addr2line takes); for TR_DSO_ANON it is the
 * absolute address in that process. Return addresses of caller frames are
 * stored minus one, so they point into the call instruction. In a
 * TR_DSO_PYTHON file, addr is TR_PYTHON_ADDR(line, function name's string
 * id), and the loc's one symbol row, written with it, names both.
 */
struct tr_loc {
	uint32_t dso;		/* dso id */
	uint64_t addr;
};

#define TR_PYTHON_ADDR(line, func) ((uint64_t)(line) << 32 | (uint32_t)(func))

/*
 * Stacks are interned as a prefix tree: a node is a frame under its caller's
 * node, parent 0 being the root (the outermost frame has parent 0). A sample
 * names its leaf node, so identical stacks cost one id.
 */
struct tr_node {
	uint32_t parent;	/* node id, 0 for an outermost frame */
	uint32_t loc;		/* loc id */
};

enum tr_sample_flags {
	TR_SAMPLE_TRUNCATED = 1 << 0,	/* the unwind stopped before the outermost frame */
};

struct tr_sample {
	uint64_t ts;		/* CLOCK_MONOTONIC ns */
	uint32_t pid;
	uint32_t tid;
	uint32_t node;		/* leaf node id; 0 if no frame at all */
	uint32_t cpu;
	uint32_t flags;		/* enum tr_sample_flags */
};

/* Why a thread went off the CPU, from the kernel's switch-out record. */
enum tr_offcpu_reason {
	TR_OFFCPU_UNKNOWN,	/* a file before the column, or no switch-out seen */
	TR_OFFCPU_BLOCKED,	/* it waited: sleep, lock, I/O, page fault */
	TR_OFFCPU_PREEMPTED,	/* still runnable: the CPU went to another task */
	TR_OFFCPU_REASONS
};

/* One interval during which a thread was switched out. */
struct tr_offcpu {
	uint32_t tid;
	uint64_t start;		/* switched out, CLOCK_MONOTONIC ns */
	uint64_t end;		/* switched back in */
	uint32_t reason;	/* enum tr_offcpu_reason */
	uint32_t node;		/* the stack it last ran in (its last sample's leaf), 0 unknown */
};

/* Samples the kernel dropped on one CPU, reported when its ring had room again. */
struct tr_loss {
	uint64_t ts;		/* CLOCK_MONOTONIC ns of the report */
	uint32_t cpu;
	uint32_t tid;		/* the thread the report came with */
	uint64_t count;
};

/*
 * A lane of non-CPU work (a GPU stream, a queue) in one process. It is shown
 * as a synthetic thread with tid TR_SYNTHETIC_TID_BASE + lane id - 1.
 */
struct tr_lane {
	uint32_t pid;
	uint32_t kind;		/* string id: "cuda", "queue", ... */
	uint32_t name;		/* string id: "GPU0 stream 7" */
};

/* One unit of lane work, and where on a CPU it was queued from. */
struct tr_span {
	uint32_t lane;		/* lane id */
	uint32_t name;		/* string id: the synthetic symbol */
	uint64_t start;		/* CLOCK_MONOTONIC ns */
	uint64_t dur;		/* ns */
	uint32_t origin_tid;	/* 0: no origin (with origin_ts 0), else a bad tid */
	uint64_t origin_ts;
};

/*
 * A numeric detail of a span ("grid.x" = 128). The attributes of one span
 * are consecutive rows, in span order.
 */
struct tr_span_attr {
	uint32_t span;		/* span id: its row index + 1 in the spans table */
	uint32_t key;		/* string id */
	uint64_t value;
};

/*
 * A named count ("samples", "lost", "unwind.failed.no-map", ...). Counters
 * are cumulative: when a name repeats, the last row wins.
 */
struct tr_counter {
	uint32_t name;		/* string id */
	uint64_t value;
};

enum tr_symbol_flags {
	TR_SYM_INLINED = 1 << 0,	/* this frame is inlined into the next row's */
};

/*
 * The symbolic frames of one location, innermost first: consecutive rows with
 * the same loc. A loc with no rows was not resolved.
 */
struct tr_symbol {
	uint32_t loc;		/* loc id */
	uint32_t func;		/* string id of the function name */
	uint32_t file;		/* string id of the source file, 0 unknown */
	uint32_t line;		/* 0 unknown */
	uint32_t flags;		/* enum tr_symbol_flags */
};

/* Bytes of a blob column, owned by the table like strings are. */
struct tr_bytes {
	uint8_t *data;
	uint64_t len;
};

/*
 * A GPU module's code image (a cubin) as the driver loaded it, stored once
 * per content: crc is what CUPTI's PC samples name it by.
 */
struct tr_cubin {
	uint64_t crc;
	struct tr_bytes image;
};

/*
 * The machine code of a native function that samples fell in, as its file
 * on disk holds it, so that a reader can disassemble it offline: code holds
 * the first bytes of the function at ELF virtual address addr of dso (as
 * locs have it), size its whole size; code.len < size when it was cut.
 */
struct tr_code {
	uint32_t dso;		/* dso id */
	uint32_t machine;	/* its file's ELF e_machine: how to decode the code */
	uint64_t addr;		/* the function's first byte's ELF virtual address */
	uint64_t size;		/* its size in bytes */
	struct tr_bytes code;
};

/*
 * A bucket of GPU PC samples: count samples of one stall reason at one
 * instruction (pc, the byte offset in function) of a kernel. correlation
 * is the launch's CUPTI correlation id in pid (the "correlation" attribute
 * of its kernel span); 0 when sampling did not serialize kernels.
 */
struct tr_pc_sample {
	uint32_t pid;
	uint32_t correlation;
	uint32_t cubin;		/* cubin id, 0 when its image was not kept */
	uint32_t function;	/* string id of the function's symbol name */
	uint64_t pc;
	uint32_t stall;		/* string id of the stall reason's name */
	uint32_t count;
};

/*
 * A series of a sampled quantity of one subject ("proc.rss" of a process,
 * "gpu.sm.util" of a GPU, "sys.load1" of the machine). Its values are the
 * quantity times 10^decimals, in unit ("%", "KiB", "KiB/s", "/s", ...).
 */
struct tr_metric {
	uint32_t name;		/* string id */
	uint32_t unit;		/* string id; "" for a count */
	uint32_t pid;		/* a process series' process, else 0 */
	uint32_t gpu;		/* a GPU series' NVML index + 1, else 0 */
	uint32_t decimals;
};

/*
 * One reading of the metrics: its values are the next `values` rows of
 * metric_values after those of the ticks before it.
 */
struct tr_metric_tick {
	uint64_t ts;		/* CLOCK_MONOTONIC ns */
	uint32_t values;
};

struct tr_metric_value {
	uint32_t metric;	/* metric id: its row index + 1 in metrics */
	uint64_t value;
};

/*
 * All tables. The writer fills one of these per chunk and resets it; the
 * loader appends every chunk's rows into one.
 */
struct tr_tables {
	VEC(struct tr_meta) meta;
	VEC(char *) strings;	/* strings.v[id - 1] */
	VEC(struct tr_task) tasks;
	VEC(struct tr_dso) dsos;
	VEC(struct tr_loc) locs;
	VEC(struct tr_node) nodes;
	VEC(struct tr_sample) samples;
	VEC(struct tr_offcpu) offcpu;
	VEC(struct tr_lane) lanes;
	VEC(struct tr_span) spans;
	VEC(struct tr_counter) counters;
	VEC(struct tr_symbol) symbols;
	VEC(struct tr_span_attr) span_attrs;
	VEC(struct tr_cubin) cubins;
	VEC(struct tr_pc_sample) pc_samples;
	VEC(struct tr_loss) losses;
	VEC(struct tr_metric) metrics;
	VEC(struct tr_metric_tick) metric_ticks;
	VEC(struct tr_metric_value) metric_values;
	VEC(struct tr_code) codes;
};

/* Number of rows in all tables: 0 means there is nothing to write. */
size_t tr_tables_rows(const struct tr_tables *t);
/* Frees row contents and empties every table, keeping the allocations. */
void tr_tables_clear(struct tr_tables *t);
void tr_tables_free(struct tr_tables *t);

/*
 * Encodes every non-empty table into one chunk payload (uncompressed).
 * Integer columns are stored column by column as (zigzag-)delta varints,
 * or runs of Exp-Golomb codes (format/golomb.h).
 */
void tr_tables_encode(const struct tr_tables *t, struct gbuf *out);

/*
 * Decodes a payload made by tr_tables_encode and appends its rows to t.
 * Returns 0, or -TR_ERR_CORRUPT with t left holding only whole tables of
 * the payload.
 */
int tr_tables_decode(struct tr_tables *t, const void *payload, size_t len);
/*
 * The same, charging the memory each table record's rows take to b (rows
 * times their size, and for a table of strings or blobs, its record's
 * length and 32 bytes for each of them); a record that would pass b's limit
 * is not decoded: -TR_ERR_BUDGET, with b->table naming its table.
 */
int tr_tables_decode_within(struct tr_tables *t, const void *payload, size_t len,
			    struct tr_budget *b);

/*
 * Which tables a decode reads: the samples and offcpu tables hold rows by
 * the sample (the offcpu rows of a payload decode its samples' times), the
 * rest rows by what was seen.
 */
enum tr_decode_part {
	TR_DECODE_ALL,
	TR_DECODE_ALL_BUT_SAMPLES,	/* neither samples nor offcpu */
	TR_DECODE_SAMPLES,		/* samples and offcpu only */
};

/* tr_tables_decode_within for the tables of part only; the others' records are skipped. */
int tr_tables_decode_part(struct tr_tables *t, const void *payload, size_t len,
			  struct tr_budget *b, enum tr_decode_part part);

#endif
