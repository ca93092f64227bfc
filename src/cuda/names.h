/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CUDA_NAMES_H
#define GTRACE_CUDA_NAMES_H

/* How the agent names GPU work and sorts CUDA calls: pure functions. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The span name of a copy of CUpti_ActivityMemcpyKind kind, e.g.
 * "[CUDA memcpy HtoD]"; kinds without a short name give
 * "[CUDA memcpy <kind>]", formatted into buf when not in a static table.
 */
const char *cuda_copy_name(uint32_t kind, char *buf, size_t size);

/*
 * True for a runtime or driver function whose call waits for the GPU: the
 * synchronize calls and the copies that are not Async. name is CUPTI's
 * function name, version suffixes included ("cuMemcpyHtoD_v2").
 */
bool cuda_api_waits(const char *name);

/*
 * True for a runtime or driver function that queues work CUPTI makes a GPU
 * record of: kernel and graph launches, copies, memsets.
 */
bool cuda_api_queues_work(const char *name);

#endif
