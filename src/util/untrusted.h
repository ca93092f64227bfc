/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_UNTRUSTED_H
#define GTRACE_UTIL_UNTRUSTED_H

/*
 * Opening a file whose path or content someone else controls: the files a
 * recorded process maps (named by its MMAP2 records and /proc/PID/maps),
 * the JIT map it writes, the files a recording names, a library named by
 * the environment. Such a path may have become a FIFO (open would wait
 * for a writer for ever), a device (opening one may act: a watchdog
 * starts), a huge file, or a link to a file that gtrace, run as root, may
 * read and its owner may not. So the path is first opened with O_PATH,
 * which opens nothing, and the file is opened for reading, through that
 * descriptor, only once it is known to be a regular file that keeps the
 * rules.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct untrusted_rules {
	bool follow;		/* a symbolic link as the last component is followed */
	bool owned;		/* the file belongs to root, to our effective user or to owner */
	uid_t owner;
	bool one_link;		/* no other name: not a hard link to someone else's file */
	bool not_writable;	/* neither its group nor others may write it */
	uint64_t max_size;	/* larger files are refused; 0: any size */
};

/* The files a recorded process maps: regular, not a symbolic link, at most 16 GiB. */
extern const struct untrusted_rules untrusted_mapped_file;

/*
 * A read-only, close-on-exec descriptor of path, its status in *st (st
 * may be NULL); or -EPERM when the file breaks a rule (not a regular
 * file, a symbolic link where none is followed, another owner, a second
 * link, writable by others), -EFBIG when it is larger than max_size, or
 * the negative errno of opening it.
 */
int untrusted_open(const char *path, const struct untrusted_rules *rules, struct stat *st);

#endif
