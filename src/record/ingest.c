/* SPDX-License-Identifier: MIT */
#include "record/ingest.h"

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

#include "format/tables.h"
#include "contract/wire.h"
#include "util/clock.h"
#include "util/hashmap.h"
#include "util/remover.h"
#include "util/vec.h"
#include "util/xalloc.h"

/*
 * How long a peer the recording does not know yet may wait: its FORK record
 * is collected within the event loop's ordering margin and a poll or two.
 */
#define PEER_WAIT_NS (250 * NSEC_PER_MSEC)
/* Packets read from one connection per poll, so that the rings get drained too. */
#define READ_BUDGET 64
/* ... and at the end, at most: more than its socket holds, less than a peer sending on. */
#define CLOSE_READ_BUDGET (64 * READ_BUDGET)
#define MAX_ANCESTRY 64

/*
 * What the processes of a recording may make the recorder keep, all
 * together (gtrace-target(3), LIMITS); past a limit, what they send is
 * refused and counted. Connections open at once are also at most a
 * quarter of the descriptors: the rest are the recorder's own.
 */
#define MAX_CONNS 1024
#define MAX_INSTANCES 8			/* copies of the library in one process */
#define MAX_DEFINITIONS (1u << 19)	/* of processes, strings and lanes */
#define MAX_STRING_BYTES (16u << 20)	/* of the strings defined, each STRING_COST more */
#define MAX_LANES (1u << 18)		/* each is a thread in every view */
#define MAX_META 16384			/* meta changes */
/* What a string costs beyond its text: its copies' headers, its entries. */
#define STRING_COST 64
/* Out of descriptors, accepting waits this long: the pending peer would wake us at once. */
#define ACCEPT_PAUSE_NS (100 * NSEC_PER_MSEC)
/* A lanes entry of a wire lane refused past MAX_LANES. */
#define LANE_REFUSED UINT32_MAX

/* What a copy of the library in a process said its ids stand for, kept across reconnections. */
struct target_proc {
	uint32_t pid;
	bool refused;		/* a definition was refused: its unknown ids are not its fault */
	struct u64map strings;	/* wire id -> trace string id */
	/*
	 * wire id -> its definition's trace string ids, kind << 32 | name,
	 * until its first span makes its trace lane: then that lane's id
	 * (LANE_REFUSED past MAX_LANES), the high half 0.
	 */
	struct u64map lanes;
	uint64_t queue_full;	/* the last WIRE_DROPS */
	uint64_t unsent;
	struct u64map counters;	/* trace string id of a name -> its last value */
	struct {		/* the GPU code image being received */
		uint64_t crc, size, got;
		uint8_t *data;	/* NULL: none, or not wanted */
	} cubin;
};

enum conn_state {
	CONN_CHECKING,	/* peer not placed yet: not read */
	CONN_OPEN,	/* a process of the recording */
	CONN_REJECTED,	/* read only to count its spans as dropped_as */
};

struct conn {
	int fd;
	uint32_t pid;			/* SO_PEERCRED */
	enum conn_state state;
	enum target_counter dropped_as;	/* when rejected: wrong-pid, or limit */
	uint64_t accepted_ns;
	struct target_proc *proc;	/* once HELLO came */
};

struct ingest {
	int listen_fd;
	int epoll_fd;
	char *path;		/* the socket */
	char *dir;		/* the private directory, NULL for attach */
	bool bound;		/* the socket file is ours to remove */
	struct collector *c;
	uint32_t root;

	VEC(struct conn *) conns;
	size_t max_conns;
	bool accepting;		/* the listening socket is in the epoll set */
	uint64_t accept_again_ns;	/* when not: when it goes back */
	VEC(struct target_proc *) procs;
	struct u64map proc_index;	/* pid << 32 | instance -> index in procs */
	struct u64map pids;		/* the pids of procs -> their copies */
	/* What the limits bound, so far. */
	uint32_t definitions, string_bytes, lanes, meta;

	/* One packet, 8-byte aligned, with room for a string's NUL. */
	uint64_t packet[WIRE_MAX_PACKET / 8 + 1];
	struct tr_span rows[WIRE_SPANS_PER_PACKET];
	struct tr_pc_sample pc_rows[WIRE_PC_SAMPLES_PER_PACKET];
	struct tr_span_attr attrs[WIRE_SPANS_PER_PACKET * WIRE_ATTRS_PER_ENTRY];
};

