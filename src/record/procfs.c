/* SPDX-License-Identifier: MIT */
#include "record/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "record/procstat.h"
#include "util/clock.h"

/* The start of a /proc file, NUL-terminated: its length, or a negative errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

void procfs_comm(uint32_t pid, uint32_t tid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/task/%" PRIu32 "/comm", pid, tid);
	n = read_small(path, buf, size);
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
}

bool procfs_thread_running(uint32_t pid, uint32_t tid)
{
	char path[64], buf[1024];
	struct proc_stat st;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/task/%" PRIu32 "/stat", pid, tid);
	n = read_small(path, buf, sizeof(buf));
	return n > 0 && !procstat_parse_stat(buf, (size_t)n, &st) && st.state == 'R';
}

int procfs_start_ns(uint32_t pid, uint64_t *ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	char path[64], buf[1024];
	struct proc_stat st;
	uint64_t boot, slept;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/stat", pid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (hz <= 0 || procstat_parse_stat(buf, (size_t)n, &st))
		return -EINVAL;
	/* The field counts from boot, sleep included; the samples' clock does not. */
	slept = now_ns(CLOCK_MONOTONIC);
	slept = now_ns(CLOCK_BOOTTIME) - slept;		/* read second: never below */
	boot = st.start_ticks * (NSEC_PER_SEC / (uint64_t)hz);
	*ns = boot > slept ? boot - slept : 0;
	return 0;
}
