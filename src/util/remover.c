/* SPDX-License-Identifier: MIT */
#include "util/remover.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Paths listed at once: a socket, its directory, a temporary or two. */
#define REMOVER_MAX 8
/* The descriptors the helper closes where close_range is missing. */
#define FD_SCAN_MAX 65536

enum { OP_ADD = '+', OP_FORGET = '-' };

static int helper_fd = -1;	/* gtrace's end; the helper's reads EOF when it closes */
static pid_t helper_pid;

static void close_from(int first, int max)
{
#ifdef SYS_close_range
	if (!syscall(SYS_close_range, (unsigned)first, ~0u, 0))
		return;
#endif
	for (int fd = first; fd < max; fd++)
		close(fd);
}

/*
 * The helper: only async-signal-safe calls, as a fork of a process that may
 * have threads. It reads messages "+PATH\0" and "-PATH\0" until gtrace's
 * end closes, then removes the paths still listed.
 */
static void __attribute__((noreturn)) helper_main(int fd, int max_fd)
{
	static char paths[REMOVER_MAX][PATH_MAX + 1];
	static char msg[PATH_MAX + 2];
	size_t n = 0, len = 0;
	sigset_t all;

	/* Out of gtrace's process group and deaf to signals: it outlives gtrace. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	setsid();
	prctl(PR_SET_NAME, "gtrace-remover");
	if (fd != STDIN_FILENO) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	close_from(STDIN_FILENO + 1, max_fd);

	for (;;) {
		ssize_t got = read(STDIN_FILENO, msg + len, 1);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (msg[len] && ++len < sizeof(msg))
			continue;
		if (msg[len]) {		/* longer than a path: never sent */
			len = 0;
			continue;
		}
		if (msg[0] == OP_ADD && n < REMOVER_MAX) {
			memcpy(paths[n++], msg + 1, len);
		} else if (msg[0] == OP_FORGET) {
			for (size_t i = n; i-- > 0;) {
				if (!strcmp(paths[i], msg + 1)) {
					memmove(paths[i], paths[i + 1], (n - i - 1) * sizeof(paths[0]));
					n--;
					break;
				}
			}
		}
		len = 0;
	}
	while (n--)
		if (unlink(paths[n]) && errno == EISDIR)
			rmdir(paths[n]);
	_exit(0);
}

/* At a normal exit: the helper removes what is left and is waited for. */
static void stop_helper(void)
{
	close(helper_fd);
	helper_fd = -1;
	while (waitpid(helper_pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static int start_helper(void)
{
	struct rlimit rl;
	int max_fd = FD_SCAN_MAX, sv[2];
	pid_t pid;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < FD_SCAN_MAX)
		max_fd = (int)rl.rlim_cur;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		helper_main(sv[1], max_fd);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -errno;
	}
	helper_fd = sv[0];
	helper_pid = pid;
	atexit(stop_helper);
	return 0;
}

static int send_op(char op, const char *path)
{
	char msg[PATH_MAX + 2];
	size_t len = strlen(path) + 2, done = 0;

	if (len > sizeof(msg))
		return -ENAMETOOLONG;
	msg[0] = op;
	memcpy(msg + 1, path, len - 1);
	while (done < len) {
		ssize_t n = send(helper_fd, msg + done, len - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += (size_t)n;
	}
	return 0;
}

int remover_add(const char *path)
{
	int err = helper_fd < 0 ? start_helper() : 0;

	return err ? err : send_op(OP_ADD, path);
}

void remover_forget(const char *path)
{
	if (helper_fd >= 0)
		send_op(OP_FORGET, path);
}
