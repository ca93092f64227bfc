/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CUDA_NAMES_H
#define GTRACE_CUDA_NAMES_H

/* How the agent names GPU work and sorts CUDA calls: pure functions. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti_callbacks.h>

/*
 * The span name of a copy of CUpti_ActivityMemcpyKind kind, e.g.
 * "[CUDA memcpy HtoD]"; kinds without a short name give
 * "[CUDA memcpy <kind>]", formatted into buf when not in a static table.
 */
const char *cuda_copy_name(uint32_t kind, char *buf, size_t size);

enum cuda_wait {
	CUDA_WAIT_NONE,
	CUDA_WAIT_EXPLICIT,	/* synchronize calls, copies that are not Async */
	CUDA_WAIT_IMPLICIT,	/* frees: they wait for the device before releasing */
};

/*
 * Whether a call of the runtime or driver function name waits for the
 * GPU, and how. name is CUPTI's function name, version suffixes included
 * ("cuMemcpyHtoD_v2"). Implicit waits are the frees of device, pinned host
 * and array memory (cudaFree, cudaFreeHost, cudaFreeArray,
 * cudaFreeMipmappedArray, cuMemFree, cuMemFreeHost, cuArrayDestroy), which
 * CUDA documents as synchronizing the device; the stream-ordered
 * cudaFreeAsync and cuMemFreeAsync do not.
 */
enum cuda_wait cuda_api_waits(const char *name);

/* A runtime or driver function by its CUPTI callback domain and id. */
struct cuda_api_call {
	CUpti_CallbackDomain domain;	/* CUPTI_CB_DOMAIN_RUNTIME_API or _DRIVER_API */
	CUpti_CallbackId cbid;
	const char *name;		/* the id's name, version suffix included */
};

/*
 * The calls left untraced unless --cuda-api=all: queries a framework makes
 * around every launch (device, context, error state, attributes, stream
 * capture state, entry points) that queue no work and wait for nothing,
 * where a span would cost more than the call and hide the launches. Each
 * runtime query comes with the driver calls it makes, which would
 * otherwise show as calls of their own. Sets *n to the number of entries.
 */
const struct cuda_api_call *cuda_api_filtered(size_t *n);

/*
 * True for a runtime or driver function that queues work CUPTI makes a GPU
 * record of: kernel and graph launches, copies, memsets.
 */
bool cuda_api_queues_work(const char *name);

#endif
