/* SPDX-License-Identifier: MIT */
/*
 * libgtrace-target from the inside: interning, lane identity, the rings'
 * drop-newest accounting, and the whole path to a fake recorder in this
 * process (a SOCK_SEQPACKET server checking the protocol): reporting off
 * until it listens, definitions before use, order, drops, fork, restart.
 */
#include "target/internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define MAX_IDS 256
#define MAX_CONNS 16
#define WAIT_MS 5000
#define SPAN_ATTRS 12		/* on the spans of span_attrs_at */

/* What the fake recorder saw on one connection. */
struct fake_conn {
	int fd;
	uint32_t pid;
	char *strings[MAX_IDS];
	uint32_t lane_name[MAX_IDS];	/* string id, 0: undefined */
	uint64_t last_start[MAX_IDS];	/* per lane: starts must grow */
	uint64_t spans;
	uint64_t attr_spans;		/* of them, with attributes, all checked */
	uint64_t counters[MAX_IDS];	/* by name id */
	char meta_key[64], meta_value[64];	/* the last WIRE_META */
	struct wire_drops drops;
	int errors;			/* protocol violations */
};

static struct {
	pthread_mutex_t lock;
	int listen_fd;
	bool stop;			/* close everything and exit */
	bool slow;			/* a recorder that reads a packet a millisecond */
	struct fake_conn conns[MAX_CONNS];
	int nconns;
	pthread_t thread;
} server = { .lock = PTHREAD_MUTEX_INITIALIZER, .listen_fd = -1 };

static char dir[64], sock_path[128];

/* The attributes span_attrs_at gives: "attr-J" = start * 32 + J. */
static void check_attrs(struct fake_conn *c, const struct wire_span *s)
{
	struct wire_attrs e;

	if (s->nattrs != SPAN_ATTRS) {
		c->errors++;
		return;
	}
	for (uint32_t j = 0; j < s->nattrs; j++) {
		char want[16];
		uint32_t key;

		memcpy(&e, &s[1 + j / WIRE_ATTRS_PER_ENTRY], sizeof(e));
		key = e.key[j % WIRE_ATTRS_PER_ENTRY];
		snprintf(want, sizeof(want), "attr-%u", j);
		if (key >= MAX_IDS || !c->strings[key] || strcmp(c->strings[key], want) ||
		    e.value[j % WIRE_ATTRS_PER_ENTRY] != s->start_ns * 32 + j) {
			c->errors++;
			return;
		}
	}
	c->attr_spans++;
}

