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
#include <stdint.h>

#include "record/records.h"
#include "record/writer.h"
#include "unwind/unwind.h"

struct collector;

struct collect_stats {
	uint64_t samples;
	uint64_t threads;
	uint64_t lost;		/* records the kernel dropped: rings were full */
};

/* Returns 0 or the negative errno of the addrspace or unwinder set-up. */
int collector_new(struct collector **c, enum unwind_method method,
		  const struct rec_layout *layout, struct chunk_writer *cw);
void collector_free(struct collector *c);

void collector_meta(struct collector *c, const char *key, const char *value);

/* The target itself, which no FORK record announces. */
void collector_add_process(struct collector *c, uint32_t pid, const char *comm,
			   uint64_t time);

/* One record; a rec_fn for rec_queue_flush. */
void collector_record(void *c, const struct perf_event_header *h, uint64_t time);

/*
 * Closes the chunk: the rows so far go to the writer. When the writer is
 * still busy they wait for the next flush, unless wait is set.
 */
void collector_flush(struct collector *c, bool wait);

/* Symbolizes every location and adds the final counters; flush after it. */
void collector_finish(struct collector *c);

void collector_stats(const struct collector *c, struct collect_stats *st);

#endif
