/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_EH_HDR_H
#define GTRACE_UTIL_EH_HDR_H

/*
 * .eh_frame_hdr (PT_GNU_EH_FRAME): the sorted table of a file's unwind
 * entries, which the unwinder and the symbolizer both search. Only the
 * layout linkers write is read: entries of two 4-byte offsets from the
 * header, the entry's first address and its FDE.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eh_hdr {
	const uint8_t *table;	/* (start, fde) pairs, ascending by start */
	uint64_t count;
};

/* Reads the len bytes at hdr: 0, or -EINVAL for another layout or a table cut short. */
int eh_hdr_read(const uint8_t *hdr, size_t len, struct eh_hdr *h);

/*
 * The last entry whose start is at or below rel (all offsets from the
 * header): true with its start and its FDE's offsets.
 */
bool eh_hdr_find(const struct eh_hdr *h, int64_t rel, int32_t *start, int32_t *fde);

#endif
