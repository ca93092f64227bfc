/* SPDX-License-Identifier: MIT */
/*
 * The span channel's socket: made, accepted on, its peers placed (members
 * of the recording or not) and its connections read, never blocking. What
 * their packets say is ingest-packets.c's.
 */
#include "record/ingest-internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/remover.h"
#include "util/xalloc.h"

/*
 * How long a peer the recording does not know yet may wait: its FORK record
 * is collected within the event loop's ordering margin and a poll or two
 * (and a batch, while Python stacks are read).
 */
#define PEER_WAIT_NS (250 * NSEC_PER_MSEC)
/* Packets read from one connection per poll, so that the rings get drained too. */
#define READ_BUDGET 64
/* ... and at the end, at most: more than its socket holds, less than a peer sending on. */
#define CLOSE_READ_BUDGET (64 * READ_BUDGET)
#define MAX_ANCESTRY 64

/*
 * Connections open at once are at most a quarter of the descriptors (the
 * rest are the recorder's own), and at most MAX_CONNS (gtrace-target(3),
 * LIMITS). What their processes may make the recorder keep is bounded in
 * ingest-packets.c.
 */
#define MAX_CONNS 1024
/* Out of descriptors, accepting waits this long: the pending peer would wake us at once. */
#define ACCEPT_PAUSE_NS (100 * NSEC_PER_MSEC)

/* The runtime directory for sockets: $XDG_RUNTIME_DIR, else /tmp. */
static const char *runtime_dir(void)
{
	const char *dir = wire_runtime_dir();

	return dir ? dir : "/tmp";
}

static char *path_join(const char *dir, const char *name)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(len);

	snprintf(p, len, "%s/%s", dir, name);
	return p;
}

/* The rendezvous directory of wire.h, made if missing, and ours alone. */
static int rendezvous_dir(char **out)
{
	char path[PATH_MAX];
	struct stat st;
	char *dir;
	int err = wire_rendezvous_dir(path, sizeof(path));

	if (err)
		return err;
	dir = xstrdup(path);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = -errno;
		free(dir);
		return err;
	}
	/* In /tmp anyone may have made it first: use it only if it is ours. */
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		free(dir);
		return -EPERM;
	}
	*out = dir;
	return 0;
}

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* A socket file left by a recorder that was killed is taken over; a live one is not. */
static int claim_path(const char *path)
{
	struct sockaddr_un sa;
	int fd, err;

	if (access(path, F_OK))
		return 0;
	err = fill_addr(&sa, path);
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? 0 : -EADDRINUSE;
	close(fd);
	if (!err && unlink(path))
		err = -errno;
	return err;
}

static int listen_at(struct ingest *in)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	struct sockaddr_un sa;
	int err = fill_addr(&sa, in->path);

	if (err)
		return err;
	in->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (in->listen_fd < 0)
		return -errno;
	if (bind(in->listen_fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	in->bound = true;
	remover_add(in->path);
	if (listen(in->listen_fd, SOMAXCONN))
		return -errno;
	in->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (in->epoll_fd < 0)
		return -errno;
	if (epoll_ctl(in->epoll_fd, EPOLL_CTL_ADD, in->listen_fd, &ev))
		return -errno;
	return 0;
}

static void remove_socket(struct ingest *in)
{
	if (in->bound) {
		unlink(in->path);
		remover_forget(in->path);
	}
	if (in->listen_fd >= 0)
		close(in->listen_fd);
	in->bound = false;
	in->listen_fd = -1;
	if (in->dir) {
		rmdir(in->dir);
		remover_forget(in->dir);
	}
}

int ingest_open(struct ingest **out, pid_t attach)
{
	struct ingest *in = xcalloc(1, sizeof(*in));
	char name[32];
	int err;

	in->listen_fd = -1;
	in->epoll_fd = -1;
	if (attach) {
		char *dir = NULL;

		err = rendezvous_dir(&dir);
		if (!err) {
			snprintf(name, sizeof(name), "%d.sock", (int)attach);
			in->path = path_join(dir, name);
			free(dir);
			err = claim_path(in->path);
		}
	} else {
		char *templ = path_join(runtime_dir(), "gtrace-XXXXXX");

		if (mkdtemp(templ)) {
			/* Removed however gtrace ends: no stale sockets in /tmp. */
			remover_add(templ);
			in->dir = templ;
			in->path = path_join(in->dir, "target.sock");
			err = 0;
		} else {
			err = -errno;
			free(templ);
		}
	}
	if (!err)
		err = listen_at(in);
	if (err) {
		ingest_close(in);
		return err;
	}
	*out = in;
	return 0;
}

const char *ingest_socket_path(const struct ingest *in)
{
	return in->path;
}

int ingest_fd(const struct ingest *in)
{
	return in->epoll_fd;
}

void ingest_start(struct ingest *in, struct collector *c, uint32_t root)
{
	struct rlimit rl;

	in->c = c;
	in->root = root;
	in->accepting = true;
	in->max_conns = MAX_CONNS;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur / 4 < MAX_CONNS)
		in->max_conns = rl.rlim_cur / 4 ? rl.rlim_cur / 4 : 1;
}

bool ingest_idle(const struct ingest *in)
{
	return !in->conns.len;
}

/* The parent pid from /proc/PID/stat, or 0. */
static uint32_t parent_of(uint32_t pid)
{
	char path[64], buf[512], *paren;
	unsigned ppid;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = (ssize_t)fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n > 0 ? n : 0] = '\0';
	/* The name in parentheses may hold anything: the fields follow the last ')'. */
	paren = strrchr(buf, ')');
	if (!paren || sscanf(paren + 1, " %*c %u", &ppid) != 1)
		return 0;
	return ppid;
}

