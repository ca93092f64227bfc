/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_FORMAT_CRC32C_H
#define GTRACE_FORMAT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, initial value and
 * final xor 0xFFFFFFFF): the checksum of every gtrace header and chunk.
 * crc32c("123456789") is 0xE3069283.
 */
uint32_t crc32c(const void *p, size_t len);

#endif
