/* SPDX-License-Identifier: MIT */
/*
 * The cache of what naming makes again each recording (util/cachedir.h):
 * the directory's rules, and the kernel's symbols of this boot kept
 * (test-debugcache.c: system debuginfo kept inflated).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/kallsyms.h"
#include "util/cachedir.h"
#include "test.h"

static char top[64];

/* A path under this test's directory. */
static const char *in_top(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", top, name);
	return path;
}

/* The cache that GTRACE_CACHE_DIR=dir gives; dir NULL: the variable unset. */
static void open_at(struct cachedir *c, const char *dir)
{
	if (dir)
		setenv("GTRACE_CACHE_DIR", dir, 1);
	else
		unsetenv("GTRACE_CACHE_DIR");
	cachedir_open(c);
}

static void test_cachedir_rules(void)
{
	struct cachedir c;
	struct stat st;
	char target[PATH_MAX];
	int fd;

	snprintf(target, sizeof(target), "%s", in_top("a"));

	/* Empty or relative: no cache. */
	open_at(&c, "");
	CHECK(c.fd < 0);
	cachedir_close(&c);
	open_at(&c, "cache");
	CHECK(c.fd < 0);
	cachedir_close(&c);
	/* Made when missing, its parents too, all private, and tagged. */
	open_at(&c, in_top("a/b/cache"));
	CHECK(c.fd >= 0);
	CHECK(stat(in_top("a/b/cache"), &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(stat(in_top("a/b"), &st) == 0 && (st.st_mode & 0777) == 0700);
	CHECK(stat(in_top("a/b/cache/CACHEDIR.TAG"), &st) == 0 && S_ISREG(st.st_mode));
	CHECK(cachedir_put(&c, "entry", "bytes", 5) == 0);
	CHECK(stat(in_top("a/b/cache/entry"), &st) == 0 && (st.st_mode & 0777) == 0600 &&
	      st.st_size == 5);
	fd = cachedir_read(&c, "entry", 5);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(cachedir_read(&c, "entry", 4) == -EFBIG);
	CHECK(cachedir_read(&c, "missing", 0) == -ENOENT);
	/* A file others may write, or a link, is not read. */
	CHECK(chmod(in_top("a/b/cache/entry"), 0622) == 0);
	CHECK(cachedir_read(&c, "entry", 0) == -EPERM);
	CHECK(symlink("/etc/passwd", in_top("a/b/cache/link")) == 0);
	CHECK(cachedir_read(&c, "link", 0) == -EPERM);
	cachedir_close(&c);
	/* Opened again: the tag says it is one. */
	open_at(&c, in_top("a/b/cache"));
	CHECK(c.fd >= 0);
	cachedir_close(&c);
	/* A directory that gtrace did not make (no tag) is not written to, /etc/cron.d say. */
	CHECK(mkdir(in_top("other"), 0700) == 0);
	open_at(&c, in_top("other"));
	CHECK(c.fd < 0);
	cachedir_close(&c);
	CHECK(access(in_top("other/CACHEDIR.TAG"), F_OK) != 0);
	/* A directory others may write is no cache. */
	CHECK(chmod(in_top("a/b/cache"), 0777) == 0);
	open_at(&c, in_top("a/b/cache"));
	CHECK(c.fd < 0);
	CHECK(cachedir_put(&c, "entry", "x", 1) == -ENOENT);
	cachedir_close(&c);
	/* Nor, as root, one another user owns, or one reached through their directory or link. */
	if (!geteuid()) {
		CHECK(mkdir(in_top("theirs"), 0700) == 0 && chown(in_top("theirs"), 65534, 65534) == 0);
		open_at(&c, in_top("theirs"));
		CHECK(c.fd < 0);
		cachedir_close(&c);
		CHECK(chmod(in_top("theirs"), 0755) == 0);
		open_at(&c, in_top("theirs/cache"));
		CHECK(c.fd < 0);
		cachedir_close(&c);
		CHECK(access(in_top("theirs/cache"), F_OK) != 0);
		CHECK(symlink(target, in_top("their-link")) == 0 &&
		      lchown(in_top("their-link"), 65534, 65534) == 0);
		open_at(&c, in_top("their-link/new-cache"));
		CHECK(c.fd < 0);
		cachedir_close(&c);
		CHECK(access(in_top("a/new-cache"), F_OK) != 0);
	}
	/* Our own link on the way is followed. */
	CHECK(symlink(target, in_top("our-link")) == 0);
	open_at(&c, in_top("our-link/linked-cache"));
	CHECK(c.fd >= 0);
	cachedir_close(&c);
	/* Without the variable: XDG_CACHE_HOME's gtrace, else HOME's .cache/gtrace. */
	setenv("XDG_CACHE_HOME", in_top("xdg"), 1);
	open_at(&c, NULL);
	CHECK(c.path && !strcmp(c.path, in_top("xdg/gtrace")) && c.fd >= 0);
	cachedir_close(&c);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", in_top("home"), 1);
	open_at(&c, NULL);
	CHECK(c.path && !strcmp(c.path, in_top("home/.cache/gtrace")) && c.fd >= 0);
	cachedir_close(&c);
}

static bool same_symbols(const struct kallsyms *a, const struct kallsyms *b)
{
	if (a->syms.len != b->syms.len)
		return false;
	for (size_t i = 0; i < a->syms.len; i++)
		if (a->syms.v[i].addr != b->syms.v[i].addr ||
		    strcmp(a->names.v + a->syms.v[i].name, b->names.v + b->syms.v[i].name))
			return false;
	return true;
}

/* The name of the one file in dir starting with prefix, in name; false if none. */
static bool find_entry(const char *dir, const char *prefix, char *name, size_t size)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	bool found;

	snprintf(cmd, sizeof(cmd), "ls '%s' | grep '^%s'", dir, prefix);
	p = popen(cmd, "r");
	found = p && fgets(name, (int)size, p);
	if (found)
		name[strcspn(name, "\n")] = '\0';
	if (p)
		pclose(p);
	return found;
}

static void test_kallsyms_cached(void)
{
	struct kallsyms direct = { 0 }, cold = { 0 }, warm = { 0 }, damaged = { 0 };
	struct cachedir c;
	char name[128];

	open_at(&c, in_top("kcache"));
	CHECK(kallsyms_load(&direct, KALLSYMS_PATH) == 0);
	CHECK(kallsyms_load_cached(&cold, &c) == 0);
	CHECK(same_symbols(&direct, &cold));
	if (kallsyms_hidden(&direct) || !direct.syms.len) {
		/* Nothing to keep: the kernel hid its addresses from this user. */
		CHECK(!find_entry(in_top("kcache"), "kallsyms-", name, sizeof(name)));
		goto out;
	}
	CHECK(find_entry(in_top("kcache"), "kallsyms-", name, sizeof(name)));
	/* Read from the copy: a listing planted there gives its names. */
	CHECK(cachedir_put(&c, name, "ffffffff81000000 t planted\n", 27) == 0);
	CHECK(kallsyms_load_cached(&warm, &c) == 0);
	CHECK(warm.syms.len == 1 && !strcmp(warm.names.v, "planted"));
	/* One that lists nothing is read from the kernel again; older ones are removed. */
	CHECK(cachedir_put(&c, name, "garbage\n", 8) == 0);
	CHECK(cachedir_put(&c, "kallsyms-of-another-boot", "x", 1) == 0);
	CHECK(kallsyms_load_cached(&damaged, &c) == 0);
	CHECK(same_symbols(&direct, &damaged));
	CHECK(access(in_top("kcache/kallsyms-of-another-boot"), F_OK) != 0);
	CHECK(find_entry(in_top("kcache"), name, name, sizeof(name)));
out:
	kallsyms_free(&direct);
	kallsyms_free(&cold);
	kallsyms_free(&warm);
	kallsyms_free(&damaged);
	cachedir_close(&c);
}

int main(void)
{
	char cmd[128];

	snprintf(top, sizeof(top), "/tmp/gtrace-test-cache-%d", (int)getpid());
	if (mkdir(top, 0700)) {
		perror(top);
		return 1;
	}
	RUN(test_cachedir_rules);
	RUN(test_kallsyms_cached);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd))
		printf("  note: %s left behind\n", top);
	return test_summary();
}
