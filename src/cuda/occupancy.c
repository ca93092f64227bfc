/* SPDX-License-Identifier: MIT */
#include "cuda/occupancy.h"

#include <errno.h>
#include <limits.h>

#include <cuda_occupancy.h>

/*
 * When several resources give the same block count, the one named is the
 * first here: a full SM (warps) before the resources a kernel could use less of.
 */
static uint32_t limiter_of(unsigned int factors)
{
	if (factors & OCC_LIMIT_WARPS)
		return CUDA_OCC_LIMIT_WARPS;
	if (factors & OCC_LIMIT_REGISTERS)
		return CUDA_OCC_LIMIT_REGISTERS;
	if (factors & OCC_LIMIT_SHARED_MEMORY)
		return CUDA_OCC_LIMIT_SHARED_MEMORY;
	if (factors & OCC_LIMIT_BLOCKS)
		return CUDA_OCC_LIMIT_BLOCKS;
	return CUDA_OCC_LIMIT_UNKNOWN;	/* barriers, virtual resources */
}

int cuda_occupancy(const struct cuda_device_limits *d, const struct cuda_launch_shape *k,
		   struct cuda_occupancy *out)
{
	/*
	 * The header's C++ constructors set these defaults; in C they are
	 * ours to set: zeroed structs give wrong answers.
	 */
	cudaOccDeviceProp prop = {
		.computeMajor = d->cc_major,
		.computeMinor = d->cc_minor,
		.maxThreadsPerBlock = d->max_threads_per_block,
		.maxThreadsPerMultiprocessor = d->max_threads_per_sm,
		.regsPerBlock = d->regs_per_block,
		.regsPerMultiprocessor = d->regs_per_sm,
		.warpSize = d->warp_size,
		.sharedMemPerBlock = d->smem_per_block,
		.sharedMemPerMultiprocessor = d->smem_per_sm,
		.numSms = d->sms,
		.sharedMemPerBlockOptin = d->smem_per_block_optin ? d->smem_per_block_optin
								  : d->smem_per_block,
		.reservedSharedMemPerBlock = d->smem_reserved_per_block,
	};
	cudaOccFuncAttributes func = {
		.maxThreadsPerBlock = d->max_threads_per_block,
		.numRegs = k->regs_per_thread,
		.sharedSizeBytes = k->smem_static,
		.partitionedGCConfig = PARTITIONED_GC_OFF,
		.shmemLimitConfig = k->smem_optin ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT,
		/* the launch ran, so its dynamic size was within the function's limit */
		.maxDynamicSharedSizeBytes = k->smem_dynamic,
		.numBlockBarriers = 1,
		.virtualResourceCount = 0,
	};
	cudaOccDeviceState state = {
		.cacheConfig = CACHE_PREFER_NONE,
		.carveoutConfig = k->carveout,
	};
	cudaOccResult res = { 0 };
	int warps_per_block, max_warps;

	if (d->warp_size <= 0 || d->max_threads_per_sm < d->warp_size || k->block_threads <= 0)
		return -EINVAL;
	if (cudaOccMaxActiveBlocksPerMultiprocessor(&res, &prop, &func, &state, k->block_threads,
						    k->smem_dynamic) != CUDA_OCC_SUCCESS)
		return -EINVAL;
	warps_per_block = (k->block_threads + d->warp_size - 1) / d->warp_size;
	max_warps = d->max_threads_per_sm / d->warp_size;
	out->blocks_per_sm = (uint32_t)res.activeBlocksPerMultiprocessor;
	out->permille = (uint32_t)(((uint64_t)out->blocks_per_sm * (uint64_t)warps_per_block * 1000 +
				    (uint64_t)max_warps / 2) / (uint64_t)max_warps);
	out->limiter = limiter_of(res.limitingFactors);
	return 0;
}
