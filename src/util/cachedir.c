/* SPDX-License-Identifier: MIT */
#include "util/cachedir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/untrusted.h"
#include "util/xalloc.h"

/* The cache's path by the environment, or NULL when there is none. */
static char *cache_path(void)
{
	const char *own = getenv("GTRACE_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char path[PATH_MAX];
	int n;

	if (own)
		n = *own ? snprintf(path, sizeof(path), "%s", own) : -1;
	else if (xdg && *xdg == '/')	/* the specification's rule: relative ones are ignored */
		n = snprintf(path, sizeof(path), "%s/gtrace", xdg);
	else if (home && *home == '/')
		n = snprintf(path, sizeof(path), "%s/.cache/gtrace", home);
	else
		n = -1;
	return n > 0 && (size_t)n < sizeof(path) ? xstrdup(path) : NULL;
}

void cachedir_open(struct cachedir *c)
{
	struct stat st;
	size_t len;

	c->fd = -1;
	c->path = cache_path();
	if (!c->path)
		return;
	len = strlen(c->path);
	while (len > 1 && c->path[len - 1] == '/')
		c->path[--len] = '\0';
	/* Its parents as mkdir -p makes them; itself private. */
	if ((outfile_make_dirs(c->path) || (mkdir(c->path, 0700) && errno != EEXIST)) ||
	    (c->fd = open(c->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fstat(c->fd, &st) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		cachedir_close(c);
}

void cachedir_close(struct cachedir *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->path);
	c->path = NULL;
}

int cachedir_read(const struct cachedir *c, const char *name, uint64_t max_size)
{
	const struct untrusted_rules rules = {
		.owned = true, .owner = geteuid(), .one_link = true, .not_writable = true,
		.max_size = max_size,
	};
	char path[PATH_MAX];

	if (c->fd < 0)
		return -ENOENT;
	if (snprintf(path, sizeof(path), "%s/%s", c->path, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return untrusted_open(path, &rules, NULL);
}

int cachedir_write(const struct cachedir *c, const char *name, struct outfile *f)
{
	char path[PATH_MAX];

	if (c->fd < 0)
		return -ENOENT;
	if (snprintf(path, sizeof(path), "%s/%s", c->path, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return outfile_create(f, path, 0600, false);
}

int cachedir_put(const struct cachedir *c, const char *name, const void *bytes, size_t len)
{
	const char *p = bytes;
	struct outfile f;
	int err = cachedir_write(c, name, &f), close_err;

	if (err)
		return err;
	while (!err && len) {
		ssize_t n = write(f.fd, p, len);

		if (n < 0 && errno != EINTR)
			err = -errno;
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		}
	}
	if (!err)
		err = outfile_place(&f);
	if (err)
		outfile_discard(&f);
	close_err = outfile_close(&f);
	return err ? err : close_err;
}
