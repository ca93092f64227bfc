/* SPDX-License-Identifier: MIT */
/*
 * The gtrace-target-io thread: finds the recorder of this process, keeps
 * one connection to it, and sends what the drain thread packed. Any error
 * on the socket means the recording is gone: reporting turns off, and the
 * thread looks for a recorder again about once a second.
 */
#include "target/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 1000		/* between looks for a recorder */
#define WAIT_MS 100		/* between checks that it is still there */
#define DROPS_EVERY_NS 100000000ull

/* Where to look, fixed when the threads start (getenv is not thread-safe). */
static char env_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static char rendezvous[sizeof(env_path)];

/* A set of ids, one bit each. */
struct idset {
	uint64_t *bits;
	size_t words;
};

struct conn {
	int fd;
	/* Definitions the recorder has: only of what spans used so far, so a
	 * child after fork does not show its parent's lanes. */
	struct idset strings, lanes;
	struct wire_drops drops_sent;
	uint64_t drops_ns;			/* when last sent */
	uint64_t props_sent;			/* the props version the recorder has */
};

void tgt_conn_configure(void)
{
	const char *env = getenv(WIRE_SOCKET_ENV);

	env_path[0] = '\0';
	if (env && strlen(env) < sizeof(env_path))
		strcpy(env_path, env);
	if (wire_rendezvous_dir(rendezvous, sizeof(rendezvous)))
		rendezvous[0] = '\0';
}

/* Only a directory of ours that no one else may enter is trusted. */
static bool rendezvous_trusted(void)
{
	struct stat st;

	return rendezvous[0] && lstat(rendezvous, &st) == 0 && S_ISDIR(st.st_mode) &&
	       st.st_uid == geteuid() && (st.st_mode & 0777) == 0700;
}

static int connect_to(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct ucred peer;
	socklen_t len = sizeof(peer);
	int fd, err;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, path);
	/* non-blocking: a full backlog fails now instead of stalling */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* a recorder runs as us, or as root */
	if (peer.uid != geteuid() && peer.uid != 0) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* Sends one message made of a header and up to two parts. */
static bool send_msg(int fd, uint16_t type, uint32_t count, const void *a, size_t alen,
		     const void *b, size_t blen)
{
	struct wire_header h = { .type = type, .version = WIRE_VERSION, .count = count };
	struct iovec iov[3] = {
		{ &h, sizeof(h) }, { (void *)a, alen }, { (void *)b, blen },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 3 };
	ssize_t n;

	do
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)(sizeof(h) + alen + blen);
}

/* One per copy of the library in the process: its address names the copy. */
static const char instance_anchor;

static bool send_hello(int fd)
{
	struct wire_hello m = {
		.pid = (uint32_t)getpid(),
		.instance = (uint32_t)((uintptr_t)&instance_anchor >> 3),
	};

	return send_msg(fd, WIRE_HELLO, 1, &m, sizeof(m), NULL, 0);
}

int tgt_connect(bool env_only)
{
	char path[sizeof(env_path) + 16];
	int fd = -ENOENT;

	if (env_path[0])
		fd = connect_to(env_path);
	if (fd < 0 && !env_only && rendezvous_trusted()) {
		snprintf(path, sizeof(path), "%s/%d.sock", rendezvous, (int)getpid());
		fd = connect_to(path);
	}
	if (fd >= 0 && !send_hello(fd)) {
		close(fd);
		fd = -EPIPE;
	}
	return fd;
}

static bool idset_has(const struct idset *set, uint32_t id)
{
	return id / 64 < set->words && set->bits[id / 64] >> id % 64 & 1;
}

static bool idset_add(struct idset *set, uint32_t id)
{
	if (id / 64 >= set->words) {
		size_t words = id / 64 * 2 + 1;
		uint64_t *bits = realloc(set->bits, words * sizeof(*bits));

		if (!bits)
			return false;
		memset(bits + set->words, 0, (words - set->words) * sizeof(*bits));
		set->bits = bits;
		set->words = words;
	}
	set->bits[id / 64] |= 1ull << id % 64;
	return true;
}