/* What wire id stands for in map m, 0 when undefined. */
static uint64_t lookup(const struct u64map *m, uint32_t id)
{
	uint64_t value = 0;

	u64map_get(m, id, &value);
	return value;
}

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

static void count(struct ingest *in, enum target_counter k, uint64_t n)
{
	collector_count_target(in->c, k, n);
}

/* The image p was receiving, if any, stopped coming: its parts go. */
static void cut_cubin_short(struct ingest *in, struct target_proc *p)
{
	if (!p->cubin.data)
		return;
	collector_cubin_cut_short(in->c, p->cubin.crc, p->cubin.size);
	free(p->cubin.data);
	p->cubin.data = NULL;
}

static void close_conn(struct ingest *in, size_t i)
{
	struct conn *k = in->conns.v[i];

	/* Its parts come over one connection: an image left unfinished never ends. */
	if (k->proc)
		cut_cubin_short(in, k->proc);
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
			count(in, TARGET_REFUSED_CONNECTIONS, 1);
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

/*
 * The ids of one copy of the library in process pid, kept across its
 * reconnections; NULL, counted, past the limits.
 */
static struct target_proc *proc_of(struct ingest *in, uint32_t pid, uint32_t instance)
{
	uint64_t key = (uint64_t)pid << 32 | instance, i, copies = 0;
	struct target_proc *p;

	if (u64map_get(&in->proc_index, key, &i))
		return in->procs.v[i];
	u64map_get(&in->pids, pid, &copies);
	if (copies >= MAX_INSTANCES || in->definitions >= MAX_DEFINITIONS) {
		count(in, TARGET_REFUSED_INSTANCES, 1);
		return NULL;
	}
	in->definitions++;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	u64map_put(&in->proc_index, key, in->procs.len);
	*VEC_PUSH(&in->procs) = p;
	u64map_put(&in->pids, pid, copies + 1);
	if (!copies)
		count(in, TARGET_PROCESSES, 1);
	return p;
}

/* A definition of p's is refused for a limit, counted as refusal. */
static void refuse(struct ingest *in, struct target_proc *p, enum target_counter refusal)
{
	count(in, refusal, 1);
	p->refused = true;
}

/*
 * Whether wire id may be set in one of p's maps: a new id only within
 * MAX_DEFINITIONS, else refused.
 */
static bool may_define(struct ingest *in, struct target_proc *p, const struct u64map *m,
		       uint32_t id, enum target_counter refusal)
{
	if (u64map_get(m, id, NULL))
		return true;
	if (in->definitions < MAX_DEFINITIONS) {
		in->definitions++;
		return true;
	}
	refuse(in, p, refusal);
	return false;
}

/* The spans a packet carries, whatever else is wrong with it. */
static uint64_t spans_in(const struct wire_header *h, size_t len)
{
	const struct wire_span *s = (const void *)(h + 1);
	size_t room = (len - sizeof(*h)) / sizeof(struct wire_span);
	size_t n = h->count < room ? h->count : room;
	uint64_t spans = 0;

	if (h->type == WIRE_SPANS)
		return n;
	if (h->type != WIRE_SPANS_ATTRS || len > WIRE_MAX_PACKET)
		return 0;
	for (size_t i = 0; i < n; i += 1 + wire_attr_entries(s[i].nattrs))
		spans++;
	return spans;
}

static void reject(struct conn *k, enum target_counter dropped_as)
{
	k->state = CONN_REJECTED;
	k->dropped_as = dropped_as;
}

static void on_hello(struct ingest *in, struct conn *k, const struct wire_hello *m)
{
	if (m->pid != k->pid || k->proc) {
		/* Speaking for another process: nothing it sends is believed. */
		reject(k, TARGET_DROPPED_WRONG_PID);
		return;
	}
	k->proc = proc_of(in, k->pid, m->instance);
	if (!k->proc)
		reject(k, TARGET_DROPPED_LIMIT);
}

static bool on_string(struct ingest *in, struct conn *k, const struct wire_string *m,
		      size_t len)
{
	struct target_proc *p = k->proc;
	char *s = (char *)(m + 1);
	uint32_t was;

	if (!m->id || m->len > WIRE_MAX_STRING || m->len != len - sizeof(*m))
		return false;
	s[m->len] = '\0';	/* the packet buffer has room after the packet */
	/* A reconnecting process defines its strings again: that costs nothing more. */
	was = (uint32_t)lookup(&p->strings, m->id);
	if (was && !strcmp(collector_string(in->c, was), s))
		return true;
	if (in->string_bytes + m->len + STRING_COST > MAX_STRING_BYTES) {
		refuse(in, p, TARGET_REFUSED_STRINGS);
		return true;
	}
	if (may_define(in, p, &p->strings, m->id, TARGET_REFUSED_STRINGS)) {
		u64map_put(&p->strings, m->id, collector_intern(in->c, s));
		in->string_bytes += m->len + STRING_COST;
	}
	return true;
}

static bool on_lane(struct ingest *in, struct conn *k, const struct wire_lane *m)
{
	struct target_proc *p = k->proc;
	uint64_t kind = lookup(&p->strings, m->kind);
	uint64_t name = lookup(&p->strings, m->name);
	uint64_t was = lookup(&p->lanes, m->id);

	if (!m->id || !kind || !name)
		return false;
	/* A reconnecting process defines its lanes again: they stay the same. */
	if ((!was || was >> 32) && may_define(in, p, &p->lanes, m->id, TARGET_REFUSED_LANES))
		u64map_put(&p->lanes, m->id, kind << 32 | name);
	return true;
}

/*
 * The trace lane of a wire lane, made on its first span (a forked child
 * defines again every lane its parent had, most of which it never uses);
 * LANE_REFUSED past MAX_LANES, counted once; 0 when undefined.
 */
static uint32_t lane_of(struct ingest *in, struct target_proc *p, uint32_t id)
{
	uint64_t def = lookup(&p->lanes, id);
	uint32_t lane;

	if (!(def >> 32))
		return (uint32_t)def;
	if (in->lanes < MAX_LANES) {
		lane = collector_add_lane(in->c, p->pid, (uint32_t)(def >> 32), (uint32_t)def);
		in->lanes++;
	} else {
		refuse(in, p, TARGET_REFUSED_LANES);
		lane = LANE_REFUSED;
	}
	u64map_put(&p->lanes, id, lane);
	return lane;
}

/*
 * Appends the attribute rows of span index span from its n entries at e;
 * false, with none appended, when a key is unknown.
 */
static bool take_attrs(struct ingest *in, const struct target_proc *p, uint32_t span,
		       const struct wire_span *e, uint32_t nattrs, size_t *nrows)
{
	size_t first = *nrows;
	struct wire_attrs entry;

	for (uint32_t i = 0; i < nattrs; i++) {
		struct tr_span_attr *row = &in->attrs[*nrows];
		uint32_t slot = i % WIRE_ATTRS_PER_ENTRY;

		if (!slot)
			memcpy(&entry, &e[i / WIRE_ATTRS_PER_ENTRY], sizeof(entry));
		row->span = span;
		row->key = (uint32_t)lookup(&p->strings, entry.key[slot]);
		row->value = entry.value[slot];
		if (!row->key) {
			*nrows = first;
			return false;
		}
		++*nrows;
	}
	return true;
}

/*
 * A packet of n entries: spans, or with attrs spans and their attribute
 * entries. A span naming what was refused, or undefined in a process that
 * had definitions refused, is dropped for the limit; else for a bad message.
 */
static bool on_spans(struct ingest *in, struct conn *k, const struct wire_span *s, uint32_t n,
		     bool attrs)
{
	struct target_proc *p = k->proc;
	uint32_t spans = 0, limited = 0, extra;
	size_t ok = 0, nattrs = 0;

	for (uint32_t i = 0; i < n; i += 1 + extra, spans++) {
		struct tr_span *row = &in->rows[ok];
		bool unknown;

		extra = attrs ? wire_attr_entries(s[i].nattrs) : 0;
		if (attrs && (s[i].nattrs > WIRE_MAX_ATTRS || extra > n - i - 1))
			return false;
		row->lane = lane_of(in, p, s[i].lane);
		row->name = (uint32_t)lookup(&p->strings, s[i].name);
		unknown = !row->lane || !row->name;
		if (row->lane == LANE_REFUSED || (unknown && p->refused)) {
			limited++;
			continue;
		}
		if (unknown || s[i].end_ns < s[i].start_ns)
			continue;
		if (extra && !take_attrs(in, p, (uint32_t)ok, &s[i + 1], s[i].nattrs, &nattrs)) {
			limited += p->refused;
			continue;
		}
		row->start = s[i].start_ns;
		row->dur = s[i].end_ns - s[i].start_ns;
		row->origin_tid = s[i].origin_tid;
		/* A time without a tid is kept: a broken origin, not none. */
		row->origin_ts = s[i].origin_ns;
		ok++;
	}
	count(in, TARGET_BATCHES, 1);
	count(in, TARGET_DROPPED_LIMIT, limited);
	count(in, TARGET_DROPPED_BAD_MESSAGE, spans - ok - limited);
	collector_add_spans(in->c, in->rows, ok, in->attrs, nattrs);
	return true;
}

/* Names and keys of the target's own are "<area>.<what>": never the recorder's. */
static bool namespaced(const char *s, size_t len)
{
	return memchr(s, '.', len) != NULL;
}

static bool on_counters(struct ingest *in, struct conn *k, const struct wire_counter *m,
			uint32_t n)
{
	struct target_proc *p = k->proc;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t name = (uint32_t)lookup(&p->strings, m[i].name);
		const char *text = collector_string(in->c, name);
		uint64_t last = 0;

		if (!name)
			return false;
		if (!namespaced(text, strlen(text)))
			continue;
		u64map_get(&p->counters, name, &last);
		/* Cumulative per process: the trace's counter is the sum over processes. */
		if (collector_add_to_counter(in->c, name, m[i].value - last))
			u64map_put(&p->counters, name, m[i].value);
	}
	return true;
}

