/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_XALLOC_H
#define GTRACE_UTIL_XALLOC_H

#include <stddef.h>

/*
 * Allocation that cannot fail: running out of memory is the one error no
 * layer can recover from, so these abort with a message instead of making
 * every caller check (the convention of git's xmalloc).
 */
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xmemdup(const void *p, size_t size);

#endif
