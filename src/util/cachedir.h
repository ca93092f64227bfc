/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_CACHEDIR_H
#define GTRACE_UTIL_CACHEDIR_H

/*
 * gtrace's cache: what is slow to make and the same from one recording to
 * the next (the kernel's symbols of this boot, system debuginfo inflated),
 * as perf keeps ~/.debug. $GTRACE_CACHE_DIR (empty: no cache), else
 * $XDG_CACHE_HOME/gtrace, else $HOME/.cache/gtrace; made with mode 0700
 * when missing. Used only while it belongs to the effective user and
 * nobody else may write it: as root, never a directory another user
 * controls. Its files may be deleted at any time.
 */

#include <stddef.h>
#include <stdint.h>

#include "util/outfile.h"

struct cachedir {
	int fd;			/* -1: no cache */
	char *path;
};

/* Opens the cache (c->fd -1 when there is none to use); never fails otherwise. */
void cachedir_open(struct cachedir *c);
void cachedir_close(struct cachedir *c);

/*
 * A read-only descriptor of the cache's file name, which must be the
 * effective user's, a regular file, not a link, writable by nobody else
 * and at most max_size bytes; or a negative errno.
 */
int cachedir_read(const struct cachedir *c, const char *name, uint64_t max_size);

/* Starts writing name anew with mode 0600 (outfile_place puts it in place). */
int cachedir_write(const struct cachedir *c, const char *name, struct outfile *f);

/* Writes name anew, whole: 0 or a negative errno, and nothing left behind. */
int cachedir_put(const struct cachedir *c, const char *name, const void *bytes, size_t len);

#endif