static bool on_meta(struct ingest *in, const struct wire_meta *m, size_t len)
{
	const char *text = (const char *)(m + 1);
	char *key, *value;

	if ((uint64_t)m->key_len + m->value_len != len - sizeof(*m) || !m->key_len ||
	    m->key_len > WIRE_MAX_STRING || m->value_len > WIRE_MAX_STRING ||
	    memchr(text, '\0', m->key_len + m->value_len))
		return false;
	if (!namespaced(text, m->key_len))
		return true;
	/* Each change is a row of the chunk until it is written: they are bounded too. */
	if (in->meta >= MAX_META) {
		count(in, TARGET_REFUSED_META, 1);
		return true;
	}
	in->meta++;
	key = xstrndup(text, m->key_len);
	value = xstrndup(text + m->key_len, m->value_len);
	collector_meta(in->c, key, value);
	free(key);
	free(value);
	return true;
}

static void on_drops(struct ingest *in, struct conn *k, const struct wire_drops *m)
{
	struct target_proc *p = k->proc;

	/* Cumulative per process: only growth is news. */
	if (m->queue_full > p->queue_full) {
		count(in, TARGET_DROPPED_QUEUE_FULL, m->queue_full - p->queue_full);
		p->queue_full = m->queue_full;
	}
	if (m->unsent > p->unsent) {
		count(in, TARGET_DROPPED_UNSENT, m->unsent - p->unsent);
		p->unsent = m->unsent;
	}
}

