/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_KALLSYMS_H
#define GTRACE_SYMBOLS_KALLSYMS_H

/*
 * The kernel's function symbols from /proc/kallsyms: one "ADDR TYPE name
 * [module]" line each, ADDR in hex. Only code (types t, T, w, W) is kept.
 * A kernel that hides its addresses from this reader (kptr_restrict, or
 * no CAP_SYSLOG) lists them all as 0: the map is then hidden and names
 * nothing. Read up to KALLSYMS_MAX_BYTES, lines longer than
 * KALLSYMS_MAX_LINE skipped.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/vec.h"

struct cachedir;

#define KALLSYMS_PATH "/proc/kallsyms"
/* A kernel with every module loaded lists some 20 MB. */
#define KALLSYMS_MAX_BYTES (128u << 20)
/* Symbol names are at most 512 bytes (KSYM_NAME_LEN), a module's name 56. */
#define KALLSYMS_MAX_LINE 1024

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset of its name in kallsyms.names */
};

/*
 * A machine lists some 120k code symbols and a recording names a few
 * hundred of them: names are kept in one block, not interned one by one.
 */
struct kallsyms {
	VEC(struct ksym) syms;	/* sorted by address; zero addresses left out */
	VEC(char) names;	/* NUL-terminated, one after the other */
	uint64_t zero;		/* code symbols listed at address 0 */
};

/*
 * Adds the code symbols of the whole lines of text[0 .. len) (the last
 * one too when final). Returns the bytes taken: a line cut at the end
 * waits for more when not final.
 */
size_t kallsyms_parse(struct kallsyms *k, const char *text, size_t len, bool final);
/* Reads path: 0 or a negative errno. Sorted once read. */
int kallsyms_load(struct kallsyms *k, const char *path);
/*
 * Reads KALLSYMS_PATH, or the copy of it that the cache c keeps for this
 * boot and these modules; a first read of them leaves that copy. Hidden
 * symbols are not cached.
 */
int kallsyms_load_cached(struct kallsyms *k, const struct cachedir *c);
/* Whether every code symbol read was at address 0: the kernel hid them. */
bool kallsyms_hidden(const struct kallsyms *k);
/* The name of the symbol at or below addr, NULL when none is; valid until kallsyms_free. */
const char *kallsyms_find(const struct kallsyms *k, uint64_t addr);
void kallsyms_free(struct kallsyms *k);

#endif
