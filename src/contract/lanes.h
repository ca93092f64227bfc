/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_LANES_H
#define GTRACE_CONTRACT_LANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The lane kinds that gtrace's own producers write and the views know
 * (man/gtrace-format.5, table lanes). An application's lanes take kinds of
 * its own; these are the ones the views treat apart.
 */

/* The CUDA agent's (src/cuda/). */
#define CUDA_LANE_KIND "cuda"		/* a GPU stream: kernels, copies, memsets */
#define CUDA_API_LANE_KIND "cuda-api"	/* runtime and driver API calls */
#define CUDA_WAIT_LANE_KIND "cuda-wait"	/* the CPU waiting in a synchronizing call */
#define NVTX_LANE_KIND "nvtx"		/* NVTX ranges of their origin threads */
#define CUDA_PC_LANE_KIND "cuda-pc"	/* GPU PC sampling's windows */

/*
 * A process's NVTX ranges are on a lane per NVTX domain, kind
 * NVTX_LANE_KIND: the default domain's named NVTX_LANE_NAME, a named
 * domain's NVTX_DOMAIN_LANE_PREFIX "<domain>" ("NVTX cublas"), and those
 * of domains whose name the agent never saw NVTX_UNNAMED_DOMAIN_LANE.
 */
#define NVTX_LANE_NAME "NVTX"
#define NVTX_DOMAIN_LANE_PREFIX "NVTX "
#define NVTX_UNNAMED_DOMAIN_LANE NVTX_DOMAIN_LANE_PREFIX "[unnamed domain]"

/*
 * The domain of an NVTX lane named so: "cublas" of "NVTX cublas", NULL for
 * the default domain's lane (or a name that is no domain's).
 */
const char *nvtx_lane_domain(const char *lane_name);

/*
 * The agent names a stream's lane and a device's PC sampling lane after
 * the device: CUDA_DEVICE_LANE_PREFIX "<d> stream <s>" (or "<d> ctx <c>
 * stream <s>" for a device's second context) and "<d> PC sampling".
 */
#define CUDA_DEVICE_LANE_PREFIX "GPU"

/* The device <d> of a lane named so: true and *device, else false. */
bool cuda_lane_device(const char *lane_name, uint32_t *device);

/*
 * Kernel regions (libgtrace-target's gtrace_kr_collect): each collect of a
 * kernel's buffer leaves one summary span per region that ran on a lane of
 * kind KREGIONS_STATS_LANE_KIND named "<kernel>" KREGIONS_STATS_LANE_SUFFIX,
 * and the first blocks' regions as spans on lanes of kind
 * KREGIONS_LANE_KIND named "<kernel> b<block> g<group>".
 */
#define KREGIONS_LANE_KIND "kernel-regions"
#define KREGIONS_STATS_LANE_KIND "kernel-region-stats"
#define KREGIONS_STATS_LANE_SUFFIX " regions"

/*
 * The length of the "<kernel>" that starts a kernel-regions lane's name:
 * "attn_fwd" of "attn_fwd b0 g3" and of "attn_fwd regions".
 */
size_t kregions_lane_kernel_len(const char *lane_name);

#endif
