/* SPDX-License-Identifier: MIT */
#include "contract/lanes.h"

#include <ctype.h>
#include <string.h>

bool cuda_lane_device(const char *lane_name, uint32_t *device)
{
	size_t plen = strlen(CUDA_DEVICE_LANE_PREFIX);
	const char *p;
	uint64_t d = 0;

	if (!lane_name || strncmp(lane_name, CUDA_DEVICE_LANE_PREFIX, plen))
		return false;
	for (p = lane_name + plen; isdigit((unsigned char)*p); p++) {
		d = d * 10 + (uint64_t)(*p - '0');
		if (d > UINT32_MAX)
			return false;
	}
	if (p == lane_name + plen)
		return false;
	*device = (uint32_t)d;
	return true;
}

const char *nvtx_lane_domain(const char *lane_name)
{
	size_t plen = strlen(NVTX_DOMAIN_LANE_PREFIX);

	if (!lane_name || strncmp(lane_name, NVTX_DOMAIN_LANE_PREFIX, plen) || !lane_name[plen])
		return NULL;
	return lane_name + plen;
}

size_t kregions_lane_kernel_len(const char *lane_name)
{
	size_t len = strlen(lane_name), slen = strlen(KREGIONS_STATS_LANE_SUFFIX);
	size_t g = len, b;

	/* " b<block> g<group>": digits, a letter and a space, twice. */
	while (g > 0 && isdigit((unsigned char)lane_name[g - 1]))
		g--;
	if (g < len && g >= 2 && lane_name[g - 1] == 'g' && lane_name[g - 2] == ' ') {
		b = g -= 2;
		while (b > 0 && isdigit((unsigned char)lane_name[b - 1]))
			b--;
		if (b < g && b >= 2 && lane_name[b - 1] == 'b' && lane_name[b - 2] == ' ')
			return b - 2;
	}
	if (len > slen && !strcmp(lane_name + len - slen, KREGIONS_STATS_LANE_SUFFIX))
		return len - slen;
	return len;
}
