/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UNWIND_CFI_H
#define GTRACE_UNWIND_CFI_H

/*
 * The call frame information of one code address, reduced to what a walk
 * through rsp, rbp and the return address needs. Compilers describe nearly
 * every frame this way (the CFA is rsp or rbp plus a constant, the return
 * address and rbp are saved at constant offsets from it; a function that
 * realigns its stack keeps the CFA in a word below rbp, and rbp at rbp),
 * so the unwinder steps such frames itself, from rows it keeps per
 * address, and leaves the rest (other registers, signal frames) to
 * libunwind.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind-internal.h"
#include "util/eh-hdr.h"

enum cfi_kind {
	CFI_NO_ENTRY,	/* no FDE covers the address */
	CFI_STEP,	/* the rules below give the caller */
	CFI_OUTERMOST,	/* the return address is undefined: nothing called this frame */
	CFI_OTHER,	/* rules this reduction cannot express */
};

struct cfi_row {
	uint8_t kind;		/* enum cfi_kind */
	bool signal;		/* a signal trampoline's entry ('S'), whatever its kind */
	bool cfa_bp;		/* CFA = rbp + cfa_off; else rsp + cfa_off */
	bool cfa_deref;		/* the CFA is the word stored there instead */
	bool bp_saved;		/* rbp saved at CFA + bp_off; else unchanged */
	bool bp_at_bp;		/* saved at rbp + bp_off instead */
	int32_t cfa_off;
	int32_t bp_off;
	int32_t ra_off;		/* the return address is at CFA + ra_off */
};

/* A file's bytes and where its .eh_frame_hdr is. */
struct cfi_image {
	const uint8_t *data;
	size_t size;
	const struct dso_elf *elf;
	uint64_t hdr_vaddr;	/* ELF address of .eh_frame_hdr */
	uint64_t hdr_off;	/* its file offset */
	struct eh_hdr hdr;	/* its search table; no entries: no usable table */
};

/* The row that applies at ELF address addr. */
void cfi_row_at(const struct cfi_image *img, uint64_t addr, struct cfi_row *row);

#endif
