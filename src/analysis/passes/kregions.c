/* SPDX-License-Identifier: MIT */
/*
 * Kernel regions' lanes (gtrace-kernel-regions(3)) by the kernel they
 * measure, which the call tree and report --gpu both name.
 */
#include "analysis/passes/passes.h"

#include <ctype.h>
#include <string.h>

#include "contract/lanes.h"

size_t kregions_kernel_len(const char *lane_name)
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
