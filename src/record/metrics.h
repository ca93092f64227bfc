/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_METRICS_H
#define GTRACE_RECORD_METRICS_H

/*
 * System and GPU metrics: a thread of their own reads, every interval, the
 * machine's /proc files, those of each process of the recording and, where
 * NVML is there, each GPU's, and keeps the values as series (the metrics
 * tables of man/gtrace-format.5). It does its reading beside the recorder,
 * whose own thread only hands the rows to the chunk writer, so that a slow
 * read (NVML waits 20 ms for a PCIe figure) never holds up the rings.
 */

#include <stdbool.h>
#include <stdint.h>

#include "record/collect.h"

/* Bounds of --metrics-interval. */
#define METRICS_INTERVAL_MIN_NS 100000ull		/* 100 us */
#define METRICS_INTERVAL_MAX_NS 3600000000000ull	/* an hour */

struct metrics;

/*
 * Starts reading every interval_ns, the first reading at once. Returns 0 or
 * a negative errno (the thread could not start).
 */
int metrics_start(struct metrics **out, uint64_t interval_ns);

/* A process of the recording appeared, or exited: read it, or no more. */
void metrics_process(struct metrics *m, uint32_t pid, bool alive);

/*
 * Moves the series and values read since the last call into the
 * collector's chunk, with the metrics.* counters and the meta keys
 * metrics-interval and metrics-nvml.
 */
void metrics_take(struct metrics *m, struct collector *c);

/* Makes one last reading and stops the thread; metrics_take the rest after. */
void metrics_stop(struct metrics *m);

void metrics_free(struct metrics *m);

#endif
