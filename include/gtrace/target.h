/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TARGET_H
#define GTRACE_TARGET_H

/*
 * Report work done by executors other than CPU threads (GPU queues,
 * accelerators, runtime task queues, I/O rings) to a running gtrace record,
 * which puts it on the same timeline as the threads. Link with
 * libgtrace-target (pkg-config gtrace-target).
 *
 * A lane is one executor, named by a kind ("gpu", "queue") and a name
 * ("GPU0 stream 7"). A span is one piece of work on a lane: a name, its
 * start and end in CLOCK_MONOTONIC nanoseconds (gtrace_now_ns), and
 * optionally its origin, the CPU thread and time that queued it.
 *
 *	static gtrace_lane *lane;
 *
 *	lane = gtrace_lane_get("queue", "io-uring");	   (at start-up)
 *	...
 *	if (gtrace_reporting_active())
 *		gtrace_span(lane, "read", start, end, &origin);
 *
 * Threading guarantees:
 *  - every function may be called from any thread at any time, also before
 *    main and in a child after fork;
 *  - gtrace_span never blocks, allocates or makes a system call once its
 *    thread has reported its first span and the span name is known to the
 *    thread: it is wait-free. When the thread's queue is full the new span
 *    is dropped and counted (gtrace_dropped_spans);
 *  - the spans of one thread reach the recorder in the order reported;
 *  - kind, lane and span names are copied: the caller may free or reuse
 *    its strings as soon as the call returns. Names are cut at 1024 bytes;
 *  - lane handles stay valid until the process ends, across fork too.
 *
 * The library reports only while a recording of the process runs: found
 * through $GTRACE_TARGET_SOCKET (gtrace record -- cmd) or, once any function
 * other than gtrace_reporting_active and gtrace_now_ns has been called, by
 * polling a per-user rendezvous directory about once a second (gtrace
 * record -p PID). Spans reported while no recording runs are ignored and
 * cost almost nothing. The library's two threads, gtrace-target and
 * gtrace-target-io, never keep the process alive. See gtrace-target(3).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define GTRACE_TARGET_API __attribute__((visibility("default")))
#else
#define GTRACE_TARGET_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gtrace_lane gtrace_lane;	/* opaque handle */

/* Where work was queued: a CPU thread id and a gtrace_now_ns() time. */
typedef struct {
	uint32_t tid;
	uint64_t ts_ns;
} gtrace_origin;

/* Not part of the API: nonzero while a recording accepts this process's spans. */
extern GTRACE_TARGET_API int gtrace_target_active_;

/* True while a gtrace recording of this process runs; one relaxed load. */
static inline bool gtrace_reporting_active(void)
{
	return __atomic_load_n(&gtrace_target_active_, __ATOMIC_RELAXED) != 0;
}

/* CLOCK_MONOTONIC in nanoseconds: the clock of span and origin times. */
GTRACE_TARGET_API uint64_t gtrace_now_ns(void);

/*
 * The lane of this kind and name, created on first use: the same pair
 * always gives the same handle. NULL only when memory runs out.
 */
GTRACE_TARGET_API gtrace_lane *gtrace_lane_get(const char *kind, const char *name);

/* The calling thread's id and the current time. */
GTRACE_TARGET_API gtrace_origin gtrace_current_origin(void);

/*
 * Reports that name ran on lane from start_ns to end_ns, queued at origin
 * (NULL: unknown). An end before the start is taken as the start. Does
 * nothing while no recording runs, or when lane or name is NULL.
 */
GTRACE_TARGET_API void gtrace_span(gtrace_lane *lane, const char *name, uint64_t start_ns,
				   uint64_t end_ns, const gtrace_origin *origin);

/* A numeric detail of a span: a key (copied and interned like span names) and a value. */
typedef struct {
	const char *key;
	uint64_t value;
} gtrace_attr;

#define GTRACE_MAX_ATTRS 24	/* attributes past this many are ignored */

/*
 * gtrace_span with numeric details ("grid.x" = 128, "bytes" = 4096). A span
 * and its attributes are queued, sent and dropped together, and count as
 * one span. Attributes with a NULL key are skipped. Keys are interned like
 * span names; once the thread knows them it is wait-free like gtrace_span,
 * each attribute taking a third of a queue slot.
 */
GTRACE_TARGET_API void gtrace_span_attrs(gtrace_lane *lane, const char *name, uint64_t start_ns,
					 uint64_t end_ns, const gtrace_origin *origin,
					 const gtrace_attr *attrs, unsigned nattrs);

/*
 * Sets a cumulative count of this process, named "<area>.<what>"
 * ("cuda.records.kernel"). The library keeps the latest value per name and
 * sends the changed ones to the recorder, which records per name the sum
 * over the processes of the recording. Takes a lock: call it per batch of
 * work, not per event. Names without a '.' are ignored by the recorder.
 */
