/* SPDX-License-Identifier: MIT */
/*
 * util/untrusted.c: what each rule refuses, that a FIFO or a device is
 * refused without being opened (a FIFO with no writer would hold open()
 * for ever), and that the descriptor given reads the file checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "util/untrusted.h"

static char dir[] = "/tmp/gtrace-untrusted.XXXXXX";
static char file[PATH_MAX], link_path[PATH_MAX], fifo[PATH_MAX], hard[PATH_MAX];

static const struct untrusted_rules plain = { 0 };

static void test_regular_file(void)
{
	struct stat st;
	char buf[16] = "";
	int fd = untrusted_open(file, &plain, &st);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ_U64(st.st_size, 6);
	CHECK_EQ_U64(read(fd, buf, sizeof(buf)), 6);
	CHECK_STREQ(buf, "hello\n");
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	CHECK_EQ_U64(untrusted_open("/nonexistent/file", &plain, NULL), -ENOENT);
}

static void test_not_regular(void)
{
	/* Refused before any open that could wait or act. */
	CHECK_EQ_U64(untrusted_open(fifo, &plain, NULL), -EPERM);
	CHECK_EQ_U64(untrusted_open("/dev/zero", &plain, NULL), -EPERM);
	CHECK_EQ_U64(untrusted_open("/dev/null", &plain, NULL), -EPERM);
	CHECK_EQ_U64(untrusted_open(dir, &plain, NULL), -EPERM);
}

static void test_symlink(void)
{
	const struct untrusted_rules follow = { .follow = true };
	int fd;

	CHECK_EQ_U64(untrusted_open(link_path, &plain, NULL), -EPERM);
	fd = untrusted_open(link_path, &follow, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_EQ_U64(untrusted_open(link_path, &untrusted_mapped_file, NULL), -EPERM);
}

static void test_owner(void)
{
	const struct untrusted_rules owned_by_other = { .owned = true, .owner = 65534 };
	int fd = untrusted_open(file, &owned_by_other, NULL);

	/* Our own file passes whoever the owner asked for is. */
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	if (geteuid()) {
		printf("  note: not root, a file of another user not checked\n");
		return;
	}
	/* Root's passes too; another user's only when it is the owner asked for. */
	CHECK(chown(file, 1, (gid_t)-1) == 0);
	CHECK_EQ_U64(untrusted_open(file, &owned_by_other, NULL), -EPERM);
	CHECK(chown(file, 65534, (gid_t)-1) == 0);
	fd = untrusted_open(file, &owned_by_other, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(chown(file, 0, (gid_t)-1) == 0);
}

static void test_links_and_mode(void)
{
	const struct untrusted_rules one_link = { .one_link = true };
	const struct untrusted_rules not_writable = { .not_writable = true };
	int fd = untrusted_open(file, &one_link, NULL);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(link(file, hard) == 0);
	CHECK_EQ_U64(untrusted_open(file, &one_link, NULL), -EPERM);
	CHECK_EQ_U64(untrusted_open(hard, &one_link, NULL), -EPERM);
	unlink(hard);

	CHECK(chmod(file, 0644) == 0);
	fd = untrusted_open(file, &not_writable, NULL);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK(chmod(file, 0664) == 0);
	CHECK_EQ_U64(untrusted_open(file, &not_writable, NULL), -EPERM);
	CHECK(chmod(file, 0646) == 0);
	CHECK_EQ_U64(untrusted_open(file, &not_writable, NULL), -EPERM);
	CHECK(chmod(file, 0644) == 0);
}

static void test_size(void)
{
	const struct untrusted_rules small = { .max_size = 6 }, smaller = { .max_size = 5 };
	int fd = untrusted_open(file, &small, NULL);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
	CHECK_EQ_U64(untrusted_open(file, &smaller, NULL), -EFBIG);
}

int main(void)
{
	FILE *f;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file, sizeof(file), "%s/file", dir);
	snprintf(link_path, sizeof(link_path), "%s/link", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(hard, sizeof(hard), "%s/hard", dir);
	f = fopen(file, "w");
	if (!f || fputs("hello\n", f) < 0 || fclose(f) || symlink(file, link_path) ||
	    mkfifo(fifo, 0600)) {
		perror(dir);
		return 1;
	}
	RUN(test_regular_file);
	RUN(test_not_regular);
	RUN(test_symlink);
	RUN(test_owner);
	RUN(test_links_and_mode);
	RUN(test_size);
	unlink(file);
	unlink(link_path);
	unlink(fifo);
	rmdir(dir);
	return test_summary();
}
