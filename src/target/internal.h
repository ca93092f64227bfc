/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TARGET_INTERNAL_H
#define GTRACE_TARGET_INTERNAL_H

/*
 * Inside libgtrace-target. Application threads intern names and push spans
 * into their own queue (a ring); the gtrace-target thread drains the rings
 * into packets; the gtrace-target-io thread finds the recorder, connects
 * and sends the packets, with the string and lane definitions they need.
 *
 * Functions here never print, exit or abort: the library lives inside
 * someone else's program, so every failure turns into "not reporting".
 *
 * Locks, always taken in this order: the start lock (api.c), the intern
 * lock, the props lock, the ring registry lock, the packet queue lock. fork
 * holds them all.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "contract/wire.h"
#include "gtrace/target.h"
#include "target/agent-api.h"

#define TGT_NAME_MAX WIRE_MAX_STRING	/* longer names are cut */
#define TGT_QUEUE_ENV "GTRACE_TARGET_QUEUE"
#define TGT_QUEUE_DEFAULT 16384		/* spans per reporting thread */
#define TGT_PACKETS 32			/* 2 MiB: what a slow recorder may owe us */
#define TGT_CACHE_BITS 12		/* hundreds of kernel names, few collisions */
#define TGT_CACHE_SLOTS (1 << TGT_CACHE_BITS)	/* per-thread span name cache */

#define TGT_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define TGT_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define TGT_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

struct gtrace_lane {
	uint32_t id;			/* dense from 1 */
	uint32_t kind, name;		/* string ids */
};

struct tgt_cache_slot {
	const char *ptr;		/* the caller's pointer last seen here */
	const struct tgt_string *s;
};

/*
 * One reporting thread's ring. The thread alone writes the entries, head,
 * attr_entries and drops; the drain thread alone writes tail. head and tail
 * count the entries ever pushed and popped; put and take are their
 * positions in spans[]. An entry is a span, or struct wire_attrs holding
 * attributes of the span before it (wire.h): a span and its attribute
 * entries are pushed, popped and dropped as one.
 */
struct tgt_ring {
	/* the reporting thread's */
	uint64_t head;			/* release: entries accepted */
	uint64_t attr_entries;		/* release, after head: of them, attribute entries */
	uint64_t drops;			/* spans reported while full */
	uint64_t tail_seen;		/* a recent tail: reads the shared line less */
	uint32_t put;
	int exited;			/* release: the thread is gone */
	struct tgt_cache_slot cache[TGT_CACHE_SLOTS];

	/* the drain thread's */
	uint64_t tail __attribute__((aligned(64)));	/* release */
	uint64_t flush_mark;		/* the head a pending flush waits for the tail to pass */
	uint32_t take;
	struct tgt_ring *next;		/* in the registry */

	uint32_t cap;
	struct wire_span *spans;
};

/* intern.c: strings and lanes, shared by all threads (tgt_intern: agent-api.h). */
gtrace_lane *tgt_lane_get(const char *kind, const char *name);
/* A string or lane by id; NULL when there is none with it. */
const struct tgt_string *tgt_string_by_id(uint32_t id);
const gtrace_lane *tgt_lane_by_id(uint32_t id);
void tgt_intern_lock(void);
void tgt_intern_unlock(void);

