/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_SYMBOLS_H
#define GTRACE_SYMBOLS_SYMBOLS_H

/*
 * Turns (dso, ELF address) into symbolic frames with libdw: the function, the
 * chain of inlined functions at that address, and file:line for each. JIT
 * code in anonymous memory is named from /tmp/perf-PID.map. Each file is
 * read once per build-id, however many paths and processes map it, with
 * its ELF symbols sorted once (symindex.h) and its DWARF read once; every
 * path's file is checked against the recorded build-id.
 * The paths are the recorded program's (or a recording's) to choose: files
 * are opened as util/untrusted.h says, and DWARF that names another file to
 * open is not read (symbols.c, dwarf_usable).
 */

#include <stdbool.h>
#include <stdint.h>

#include "unwind/addrspace.h"

#define SYM_MAX_INLINE 32

struct sym_frame {
	const char *func;	/* demangled if possible; owned by the symbolizer */
	const char *file;	/* NULL unknown */
	uint32_t line;		/* 0 unknown */
	int inlined;		/* inlined into the next frame */
};

struct symbolizer;

int symbolizer_new(struct symbolizer **s);
void symbolizer_free(struct symbolizer *s);

/*
 * Fills frames[] innermost first and returns their number (at least 1 when
 * the function is known), 0 when the address has no symbol, or a negative
 * errno when the dso cannot be read (-ENOENT missing file, -ESTALE build-id
 * differs, -ENOEXEC not ELF, -EPERM or -EFBIG refused by
 * untrusted_mapped_file; the same error for every address of that dso).
 * An inline chain deeper than max keeps its innermost max frames.
 * TR_DSO_ANON addresses are looked up in /tmp/perf-PID.map (read once per
 * pid, owned by dso->uid, root or us, see jitmap_load; 0 without one, -EPERM
 * when it was refused), TR_DSO_VDSO ones (offsets from the vdso's start) in
 * this process's vdso, and TR_DSO_KERNEL ones (absolute kernel addresses)
 * by this machine's /proc/kallsyms, read once (0 when it hides them).
 * Strings stay valid until symbolizer_free. A symbolizer is for one thread
 * at a time.
 */
int symbolize(struct symbolizer *s, const struct dso_info *dso, uint64_t addr,
	      struct sym_frame *frames, int max);

/*
 * The machine code of the function that contains addr, as its file holds
 * it: the ELF symbol that names addr (as symbolize's symbol table does),
 * its bytes in the executable section that holds its start.
 */
struct sym_code {
	uint64_t start;		/* the function's first address */
	uint64_t size;		/* its size, as its symbol says */
	const uint8_t *bytes;	/* its first len bytes, valid until symbolizer_free */
	uint64_t len;		/* less than size where its section ends first */
	uint32_t machine;	/* the file's ELF e_machine */
};

/*
 * 1 with *code filled; 0 when no sized symbol of the file's executable
 * code holds addr (anonymous, kernel and vdso code too); or the negative
 * errno symbolize gives for the dso.
 */
int symbolizer_code(struct symbolizer *s, const struct dso_info *dso, uint64_t addr,
		    struct sym_code *code);
/* Whether /proc/kallsyms, once read, hid every address (kptr_restrict). */
bool symbolizer_kernel_hidden(const struct symbolizer *s);

/* The ELF files read so far: one per build-id (symbols.c, file_of). */
uint64_t symbolizer_files_read(const struct symbolizer *s);

/* The JIT maps read so far of which only the first JITMAP_MAX_BYTES were read. */
uint64_t symbolizer_jit_maps_cut(const struct symbolizer *s);

#endif