static void on_message(struct fake_conn *c, const unsigned char *buf, size_t len)
{
	const struct wire_header *h = (const void *)buf;
	const void *body = buf + sizeof(*h);
	size_t body_len = len - sizeof(*h);

	if (len < sizeof(*h) || h->version != WIRE_VERSION) {
		c->errors++;
		return;
	}
	if (h->type != WIRE_HELLO && !c->pid) {
		c->errors++;	/* HELLO comes first */
		return;
	}
	switch (h->type) {
	case WIRE_HELLO: {
		const struct wire_hello *m = body;

		c->pid = m->pid;
		break;
	}
	case WIRE_STRING: {
		const struct wire_string *m = body;

		if (m->id >= MAX_IDS || c->strings[m->id] || m->len != body_len - sizeof(*m)) {
			c->errors++;
			break;
		}
		c->strings[m->id] = strndup((const char *)(m + 1), m->len);
		break;
	}
	case WIRE_LANE: {
		const struct wire_lane *m = body;

		if (m->id >= MAX_IDS || c->lane_name[m->id] || m->kind >= MAX_IDS ||
		    m->name >= MAX_IDS || !c->strings[m->kind] || !c->strings[m->name])
			c->errors++;
		else
			c->lane_name[m->id] = m->name;
		break;
	}
	case WIRE_SPANS:
	case WIRE_SPANS_ATTRS: {
		const struct wire_span *s = body;
		uint32_t extra;

		if (body_len != h->count * sizeof(*s)) {
			c->errors++;
			break;
		}
		for (uint32_t i = 0; i < h->count; i += 1 + extra, s += 1 + extra) {
			char want[16];

			extra = h->type == WIRE_SPANS_ATTRS ? wire_attr_entries(s->nattrs) : 0;
			snprintf(want, sizeof(want), "job-%d", (int)(s->start_ns % 7));
			if (s->lane >= MAX_IDS || !c->lane_name[s->lane] || s->name >= MAX_IDS ||
			    !c->strings[s->name] || strcmp(c->strings[s->name], want) ||
			    s->start_ns < c->last_start[s->lane] || s->end_ns != s->start_ns + 100 ||
			    i + extra >= h->count || (h->type == WIRE_SPANS && s->nattrs))
				c->errors++;
			else
				c->last_start[s->lane] = s->start_ns;
			if (s->nattrs && i + extra < h->count)
				check_attrs(c, s);
			c->spans++;
		}
		break;
	}
	case WIRE_COUNTERS: {
		const struct wire_counter *m = body;

		if (body_len != h->count * sizeof(*m)) {
			c->errors++;
			break;
		}
		for (uint32_t i = 0; i < h->count; i++) {
			if (m[i].name >= MAX_IDS || !c->strings[m[i].name])
				c->errors++;
			else
				c->counters[m[i].name] = m[i].value;
		}
		break;
	}
	case WIRE_META: {
		const struct wire_meta *m = body;
		const char *text = (const char *)(m + 1);

		if (body_len != sizeof(*m) + m->key_len + m->value_len ||
		    m->key_len >= sizeof(c->meta_key) || m->value_len >= sizeof(c->meta_value)) {
			c->errors++;
			break;
		}
		snprintf(c->meta_key, sizeof(c->meta_key), "%.*s", (int)m->key_len, text);
		snprintf(c->meta_value, sizeof(c->meta_value), "%.*s", (int)m->value_len,
			 text + m->key_len);
		break;
	}
	case WIRE_DROPS:
		memcpy(&c->drops, body, sizeof(c->drops));
		break;
	default:
		c->errors++;
	}
}

static void close_all(void)
{
	for (int i = 0; i < server.nconns; i++) {
		if (server.conns[i].fd >= 0)
			close(server.conns[i].fd);
		server.conns[i].fd = -1;
	}
	if (server.listen_fd >= 0)
		close(server.listen_fd);
	server.listen_fd = -1;
	unlink(sock_path);
}

static void *serve(void *arg)
{
	static unsigned char buf[WIRE_MAX_PACKET];

	for (;;) {
		struct pollfd pfd[MAX_CONNS + 1];
		int n = 0;

		pthread_mutex_lock(&server.lock);
		if (server.stop) {
			close_all();
			pthread_mutex_unlock(&server.lock);
			return arg;
		}
		pfd[n++] = (struct pollfd){ .fd = server.listen_fd, .events = POLLIN };
		for (int i = 0; i < server.nconns; i++)
			pfd[n++] = (struct pollfd){ .fd = server.conns[i].fd, .events = POLLIN };
		pthread_mutex_unlock(&server.lock);

		if (poll(pfd, n, 10) <= 0)
			continue;
		pthread_mutex_lock(&server.lock);
		if ((pfd[0].revents & POLLIN) && server.nconns < MAX_CONNS) {
			int fd = accept(server.listen_fd, NULL, NULL);

			if (fd >= 0)
				server.conns[server.nconns++] = (struct fake_conn){ .fd = fd };
		}
		for (int i = 1; i < n; i++) {
			const struct timespec ms = { 0, 1000000 };
			struct fake_conn *c = &server.conns[i - 1];
			ssize_t len;

			if (c->fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			len = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (len > 0) {
				on_message(c, buf, len);
				if (server.slow)
					nanosleep(&ms, NULL);
			} else if (len == 0) {
				close(c->fd);
				c->fd = -1;
			}
		}
		pthread_mutex_unlock(&server.lock);
	}
}

static void server_listen(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	strcpy(addr.sun_path, sock_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 16)) {
		printf("  cannot listen on %s: %s\n", sock_path, strerror(errno));
		exit(1);
	}
	pthread_mutex_lock(&server.lock);
	server.listen_fd = fd;
	server.stop = false;
	pthread_mutex_unlock(&server.lock);
	pthread_create(&server.thread, NULL, serve, NULL);
}

