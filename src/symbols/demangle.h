/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_DEMANGLE_H
#define GTRACE_SYMBOLS_DEMANGLE_H

/*
 * C++ demangling without a link-time dependency: libstdc++'s __cxa_demangle
 * is looked up with dlopen the first time a mangled name shows up, so a
 * machine without libstdc++ keeps the mangled names. Rust's names are left
 * mangled (the views demangle them: src/symbols/rust-demangle.h), legacy
 * ones included, which are Itanium names too.
 */

#include <stdbool.h>
#include <stddef.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len,
				 int *status);

struct demangler {
	void *lib;		/* dlopen handle, NULL if absent */
	cxa_demangle_fn fn;
	bool tried;
};

/* A malloc'd demangled name, or NULL when name is not mangled or cannot be. */
char *demangle(struct demangler *d, const char *name);
/* Whether a demangler could be loaded (loads it on first use). */
bool demangler_available(struct demangler *d);
void demangler_free(struct demangler *d);

#endif
