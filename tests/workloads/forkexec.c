/* SPDX-License-Identifier: MIT */
/*
 * forkexec [SECONDS]: forks a child that execs the hot workload found next
 * to this program, while the parent spins in parent_spin; both run for
 * about SECONDS (default 1). Exits with the child's status.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

static FRAME uint64_t parent_spin(double seconds)
{
	double deadline = workload_now() + seconds;
	uint64_t x = 7;

	while (workload_now() < deadline)
		for (int i = 0; i < 10000; i++)
			x = workload_mix(x + i);
	return x;
}

int main(int argc, char **argv)
{
	double seconds = workload_arg(argc, argv, 1, 1);
	char hot[4096], arg[32];
	const char *slash = strrchr(argv[0], '/');
	int dir_len = slash ? (int)(slash - argv[0]) : 1;
	int status;
	pid_t child;

	snprintf(hot, sizeof(hot), "%.*s/hot", dir_len, slash ? argv[0] : ".");
	snprintf(arg, sizeof(arg), "%g", seconds);
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		execl(hot, hot, arg, (char *)NULL);
		fprintf(stderr, "forkexec: cannot run '%s': %s\n", hot, strerror(errno));
		_exit(127);
	}
	workload_sink = parent_spin(seconds);
	if (waitpid(child, &status, 0) < 0) {
		perror("waitpid");
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
