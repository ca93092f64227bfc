/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UNWIND_UNWINDER_H
#define GTRACE_UNWIND_UNWINDER_H

/*
 * The DWARF unwinder's own parts (unwind-dwarf.c), and what it asks of the
 * library that takes the frames its rows cannot express: libunwind
 * (unwind-libunwind.c), or nothing when gtrace is built without it
 * (unwind-stub.c), and those frames end the walk.
 */

#include <asm/perf_regs.h>
#include <stdbool.h>

#include "unwind/cfi.h"
#include "unwind/unwind-internal.h"
#include "util/hashmap.h"
#include "util/vec.h"

#define REG_BIT(r) (1ULL << PERF_REG_X86_##r)

/* What the unwinders read of one dso: its bytes and its binary search table. */
struct unwind_dso {
	bool opened;		/* tried already, whatever came of it */
	bool mapped;		/* data is our mapping of the file */
	const uint8_t *data;
	size_t size;
	struct cfi_image cfi;	/* its .eh_frame_hdr's table; none: no unwind tables */
};

/*
 * The rows of recent code addresses. A sampled program returns to the same
 * few thousand call sites again and again, so each row is worked out once.
 */
#define ROW_CACHE_SLOTS 8192

struct row_slot {
	uint32_t dso;		/* 0: empty */
	uint64_t addr;		/* ELF address */
	struct cfi_row row;
};

/*
 * The same by process address, in front of it: a hit costs no map lookup.
 * A slot holds while no process's maps have changed.
 */
struct frame_slot {
	uint32_t pid;
	bool mapped;		/* some map holds addr */
	uint64_t addr;
	uint64_t generation;	/* of the address spaces; 0: empty */
	struct cfi_row row;
};

/* What the library that takes the other frames keeps: libunwind's address spaces. */
struct unwind_library;

struct unwinder {
	enum unwind_method method;
	const struct addrspaces *as;
	struct unwind_library *library;
	VEC(struct unwind_dso) dsos;	/* dsos.v[id - 1] */
	uint64_t sps[UNWIND_MAX_FRAMES];/* the stack pointer of each frame of an unwind */
	struct row_slot rows[ROW_CACHE_SLOTS];
	struct frame_slot frames[ROW_CACHE_SLOTS];
	uint64_t generation;		/* the frame slots' mark during a walk */
	struct u64map stack_tops;	/* tid -> highest stack address unwinding reads, 0 unknown */
	bool without_rows;		/* the tests' reference: the library walks alone */
};


/* A frame as the walk knows it: ip is the address its row is looked up by. */
struct frame {
	uint64_t ip, sp, bp;
	bool bp_known;
	bool bp_off_stack;	/* unknown because its slot lies past the copy */
};

/* Opens the dso's bytes and tables on first use. */
const struct unwind_dso *unwind_dso_get(struct unwinder *u, const struct dso_info *dso);

/*
 * The frame a step reached at return address *ip: its row, and in *ip the
 * ip to record; false when no map holds it.
 */
bool caller_frame(struct unwinder *u, uint32_t pid, uint64_t *ip, bool *after_signal,
		  struct cfi_row *row);

/*
 * A frame without an unwind table (mapped), or outside every mapping: a
 * step through its frame pointer, false with *why when the walk ends.
 */
bool frame_pointer_step(const struct unwinder *u, const struct unwind_sample *s, bool mapped,
			struct frame *f, enum unwind_outcome *why);

int library_new(struct unwind_library **l);
void library_free(struct unwind_library *l);
void library_forget_pid(struct unwind_library *l, uint32_t pid);

/*
 * One step from frame f, which the rows cannot express: from the sample's
 * registers for the first frame, from ip, sp and rbp after. False with
 * *why when the walk ends.
 */
bool library_step(struct unwinder *u, const struct unwind_sample *s, bool first,
		  struct frame *f, enum unwind_outcome *why);

/*
 * The whole walk by the library alone, into ips[0 .. *n) and u->sps, with
 * its outcome; false (nothing changed) without a library.
 */
bool library_walk(struct unwinder *u, const struct unwind_sample *s, uint64_t *ips,
		  size_t *n, enum unwind_outcome *outcome);

#endif
