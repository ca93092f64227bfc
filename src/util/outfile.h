/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_OUTFILE_H
#define GTRACE_UTIL_OUTFILE_H

/*
 * A file gtrace writes, made so that nobody else's file is written through
 * it, even as root in a directory others write to: the bytes go to a new
 * temporary ".NAME.XXXXXX" beside NAME, created with O_EXCL (so never
 * through a symbolic link or into a file someone else made), and it takes
 * NAME by rename, which replaces the name and never follows it. The
 * directory is opened once, so every name is in that directory even if a
 * path above it changes meanwhile. Refused: a NAME that is a symbolic link
 * or not a regular file, and a directory that anyone may write to without
 * the sticky bit (anyone could swap the file for another under its name).
 * Should gtrace die before the temporary is placed, src/util/remover.h
 * removes it.
 */

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Errors beyond errno, returned negated like errno values. */
enum {
	OUTFILE_ERR_SYMLINK = 4352,	/* NAME is a symbolic link */
	OUTFILE_ERR_NOT_REGULAR,	/* NAME is a device, a FIFO, a socket */
	OUTFILE_ERR_OPEN_DIR,		/* the directory is writable by anyone and not sticky */
};

struct outfile {
	int fd;			/* the file, open for writing; the caller may take it (-1) */
	char *dir;		/* the directory NAME is in, as path names it */
	int dir_fd;		/* ... opened */
	char *name;		/* NAME, in dir_fd */
	char *temp;		/* the temporary name, until placed */
	char *old;		/* where a previous NAME goes when placed; NULL: replaced */
	struct stat made;	/* the file's identity, to remove it and no other */
	bool placed;		/* the file has its name */
	bool rotated;		/* ... and the previous NAME was moved to old */
};

/*
 * Makes the missing directories path's file is to be in, as mkdir -p does,
 * each with mode 0755 (less the umask): never writable by others, whom
 * outfile_create would refuse. One made meanwhile by another process (the
 * other ranks of a job) is as good; an existing name is not followed when
 * it is made, only when a later name goes through it, as for any path.
 * Returns 0 or a negative errno.
 */
int outfile_make_dirs(const char *path);

/* A message for the errors above; strerror's for errno values. */
const char *outfile_strerror(int err);

/*
 * Creates the temporary beside path, with mode (less the umask). keep_old:
 * a regular file at path is moved to "path.old" when this one takes its
 * place, instead of being replaced.
 */
int outfile_create(struct outfile *f, const char *path, mode_t mode, bool keep_old);

/*
 * The same for name in the directory dir_fd (duplicated), which dir names
 * for the removal of the temporary should gtrace die; no ".old" kept.
 */
int outfile_create_in(struct outfile *f, int dir_fd, const char *dir, const char *name,
		      mode_t mode);

/*
 * Renames the file to NAME, where it may be written on. To replace NAME
 * with a whole file that survives a crash, fsync it first.
 */
int outfile_place(struct outfile *f);

/*
 * Removes the file: the temporary, or once placed NAME, with the previous
 * NAME put back where it was moved to path.old.
 */
void outfile_discard(struct outfile *f);

/* Closes the file (removing the temporary if never placed) and frees f's names. */
int outfile_close(struct outfile *f);

#endif