/* Finds the id of a span name through the thread's cache; 0: no memory. */
static inline uint32_t tgt_name_id(struct tgt_ring *r, const char *name)
{
	/* Fibonacci hashing: names in an array of fixed-size slots spread too. */
	uint64_t h = (uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull;
	struct tgt_cache_slot *slot = &r->cache[h >> (64 - TGT_CACHE_BITS)];
	const struct tgt_string *s = slot->s;

	/* The pointer alone is not enough: callers may reuse a buffer. */
	if (slot->ptr == name && strncmp(s->str, name, s->len) == 0 &&
	    (s->len == TGT_NAME_MAX || name[s->len] == '\0'))
		return s->id;
	s = tgt_intern(name);
	if (!s)
		return 0;
	slot->ptr = name;
	slot->s = s;
	return s->id;
}

/* ring.c: per-thread rings and the registry the drain thread walks. */
extern __thread struct tgt_ring *tgt_self __attribute__((tls_model("initial-exec")));

struct tgt_ring *tgt_ring_new(uint32_t cap);
void tgt_ring_free(struct tgt_ring *r);
/* Registers a ring for the calling thread; NULL when out of memory. */
struct tgt_ring *tgt_ring_attach(void);
/* Sets the capacity of rings made from now on. */
void tgt_ring_configure(uint32_t cap);

/* The calling thread's ring, made on first use; NULL when out of memory. */
static inline struct tgt_ring *tgt_ring_self(void)
{
	return tgt_self ? tgt_self : tgt_ring_attach();
}

/*
 * Calls visit on every ring, under the registry lock, until it returns
 * false; then frees the rings of gone threads that are empty.
 */
void tgt_rings_visit(bool (*visit)(struct tgt_ring *r, void *ctx), void *ctx);
/* Spans accepted and dropped by all threads, gone ones included. */
void tgt_ring_totals(uint64_t *accepted, uint64_t *dropped);
/* Counts a span dropped before it reached a ring (no memory for one). */
void tgt_ring_count_lost(void);
void tgt_registry_lock(void);
void tgt_registry_unlock(void);
/* In a child after fork: the rings were the parent's threads'. */
void tgt_registry_reset_child(void);

/* Drop-newest: false when the ring has no room for need entries (counted in drops). */
static inline bool tgt_ring_room(struct tgt_ring *r, uint32_t need)
{
	if (r->head + need - r->tail_seen > r->cap) {
		r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (r->head + need - r->tail_seen > r->cap) {
			TGT_STORE(&r->drops, r->drops + 1);
			return false;
		}
	}
	return true;
}

/* Drop-newest: false when the ring is full (counted in drops). */
static inline bool tgt_ring_push(struct tgt_ring *r, const struct wire_span *s)
{
	if (!tgt_ring_room(r, 1))
		return false;
	r->spans[r->put] = *s;
	if (++r->put == r->cap)
		r->put = 0;
	__atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
	return true;
}

/*
 * A span with n > 0 attribute entries: one push, or one drop. The entries
 * take the places of spans.
 */
bool tgt_ring_push_attrs(struct tgt_ring *r, const struct wire_span *s,
			 const struct wire_attrs *attrs, uint32_t n);

/*
 * Pops whole spans, with their attribute entries, into out: up to max
 * entries (drain thread only). Returns the entries; *spans says how many
 * spans they hold. Sets *more when entries stayed for lack of room.
 */
uint32_t tgt_ring_pop(struct tgt_ring *r, struct wire_span *out, uint32_t max,
		      uint32_t *spans, bool *more);
/* Throws queued spans away; returns how many spans. */
uint64_t tgt_ring_discard(struct tgt_ring *r);

/* worker.c: the drain thread and the packets between the two threads. */
struct tgt_packet {
	struct tgt_packet *next;
	uint64_t seq;			/* its place among the packets handed to the io thread */
	uint32_t spans;			/* of the entries, spans */
	struct {
		struct wire_header h;	/* WIRE_SPANS(_ATTRS), count entries */
		struct wire_span spans[WIRE_SPANS_PER_PACKET];
	} msg;
};

/* A message an agent posted (tgt_post, agent-api.h), queued for the io thread. */
struct tgt_post {
	struct tgt_post *next;
	uint16_t type;			/* WIRE_CUBIN, WIRE_PC_SAMPLES */
	uint32_t count;
	size_t len;
	uint8_t body[];
};

/* Starts both threads; reporting stays off when this fails. */
int tgt_workers_start(void);
/*
 * For the io thread: the next packet or posted message to send (one of
 * *post and the result), or neither with *flush set when a flush has been
 * drained from the rings and the packets handed over by then are sent, or
 * neither with *flush 0 after timeout_ms.
 */
struct tgt_packet *tgt_queue_wait(unsigned timeout_ms, uint64_t *flush, struct tgt_post **post);
void tgt_queue_release(struct tgt_packet *p);
void tgt_post_release(struct tgt_post *p);
void tgt_queue_flushed(uint64_t flush);
/* Connected (fd) or not (-1): turns reporting on or off; off discards. */
void tgt_queue_set_connected(int fd);
/* gtrace_flush: the rings drained, the packets sent or counted. */
bool tgt_queue_flush(unsigned timeout_ms);
void tgt_queue_lock(void);
void tgt_queue_unlock(void);
/* In a child after fork: no threads, no connection, nothing queued. */
void tgt_queue_reset_child(void);
/* Spans queued, then lost with the connection. */
uint64_t tgt_unsent(void);
void tgt_count_unsent(uint64_t n);

/* props.c: the latest counters and meta of the process. */
void tgt_counter_set(const char *name, uint64_t value);
void tgt_meta_set(const char *key, const char *value);
/* Grows at every change; 0 before the first. */
uint64_t tgt_props_version(void);

/* A counter (text NULL) or a meta value, copied for sending. */
struct tgt_prop_copy {
	const struct tgt_string *key;
	uint64_t value;
	char *text;
};

/*
 * Copies of what changed after version since into *out, and in *now the
 * version they bring the reader to. Returns how many, or -1 when out of
 * memory. Free with tgt_props_free.
 */
int tgt_props_since(uint64_t since, struct tgt_prop_copy **out, uint64_t *now);
void tgt_props_free(struct tgt_prop_copy *copies, int n);
void tgt_props_lock(void);
void tgt_props_unlock(void);
/* In a child after fork: the parent's values are not the child's. */
void tgt_props_reset_child(void);

/* conn.c: the gtrace-target-io thread. */
/* Reads where to look for the recorder from the environment. */
void tgt_conn_configure(void);
/*
 * Connects to the recorder of this process, if there is one, and says
 * hello: the socket, or -errno. env_only: not the rendezvous directory.
 */
int tgt_connect(bool env_only);
/* The io thread; arg is a socket tgt_connect made, or -1. */
void *tgt_io_main(void *arg);

/* api.c */
void tgt_set_active(bool on);
/* Starts the library's threads, once: what the first use of the API does. */
void tgt_start(void);

#endif