static void server_kill(void)
{
	pthread_mutex_lock(&server.lock);
	server.stop = true;
	pthread_mutex_unlock(&server.lock);
	pthread_join(server.thread, NULL);
}

/* Sums over the connections of pid: spans and protocol errors. */
static void server_totals(uint32_t pid, uint64_t *spans, int *errors, struct wire_drops *drops)
{
	*spans = 0;
	*errors = 0;
	pthread_mutex_lock(&server.lock);
	for (int i = 0; i < server.nconns; i++) {
		if (server.conns[i].pid != pid)
			continue;
		*spans += server.conns[i].spans;
		*errors += server.conns[i].errors;
		if (drops)
			*drops = server.conns[i].drops;
	}
	pthread_mutex_unlock(&server.lock);
}

static uint64_t ms_now(void)
{
	return gtrace_now_ns() / 1000000;
}

static bool wait_active(bool on)
{
	const struct timespec ms = { 0, 1000000 };

	for (uint64_t until = ms_now() + WAIT_MS; ms_now() < until;) {
		if (gtrace_reporting_active() == on)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

/*
 * Waits until the server has seen the spans of pid, and a count of drops
 * at least drops->queue_full; returns its totals.
 */
static uint64_t wait_spans(uint32_t pid, uint64_t want, int *errors, struct wire_drops *drops)
{
	const struct timespec ms = { 0, 1000000 };
	uint64_t want_drops = drops ? drops->queue_full : 0;
	uint64_t spans = 0;

	for (uint64_t until = ms_now() + WAIT_MS; ms_now() < until;) {
		server_totals(pid, &spans, errors, drops);
		if (spans >= want && (!drops || drops->queue_full >= want_drops))
			break;
		nanosleep(&ms, NULL);
	}
	return spans;
}

static void span_at(gtrace_lane *lane, uint64_t start)
{
	static const char *const names[7] = { "job-0", "job-1", "job-2", "job-3",
					      "job-4", "job-5", "job-6" };
	char copy[16];
	gtrace_origin o = gtrace_current_origin();

	/* a reused buffer every other time: names are copied by content */
	strcpy(copy, names[start % 7]);
	gtrace_span(lane, start % 2 ? copy : names[start % 7], start, start + 100, &o);
}

/* span_at with SPAN_ATTRS attributes, and a NULL key to skip among them. */
static void span_attrs_at(gtrace_lane *lane, uint64_t start)
{
	static const char *const keys[SPAN_ATTRS] = {
		"attr-0", "attr-1", "attr-2", "attr-3", "attr-4", "attr-5",
		"attr-6", "attr-7", "attr-8", "attr-9", "attr-10", "attr-11",
	};
	gtrace_attr attrs[SPAN_ATTRS + 1];
	gtrace_origin o = gtrace_current_origin();
	unsigned n = 0;

	for (uint32_t j = 0; j < SPAN_ATTRS; j++) {
		if (j == 5)
			attrs[n++] = (gtrace_attr){ NULL, 7 };
		attrs[n++] = (gtrace_attr){ keys[j], start * 32 + j };
	}
	gtrace_span_attrs(lane, (const char *[]){ "job-0", "job-1", "job-2", "job-3", "job-4",
						  "job-5", "job-6" }[start % 7],
			  start, start + 100, &o, attrs, n);
}

static void test_interning(void)
{
	char buf[16] = "alpha";
	char *longer = malloc(2 * TGT_NAME_MAX);
	const struct tgt_string *a = tgt_intern("alpha"), *b, *c;

	CHECK(a && !strcmp(a->str, "alpha") && a->len == 5);
	CHECK(tgt_intern(buf) == a);
	b = tgt_intern("beta");
	CHECK(b && b != a && b->id == a->id + 1);
	CHECK(tgt_string_by_id(b->id) == b);
	CHECK(tgt_string_by_id(b->id + 1000) == NULL);

	/* names are cut at TGT_NAME_MAX: two that differ only later are one */
	memset(longer, 'x', 2 * TGT_NAME_MAX - 1);
	longer[2 * TGT_NAME_MAX - 1] = '\0';
	c = tgt_intern(longer);
	longer[TGT_NAME_MAX + 5] = 'y';
	CHECK(c && c->len == TGT_NAME_MAX && tgt_intern(longer) == c);
	free(longer);
}

static void test_name_cache(void)
{
	struct tgt_ring *r = tgt_ring_new(4);
	char buf[16] = "gamma";
	uint32_t gamma = tgt_name_id(r, buf);

	CHECK(gamma == tgt_intern("gamma")->id);
	CHECK(tgt_name_id(r, buf) == gamma);
	/* the same pointer with new content is a new name */
	strcpy(buf, "gammaray");
	CHECK(tgt_name_id(r, buf) == tgt_intern("gammaray")->id);
	strcpy(buf, "gam");
	CHECK(tgt_name_id(r, buf) == tgt_intern("gam")->id);
	strcpy(buf, "gamma");
	CHECK(tgt_name_id(r, buf) == gamma);
	tgt_ring_free(r);
}

static void test_lane_identity(void)
{
	char kind[8] = "gpu", name[32] = "GPU0 stream 7";
	gtrace_lane *a = gtrace_lane_get("gpu", "GPU0 stream 7");
	gtrace_lane *b = gtrace_lane_get("gpu", "GPU0 stream 8");

	CHECK(a && b && a != b);
	CHECK(gtrace_lane_get(kind, name) == a);
	CHECK(gtrace_lane_get("queue", "GPU0 stream 7") != a);
	CHECK(gtrace_lane_get("gpu", "GPU0 stream 8") == b);
	CHECK(gtrace_lane_get(NULL, NULL) == gtrace_lane_get("", ""));
	CHECK(tgt_lane_by_id(a->id) == a && tgt_lane_by_id(b->id) == b);
	CHECK(tgt_lane_by_id(0) == NULL);
}

static void test_ring_drop_newest(void)
{
	struct tgt_ring *r = tgt_ring_new(8);
	struct wire_span s = { 0 }, out[32];
	uint32_t n, spans;
	bool more;

	for (uint32_t i = 0; i < 20; i++) {
		s.start_ns = i;
		CHECK(tgt_ring_push(r, &s) == (i < 8));
	}
	CHECK_EQ_U64(r->head, 8);
	CHECK_EQ_U64(r->drops, 12);
	n = tgt_ring_pop(r, out, 5, &spans, &more);
	CHECK_EQ_U64(n, 5);
	CHECK(spans == 5 && more);
	for (uint32_t i = 0; i < n; i++)
		CHECK_EQ_U64(out[i].start_ns, i);
	/* five free slots, across the end of the array */
	for (uint32_t i = 20; i < 30; i++) {
		s.start_ns = i;
		tgt_ring_push(r, &s);
	}
	CHECK_EQ_U64(r->head, 13);
	CHECK_EQ_U64(r->drops, 17);
	n = tgt_ring_pop(r, out, 32, &spans, &more);
	CHECK_EQ_U64(n, 8);
	CHECK(spans == 8 && !more);
	for (uint32_t i = 0; i < n; i++)
		CHECK_EQ_U64(out[i].start_ns, i < 3 ? 5 + i : 20 + i - 3);
	CHECK_EQ_U64(tgt_ring_pop(r, out, 32, &spans, &more), 0);
	s.start_ns = 99;
	tgt_ring_push(r, &s);
	tgt_ring_push(r, &s);
	CHECK_EQ_U64(tgt_ring_discard(r), 2);
	CHECK_EQ_U64(tgt_ring_pop(r, out, 32, &spans, &more), 0);
	tgt_ring_free(r);
}

/* A span and its attribute entries are one: pushed, popped, dropped whole. */
static void test_ring_attrs(void)
{
	struct tgt_ring *r = tgt_ring_new(8);
	struct wire_attrs attrs[3];
	struct wire_span s = { .nattrs = 7 }, out[32];
	uint64_t accepted, dropped, accepted0, dropped0;
	uint32_t n, spans;
	bool more;

	memset(attrs, 0, sizeof(attrs));
	attrs[2].value[0] = 42;
	s.start_ns = 1;
	CHECK(tgt_ring_push_attrs(r, &s, attrs, 3));		/* 4 entries */
	s.start_ns = 2;
	CHECK(tgt_ring_push_attrs(r, &s, attrs, 3));		/* 8: full */
	s.start_ns = 3;
	CHECK(!tgt_ring_push_attrs(r, &s, attrs, 3));
	CHECK_EQ_U64(r->drops, 1);
	/* room for 6 entries: one whole span and no part of the next */
	n = tgt_ring_pop(r, out, 6, &spans, &more);
	CHECK(n == 4 && spans == 1 && more);
	CHECK(out[0].start_ns == 1 && out[0].nattrs == 7);
	CHECK(!memcmp(&out[3], &attrs[2], sizeof(attrs[2])));
	/* across the end of the array */
	s.start_ns = 4;
	s.nattrs = 0;
	CHECK(tgt_ring_push(r, &s));
	s.nattrs = 2;
	CHECK(!tgt_ring_push_attrs(r, &s, attrs, 3));	/* 4 more do not fit in 3 */
	s.start_ns = 5;
	CHECK(tgt_ring_push_attrs(r, &s, attrs, 1));
	CHECK_EQ_U64(r->drops, 2);
	n = tgt_ring_pop(r, out, 32, &spans, &more);
	CHECK(n == 7 && spans == 3 && !more);
	CHECK(out[0].start_ns == 2 && out[4].start_ns == 4 && out[5].start_ns == 5);
	CHECK(!memcmp(&out[6], &attrs[0], sizeof(attrs[0])));
	s.nattrs = 3;
	CHECK(tgt_ring_push_attrs(r, &s, attrs, 1));
	CHECK(tgt_ring_push(r, &(struct wire_span){ 0 }));
	CHECK_EQ_U64(tgt_ring_discard(r), 2);
	tgt_ring_free(r);

	/* the totals count spans, not entries */
	tgt_ring_totals(&accepted0, &dropped0);
	r = tgt_ring_attach();
	s.nattrs = 4;
	CHECK(tgt_ring_push_attrs(r, &s, attrs, 2));
	tgt_ring_totals(&accepted, &dropped);
	CHECK_EQ_U64(accepted - accepted0, 1);
	CHECK_EQ_U64(dropped - dropped0, 0);
	CHECK_EQ_U64(tgt_ring_discard(r), 1);
}

/* No recorder yet: spans are ignored, neither counted nor dropped. */
static void test_inactive_noop(void)
{
	gtrace_lane *lane = gtrace_lane_get("queue", "idle");
	uint64_t reported = gtrace_reported_spans(), dropped = gtrace_dropped_spans();

	CHECK(!gtrace_reporting_active());
	for (uint64_t i = 0; i < 100; i++)
		span_at(lane, i);
	CHECK_EQ_U64(gtrace_reported_spans(), reported);
	CHECK_EQ_U64(gtrace_dropped_spans(), dropped);
	CHECK(gtrace_flush(WAIT_MS));
}

struct reporter {
	gtrace_lane *lane;
	uint64_t first, spans;
	bool attrs;		/* every other span with attributes */
};

static void *report_spans(void *arg)
{
	struct reporter *r = arg;

	for (uint64_t k = 0; k < r->spans; k++) {
		if (r->attrs && k % 2)
			span_attrs_at(r->lane, r->first + k);
		else
			span_at(r->lane, r->first + k);
	}
	return NULL;
}

/*
 * Threads reporting, each on its lane; joined, so their rings are freed.
 * Start times keep growing from call to call, as the server checks.
 */
static uint64_t report_from(int n, uint64_t spans, bool attrs)
{
	static uint64_t first = 1;
	pthread_t threads[8];
	struct reporter rep[8];

	for (int i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "lane-%d", i);
		rep[i] = (struct reporter){ gtrace_lane_get("queue", name), first, spans, attrs };
		pthread_create(&threads[i], NULL, report_spans, &rep[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	first += spans;
	return first;
}

static void report_from_threads(int n, uint64_t spans)
{
	report_from(n, spans, false);
}

/* The attributes of the connections of pid: spans that had them all right. */
static uint64_t server_attr_spans(uint32_t pid)
{
	uint64_t n = 0;

	pthread_mutex_lock(&server.lock);
	for (int i = 0; i < server.nconns; i++)
		if (server.conns[i].pid == pid)
			n += server.conns[i].attr_spans;
	pthread_mutex_unlock(&server.lock);
	return n;
}

static void test_recorder(void)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t before = gtrace_reported_spans();
	int errors;

	server_listen();
	CHECK(wait_active(true));
	report_from_threads(3, 1000);
	CHECK(gtrace_flush(WAIT_MS));
	CHECK_EQ_U64(gtrace_reported_spans() - before, 3000);
	CHECK_EQ_U64(gtrace_dropped_spans(), 0);
	CHECK_EQ_U64(wait_spans(pid, 3000, &errors, NULL), 3000);
	CHECK_EQ_U64(errors, 0);
}

/* Spans with attributes among plain ones: all arrive, in order, whole. */
static void test_recorder_attrs(void)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t before = gtrace_reported_spans(), sent_before, attr_before;
	int errors;

	server_totals(pid, &sent_before, &errors, NULL);
	attr_before = server_attr_spans(pid);
	report_from(2, 1000, true);
	CHECK(gtrace_flush(WAIT_MS));
	CHECK_EQ_U64(gtrace_reported_spans() - before, 2000);
	CHECK_EQ_U64(gtrace_dropped_spans(), 0);
	CHECK_EQ_U64(wait_spans(pid, sent_before + 2000, &errors, NULL), sent_before + 2000);
	CHECK_EQ_U64(server_attr_spans(pid) - attr_before, 1000);
	CHECK_EQ_U64(errors, 0);
}

/* The last value of a counter of pid, by name; 0 if never seen. */
static uint64_t server_counter(uint32_t pid, const char *name)
{
	uint64_t v = 0;

	pthread_mutex_lock(&server.lock);
	for (int i = 0; i < server.nconns; i++) {
		struct fake_conn *c = &server.conns[i];

		for (int id = 1; c->pid == pid && id < MAX_IDS; id++)
			if (c->strings[id] && !strcmp(c->strings[id], name) && c->counters[id])
				v = c->counters[id];
	}
	pthread_mutex_unlock(&server.lock);
	return v;
}

/* The counter's value once it is want, or the last one seen before giving up. */
static uint64_t wait_counter(uint32_t pid, const char *name, uint64_t want)
{
	const struct timespec ms = { 0, 1000000 };
	uint64_t v = server_counter(pid, name);

	for (uint64_t until = ms_now() + WAIT_MS; v != want && ms_now() < until;) {
		nanosleep(&ms, NULL);
		v = server_counter(pid, name);
	}
	return v;
}

static bool server_meta(uint32_t pid, const char *key, const char *value)
{
	bool seen = false;

	pthread_mutex_lock(&server.lock);
	for (int i = 0; i < server.nconns; i++)
		seen |= server.conns[i].pid == pid && !strcmp(server.conns[i].meta_key, key) &&
			!strcmp(server.conns[i].meta_value, value);
	pthread_mutex_unlock(&server.lock);
	return seen;
}

/* Counters and meta reach the recorder by the next flush; the last value counts. */
static void test_props(void)
{
	uint32_t pid = (uint32_t)getpid();
	char value[16] = "first";
	int errors;

	gtrace_counter_set("test.count", 5);
	gtrace_counter_set("test.count", 7);
	gtrace_counter_set("test.other", 1);
	gtrace_meta_set("test.state", value);
	strcpy(value, "second");	/* copied: the first value was taken */
	gtrace_meta_set("test.state", value);
	CHECK(gtrace_flush(WAIT_MS));
	CHECK_EQ_U64(wait_counter(pid, "test.count", 7), 7);
	CHECK_EQ_U64(wait_counter(pid, "test.other", 1), 1);
	CHECK(server_meta(pid, "test.state", "second"));
	gtrace_counter_set("test.count", 9);
	CHECK(gtrace_flush(WAIT_MS));
	CHECK_EQ_U64(wait_counter(pid, "test.count", 9), 9);
	server_totals(pid, &(uint64_t){ 0 }, &errors, NULL);
	CHECK_EQ_U64(errors, 0);
}

/*
 * A queue of 16 entries, half the spans taking 5 with their attributes:
 * what is not accepted is dropped, whole, and the recorder hears of
 * exactly that many drops. The recorder reads nothing while the spans
 * come, so that the queue fills however fast this machine drains it.
 */
static void test_queue_full(void)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t accepted = gtrace_reported_spans(), sent, sent_before;
	uint64_t dropped = gtrace_dropped_spans(), attr_before = server_attr_spans(pid);
	struct wire_drops drops = { 0 };
	int errors;

	server_totals(pid, &sent_before, &errors, NULL);
	tgt_ring_configure(16);
	pthread_mutex_lock(&server.lock);
	report_from(2, 20000, true);
	pthread_mutex_unlock(&server.lock);
	tgt_ring_configure(TGT_QUEUE_DEFAULT);
	CHECK(gtrace_flush(WAIT_MS));
	accepted = gtrace_reported_spans() - accepted;
	dropped = gtrace_dropped_spans() - dropped;
	CHECK(dropped > 0);
	CHECK_EQ_U64(accepted + dropped, 40000);
	drops.queue_full = dropped;
	sent = wait_spans(pid, sent_before + accepted, &errors, &drops);
	CHECK_EQ_U64(sent, sent_before + accepted);
	CHECK_EQ_U64(drops.queue_full, dropped);
	CHECK(server_attr_spans(pid) > attr_before);
	CHECK_EQ_U64(errors, 0);
}

/* What test_flush_dry_pool's flushing thread saw. */
struct flusher {
	int started;		/* atomic */
	bool flushed;
	uint64_t left;		/* entries in the rings once the flush returned */
};

static bool count_queued(struct tgt_ring *r, void *ctx)
{
	*(uint64_t *)ctx += __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) -
			    __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	return true;
}

