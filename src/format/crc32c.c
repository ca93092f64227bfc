/* SPDX-License-Identifier: MIT */
#include "format/crc32c.h"

#include <pthread.h>

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int bit = 0; bit < 8; bit++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		table[i] = c;
	}
}

uint32_t crc32c(const void *p, size_t len)
{
	const uint8_t *s = p;
	uint32_t crc = 0xFFFFFFFFu;

	pthread_once(&table_once, build_table);
	for (size_t i = 0; i < len; i++)
		crc = table[(crc ^ s[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xFFFFFFFFu;
}
