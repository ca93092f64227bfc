/* SPDX-License-Identifier: MIT */
/*
 * The gtrace-target thread and the packets it hands to gtrace-target-io.
 * A fixed pool of packets bounds the memory: when the recorder reads too
 * slowly the pool runs dry, the rings fill, and new spans are dropped and
 * counted where they are reported.
 */
#include "target/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_TICK_MS 1		/* while connected */
#define IDLE_TICK_MS 100	/* while not: only gone threads to clean up */

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t io_cond;		/* packets ready, a flush drained */
static pthread_cond_t drain_cond;	/* a flush asked, the connection up */
static pthread_cond_t flush_cond;	/* a flush done */

static struct tgt_packet *pool;
static struct tgt_packet *free_packets, *ready, **ready_end = &ready;
static struct tgt_post *posted, **posted_end = &posted;
static size_t posted_bytes;
static int conn_fd = -1;
static bool running;
/* Flushes asked, drained from the rings, and sent: each counts up. */
static uint64_t flush_asked, flush_drained, flush_done;
/*
 * Packets handed to the io thread, the last it took (sent by its next
 * wait), and the last handed before the flush drained: the flush is done
 * once that one is sent, however many were handed after it.
 */
static uint64_t handed, taken, handed_at_drain;
static uint64_t unsent;			/* atomic */

void tgt_queue_lock(void)
{
	pthread_mutex_lock(&queue_lock);
}

void tgt_queue_unlock(void)
{
	pthread_mutex_unlock(&queue_lock);
}

uint64_t tgt_unsent(void)
{
	return TGT_LOAD(&unsent);
}

void tgt_count_unsent(uint64_t n)
{
	TGT_ADD(&unsent, n);
}

static void init_conds(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&io_cond, &attr);
	pthread_cond_init(&drain_cond, &attr);
	pthread_cond_init(&flush_cond, &attr);
	pthread_condattr_destroy(&attr);
}

static void fill_pool(void)
{
	free_packets = NULL;
	ready = NULL;
	ready_end = &ready;
	for (int i = 0; i < TGT_PACKETS; i++) {
		pool[i].next = free_packets;
		free_packets = &pool[i];
	}
}

static struct timespec deadline_in(unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

/* Under queue_lock: throws a packet's spans away, counted as unsent. */
static void discard(struct tgt_packet *p)
{
	tgt_count_unsent(p->spans);
	p->next = free_packets;
	free_packets = p;
}

static struct tgt_packet *take_free(void)
{
	struct tgt_packet *p;

	pthread_mutex_lock(&queue_lock);
	p = free_packets;
	if (p) {
		free_packets = p->next;
		p->msg.h.version = WIRE_VERSION;
		p->msg.h.count = 0;
		p->spans = 0;
	}
	pthread_mutex_unlock(&queue_lock);
	return p;
}

/* Hands a packet to the io thread, or frees it when empty or unsendable. */
static void hand_over(struct tgt_packet *p)
{
	/* The plain type while it can be: a recorder that knows no attributes reads it. */
	p->msg.h.type = p->msg.h.count == p->spans ? WIRE_SPANS : WIRE_SPANS_ATTRS;
	pthread_mutex_lock(&queue_lock);
	if (!p->msg.h.count) {
		p->next = free_packets;
		free_packets = p;
	} else if (conn_fd < 0) {
		discard(p);
	} else {
		p->next = NULL;
		p->seq = ++handed;
		*ready_end = p;
		ready_end = &p->next;
		pthread_cond_signal(&io_cond);
	}
	pthread_mutex_unlock(&queue_lock);
}

struct drain {
	struct tgt_packet *packet;
	bool connected;
	bool marking;		/* a flush was asked: note where each ring's head is */
	bool dry;		/* the packets ran out: a ring kept spans */
	bool behind;		/* a ring kept spans reported before the flush */
};

static bool drain_ring(struct tgt_ring *r, void *ctx)
{
	struct drain *d = ctx;

	if (d->marking)
		r->flush_mark = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	if (!d->connected) {
		tgt_count_unsent(tgt_ring_discard(r));
		return true;
	}
	while (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) != r->tail) {
		struct tgt_packet *p = d->packet;
		uint32_t room, spans;
		bool more;

		if (!p && !(p = d->packet = take_free())) {
			d->dry = true;	/* the rings keep the rest */
			break;
		}
		room = WIRE_SPANS_PER_PACKET - p->msg.h.count;
		p->msg.h.count += tgt_ring_pop(r, &p->msg.spans[p->msg.h.count], room, &spans,
					       &more);
		p->spans += spans;
		if (!more)
			break;
		hand_over(p);
		d->packet = NULL;
	}
	d->behind |= r->tail < r->flush_mark;
	return true;
}

