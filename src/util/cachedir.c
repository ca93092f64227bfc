/* SPDX-License-Identifier: MIT */
#include "util/cachedir.h"

#include <dirent.h>
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

/* The Cache Directory Tagging Specification's file, and its first line. */
#define TAG_NAME "CACHEDIR.TAG"
#define TAG_SIGNATURE "Signature: 8a477f597d28d172789f06886806bc55"
#define TAG_TEXT TAG_SIGNATURE "\n# gtrace's cache (gtrace-record(1), FILES)\n"

/* The cache's path by the environment, or NULL when there is none. */
static char *cache_path(void)
{
	/* Not taken from the environment of a set-user-ID or capable gtrace. */
	const char *own = secure_getenv("GTRACE_CACHE_DIR");
	const char *xdg = secure_getenv("XDG_CACHE_HOME"), *home = secure_getenv("HOME");
	char path[PATH_MAX];
	int n;

	if (own)
		n = *own == '/' ? snprintf(path, sizeof(path), "%s", own) : -1;
	else if (xdg && *xdg == '/')	/* the specification's rule: relative ones are ignored */
		n = snprintf(path, sizeof(path), "%s/gtrace", xdg);
	else if (home && *home == '/')
		n = snprintf(path, sizeof(path), "%s/.cache/gtrace", home);
	else
		n = -1;
	return n > 0 && (size_t)n < sizeof(path) ? xstrdup(path) : NULL;
}

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/*
 * A directory the way to the cache may pass: root's or ours, and nobody
 * else may write it but where each keeps to their own files (sticky, as
 * /tmp).
 */
static bool passable(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && trusted_owner(st->st_uid) &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX));
}

/*
 * Opens (O_PATH) component name of directory at, made with mode 0700 when
 * missing (*made). A symbolic link is followed only if root or we own it,
 * and only to a passable directory.
 */
static int open_component(int at, const char *name, bool *made)
{
	struct stat st;
	int fd;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno != ENOENT || (mkdirat(at, name, 0700) && errno != EEXIST))
			return -errno;
		*made = true;
	} else if (S_ISLNK(st.st_mode) && !trusted_owner(st.st_uid)) {
		return -EPERM;
	}
	fd = openat(at, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !passable(&st)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Opens path, each directory on the way passable, the missing ones made. */
static int open_path(const char *path, bool *made)
{
	char *copy = xstrdup(path), *save = NULL;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	for (char *name = strtok_r(copy, "/", &save); fd >= 0 && name;
	     name = strtok_r(NULL, "/", &save)) {
		int next;

		*made = false;
		next = strcmp(name, "..") ? open_component(fd, name, made) : -EPERM;
		close(fd);
		fd = next;
	}
	free(copy);
	return fd;
}

/* Whether directory fd holds a tag that says it is a cache: ours, made by gtrace. */
static bool tagged(int fd)
{
	char text[sizeof(TAG_SIGNATURE) - 1];
	int tag = openat(fd, TAG_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	bool ok = tag >= 0 && !fstat(tag, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		  read(tag, text, sizeof(text)) == (ssize_t)sizeof(text) &&
		  !memcmp(text, TAG_SIGNATURE, sizeof(text));

	if (tag >= 0)
		close(tag);
	return ok;
}

void cachedir_open(struct cachedir *c)
{
	struct stat st;
	bool made = false;

	c->fd = -1;
	c->path = cache_path();
	if (!c->path)
		return;
	c->fd = open_path(c->path, &made);
	/*
	 * Ours alone, and made by gtrace (a directory someone names that holds
	 * other files, /etc/cron.d say, is no cache to write to, even as root).
	 */
	if (c->fd < 0 || fstat(c->fd, &st) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) ||
	    (made ? cachedir_put(c, TAG_NAME, TAG_TEXT, sizeof(TAG_TEXT) - 1) : !tagged(c->fd)))
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
	char path[64 + NAME_MAX];

	if (c->fd < 0)
		return -ENOENT;
	if (strchr(name, '/') ||
	    snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", c->fd, name) >= (int)sizeof(path))
		return -EINVAL;
	/* Through the directory opened, whatever its path names now. */
	return untrusted_open(path, &rules, NULL);
}

int cachedir_write(const struct cachedir *c, const char *name, struct outfile *f)
{
	return c->fd < 0 ? -ENOENT : outfile_create_in(f, c->fd, c->path, name, 0600);
}

int cachedir_put(const struct cachedir *c, const char *name, const void *bytes, size_t len)
{
	const char *p = bytes;
	struct outfile f;
	int err = cachedir_write(c, name, &f);

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
	return cachedir_place(&f, err);
}

int cachedir_place(struct outfile *f, int err)
{
	int close_err;

	if (!err)
		err = outfile_place(f);
	/* A temporary never placed is removed as it closes. */
	close_err = outfile_close(f);
	return err ? err : close_err;
}

void cachedir_prune(const struct cachedir *c, const char *prefix, const char *keep)
{
	int fd = c->fd < 0 ? -1 : openat(c->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) && strcmp(e->d_name, keep))
			unlinkat(dirfd(dir), e->d_name, 0);
	closedir(dir);
}
