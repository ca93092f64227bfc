/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_JITMAP_H
#define GTRACE_SYMBOLS_JITMAP_H

/*
 * The symbols a JIT publishes in /tmp/perf-PID.map: one "START SIZE name"
 * line per function, START and SIZE in hex, addresses absolute.
 */

#include <stdint.h>

#include "util/hashmap.h"
#include "util/vec.h"

struct jit_sym {
	uint64_t start, end;
	uint32_t name;		/* id in the strtab given to jitmap_load */
	uint32_t order;		/* line number: later lines win for one start */
};

struct jitmap {
	VEC(struct jit_sym) syms;	/* sorted by start, then order */
};

/* Reads path, interning names into names; 0 or a negative errno. */
int jitmap_load(struct jitmap *m, const char *path, struct strtab *names);
/* The name id of the symbol covering addr, 0 when none does. */
uint32_t jitmap_find(const struct jitmap *m, uint64_t addr);
void jitmap_free(struct jitmap *m);

#endif