/*
 * A part of a GPU code image. Parts come in order; an image the recording
 * has already, or has no room for, is skipped to its end.
 */
static bool on_cubin(struct ingest *in, struct conn *k, const struct wire_cubin *m, size_t len)
{
	struct target_proc *p = k->proc;
	size_t part = len - sizeof(*m);

	if (m->offset > m->size || part > m->size - m->offset)
		return false;
	if (m->offset == 0) {
		cut_cubin_short(in, p);
		p->cubin.crc = m->crc;
		p->cubin.size = m->size;
		p->cubin.got = 0;
		p->cubin.data = collector_cubin_wanted(in->c, m->crc, m->size)
			? xmalloc(m->size ? m->size : 1) : NULL;
	} else if (m->crc != p->cubin.crc || m->size != p->cubin.size ||
		   m->offset != p->cubin.got) {
		return false;
	}
	if (p->cubin.data)
		memcpy(p->cubin.data + m->offset, m + 1, part);
	p->cubin.got += part;
	if (p->cubin.data && p->cubin.got == p->cubin.size) {
		collector_add_cubin(in->c, p->cubin.crc, p->cubin.data, p->cubin.size);
		p->cubin.data = NULL;
	}
	return true;
}

static bool on_pc_samples(struct ingest *in, struct conn *k, const struct wire_pc_sample *m,
			  uint32_t n)
{
	struct target_proc *p = k->proc;

	for (uint32_t i = 0; i < n; i++) {
		struct tr_pc_sample *row = &in->pc_rows[i];

		row->pid = p->pid;
		row->correlation = m[i].correlation;
		row->cubin = collector_cubin_id(in->c, m[i].cubin_crc);
		row->function = (uint32_t)lookup(&p->strings, m[i].function);
		row->pc = m[i].pc;
		row->stall = (uint32_t)lookup(&p->strings, m[i].stall);
		row->count = m[i].count;
		if (!row->function || !row->stall)
			return false;
	}
	collector_add_pc_samples(in->c, in->pc_rows, n);
	return true;
}