static void *flush_thread(void *arg)
{
	struct flusher *f = arg;

	__atomic_store_n(&f->started, 1, __ATOMIC_RELEASE);
	f->flushed = gtrace_flush(WAIT_MS);
	tgt_rings_visit(count_queued, &f->left);
	return NULL;
}

/*
 * A flush asked while every packet waits on a recorder that reads nothing
 * (twice the spans the packets hold are queued): it returns once the rings
 * are empty, not once the packets in hand are sent, as the CUDA agent's
 * walk of a buffer counts on.
 */
static void test_flush_dry_pool(void)
{
	uint32_t pid = (uint32_t)getpid();
	uint64_t spans = 2 * TGT_PACKETS * WIRE_SPANS_PER_PACKET, sent_before;
	uint64_t accepted = gtrace_reported_spans();
	struct flusher f = { 0 };
	pthread_t thread;
	int errors;

	server_totals(pid, &sent_before, &errors, NULL);
	tgt_ring_configure((uint32_t)spans);
	pthread_mutex_lock(&server.lock);
	report_from(1, spans, false);
	pthread_create(&thread, NULL, flush_thread, &f);
	while (!__atomic_load_n(&f.started, __ATOMIC_ACQUIRE))
		sched_yield();
	pthread_mutex_unlock(&server.lock);
	pthread_join(thread, NULL);
	tgt_ring_configure(TGT_QUEUE_DEFAULT);
	CHECK_EQ_U64(gtrace_reported_spans() - accepted, spans);
	CHECK(f.flushed);
	CHECK_EQ_U64(f.left, 0);
	CHECK_EQ_U64(wait_spans(pid, sent_before + spans, &errors, NULL), sent_before + spans);
	CHECK_EQ_U64(errors, 0);
}

