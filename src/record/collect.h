/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_COLLECT_H
#define GTRACE_RECORD_COLLECT_H

/*
 * Turns perf records, in time order, into the rows of a trace: tasks, dsos
 * as they are mapped, samples unwound into interned stacks, off-CPU
 * intervals and counters. Rows collect in one set of tables that is handed
 * to the chunk writer at each flush; locations are symbolized at the end.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "contract/counters.h"
#include "format/tables.h"
#include "record/records.h"
#include "record/writer.h"
#include "unwind/unwind.h"

struct collector;

struct collect_stats {
	uint64_t samples;
	uint64_t threads;
	uint64_t lost;		/* records the kernel dropped: rings were full */
	uint64_t cut_stacks;	/* samples whose unwinding ran off the copied stack */
	uint64_t spans;		/* lane work recorded */
	uint64_t lanes;
	uint64_t spans_dropped;	/* lane work lost, all target.dropped.* together */
	uint64_t pc_buckets;	/* GPU PC sample buckets */
	uint64_t cubins;	/* GPU code images kept */
};

/* Returns 0 or the negative errno of the addrspace or unwinder set-up. */
int collector_new(struct collector **c, enum unwind_method method,
		  const struct rec_layout *layout, struct chunk_writer *cw);
void collector_free(struct collector *c);

void collector_meta(struct collector *c, const char *key, const char *value);

/* The target itself, which no FORK record announces. */
void collector_add_process(struct collector *c, uint32_t pid, const char *comm,
			   uint64_t time);

/*
 * A process that ran before the recording (gtrace record -p): its maps are
 * read from /proc; its threads are added one by one.
 */
int collector_attach_process(struct collector *c, uint32_t pid);
void collector_add_thread(struct collector *c, uint32_t pid, uint32_t tid,
			  const char *comm, uint64_t time);

/*
 * A thread found off the CPU (asleep, waiting) when the recording began at
 * since: its first switch in ends an off-CPU interval from then, as one it
 * was seen to leave the CPU for would.
 */
void collector_thread_off_cpu(struct collector *c, uint32_t tid, uint64_t since);

/*
 * The recording ends at end: each thread still off the CPU (asleep when
 * an attached recording stops) was off it until then. After the last
 * records, before collector_finish.
 */
void collector_end_offcpu(struct collector *c, uint64_t end);

/* Whether a FORK record or the calls above have named pid so far. */
bool collector_knows_process(const struct collector *c, uint32_t pid);

/* Lane work (src/record/ingest.c). */
uint32_t collector_intern(struct collector *c, const char *s);
/* The text of a string id collector_intern gave, or "" for another. */
const char *collector_string(const struct collector *c, uint32_t id);

/* The unwinder samples go through, which knows how much of a stack they need. */
const struct unwinder *collector_unwinder(const struct collector *c);
/* Adds a tr_lane row; returns its lane id. */
uint32_t collector_add_lane(struct collector *c, uint32_t pid, uint32_t kind, uint32_t name);
/* Adds span rows, and attribute rows whose span is an index in rows. */
void collector_add_spans(struct collector *c, const struct tr_span *rows, size_t n,
			 const struct tr_span_attr *attrs, size_t nattrs);
/*
 * Adds delta (modulo 2^64) to the counter of that name written in every
 * chunk from now on. False for the name of one of the recorder's own.
 */
bool collector_add_to_counter(struct collector *c, uint32_t name, uint64_t delta);

/*
 * Metric rows (src/record/metrics.c): new series, in the order of their
 * ids, then ticks with their values.
 */
void collector_add_metrics(struct collector *c, const struct tr_metric *series, size_t nseries,
			   const struct tr_metric_tick *ticks, size_t nticks,
			   const struct tr_metric_value *values, size_t nvalues);

/* Told of each process as its first thread appears (alive) and its last exits. */
typedef void (*process_fn)(void *arg, uint32_t pid, bool alive);
void collector_watch_processes(struct collector *c, process_fn fn, void *arg);

/* Bytes of GPU code images the recording keeps (--gpu-cubin-max); 0 keeps none. */
void collector_set_cubin_max(struct collector *c, uint64_t bytes);
/*
 * Whether an image of size bytes named crc is wanted: false when one is
 * kept already or on its way from another process (the first whole one is
 * kept), or when it would pass the cap (counted, once per crc). A wanted
 * image's bytes count against the cap from now on, until it is kept or
 * cut short, so that images on their way never hold more than the cap.
 */
bool collector_cubin_wanted(struct collector *c, uint64_t crc, uint64_t size);
/* Keeps a whole image that collector_cubin_wanted wanted; takes image. */
void collector_add_cubin(struct collector *c, uint64_t crc, uint8_t *image, uint64_t size);
/*
 * An image it wanted whose parts stopped coming (its process died sending
 * it, or started another): counted, its bytes given back to the cap.
 */
void collector_cubin_cut_short(struct collector *c, uint64_t crc, uint64_t size);
/* The cubin id of crc, 0 when its image is not kept. */
uint32_t collector_cubin_id(const struct collector *c, uint64_t crc);
void collector_add_pc_samples(struct collector *c, const struct tr_pc_sample *rows, size_t n);
/*
 * Counts of the span channel, written as the target.* counters once any
 * is non-zero. Spans and lanes count themselves as they are added.
 */
void collector_count_target(struct collector *c, enum target_counter k, uint64_t n);

/* One record. */
void collector_record(void *c, const struct perf_event_header *h, uint64_t time);
/*
 * Records in order, a rec_batch_fn for rec_queue_flush: with unwinding
 * threads, the samples between two changes of the maps are unwound
 * together.
 */
void collector_record_batch(void *c, const struct perf_event_header *const *hs,
			    const uint64_t *times, size_t n);

/*
 * Unwinds DWARF samples on threads helpers beside the recorder's own
 * thread (none: 0). Returns 0 or a negative errno.
 */
int collector_unwind_threads(struct collector *c, enum unwind_method method, unsigned threads);

/*
 * One record as it comes out of its ring, before the records are put in
 * order: reads what must belong to the sampled moment (a CPython thread's
 * Python stack) while it still may. A rec_fn for rec_queue_visit.
 */
void collector_arrived(void *c, const struct perf_event_header *h, uint64_t time);

/* Whether a CPython process is being recorded: its samples want prompt reads. */
bool collector_reads_python(const struct collector *c);

/*
 * Closes the chunk: the rows so far go to the writer. When the writer is
 * still busy they wait for the next flush, unless wait is set.
 */
void collector_flush(struct collector *c, bool wait);

/* Symbolizes every location and adds the final counters; flush after it. */
void collector_finish(struct collector *c);
/* The CPU time naming addresses took so far, in ns. */
uint64_t collector_naming_ns(const struct collector *c);

void collector_stats(const struct collector *c, struct collect_stats *st);

#endif