/* Handles a well-formed-looking packet of an open connection; false if malformed. */
static bool on_packet(struct ingest *in, struct conn *k, const struct wire_header *h,
		      size_t len)
{
	const void *body = h + 1;
	size_t body_len = len - sizeof(*h);

	if (h->type == WIRE_HELLO) {
		if (body_len != sizeof(struct wire_hello))
			return false;
		on_hello(in, k, body);
		return true;
	}
	if (!k->proc)
		return false;
	switch (h->type) {
	case WIRE_STRING:
		return body_len >= sizeof(struct wire_string) &&
		       on_string(in, k, body, body_len);
	case WIRE_LANE:
		return body_len == sizeof(struct wire_lane) && on_lane(in, k, body);
	case WIRE_SPANS:
	case WIRE_SPANS_ATTRS:
		if (body_len != (size_t)h->count * sizeof(struct wire_span))
			return false;
		return on_spans(in, k, body, h->count, h->type == WIRE_SPANS_ATTRS);
	case WIRE_COUNTERS:
		if (body_len != (size_t)h->count * sizeof(struct wire_counter))
			return false;
		return on_counters(in, k, body, h->count);
	case WIRE_META:
		return body_len >= sizeof(struct wire_meta) && on_meta(in, body, body_len);
	case WIRE_DROPS:
		if (body_len != sizeof(struct wire_drops))
			return false;
		on_drops(in, k, body);
		return true;
	case WIRE_CUBIN:
		return body_len >= sizeof(struct wire_cubin) && on_cubin(in, k, body, body_len);
	case WIRE_PC_SAMPLES:
		if (body_len != (size_t)h->count * sizeof(struct wire_pc_sample) ||
		    h->count > WIRE_PC_SAMPLES_PER_PACKET)
			return false;
		return on_pc_samples(in, k, body, h->count);
	default:
		return false;
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
	const struct wire_header *h = (const void *)in->packet;

	while (budget--) {
		ssize_t n = recv(k->fd, in->packet, WIRE_MAX_PACKET, MSG_DONTWAIT | MSG_TRUNC);
		size_t len = (size_t)n;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return READ_DRAINED;
		if (n <= 0) {
			close_conn(in, i);
			return READ_CLOSED;
		}
		/* MSG_TRUNC: len is the whole packet's, even past the buffer. */
		if (len < sizeof(*h))
			continue;
		if (len > WIRE_MAX_PACKET || h->version != WIRE_VERSION)
			count(in, TARGET_DROPPED_BAD_MESSAGE, spans_in(h, len));
		else if (no_run)
			count(in, TARGET_DROPPED_NO_RUN, spans_in(h, len));
		else if (k->state == CONN_REJECTED)
			count(in, k->dropped_as, spans_in(h, len));
		else if (!on_packet(in, k, h, len))
			count(in, TARGET_DROPPED_BAD_MESSAGE, spans_in(h, len));
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
	for (size_t i = 0; i < in->procs.len; i++) {
		u64map_free(&in->procs.v[i]->strings);
		u64map_free(&in->procs.v[i]->lanes);
		u64map_free(&in->procs.v[i]->counters);
		free(in->procs.v[i]);
	}
	VEC_FREE(&in->procs);
	VEC_FREE(&in->conns);
	u64map_free(&in->proc_index);
	u64map_free(&in->pids);
	if (in->epoll_fd >= 0)
		close(in->epoll_fd);
	free(in->path);
	free(in->dir);
	free(in);
}
