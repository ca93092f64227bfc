/* SPDX-License-Identifier: MIT */
#include "util/untrusted.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

const struct untrusted_rules untrusted_mapped_file = {
	.max_size = 16ull << 30,
};

static int check(const struct stat *st, const struct untrusted_rules *r)
{
	if (!S_ISREG(st->st_mode))
		return -EPERM;	/* a symbolic link not followed, a FIFO, a device, a directory */
	if (r->owned && st->st_uid && st->st_uid != geteuid() && st->st_uid != r->owner)
		return -EPERM;
	if (r->one_link && st->st_nlink != 1)
		return -EPERM;
	if (r->not_writable && (st->st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	if (r->max_size && (uint64_t)st->st_size > r->max_size)
		return -EFBIG;
	return 0;
}

int untrusted_open(const char *path, const struct untrusted_rules *rules, struct stat *st)
{
	int at = open(path, O_PATH | O_CLOEXEC | (rules->follow ? 0 : O_NOFOLLOW));
	struct stat own;
	char self[64];
	int fd, err;

	if (at < 0)
		return -errno;
	if (!st)
		st = &own;
	err = fstat(at, st) ? -errno : check(st, rules);
	if (err) {
		close(at);
		return err;
	}
	/* Through the descriptor: the file checked, whatever the path names by now. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", at);
	fd = open(self, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	close(at);
	return fd < 0 ? err : fd;
}
