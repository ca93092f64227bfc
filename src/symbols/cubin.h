/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_CUBIN_H
#define GTRACE_SYMBOLS_CUBIN_H

/*
 * The source lines of the SASS in a CUDA cubin, read offline from its bytes:
 * CUPTI's PC samples name a function and an offset into it, and a cubin
 * built with -lineinfo has a DWARF line table for each function's code.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cubin;

struct cubin_line {
	const char *file;	/* directory and name as the line table has them */
	unsigned line;
};

/*
 * Parses the len bytes of a cubin; they are not kept. 0, or -ENOEXEC when
 * they are not a CUDA ELF file, -EINVAL when its sections or its line table
 * do not fit in them or are malformed, -EFBIG when what it builds of them
 * (its functions, source files and line rows) would take more than *room
 * bytes: a line table of a few bytes per row, or of many files in a long
 * directory, costs many times its own size. What it built, kept or not,
 * is taken from *room, so that cubins opened one after the other cost no
 * more than *room in all, in memory and in work.
 */
int cubin_open(struct cubin **out, const void *bytes, size_t len, uint64_t *room);
void cubin_close(struct cubin *c);

/* Whether any function of the cubin has source lines. */
bool cubin_has_lines(const struct cubin *c);

/*
 * The source line of the instruction pc_offset bytes into function (its
 * symbol name, mangled): 0, or -ENOENT when the cubin has no such function,
 * -ERANGE when pc_offset is past its end. file is NULL and line 0 when the
 * line is not known, as for every offset of a cubin without lines. The
 * strings stay valid until cubin_close.
 */
int cubin_lookup(const struct cubin *c, const char *function, uint64_t pc_offset,
		 struct cubin_line *out);

#endif
