/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_JITMAP_H
#define GTRACE_SYMBOLS_JITMAP_H

/*
 * The symbols a JIT publishes in /tmp/perf-PID.map: one "START SIZE name"
 * line per function, START and SIZE in hex, addresses absolute. The file
 * is the process's to write, and anyone's to plant: it is read only when
 * it is a regular file of its own, of the process's user or of root (see
 * jitmap_load), and only so far.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/hashmap.h"
#include "util/vec.h"

/* The bytes of a map read at most: a JIT appends for as long as it runs. */
#define JITMAP_MAX_BYTES (64u << 20)
/* Longer lines are skipped: no function's name takes 4 KiB. */
#define JITMAP_MAX_LINE 4096

struct jit_sym {
	uint64_t start, end;
	uint32_t name;		/* id in the strtab given to jitmap_load */
	uint32_t order;		/* line number: later lines win for one start */
};

struct jitmap {
	VEC(struct jit_sym) syms;	/* sorted by start, then order */
};

/*
 * Reads path, interning names into names. The file must be a regular
 * file with no other link, not reached through a symbolic link, owned by
 * root, by gtrace's effective user or by owner. Returns 0, 1 when only
 * its first JITMAP_MAX_BYTES were read, -EPERM when the file is refused,
 * or another negative errno.
 */
int jitmap_load(struct jitmap *m, const char *path, uid_t owner, struct strtab *names);
/* Adds the symbols of the lines of text[0 .. len); lines that do not parse are skipped. */
void jitmap_parse(struct jitmap *m, const char *text, size_t len, struct strtab *names);
/* The name id of the symbol covering addr, 0 when none does. */
uint32_t jitmap_find(const struct jitmap *m, uint64_t addr);
void jitmap_free(struct jitmap *m);

#endif