static void idset_free(struct idset *set)
{
	free(set->bits);
	set->bits = NULL;
	set->words = 0;
}

static bool define_string(struct conn *c, uint32_t id)
{
	const struct tgt_string *s;
	struct wire_string m;

	if (idset_has(&c->strings, id))
		return true;
	s = tgt_string_by_id(id);
	m.id = id;
	m.len = s->len;
	return send_msg(c->fd, WIRE_STRING, 1, &m, sizeof(m), s->str, s->len) &&
	       idset_add(&c->strings, id);
}

static bool define_lane(struct conn *c, uint32_t id)
{
	const gtrace_lane *l;
	struct wire_lane m = { .id = id };

	if (idset_has(&c->lanes, id))
		return true;
	l = tgt_lane_by_id(id);
	m.kind = l->kind;
	m.name = l->name;
	return define_string(c, l->kind) && define_string(c, l->name) &&
	       send_msg(c->fd, WIRE_LANE, 1, &m, sizeof(m), NULL, 0) &&
	       idset_add(&c->lanes, id);
}

/* The keys of a span's attribute entries. */
static bool define_keys(struct conn *c, const struct wire_span *entries, uint32_t n)
{
	struct wire_attrs e;

	for (uint32_t i = 0; i < n; i++) {
		memcpy(&e, &entries[i], sizeof(e));
		for (int k = 0; k < WIRE_ATTRS_PER_ENTRY; k++)
			if (e.key[k] && !define_string(c, e.key[k]))
				return false;
	}
	return true;
}

/* The packet's spans, after the definitions of the lanes and names they use. */
static bool send_packet(struct conn *c, struct tgt_packet *p)
{
	uint32_t attr_entries;

	for (uint32_t i = 0; i < p->msg.h.count; i += 1 + attr_entries) {
		const struct wire_span *s = &p->msg.spans[i];

		attr_entries = wire_attr_entries(s->nattrs);
		if (!define_lane(c, s->lane) || !define_string(c, s->name) ||
		    !define_keys(c, s + 1, attr_entries))
			return false;
	}
	return send_msg(c->fd, p->msg.h.type, p->msg.h.count, p->msg.spans,
			p->msg.h.count * sizeof(struct wire_span), NULL, 0);
}

/* A posted message, after the definitions of the strings its entries name. */
static bool send_post(struct conn *c, const struct tgt_post *m)
{
	if (m->type == WIRE_PC_SAMPLES) {
		const struct wire_pc_sample *s = (const struct wire_pc_sample *)m->body;

		for (uint32_t i = 0; i < m->count; i++)
			if (!define_string(c, s[i].function) || !define_string(c, s[i].stall))
				return false;
	}
	return send_msg(c->fd, m->type, m->count, m->body, m->len, NULL, 0);
}

static bool send_meta(struct conn *c, const struct tgt_prop_copy *m)
{
	char buf[sizeof(struct wire_meta) + 2 * TGT_NAME_MAX];
	struct wire_meta h = { .key_len = m->key->len, .value_len = (uint32_t)strlen(m->text) };

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), m->key->str, h.key_len);
	memcpy(buf + sizeof(h) + h.key_len, m->text, h.value_len);
	return send_msg(c->fd, WIRE_META, 1, buf, sizeof(h) + h.key_len + h.value_len, NULL, 0);
}

static bool send_counters(struct conn *c, const struct wire_counter *counters, uint32_t n)
{
	return send_msg(c->fd, WIRE_COUNTERS, n, counters, n * sizeof(*counters), NULL, 0);
}

