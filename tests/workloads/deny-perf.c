/* SPDX-License-Identifier: MIT */
/*
 * deny-perf ERRNO CMD [ARGS...]: runs CMD with perf_event_open failing with
 * ERRNO (EACCES, EPERM or ENOSYS), the way a container's seccomp profile
 * refuses it, so tests can see what gtrace says then.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int errno_named(const char *name)
{
	if (!strcmp(name, "EACCES"))
		return EACCES;
	if (!strcmp(name, "EPERM"))
		return EPERM;
	if (!strcmp(name, "ENOSYS"))
		return ENOSYS;
	return -1;
}

int main(int argc, char **argv)
{
	int err = argc > 2 ? errno_named(argv[1]) : -1;

	if (err < 0) {
		fprintf(stderr, "usage: deny-perf EACCES|EPERM|ENOSYS CMD [ARGS...]\n");
		return 2;
	}

	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("deny-perf: seccomp");
		return 77;
	}
	execvp(argv[2], argv + 2);
	perror("deny-perf: exec");
	return 127;
}
