/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UNWIND_UNWIND_INTERNAL_H
#define GTRACE_UNWIND_UNWIND_INTERNAL_H

/*
 * What the address spaces and the unwinders share inside src/unwind/: the
 * ELF layout of each dso, read once when the dso is first mapped, and the
 * frame-pointer walker that both unwinder builds use.
 */

#include <asm/perf_regs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "unwind/addrspace.h"
#include "unwind/unwind.h"

/* One PT_LOAD segment. */
struct dso_load {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	uint32_t flags;		/* PF_* */
};

struct dso_elf {
	const struct dso_load *loads;	/* in program header order */
	size_t nr_loads;
	uint64_t eh_frame_hdr;		/* ELF address of .eh_frame_hdr, 0 none */
	/*
	 * The bytes of a dso that has no file to map: the vdso, for which
	 * the recorder's own image stands in (the same kernel made both).
	 * NULL for files.
	 */
	const uint8_t *image;
	size_t image_size;
};

const struct dso_elf *dso_elf(const struct dso_info *dso);

/* The segment whose file bytes hold an ELF address, or NULL. */
const struct dso_load *dso_load_of_vaddr(const struct dso_elf *elf, uint64_t vaddr);

/* The maps either side of an address that none covers; NULL where there is none. */
void addrspace_neighbours(const struct addrspaces *as, uint32_t pid, uint64_t addr,
			  const struct map **below, const struct map **above);

/* The registers a frame-pointer walk starts from. */
#define UNWIND_FP_REGS_MASK                                                    \
	(1ULL << PERF_REG_X86_IP | 1ULL << PERF_REG_X86_SP | 1ULL << PERF_REG_X86_BP)

/* A frame as the frame-pointer walker sees it. */
struct fp_frame {
	uint64_t ip, sp, bp;
};

/* The sampled frame; false when the sample lacks ip, sp or bp. */
bool fp_frame_of_sample(const struct unwind_sample *s, struct fp_frame *f);

/* The 8 bytes at addr in the sample's stack copy; false outside it. Inline: once a frame. */
static inline bool stack_read(const struct unwind_sample *s, uint64_t addr, uint64_t *val)
{
	uint64_t sp = s->regs.r[PERF_REG_X86_SP];

	if (addr < sp || addr - sp >= s->stack_len ||
	    s->stack_len - (addr - sp) < sizeof(*val))
		return false;
	memcpy(val, s->stack + (addr - sp), sizeof(*val));
	return true;
}

/*
 * Steps from f to its caller through the saved frame pointer ([bp] is the
 * caller's bp, [bp + 8] the return address). Returns true with *f the
 * caller (ip being the return address), or false with *why: COMPLETE at a
 * zero frame pointer or return address, TRUNCATED_STACK past the copy,
 * FAILED_BAD_FRAME for a frame pointer below sp or misaligned, and
 * FAILED_NO_MAP for a return address outside every mapping.
 */
bool fp_step(const struct addrspaces *as, const struct unwind_sample *s,
	     struct fp_frame *f, enum unwind_outcome *why);

/*
 * After a DWARF unwind of *n frames (sps[i]: frame i's stack pointer) that
 * ran off the stack copy: the rest from the kernel's frame-pointer chain,
 * joined where both reach the same frame. Returns COMPLETE_FP_TAIL;
 * TRUNCATED_STACK with the frames unchanged where there is no such frame;
 * TRUNCATED_* when the chain ends early too.
 */
enum unwind_outcome unwind_fp_tail(const struct addrspaces *as, const struct unwind_sample *s,
				   const uint64_t *sps, uint64_t *ips, size_t *n);

/*
 * --call-graph fp: the kernel's PERF_SAMPLE_CALLCHAIN when the sample has
 * one, else a frame-pointer walk through the copied stack.
 */
enum unwind_outcome unwind_frame_pointers(const struct addrspaces *as,
					  const struct unwind_sample *s,
					  uint64_t *ips, size_t *n);

/*
 * From now on libunwind walks every stack alone, as if cfi.c's rows did
 * not exist: the reference the tests hold the rows to. Built without
 * libunwind there are no rows, and this does nothing.
 */
void unwinder_without_rows(struct unwinder *u);

#endif
