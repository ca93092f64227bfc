/* SPDX-License-Identifier: MIT */
/*
 * syscalls [SECONDS]: main -> run_workload -> read_zero, which reads
 * /dev/zero 1 MiB at a time for SECONDS (default 1): nearly all of its
 * time is spent in the kernel, copying zeros, like a program waiting in a
 * driver's ioctl.
 */
#include <fcntl.h>
#include <unistd.h>

#include "workload.h"

#define CHUNK (1 << 20)

static FRAME void read_zero(int fd, double seconds)
{
	static char buf[CHUNK];
	double deadline = workload_now() + seconds;

	while (workload_now() < deadline)
		if (read(fd, buf, sizeof(buf)) != sizeof(buf))
			exit(1);
	workload_sink = (uint64_t)buf[CHUNK - 1];
}

static FRAME void run_workload(double seconds)
{
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		perror("syscalls: /dev/zero");
		exit(1);
	}
	read_zero(fd, seconds);
	close(fd);
}

int main(int argc, char **argv)
{
	run_workload(workload_arg(argc, argv, 1, 1));
	return 0;
}
