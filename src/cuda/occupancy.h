/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CUDA_OCCUPANCY_H
#define GTRACE_CUDA_OCCUPANCY_H

/*
 * Theoretical occupancy of a kernel launch: how many of an SM's warp slots
 * its blocks can fill at once, given the device's limits and the launch's
 * block size, registers and shared memory. Pure arithmetic (the toolkit's
 * cuda_occupancy.h); nothing runs on the GPU.
 */

#include <stddef.h>
#include <stdint.h>

#include "contract/attrs.h"

/* What limits a device's SMs; zero where unknown. */
struct cuda_device_limits {
	int cc_major, cc_minor;
	int sms;
	int warp_size;
	int max_threads_per_block;
	int max_threads_per_sm;
	int regs_per_block;
	int regs_per_sm;
	size_t smem_per_block;
	size_t smem_per_sm;
	size_t smem_per_block_optin;	/* 0: as smem_per_block */
	size_t smem_reserved_per_block;	/* kept by the driver (sm_80 on) */
};

/* One launch, as a kernel record describes it. */
struct cuda_launch_shape {
	int block_threads;
	int regs_per_thread;
	size_t smem_static;
	size_t smem_dynamic;
	int smem_optin;			/* the function opted in to more shared memory */
	int carveout;			/* requested shared memory carveout in %, or -1 */
};

struct cuda_occupancy {
	uint32_t permille;		/* active warps per SM / warp slots, x 1000, rounded */
	uint32_t limiter;		/* enum cuda_occupancy_limiter */
	uint32_t blocks_per_sm;
};

/*
 * Computes the occupancy of shape on a device with limits d. Returns 0, or
 * -EINVAL when the limits or the shape are incomplete or the device's
 * compute capability is unknown to the calculator.
 */
int cuda_occupancy(const struct cuda_device_limits *d, const struct cuda_launch_shape *k,
		   struct cuda_occupancy *out);

#endif
