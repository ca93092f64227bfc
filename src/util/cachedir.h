/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_CACHEDIR_H
#define GTRACE_UTIL_CACHEDIR_H

/*
 * gtrace's cache: what is slow to make and the same from one recording to
 * the next (the kernel's symbols of this boot, system debuginfo inflated),
 * as perf keeps ~/.debug. $GTRACE_CACHE_DIR (empty or relative: no cache),
 * else $XDG_CACHE_HOME/gtrace, else $HOME/.cache/gtrace, the variables
 * ignored where gtrace is set-user-ID or capable (secure_getenv).
 *
 * gtrace often runs as root with an environment someone else chose (sudo
 * -E), so the directory is used only where none but root and the
 * effective user could have put it: each directory on its path belongs to
 * root or to the effective user and nobody else may write it (or it is
 * sticky, as /tmp), a symbolic link on the way too; the missing ones are
 * made with mode 0700; the cache itself is the effective user's, writable
 * by nobody else, and either made now or tagged as gtrace tags the ones it
 * makes (CACHEDIR.TAG, the Cache Directory Tagging Specification's file):
 * an existing directory that holds other files is never written to. Its
 * files are then read and written through the directory opened, whatever
 * its path names later. They may be deleted at any time.
 */

#include <stddef.h>
#include <stdint.h>

#include "util/outfile.h"

struct cachedir {
	int fd;			/* the directory (O_PATH); -1: no cache */
	char *path;
};

/* Opens the cache (c->fd -1 when there is none to use); never fails otherwise. */
void cachedir_open(struct cachedir *c);
void cachedir_close(struct cachedir *c);

/*
 * A read-only descriptor of the cache's file name, which must be a
 * regular file of the effective user (or root), not a link, writable by
 * nobody else and at most max_size bytes; or a negative errno.
 */
int cachedir_read(const struct cachedir *c, const char *name, uint64_t max_size);

/* Starts writing name anew with mode 0600 (cachedir_place puts it in place). */
int cachedir_write(const struct cachedir *c, const char *name, struct outfile *f);

/*
 * Puts the file cachedir_write began in place unless writing it failed
 * (err), and closes it: 0, or a negative errno and nothing left behind.
 */
int cachedir_place(struct outfile *f, int err);

/* Writes name anew, whole: 0 or a negative errno, and nothing left behind. */
int cachedir_put(const struct cachedir *c, const char *name, const void *bytes, size_t len);

/* Removes the files whose names begin with prefix, but keep. */
void cachedir_prune(const struct cachedir *c, const char *prefix, const char *keep);

#endif
