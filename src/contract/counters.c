/* SPDX-License-Identifier: MIT */
/*
 * The recorder's tables. The CUDA agent's and kernel regions' have files
 * of their own, which the products that write them build too.
 */
#include "contract/counters.h"

#include <stddef.h>

const struct counter_name target_counters[TARGET_COUNTERS] = {
	[TARGET_BATCHES] = { "target.batches", NULL },
	[TARGET_SPANS] = { "target.spans", NULL },
	[TARGET_SPAN_ATTRS] = { "target.span-attrs", NULL },
	[TARGET_LANES] = { "target.lanes", NULL },
	[TARGET_PROCESSES] = { "target.processes", NULL },
	[TARGET_DROPPED_QUEUE_FULL] = { "target.dropped.queue-full", NULL },
	[TARGET_DROPPED_UNSENT] = { "target.dropped.unsent", NULL },
	[TARGET_DROPPED_NO_RUN] = { "target.dropped.no-run", NULL },
	[TARGET_DROPPED_WRONG_PID] = { "target.dropped.wrong-pid", NULL },
	[TARGET_DROPPED_BAD_MESSAGE] = { "target.dropped.bad-message", NULL },
	[TARGET_DROPPED_LIMIT] = { "target.dropped.limit", NULL },
	[TARGET_REFUSED_CONNECTIONS] = { "target.refused.connections", NULL },
	[TARGET_REFUSED_INSTANCES] = { "target.refused.instances", NULL },
	[TARGET_REFUSED_STRINGS] = { "target.refused.strings", NULL },
	[TARGET_REFUSED_LANES] = { "target.refused.lanes", NULL },
	[TARGET_REFUSED_META] = { "target.refused.meta", NULL },
};

const struct counter_name python_counters[PYTHON_COUNTERS] = {
	[PYTHON_MATCHED] = { "python.matched", NULL },
	[PYTHON_MISMATCH] = { "python.mismatch", NULL },
	[PYTHON_NO_THREAD_STATE] = { "python.no-thread-state", NULL },
	[PYTHON_READ_FAILED] = { "python.read-failed", NULL },
	[PYTHON_EXITED] = { "python.exited", NULL },
	[PYTHON_UNSUPPORTED] = { "python.unsupported", NULL },
	[PYTHON_OVER_BUDGET] = { "python.over-budget", NULL },
	[PYTHON_FRAMES] = { "python.frames", NULL },
	[PYTHON_CODES_EVICTED] = { "python.codes-evicted", NULL },
	[PYTHON_NAMES_CUT] = { "python.names-cut", NULL },
	[PYTHON_LINETABLES_TOO_LONG] = { "python.linetables-too-long", NULL },
	[PYTHON_NAMES_OVER_BUDGET] = { "python.names-over-budget", NULL },
};

const struct counter_name metrics_counters[METRICS_COUNTERS] = {
	[METRICS_TICKS] = { "metrics.ticks", "made" },
	[METRICS_MISSED] = { "metrics.missed", "missed" },
	[METRICS_PROCESSES] = { "metrics.processes", "processes read" },
	[METRICS_READ_FAILED] = { "metrics.read-failed", "reads failed" },
	[METRICS_CPU_NS] = { "metrics.cpu-ns", NULL },
};
