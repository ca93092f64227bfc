/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CUDA_AGENT_H
#define GTRACE_CUDA_AGENT_H

/*
 * Inside libgtrace-cuda.so, the CUDA agent that gtrace record injects into
 * the command's processes (CUDA_INJECTION64_PATH and LD_PRELOAD). The
 * driver calls InitializeInjection at cuInit (the NVTX loader calls
 * InitializeInjectionNvtx2, maybe earlier); the agent then subscribes to
 * CUPTI and reports through the target library linked into it:
 *
 *   callbacks.c  API enter/exit on the application's threads: origins, the
 *                "CUDA API" and "CPU wait" lanes; resource and state events
 *   activity.c   CUPTI's record buffers: GPU work on "GPU<d> stream <s>" lanes
 *   origins.c    correlation id -> the calling thread and time
 *   devices.c    device limits (occupancy) and driver facts
 *   nvtx.c       NVTX ranges on a lane per NVTX domain
 *   pcsampling.c PC samples in duty-cycled windows, and the cubins they name
 *   agent.c      start-up, status, counters, flushing, exit and fork
 *
 * Like the target library, the agent lives inside someone else's program:
 * it never prints, exits or aborts: a failure it cannot live with turns
 * into "not collecting", said in the cuda.status meta; the others are
 * listed in cuda.warnings.
 */

#include <stdbool.h>
#include <stdint.h>

#include <cupti.h>
#include <cupti_pcsampling.h>

#include "contract/counters.h"
#include "cuda/occupancy.h"
#include "gtrace/target.h"

/* agent.c */
extern gtrace_lane *agent_api_lane, *agent_wait_lane, *agent_nvtx_lane;

/* False before a successful start, after a fatal error and in a forked child. */
bool agent_collecting(void);
/* Stops collecting for good after a fatal CUPTI error; the status says why. */
void agent_stop(const char *status);
/* The cuda.* counters (contract/counters.h), cumulative per process. */
void agent_count(enum cuda_counter c, uint64_t n);
uint64_t agent_counter(enum cuda_counter c);
/* Sends the counters that changed (gtrace_counter_set takes a lock: per batch). */
void agent_publish_counters(void);
/* A failed call that collection lives with: added to cuda.warnings. */
void agent_call_failed(const char *what, CUptiResult r);
/* Sets cuda.status from a printf format. */
void agent_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Delivers the buffers of finished work, as the flush thread does every second. */
void agent_flush(void);
/*
 * Delivers every buffer, running work included: at exit and context
 * destruction. Returns the records still running.
 */
uint64_t agent_forced_flush(void);

/* CLOCK_MONOTONIC ns of a GPU record's time (0, no time, stays 0). */
uint64_t agent_gpu_ns(uint64_t cupti_ns);
/* An API call that queues GPU work (launch, copy, memset) returned. */
void agent_work_queued(void);
/* A buffer reached the agent (it refreshes the clock offset). */
void agent_buffer_arrived(void);

/* The calling thread's kernel tid (cached). */
uint32_t agent_tid(void);

/* callbacks.c */
void CUPTIAPI agent_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			     const void *data);

/* activity.c */
void CUPTIAPI activity_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records);
void CUPTIAPI activity_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid);
/* Records with end 0 seen while a forced flush ran, counted as incomplete. */
void activity_forced_begin(void);
uint64_t activity_forced_end(void);
/* Frees the pooled buffers (at exit, once CUPTI has handed all back). */
void activity_release_pool(void);

/* origins.c: bounded, lock-free; old entries are overwritten, never removed on use. */
int origins_init(void);
void origins_put(uint32_t correlation, uint32_t tid, uint64_t ts);
bool origins_get(uint32_t correlation, gtrace_origin *o);

/* devices.c */
/* Queries every device's limits and the driver version through libcuda. */
void devices_query_driver(void);
void devices_from_record(const CUpti_ActivityDevice5 *d);
/* The limits of device id, NULL while unknown. */
const struct cuda_device_limits *devices_limits(uint32_t id);

/* pcsampling.c: all no-ops unless $GTRACE_CUDA_PC asks for PC sampling. */
void pcs_init(void);
void pcs_context_created(CUcontext ctx);
void pcs_context_destroying(CUcontext ctx);
void pcs_module_loaded(const CUpti_ModuleResourceData *m);
/* An API call that queued GPU work on ctx returned, on the calling thread. */
void pcs_launched(CUcontext ctx);
/* At exit: the open windows closed, everything drained; sampling off for good. */
void pcs_finish(void);
/* At exit, once no record is read any more: frees the function names CUPTI handed. */
void pcs_release(void);

/* nvtx.c */
void nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *d);

#endif
