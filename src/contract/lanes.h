/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_LANES_H
#define GTRACE_CONTRACT_LANES_H

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
 * Kernel regions (libgtrace-target's gtrace_kr_collect): each collect of a
 * kernel's buffer leaves one summary span per region that ran on a lane of
 * kind KREGIONS_STATS_LANE_KIND named "<kernel>" KREGIONS_STATS_LANE_SUFFIX,
 * and the first blocks' regions as spans on lanes of kind
 * KREGIONS_LANE_KIND named "<kernel> b<block> g<group>".
 */
#define KREGIONS_LANE_KIND "kernel-regions"
#define KREGIONS_STATS_LANE_KIND "kernel-region-stats"
#define KREGIONS_STATS_LANE_SUFFIX " regions"

#endif
