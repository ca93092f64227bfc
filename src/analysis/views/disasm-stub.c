/* SPDX-License-Identifier: MIT */
/*
 * disasm.h when gtrace is built without libcapstone (./configure
 * --without-capstone, or no libcapstone-dev): no disassembler opens, so
 * nothing else is ever called with one.
 */
#include "analysis/views/disasm.h"

#include <errno.h>

bool disasm_available(void)
{
	return false;
}

int disasm_open(struct disasm **d, uint32_t machine)
{
	(void)machine;
	*d = NULL;
	return -ENOTSUP;
}

size_t disasm_one(struct disasm *d, const uint8_t *code, size_t len, uint64_t addr,
		  char *text, size_t size)
{
	return 0;
}

void disasm_close(struct disasm *d)
{
}
