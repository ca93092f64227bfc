/* SPDX-License-Identifier: MIT */
#include "util/eh-hdr.h"

#include <errno.h>
#include <string.h>

/* Pointer encodings (DW_EH_PE_*): the table's must be 4-byte offsets from the header. */
#define PE_DATAREL_SDATA4 0x3b
#define PE_APPLY 0x70

/* The bytes of a fixed-size encoding, 0 for a variable or unknown one. */
static unsigned encoded_size(uint8_t encoding)
{
	switch (encoding & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;	/* absptr, udata8, sdata8 */
	case 0x03: case 0x0b: return 4;			/* udata4, sdata4 */
	case 0x02: case 0x0a: return 2;			/* udata2, sdata2 */
	default: return 0;
	}
}

/* version, the encodings of eh_frame_ptr, fde_count and the table; then those. */
int eh_hdr_read(const uint8_t *hdr, size_t len, struct eh_hdr *h)
{
	unsigned ptr_size, count_size;
	uint64_t count = 0;
	size_t table_off;

	memset(h, 0, sizeof(*h));
	if (len < 4 || hdr[0] != 1 || hdr[3] != PE_DATAREL_SDATA4 || (hdr[2] & PE_APPLY))
		return -EINVAL;
	ptr_size = encoded_size(hdr[1]);
	count_size = encoded_size(hdr[2]);
	table_off = 4 + ptr_size + count_size;
	if (!ptr_size || !count_size || len < table_off)
		return -EINVAL;
	memcpy(&count, hdr + 4 + ptr_size, count_size);
	if (count > (len - table_off) / 8)
		return -EINVAL;
	h->table = hdr + table_off;
	h->count = count;
	return 0;
}

bool eh_hdr_find(const struct eh_hdr *h, int64_t rel, int32_t *start, int32_t *fde)
{
	size_t lo = 0, hi = h->count;
	int32_t entry[2];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(entry, h->table + 8 * mid, sizeof(entry));
		if (entry[0] <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	memcpy(entry, h->table + 8 * (lo - 1), sizeof(entry));
	*start = entry[0];
	*fde = entry[1];
	return true;
}