/* A thread that reports on a lane of its own until told to stop. */
struct busy_reporter {
	gtrace_lane *lane;
	int stop;		/* atomic */
	uint64_t spans;
};

static void *report_until_stopped(void *arg)
{
	struct busy_reporter *b = arg;

	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE))
		span_attrs_at(b->lane, ++b->spans);
	return NULL;
}

/*
 * A flush waits for what was reported before it, not for the rings to be
 * empty: beside a thread that reports faster than a slow recorder reads,
 * it still returns, with this thread's spans sent.
 */
static void test_flush_while_reporting(void)
{
	uint32_t pid = (uint32_t)getpid();
	struct busy_reporter b = { .lane = gtrace_lane_get("queue", "busy") };
	uint64_t sent_before, dropped = gtrace_dropped_spans();
	pthread_t thread;
	int errors;

	server_totals(pid, &sent_before, &errors, NULL);
	pthread_mutex_lock(&server.lock);
	server.slow = true;
	pthread_mutex_unlock(&server.lock);
	pthread_create(&thread, NULL, report_until_stopped, &b);
	report_from(1, 1000, false);
	CHECK(gtrace_flush(WAIT_MS));
	__atomic_store_n(&b.stop, 1, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	pthread_mutex_lock(&server.lock);
	server.slow = false;
	pthread_mutex_unlock(&server.lock);
	CHECK(gtrace_flush(WAIT_MS));
	dropped = gtrace_dropped_spans() - dropped;
	CHECK_EQ_U64(wait_spans(pid, sent_before + 1000 + b.spans - dropped, &errors, NULL),
		     sent_before + 1000 + b.spans - dropped);
	CHECK_EQ_U64(errors, 0);
}

/* A child starts from nothing but the lanes, and reports under its pid. */
static void test_fork(void)
{
	gtrace_lane *lane = gtrace_lane_get("queue", "lane-0");
	uint32_t lane_id = lane->id;
	int status = 0, errors;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		CHECK(!gtrace_reporting_active());
		CHECK_EQ_U64(gtrace_reported_spans(), 0);
		CHECK_EQ_U64(gtrace_dropped_spans(), 0);
		CHECK(gtrace_lane_get("queue", "lane-0") == lane && lane->id == lane_id);
		CHECK(gtrace_current_origin().tid == (uint32_t)getpid());
		CHECK(wait_active(true));
		for (uint64_t k = 1; k <= 10; k++)
			span_at(lane, k);
		/* the parent's counters are not the child's */
		gtrace_counter_set("test.child", 3);
		CHECK(gtrace_flush(WAIT_MS));
		CHECK_EQ_U64(gtrace_reported_spans(), 10);
		CHECK_EQ_U64(server_counter((uint32_t)getpid(), "test.count"), 0);
		fflush(stdout);
		_exit(test_current_failed);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ_U64(wait_spans((uint32_t)pid, 10, &errors, NULL), 10);
	CHECK_EQ_U64(errors, 0);
	CHECK_EQ_U64(wait_counter((uint32_t)pid, "test.child", 3), 3);
	CHECK_EQ_U64(server_counter((uint32_t)pid, "test.count"), 0);
	CHECK(gtrace_reporting_active());
}

/* The recorder goes away: reporting turns off, then on with a new one. */
static void test_restart(void)
{
	uint64_t accepted, spans;
	int errors;

	server_kill();
	CHECK(wait_active(false));
	accepted = gtrace_reported_spans();
	report_from_threads(1, 100);
	CHECK_EQ_U64(gtrace_reported_spans(), accepted);

	pthread_mutex_lock(&server.lock);
	for (int i = 0; i < server.nconns; i++)
		for (int j = 0; j < MAX_IDS; j++)
			free(server.conns[i].strings[j]);
	server.nconns = 0;
	pthread_mutex_unlock(&server.lock);
	server_listen();
	CHECK(wait_active(true));
	report_from_threads(2, 500);
	CHECK(gtrace_flush(WAIT_MS));
	spans = wait_spans((uint32_t)getpid(), 1000, &errors, NULL);
	CHECK_EQ_U64(spans, 1000);
	CHECK_EQ_U64(errors, 0);
	server_kill();
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/gtrace-test-target.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("FAIL: cannot make a directory in /tmp\n");
		return 1;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/recorder.sock", dir);
	/* the library reads these when it starts, at its first use below */
	setenv(WIRE_SOCKET_ENV, sock_path, 1);
	setenv("XDG_RUNTIME_DIR", dir, 1);

	RUN(test_interning);
	RUN(test_name_cache);
	RUN(test_ring_drop_newest);
	RUN(test_ring_attrs);
	RUN(test_lane_identity);
	RUN(test_inactive_noop);
	RUN(test_recorder);
	RUN(test_recorder_attrs);
	RUN(test_props);
	RUN(test_queue_full);
	RUN(test_flush_dry_pool);
	RUN(test_flush_while_reporting);
	RUN(test_fork);
	RUN(test_restart);
	rmdir(dir);
	return test_summary();
}
