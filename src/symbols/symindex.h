/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_SYMINDEX_H
#define GTRACE_SYMBOLS_SYMINDEX_H

/*
 * One module's ELF symbols sorted by address, read once from the table
 * libdwfl chose (.symtab, else .dynsym with .gnu_debugdata's symbols) and
 * searched by binary search. It names an address as dwfl_module_addrinfo
 * does, which reads every symbol again on each call: among the sized
 * symbols that contain the address, globals before locals, then the
 * nearest start, the stronger binding, the smaller size, the first in the
 * table (libdwfl/dwfl_module_addrsym.c). Where a symbol without a size
 * could name the address, rare outside assembly, addrinfo itself answers.
 */

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "util/vec.h"

/* More symbols than this (the largest libraries have a few million) are searched by addrinfo. */
#define SYM_INDEX_MAX (1u << 24)

struct sym_entry;

struct sym_index {
	VEC(struct sym_entry) entries;	/* by address, then addrinfo's search order */
	int first_global;	/* dwfl_module_getsymtab_first_global's */
	int usable;		/* 1 built, 0 not yet, -1 addrinfo answers */
};

/* Reads mod's symbols; an index that cannot be built leaves naming to addrinfo. */
void sym_index_build(struct sym_index *ix, Dwfl_Module *mod);

/* The name dwfl_module_addrinfo gives addr in mod, or NULL; ix built from mod. */
const char *sym_index_name(const struct sym_index *ix, Dwfl_Module *mod, uint64_t addr);

/* Where the symbol that names an address lies; size 0 for a label without one. */
struct sym_extent {
	uint64_t start;
	uint64_t size;
};

/* The same, and where that symbol lies. */
const char *sym_index_lookup(const struct sym_index *ix, Dwfl_Module *mod, uint64_t addr,
			     struct sym_extent *ext);

void sym_index_free(struct sym_index *ix);

#endif
