/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_ATTRS_H
#define GTRACE_CONTRACT_ATTRS_H

#include <stdint.h>

/*
 * The keys of the span attributes gtrace's own producers write, some of
 * which the views read (man/gtrace-format.5, table span_attrs), and the
 * values of those that hold an enum. An application's attribute keys are
 * its own.
 */

/* The CUDA agent's: kernels, copies and memsets on stream lanes (src/cuda/activity.c). */
#define CUDA_ATTR_GRID_X "grid.x"
#define CUDA_ATTR_GRID_Y "grid.y"
#define CUDA_ATTR_GRID_Z "grid.z"
#define CUDA_ATTR_BLOCK_X "block.x"
#define CUDA_ATTR_BLOCK_Y "block.y"
#define CUDA_ATTR_BLOCK_Z "block.z"
#define CUDA_ATTR_REGS "regs"
#define CUDA_ATTR_SMEM_STATIC "smem.static"
#define CUDA_ATTR_SMEM_DYNAMIC "smem.dynamic"
#define CUDA_ATTR_LOCAL_PER_THREAD "local.per-thread"
#define CUDA_ATTR_LOCAL_TOTAL "local.total"
#define CUDA_ATTR_GRAPH_ID "graph.id"
#define CUDA_ATTR_GRAPH_NODE "graph.node"
#define CUDA_ATTR_OCCUPANCY_PERMILLE "occupancy.permille"
#define CUDA_ATTR_OCCUPANCY_LIMITER "occupancy.limiter"	/* enum cuda_occupancy_limiter */
#define CUDA_ATTR_OCCUPANCY_BLOCKS_PER_SM "occupancy.blocks-per-sm"
#define CUDA_ATTR_COPY_KIND "copy.kind"	/* enum cuda_copy_kind (contract/spans.h) */
#define CUDA_ATTR_COPY_SRC "copy.src"	/* enum cuda_memory_kind: what a copy reads */
#define CUDA_ATTR_COPY_DST "copy.dst"	/* enum cuda_memory_kind: what it writes */
#define CUDA_ATTR_BYTES "bytes"
#define CUDA_ATTR_VALUE "value"
#define CUDA_ATTR_SRC_DEVICE "src.device"
#define CUDA_ATTR_DST_DEVICE "dst.device"
/* ... those and its other spans' */
#define CUDA_ATTR_DEVICE "device"
#define CUDA_ATTR_CONTEXT "context"
#define CUDA_ATTR_STREAM "stream"
#define CUDA_ATTR_CORRELATION "correlation"
/* API calls and the CPU's waits (src/cuda/callbacks.c) */
#define CUDA_ATTR_API_DOMAIN "api.domain"	/* enum cuda_api_domain */
#define CUDA_ATTR_IMPLICIT "implicit"
/* GPU PC sampling's windows (src/cuda/pcsampling.c) */
#define CUDA_ATTR_PAIRS "pairs"
#define CUDA_ATTR_SAMPLES "samples"
/* NVTX ranges (src/cuda/nvtx.c) */
#define NVTX_ATTR_DEPTH "nvtx.depth"
#define NVTX_ATTR_KIND "nvtx.kind"	/* enum nvtx_kind */

/* Values of CUDA_ATTR_OCCUPANCY_LIMITER: what bounds the blocks an SM holds at once. */
enum cuda_occupancy_limiter {
	CUDA_OCC_LIMIT_UNKNOWN = 0,
	CUDA_OCC_LIMIT_WARPS = 1,
	CUDA_OCC_LIMIT_REGISTERS = 2,
	CUDA_OCC_LIMIT_SHARED_MEMORY = 3,
	CUDA_OCC_LIMIT_BLOCKS = 4,
	CUDA_OCC_LIMITERS
};

/* Their names as the views print them; NULL for CUDA_OCC_LIMIT_UNKNOWN. */
extern const char *const cuda_occupancy_limiter_names[CUDA_OCC_LIMITERS];

/* Values of CUDA_ATTR_API_DOMAIN: which API a call was of (recordings hold the numbers). */
enum cuda_api_domain { CUDA_API_UNKNOWN, CUDA_API_RUNTIME, CUDA_API_DRIVER, CUDA_API_DOMAINS };

/* Values of CUDA_ATTR_COPY_SRC and _DST: CUPTI's CUpti_ActivityMemoryKind. */
enum cuda_memory_kind {
	CUDA_MEMORY_UNKNOWN,
	CUDA_MEMORY_PAGEABLE,
	CUDA_MEMORY_PINNED,
	CUDA_MEMORY_DEVICE,
	CUDA_MEMORY_ARRAY,
	CUDA_MEMORY_MANAGED,
	CUDA_MEMORY_DEVICE_STATIC,
	CUDA_MEMORY_MANAGED_STATIC,
	CUDA_MEMORY_KINDS
};

/* Values of NVTX_ATTR_KIND: how a range was opened and closed. */
enum nvtx_kind { NVTX_KIND_UNKNOWN, NVTX_KIND_PUSH_POP, NVTX_KIND_START_END, NVTX_KINDS };

/* The names of those values; NULL for the unknown 0. */
extern const char *const cuda_api_domain_names[CUDA_API_DOMAINS];
extern const char *const cuda_memory_kind_names[CUDA_MEMORY_KINDS];
extern const char *const nvtx_kind_names[NVTX_KINDS];

/*
 * The names of the values of an attribute that holds an enum, as the
 * views print them, *n of them (a value past them, or whose name is NULL,
 * has none); NULL for a key whose value is a number.
 */
const char *const *attr_value_names(const char *key, uint32_t *n);

/* Kernel regions' summary spans, one per region and collect (src/target/kregions.c). */
#define KR_ATTR_INSTANCES "instances"
#define KR_ATTR_SUM_NS "sum_ns"
#define KR_ATTR_MIN_NS "min_ns"
#define KR_ATTR_MAX_NS "max_ns"
#define KR_ATTR_MEDIAN_NS "median_ns"
#define KR_ATTR_LANES "lanes"
#define KR_ATTR_BLOCKS "blocks"
#define KR_ATTR_BLOCK_MEDIAN_NS "block_median_ns"
#define KR_ATTR_BLOCK_MAX_NS "block_max_ns"
#define KR_ATTR_CLOCK_ERROR_NS "clock_error_ns"

#endif