GTRACE_TARGET_API void gtrace_counter_set(const char *name, uint64_t value);

/*
 * Sets a fact about this process, keyed "<area>.<what>" ("cuda.status").
 * Sent to the recorder once per change, which records it as a meta row of
 * the trace: readers take the last value of a key. Keys without a '.' are
 * ignored by the recorder. Both strings are copied and cut at 1024 bytes.
 */
GTRACE_TARGET_API void gtrace_meta_set(const char *key, const char *value);

/* Spans of this process accepted by gtrace_span so far (not dropped). */
GTRACE_TARGET_API uint64_t gtrace_reported_spans(void);

/*
 * Spans of this process dropped so far: reported while the queue was full,
 * or queued and then lost with the connection to the recorder.
 */
GTRACE_TARGET_API uint64_t gtrace_dropped_spans(void);

/*
 * Waits up to timeout_ms for the spans reported so far to reach the
 * recorder or be counted as dropped. True when that happened in time, or
 * when there is nothing to wait for. Runs by itself at exit.
 */
GTRACE_TARGET_API bool gtrace_flush(unsigned timeout_ms);

/*
 * Kernel regions: the buffer that the markers of gtrace/kernel-regions.cuh
 * fill inside a CUDA kernel, and the call that decodes and reports it. See
 * gtrace-kernel-regions(3). The buffer is 64-bit words:
 *
 *   word 0   GTRACE_KR_MAGIC                              the host, at alloc
 *   word 1   capacity: event slots after the header       the host, at alloc
 *   word 2   slots claimed by leaders (atomic add; may pass the capacity)
 *   word 3   events lost for want of a slot (atomic add)
 *   word 4   gridDim:  x | y << 32 | z << 48              the leaders of block 0
 *   word 5   blockDim: x | y << 16 | z << 32              the leaders of block 0
 *   word 6-7 zero
 *   then one slot of two words per event: the %globaltimer value, then
 *   kind | region << 2 | group << 12 | leader thread << 18 | block << 28
 *
 * A (block, group) lane's leader claims the slot of its next event ahead,
 * at init and after each event, and stores an event only into a claimed
 * slot below the capacity: two stores, never past the end. Block is the
 * linear block index, leader thread the linear thread index in the block;
 * a lane with two leader threads is a collision. A region, group or block
 * too large for its field is stored as the field's highest value, which
 * the decoder counts as undecodable. The host zeroes words 2 up to the
 * last slot claimed between launches.
 */
#define GTRACE_KR_MAGIC 0x67746b7200000001ull	/* "gtkr", version 1 */
#define GTRACE_KR_HDR_MAGIC 0
#define GTRACE_KR_HDR_CAPACITY 1
#define GTRACE_KR_HDR_CLAIMED 2
#define GTRACE_KR_HDR_LOST 3
#define GTRACE_KR_HDR_GRID 4
#define GTRACE_KR_HDR_BLOCK 5
#define GTRACE_KR_HEADER_WORDS 8
#define GTRACE_KR_SLOT_WORDS 2

#define GTRACE_KR_BEGIN 1ull		/* event kinds; 0 is an empty slot */
#define GTRACE_KR_END 2ull
#define GTRACE_KR_FINISH 3ull
#define GTRACE_KR_KIND_MASK 0x3ull
#define GTRACE_KR_REGION_SHIFT 2
#define GTRACE_KR_REGION_MASK 0x3ffull
#define GTRACE_KR_GROUP_SHIFT 12
#define GTRACE_KR_GROUP_MASK 0x3full
#define GTRACE_KR_THREAD_SHIFT 18
#define GTRACE_KR_THREAD_MASK 0x3ffull
#define GTRACE_KR_BLOCK_SHIFT 28
#define GTRACE_KR_BLOCK_MASK 0xfffffffffull
/* Regions and groups take the values below these; blocks below 2^36 - 1. */
#define GTRACE_KR_MAX_REGIONS GTRACE_KR_REGION_MASK
#define GTRACE_KR_MAX_GROUPS GTRACE_KR_GROUP_MASK

/*
 * Decodes the n_words of a kernel-regions buffer copied back from the GPU
 * (the header and at least the claimed slots below the capacity) and,
 * while a recording runs, reports its regions (see the man page for the
 * lanes and counters). GPU times become gtrace_now_ns times by adding
 * clock_offset_ns, known to within clock_error_ns. Returns 0; -EINVAL
 * when words is not such a buffer, when kernel is NULL, n_regions is above
 * GTRACE_KR_MAX_REGIONS or a region name is NULL; -ENOMEM.
 */
GTRACE_TARGET_API int gtrace_kr_submit(const uint64_t *words, size_t n_words, const char *kernel,
				       const char *const *region_names, unsigned n_regions,
				       int64_t clock_offset_ns, uint64_t clock_error_ns);

#ifdef __cplusplus
}
#endif

#endif