/* The counters and meta that changed since last sent: counters in one packet. */
static bool send_props(struct conn *c)
{
	struct wire_counter counters[WIRE_MAX_PACKET / sizeof(struct wire_counter) - 1];
	struct tgt_prop_copy *props;
	uint32_t ncounters = 0;
	uint64_t now;
	bool ok = true;
	int n;

	if (tgt_props_version() == c->props_sent)
		return true;
	n = tgt_props_since(c->props_sent, &props, &now);
	if (n < 0)
		return true;	/* no memory: try again on the next round */
	for (int i = 0; ok && i < n; i++) {
		if (props[i].text) {
			ok = send_meta(c, &props[i]);
			continue;
		}
		if (ncounters == sizeof(counters) / sizeof(counters[0])) {
			ok = send_counters(c, counters, ncounters);
			ncounters = 0;
		}
		ok = ok && define_string(c, props[i].key->id);
		counters[ncounters++] = (struct wire_counter){ .name = props[i].key->id,
							       .value = props[i].value };
	}
	if (ok && ncounters)
		ok = send_counters(c, counters, ncounters);
	tgt_props_free(props, n);
	if (ok)
		c->props_sent = now;
	return ok;
}

/* The cumulative drop counts, when they changed since last sent. */
static bool send_drops(struct conn *c)
{
	struct wire_drops m = { .unsent = tgt_unsent() };
	uint64_t accepted;

	tgt_ring_totals(&accepted, &m.queue_full);
	c->drops_ns = gtrace_now_ns();
	if (m.queue_full == c->drops_sent.queue_full && m.unsent == c->drops_sent.unsent)
		return true;
	if (!send_msg(c->fd, WIRE_DROPS, 1, &m, sizeof(m), NULL, 0))
		return false;
	c->drops_sent = m;
	return true;
}

/* The recorder closed its end: it says nothing else to us. */
static bool hung_up(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char byte;

	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLHUP | POLLERR))
		return true;
	return recv(fd, &byte, 1, MSG_DONTWAIT) == 0;
}

static void serve(struct conn *c)
{
	for (;;) {
		uint64_t flush;
		struct tgt_post *m;
		struct tgt_packet *p = tgt_queue_wait(WAIT_MS, &flush, &m);
		bool ok = true;

		if (p) {
			ok = send_packet(c, p);
			if (!ok)
				tgt_count_unsent(p->spans);
			tgt_queue_release(p);
		} else if (m) {
			ok = send_post(c, m);
			tgt_post_release(m);
		}
		if (ok)
			ok = send_props(c);
		if (ok && ((!p && !m) || flush || gtrace_now_ns() - c->drops_ns >= DROPS_EVERY_NS))
			ok = send_drops(c);
		if (ok && !p && !m)
			ok = !hung_up(c->fd);
		if (!ok)
			tgt_queue_set_connected(-1);
		if (flush)
			tgt_queue_flushed(flush);
		if (!ok)
			return;
	}
}

void *tgt_io_main(void *arg)
{
	int connected = (int)(intptr_t)arg;

	/* The kernel keeps 15 characters: "gtrace-target-i". */
	prctl(PR_SET_NAME, "gtrace-target-io");
	for (;;) {
		uint64_t next_look = gtrace_now_ns() + POLL_MS * 1000000ull;
		struct conn c = { .fd = connected >= 0 ? connected : tgt_connect(false) };

		connected = -1;
		if (c.fd >= 0) {
			tgt_queue_set_connected(c.fd);
			serve(&c);
			close(c.fd);
		}
		idset_free(&c.strings);
		idset_free(&c.lanes);
		/* Until the next look, flushes have nothing to wait for. */
		for (uint64_t t = gtrace_now_ns(); t < next_look; t = gtrace_now_ns()) {
			uint64_t flush;
			struct tgt_post *m;
			struct tgt_packet *p = tgt_queue_wait((next_look - t) / 1000000 + 1, &flush,
							      &m);

			if (p) {
				tgt_count_unsent(p->spans);
				tgt_queue_release(p);
			}
			tgt_post_release(m);
			if (flush)
				tgt_queue_flushed(flush);
		}
	}
	return NULL;
}
