/* SPDX-License-Identifier: MIT */
#include "contract/attrs.h"

const char *const cuda_occupancy_limiter_names[CUDA_OCC_LIMITERS] = {
	[CUDA_OCC_LIMIT_WARPS] = "warps",
	[CUDA_OCC_LIMIT_REGISTERS] = "registers",
	[CUDA_OCC_LIMIT_SHARED_MEMORY] = "shared-memory",
	[CUDA_OCC_LIMIT_BLOCKS] = "blocks",
};