static bool descends_from(uint32_t pid, uint32_t root)
{
	for (int depth = 0; pid > 1 && depth < MAX_ANCESTRY; depth++) {
		if (pid == root)
			return true;
		pid = parent_of(pid);
	}
	return false;
}

static bool is_member(const struct ingest *in, uint32_t pid)
{
	return pid == in->root || collector_knows_process(in->c, pid) ||
	       descends_from(pid, in->root);
}

static void close_conn(struct ingest *in, size_t i)
{
	struct conn *k = in->conns.v[i];

	/* Its parts come over one connection: an image left unfinished never ends. */
	if (k->proc)
		ingest_cut_cubin_short(in, k->proc);
	close(k->fd);	/* also takes it out of the epoll set */
	free(k);
	in->conns.v[i] = in->conns.v[--in->conns.len];
}

/*
 * Out of descriptors, the peer that waits keeps the listening socket
 * readable: it leaves the epoll set for a while, so that polls wait.
 */
static void pause_accepting(struct ingest *in)
{
	epoll_ctl(in->epoll_fd, EPOLL_CTL_DEL, in->listen_fd, NULL);
	in->accepting = false;
	in->accept_again_ns = now_ns(CLOCK_MONOTONIC) + ACCEPT_PAUSE_NS;
}

static void resume_accepting(struct ingest *in)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

	if (in->accepting || now_ns(CLOCK_MONOTONIC) < in->accept_again_ns)
		return;
	epoll_ctl(in->epoll_fd, EPOLL_CTL_ADD, in->listen_fd, &ev);
	in->accepting = true;
}

static void accept_all(struct ingest *in)
{
	struct ucred cred;
	struct conn *k;
	socklen_t len;
	int fd;

	for (;;) {
		fd = accept4(in->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				pause_accepting(in);
			return;
		}
		len = sizeof(cred);
		if (in->conns.len >= in->max_conns) {
			close(fd);
			collector_count_target(in->c, TARGET_REFUSED_CONNECTIONS, 1);
			continue;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
			close(fd);
			continue;
		}
		k = xcalloc(1, sizeof(*k));
		k->fd = fd;
		k->pid = (uint32_t)cred.pid;
		k->state = CONN_CHECKING;
		k->dropped_as = TARGET_DROPPED_WRONG_PID;	/* should it be rejected */
		k->accepted_ns = now_ns(CLOCK_MONOTONIC);
		*VEC_PUSH(&in->conns) = k;
	}
}

/* Starts reading k, in the state its peer deserves. */
static void place(struct ingest *in, struct conn *k, enum conn_state state)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = k };

	k->state = state;
	epoll_ctl(in->epoll_fd, EPOLL_CTL_ADD, k->fd, &ev);
}

static void check_peers(struct ingest *in, bool settle)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	for (size_t i = 0; i < in->conns.len; i++) {
		struct conn *k = in->conns.v[i];

		if (k->state != CONN_CHECKING)
			continue;
		if (is_member(in, k->pid))
			place(in, k, CONN_OPEN);
		else if (settle || now - k->accepted_ns >= PEER_WAIT_NS)
			place(in, k, CONN_REJECTED);
	}
}

enum read_result {
	READ_MORE,	/* the budget ran out first */
	READ_DRAINED,	/* nothing more for now */
	READ_CLOSED,	/* the peer is gone: the connection is closed and freed */
};

/*
 * Reads up to budget packets of conns[i]. Packets of a rejected peer, or
 * all of them when no_run is set, only have their spans counted.
 */
static enum read_result read_conn(struct ingest *in, size_t i, int budget, bool no_run)
{
	struct conn *k = in->conns.v[i];

	while (budget--) {
		ssize_t n = recv(k->fd, in->packet, WIRE_MAX_PACKET, MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return READ_DRAINED;
		if (n <= 0) {
			close_conn(in, i);
			return READ_CLOSED;
		}
		ingest_take_packet(in, k, (size_t)n, no_run);
	}
	return READ_MORE;
}

void ingest_poll(struct ingest *in, bool settle)
{
	struct epoll_event ev[32];
	int n;

	resume_accepting(in);
	n = epoll_wait(in->epoll_fd, ev, sizeof(ev) / sizeof(ev[0]), 0);
	for (int e = 0; e < n; e++) {
		if (!ev[e].data.ptr) {
			accept_all(in);
			continue;
		}
		for (size_t i = 0; i < in->conns.len; i++) {
			if (in->conns.v[i] == ev[e].data.ptr) {
				read_conn(in, i, READ_BUDGET, false);
				break;
			}
		}
	}
	check_peers(in, settle);
}

void ingest_close(struct ingest *in)
{
	if (!in)
		return;
	if (in->c) {
		/* Whatever is still unread came too late for the run. */
		accept_all(in);
		while (in->conns.len) {
			size_t i = in->conns.len - 1;
			bool no_run = in->conns.v[i]->state != CONN_REJECTED;
			enum read_result r;

			r = read_conn(in, i, CLOSE_READ_BUDGET, no_run);
			if (r != READ_CLOSED)
				close_conn(in, i);
		}
	}
	remove_socket(in);
	while (in->conns.len)
		close_conn(in, in->conns.len - 1);
	ingest_free_procs(in);
	VEC_FREE(&in->conns);
	if (in->epoll_fd >= 0)
		close(in->epoll_fd);
	free(in->path);
	free(in->dir);
	free(in);
}
