/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_PREFETCH_H
#define GTRACE_UTIL_PREFETCH_H

/*
 * Asking the cache for memory before it is read: the records of the
 * rings were written by the kernel on other CPUs, and a walk that reads
 * them line after line waits for each miss in turn, where misses asked
 * for together overlap.
 */

#include <stddef.h>

#define CACHE_LINE 64

/* Asks for the lines of [p, p + len). */
static inline void prefetch_range(const void *p, size_t len)
{
	const char *at = p;

	for (size_t off = 0; off < len; off += CACHE_LINE)
		__builtin_prefetch(at + off);
}

#endif
