/* SPDX-License-Identifier: MIT */
#include "contract/attrs.h"

#include <string.h>

#include "contract/spans.h"

const char *const cuda_occupancy_limiter_names[CUDA_OCC_LIMITERS] = {
	[CUDA_OCC_LIMIT_WARPS] = "warps",
	[CUDA_OCC_LIMIT_REGISTERS] = "registers",
	[CUDA_OCC_LIMIT_SHARED_MEMORY] = "shared-memory",
	[CUDA_OCC_LIMIT_BLOCKS] = "blocks",
};

const char *const cuda_api_domain_names[CUDA_API_DOMAINS] = {
	[CUDA_API_RUNTIME] = "runtime",
	[CUDA_API_DRIVER] = "driver",
};

const char *const cuda_memory_kind_names[CUDA_MEMORY_KINDS] = {
	[CUDA_MEMORY_PAGEABLE] = "pageable",
	[CUDA_MEMORY_PINNED] = "pinned",
	[CUDA_MEMORY_DEVICE] = "device",
	[CUDA_MEMORY_ARRAY] = "array",
	[CUDA_MEMORY_MANAGED] = "managed",
	[CUDA_MEMORY_DEVICE_STATIC] = "device-static",
	[CUDA_MEMORY_MANAGED_STATIC] = "managed-static",
};

const char *const nvtx_kind_names[NVTX_KINDS] = {
	[NVTX_KIND_PUSH_POP] = "push-pop",
	[NVTX_KIND_START_END] = "start-end",
};

const char *const *attr_value_names(const char *key, uint32_t *n)
{
	static const struct {
		const char *key;
		const char *const *names;
		uint32_t n;
	} enums[] = {
		{ CUDA_ATTR_OCCUPANCY_LIMITER, cuda_occupancy_limiter_names, CUDA_OCC_LIMITERS },
		{ CUDA_ATTR_COPY_KIND, cuda_copy_kind_names, CUDA_COPY_KINDS },
		{ CUDA_ATTR_COPY_SRC, cuda_memory_kind_names, CUDA_MEMORY_KINDS },
		{ CUDA_ATTR_COPY_DST, cuda_memory_kind_names, CUDA_MEMORY_KINDS },
		{ CUDA_ATTR_API_DOMAIN, cuda_api_domain_names, CUDA_API_DOMAINS },
		{ NVTX_ATTR_KIND, nvtx_kind_names, NVTX_KINDS },
	};

	for (size_t i = 0; key && i < sizeof(enums) / sizeof(enums[0]); i++) {
		if (!strcmp(key, enums[i].key)) {
			*n = enums[i].n;
			return enums[i].names;
		}
	}
	*n = 0;
	return NULL;
}
