/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_DISASM_H
#define GTRACE_ANALYSIS_VIEWS_DISASM_H

/*
 * Machine code to instructions, for annotate --asm: through libcapstone
 * (disasm-capstone.c), or its stub when gtrace is built without it
 * (./configure --without-capstone; disasm-stub.c), which decodes nothing.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct disasm;

/* Whether this build can disassemble at all. */
bool disasm_available(void);
/*
 * A disassembler for the code of ELF machine e_machine (x86-64, AArch64):
 * 0, or -ENOTSUP for a machine it does not know or a build without one.
 */
int disasm_open(struct disasm **d, uint32_t machine);
/*
 * Decodes the instruction at code[0 .. len), at address addr: its length,
 * with its text ("mov rax, rbx") in text; 0 when no instruction decodes
 * there.
 */
size_t disasm_one(struct disasm *d, const uint8_t *code, size_t len, uint64_t addr,
		  char *text, size_t size);
void disasm_close(struct disasm *d);

#endif