static void block_signals(sigset_t *old)
{
	sigset_t all;

	/* Signals are the application's business, not its helper threads'. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, old);
}

/*
 * A flush is drained once every ring has passed the head it had when the
 * flush was asked, whatever was reported since: while the packets are out
 * (a recorder reading slowly), the next pass waits for one to come back,
 * and the flush for the passes.
 */
static void *drain_main(void *arg)
{
	uint64_t marked = 0;	/* the flush the rings' marks are of */
	bool dry = false;

	pthread_setname_np(pthread_self(), "gtrace-target");
	pthread_mutex_lock(&queue_lock);
	for (;;) {
		struct drain d = { .connected = conn_fd >= 0 };
		uint64_t flush = flush_asked;

		if (flush == flush_drained || (dry && !free_packets)) {
			struct timespec until = deadline_in(d.connected ? DRAIN_TICK_MS : IDLE_TICK_MS);

			pthread_cond_timedwait(&drain_cond, &queue_lock, &until);
			d.connected = conn_fd >= 0;
			flush = flush_asked;
		}
		pthread_mutex_unlock(&queue_lock);
		d.marking = flush > flush_drained && flush != marked;
		tgt_rings_visit(drain_ring, &d);
		if (d.marking)
			marked = flush;
		if (d.packet)
			hand_over(d.packet);
		pthread_mutex_lock(&queue_lock);
		dry = d.dry;
		if (flush > flush_drained && !d.behind) {
			flush_drained = flush;
			handed_at_drain = handed;
			pthread_cond_signal(&io_cond);
		}
	}
	return NULL;
}

int tgt_workers_start(void)
{
	pthread_attr_t attr;
	pthread_t thread;
	sigset_t old;
	int err, fd;

	if (!pool) {
		pool = malloc(TGT_PACKETS * sizeof(*pool));
		if (!pool)
			return -ENOMEM;
		init_conds();
	}
	fill_pool();
	/*
	 * Under gtrace record -- cmd the recorder listens already: connecting
	 * now (a few system calls, none that wait) turns reporting on before
	 * the first span, instead of on the io thread's first look.
	 */
	fd = tgt_connect(true);
	if (fd >= 0)
		tgt_queue_set_connected(fd);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	block_signals(&old);
	err = pthread_create(&thread, &attr, drain_main, NULL);
	if (!err) {
		err = pthread_create(&thread, &attr, tgt_io_main, (void *)(intptr_t)fd);
		/* a drain thread alone is harmless: with no connection it idles */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		if (fd >= 0) {
			tgt_queue_set_connected(-1);
			close(fd);
		}
		return -err;
	}
	pthread_mutex_lock(&queue_lock);
	running = true;
	pthread_mutex_unlock(&queue_lock);
	return 0;
}

/* Under queue_lock: the oldest posted message, taken off the queue. */
static struct tgt_post *take_posted(void)
{
	struct tgt_post *m = posted;

	posted = m->next;
	if (!posted)
		posted_end = &posted;
	posted_bytes -= m->len;
	return m;
}

int tgt_post(uint16_t type, uint32_t count, const void *body, size_t len)
{
	struct tgt_post *m;
	int err = 0;

	pthread_mutex_lock(&queue_lock);
	if (conn_fd < 0)
		err = -ENOTCONN;
	else if (len > TGT_POST_MAX - posted_bytes)
		err = -ENOBUFS;
	pthread_mutex_unlock(&queue_lock);
	if (err)
		return err;
	m = malloc(sizeof(*m) + len);
	if (!m)
		return -ENOMEM;
	m->next = NULL;
	m->type = type;
	m->count = count;
	m->len = len;
	memcpy(m->body, body, len);
	pthread_mutex_lock(&queue_lock);
	/* Checked again: the connection may have gone meanwhile. */
	if (conn_fd < 0) {
		free(m);
		err = -ENOTCONN;
	} else {
		*posted_end = m;
		posted_end = &m->next;
		posted_bytes += len;
		pthread_cond_signal(&io_cond);
	}
	pthread_mutex_unlock(&queue_lock);
	return err;
}

void tgt_post_release(struct tgt_post *p)
{
	free(p);
}

struct tgt_packet *tgt_queue_wait(unsigned timeout_ms, uint64_t *flush, struct tgt_post **post)
{
	struct timespec until = deadline_in(timeout_ms);
	struct tgt_packet *p = NULL;

	*flush = 0;
	*post = NULL;
	pthread_mutex_lock(&queue_lock);
	for (;;) {
		/* Not behind packets handed after the drain: a busy thread keeps handing them. */
		if (flush_drained > flush_done && taken >= handed_at_drain && !posted) {
			*flush = flush_drained;
			break;
		}
		if (ready) {
			p = ready;
			ready = p->next;
			if (!ready)
				ready_end = &ready;
			taken = p->seq;
			break;
		}
		if (posted) {
			*post = take_posted();
			break;
		}
		if (pthread_cond_timedwait(&io_cond, &queue_lock, &until) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&queue_lock);
	return p;
}

void tgt_queue_release(struct tgt_packet *p)
{
	pthread_mutex_lock(&queue_lock);
	/* The first back may be what a flush's drain waits for. */
	if (!free_packets)
		pthread_cond_signal(&drain_cond);
	p->next = free_packets;
	free_packets = p;
	pthread_mutex_unlock(&queue_lock);
}

void tgt_queue_flushed(uint64_t flush)
{
	pthread_mutex_lock(&queue_lock);
	if (flush > flush_done) {
		flush_done = flush;
		pthread_cond_broadcast(&flush_cond);
	}
	pthread_mutex_unlock(&queue_lock);
}

void tgt_queue_set_connected(int fd)
{
	pthread_mutex_lock(&queue_lock);
	conn_fd = fd;
	if (fd < 0) {
		while (ready) {
			struct tgt_packet *p = ready;

			ready = p->next;
			discard(p);
		}
		ready_end = &ready;
		taken = handed;
		while (posted)
			free(take_posted());
	}
	tgt_set_active(fd >= 0);
	pthread_cond_signal(&drain_cond);
	pthread_mutex_unlock(&queue_lock);
}

bool tgt_queue_flush(unsigned timeout_ms)
{
	struct timespec until = deadline_in(timeout_ms);
	uint64_t flush;
	bool done = true;

	pthread_mutex_lock(&queue_lock);
	if (running) {
		flush = ++flush_asked;
		pthread_cond_signal(&drain_cond);
		while (flush_done < flush && done)
			done = pthread_cond_timedwait(&flush_cond, &queue_lock, &until) != ETIMEDOUT ||
			       flush_done >= flush;
	}
	pthread_mutex_unlock(&queue_lock);
	return done;
}

void tgt_queue_reset_child(void)
{
	/* The parent's connection and packets are not ours to send. */
	if (conn_fd >= 0)
		close(conn_fd);
	conn_fd = -1;
	running = false;
	flush_asked = flush_drained = flush_done = 0;
	handed = taken = handed_at_drain = 0;
	unsent = 0;
	/* Nor are its posted messages. */
	while (posted)
		free(take_posted());
	if (pool) {
		fill_pool();
		init_conds();
	}
}
