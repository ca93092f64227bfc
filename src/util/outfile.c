/* SPDX-License-Identifier: MIT */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/remover.h"
#include "util/xalloc.h"

/* Random names to try before giving up: each taken one is another's file. */
#define TEMP_TRIES 100
#define TEMP_SUFFIX_LEN 6	/* as mkstemp's XXXXXX */

const char *outfile_strerror(int err)
{
	switch (-err) {
	case OUTFILE_ERR_SYMLINK:
		return "it is a symbolic link, which gtrace does not write through";
	case OUTFILE_ERR_NOT_REGULAR:
		return "it is not a regular file";
	case OUTFILE_ERR_OPEN_DIR:
		return "its directory is writable by anyone and not sticky";
	default:
		return strerror(-err);
	}
}

int outfile_make_dirs(const char *path)
{
	char dir[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, len + 1);
	/* Each prefix that ends before a '/', the root's "" left out. */
	for (char *slash = strchr(dir, '/'); slash; slash = strchr(slash + 1, '/')) {
		if (slash == dir)
			continue;
		*slash = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
		*slash = '/';
	}
	return 0;
}

static uint64_t random_bits(void)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	/* No entropy yet (early boot): O_EXCL keeps a guessed name harmless. */
	return (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid() << 32 ^ (uintptr_t)&r;
}

/* The temporary is listed for removal should gtrace die before placing it. */
static void list_temp(const struct outfile *f, bool add)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", f->dir, f->temp) >= (int)sizeof(path))
		return;
	if (add)
		remover_add(path);
	else
		remover_forget(path);
}

/* ".NAME.XXXXXX" beside NAME, NAME cut short where the whole would be too long. */
static int create_temp(struct outfile *f, mode_t mode)
{
	static const char letters[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	int keep = (int)strlen(f->name);
	char temp[NAME_MAX + 1];

	if (keep > NAME_MAX - 2 - TEMP_SUFFIX_LEN)
		keep = NAME_MAX - 2 - TEMP_SUFFIX_LEN;
	for (int tries = 0; tries < TEMP_TRIES; tries++) {
		uint64_t r = random_bits();
		int n = snprintf(temp, sizeof(temp), ".%.*s.", keep, f->name);

		for (int i = 0; i < TEMP_SUFFIX_LEN; i++, r /= sizeof(letters) - 1)
			temp[n++] = letters[r % (sizeof(letters) - 1)];
		temp[n] = '\0';
		f->fd = openat(f->dir_fd, temp,
			       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (f->fd >= 0) {
			f->temp = xstrdup(temp);
			list_temp(f, true);
			return fstat(f->fd, &f->made) ? -errno : 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* What is at NAME now: nothing or a regular file, else why not. */
static int check_name(const struct outfile *f)
{
	struct stat st;

	if (fstatat(f->dir_fd, f->name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISLNK(st.st_mode))
		return -OUTFILE_ERR_SYMLINK;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return S_ISREG(st.st_mode) ? 0 : -OUTFILE_ERR_NOT_REGULAR;
}

static int open_dir(struct outfile *f, const char *path)
{
	const char *slash = strrchr(path, '/');
	struct stat st;

	f->dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	f->dir_fd = open(f->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (f->dir_fd < 0 || fstat(f->dir_fd, &st))
		return -errno;
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return -OUTFILE_ERR_OPEN_DIR;
	f->name = xstrdup(slash ? slash + 1 : path);
	return *f->name ? 0 : -EISDIR;	/* "dir/" names no file */
}

/* Once f's directory is open (err: why not), its temporary beside NAME; closed on failure. */
static int create_named(struct outfile *f, mode_t mode, int err)
{
	if (!err)
		err = check_name(f);
	if (!err)
		err = create_temp(f, mode);
	if (err)
		outfile_close(f);
	return err;
}

int outfile_create_in(struct outfile *f, int dir_fd, const char *dir, const char *name,
		      mode_t mode)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
	f->dir = xstrdup(dir);
	f->name = xstrdup(name);
	return create_named(f, mode, f->dir_fd < 0 ? -errno
					  : *name && !strchr(name, '/') ? 0 : -EINVAL);
}

int outfile_create(struct outfile *f, const char *path, mode_t mode, bool keep_old)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->dir_fd = -1;
	err = create_named(f, mode, open_dir(f, path));
	if (err)
		return err;
	if (keep_old) {
		size_t len = strlen(f->name) + sizeof(".old");

		f->old = xmalloc(len);
		snprintf(f->old, len, "%s.old", f->name);
	}
	return 0;
}

int outfile_place(struct outfile *f)
{
	struct stat st;
	int err;

	if (f->old && !fstatat(f->dir_fd, f->name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISREG(st.st_mode)) {
		if (renameat(f->dir_fd, f->name, f->dir_fd, f->old))
			return -errno;
		f->rotated = true;
	}
	/* Whatever took NAME since create is replaced, never followed. */
	if (renameat(f->dir_fd, f->temp, f->dir_fd, f->name)) {
		err = -errno;
		if (f->rotated && !renameat(f->dir_fd, f->old, f->dir_fd, f->name))
			f->rotated = false;
		return err;
	}
	list_temp(f, false);
	free(f->temp);
	f->temp = NULL;
	f->placed = true;
	return 0;
}

/* NAME is still the file made here, not one put in its place since. */
static bool is_ours(const struct outfile *f)
{
	struct stat st;

	return !fstatat(f->dir_fd, f->name, &st, AT_SYMLINK_NOFOLLOW) &&
	       st.st_dev == f->made.st_dev && st.st_ino == f->made.st_ino;
}

void outfile_discard(struct outfile *f)
{
	if (f->temp) {
		unlinkat(f->dir_fd, f->temp, 0);
		list_temp(f, false);
		free(f->temp);
		f->temp = NULL;
	} else if (f->rotated) {
		renameat(f->dir_fd, f->old, f->dir_fd, f->name);
	} else if (f->placed && is_ours(f)) {
		unlinkat(f->dir_fd, f->name, 0);
	}
	f->placed = false;
	f->rotated = false;
}

int outfile_close(struct outfile *f)
{
	int err = 0;

	if (f->temp)
		outfile_discard(f);
	if (f->fd >= 0 && close(f->fd))
		err = -errno;
	if (f->dir_fd >= 0)
		close(f->dir_fd);
	free(f->dir);
	free(f->name);
	free(f->old);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->dir_fd = -1;
	return err;
}
