/* SPDX-License-Identifier: MIT */
/*
 * The public functions of libgtrace-target, and its life cycle: started on
 * first use (or at load time, autostart.c), reset in a child after fork,
 * flushed at exit.
 */
#include "target/internal.h"

#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXIT_FLUSH_MS 1000

int gtrace_target_active_;

static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static int started;			/* acquire/release */
static bool atfork_registered;
static __thread uint32_t my_tid __attribute__((tls_model("initial-exec")));

void tgt_set_active(bool on)
{
	__atomic_store_n(&gtrace_target_active_, on, __ATOMIC_RELAXED);
}

static uint32_t queue_size(void)
{
	const char *env = getenv(TGT_QUEUE_ENV);
	char *end;
	unsigned long n;

	if (!env || !*env)
		return TGT_QUEUE_DEFAULT;
	n = strtoul(env, &end, 10);
	if (*end || n == 0 || n > (1u << 24))
		return TGT_QUEUE_DEFAULT;
	return (uint32_t)n;
}

/* fork: hold every lock so the child gets consistent tables. */
static void before_fork(void)
{
	pthread_mutex_lock(&start_lock);
	tgt_intern_lock();
	tgt_props_lock();
	tgt_registry_lock();
	tgt_queue_lock();
}

static void after_fork_parent(void)
{
	tgt_queue_unlock();
	tgt_registry_unlock();
	tgt_props_unlock();
	tgt_intern_unlock();
	pthread_mutex_unlock(&start_lock);
}

/*
 * The child has only the forking thread: our threads, the connection and
 * the queued spans stayed with the parent. Strings and lanes stay (the
 * application holds lane handles); the next use connects again and sends
 * them to the recorder under the child's pid.
 */
static void after_fork_child(void)
{
	tgt_queue_reset_child();
	tgt_registry_reset_child();
	tgt_props_reset_child();
	tgt_set_active(false);
	started = 0;
	my_tid = 0;
	after_fork_parent();
}

void tgt_start(void)
{
	pthread_mutex_lock(&start_lock);
	if (!started) {
		if (!atfork_registered)
			atfork_registered =
				!pthread_atfork(before_fork, after_fork_parent, after_fork_child);
		tgt_ring_configure(queue_size());
		tgt_conn_configure();
		tgt_workers_start();	/* on failure we stay off, and do not retry */
		__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&start_lock);
}

static inline void ensure_started(void)
{
	if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		tgt_start();
}

__attribute__((destructor)) static void unload(void)
{
	if (__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		tgt_queue_flush(EXIT_FLUSH_MS);
}

uint64_t gtrace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

gtrace_lane *gtrace_lane_get(const char *kind, const char *name)
{
	ensure_started();
	return tgt_lane_get(kind, name);
}

gtrace_origin gtrace_current_origin(void)
{
	gtrace_origin o;

	ensure_started();
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	o.tid = my_tid;
	o.ts_ns = gtrace_now_ns();
	return o;
}

/*
 * The span as queued, and the calling thread's ring to queue it in; NULL
 * when it is not to be queued (dropped ones counted).
 */
static inline struct tgt_ring *prepare(gtrace_lane *lane, const char *name, uint64_t start_ns,
				       uint64_t end_ns, const gtrace_origin *origin,
				       struct wire_span *s)
{
	struct tgt_ring *r;

	if (!gtrace_reporting_active()) {
		ensure_started();	/* may connect at once: look again */
		if (!gtrace_reporting_active())
			return NULL;
	}
	if (!lane || !name)
		return NULL;
	r = tgt_ring_self();
	if (!r) {
		tgt_ring_count_lost();
		return NULL;
	}
	s->name = tgt_name_id(r, name);
	if (!s->name) {
		TGT_STORE(&r->drops, r->drops + 1);
		return NULL;
	}
	s->lane = lane->id;
	s->start_ns = start_ns;
	s->end_ns = end_ns < start_ns ? start_ns : end_ns;
	s->origin_tid = origin ? origin->tid : 0;
	s->nattrs = 0;
	s->origin_ns = origin ? origin->ts_ns : 0;
	return r;
}

void gtrace_span(gtrace_lane *lane, const char *name, uint64_t start_ns, uint64_t end_ns,
		 const gtrace_origin *origin)
{
	struct wire_span s;
	struct tgt_ring *r = prepare(lane, name, start_ns, end_ns, origin, &s);

	if (r)
		tgt_ring_push(r, &s);
}

void gtrace_span_attrs(gtrace_lane *lane, const char *name, uint64_t start_ns, uint64_t end_ns,
		       const gtrace_origin *origin, const gtrace_attr *attrs, unsigned nattrs)
{
	struct wire_attrs entries[WIRE_MAX_ATTRS / WIRE_ATTRS_PER_ENTRY];
	struct wire_span s;
	struct tgt_ring *r = prepare(lane, name, start_ns, end_ns, origin, &s);

	if (!r)
		return;
	if (!attrs || nattrs > GTRACE_MAX_ATTRS)
		nattrs = attrs ? GTRACE_MAX_ATTRS : 0;
	memset(entries, 0, sizeof(entries));
	for (unsigned i = 0; i < nattrs; i++) {
		struct wire_attrs *e = &entries[s.nattrs / WIRE_ATTRS_PER_ENTRY];
		uint32_t key;

		if (!attrs[i].key)
			continue;
		key = tgt_name_id(r, attrs[i].key);
		if (!key) {
			TGT_STORE(&r->drops, r->drops + 1);
			return;
		}
		e->key[s.nattrs % WIRE_ATTRS_PER_ENTRY] = key;
		e->value[s.nattrs % WIRE_ATTRS_PER_ENTRY] = attrs[i].value;
		s.nattrs++;
	}
	if (s.nattrs)
		tgt_ring_push_attrs(r, &s, entries, wire_attr_entries(s.nattrs));
	else
		tgt_ring_push(r, &s);
}

void gtrace_counter_set(const char *name, uint64_t value)
{
	if (!name)
		return;
	ensure_started();
	tgt_counter_set(name, value);
}

void gtrace_meta_set(const char *key, const char *value)
{
	if (!key || !value)
		return;
	ensure_started();
	tgt_meta_set(key, value);
}

uint64_t gtrace_reported_spans(void)
{
	uint64_t accepted, dropped;

	tgt_ring_totals(&accepted, &dropped);
	return accepted;
}

uint64_t gtrace_dropped_spans(void)
{
	uint64_t accepted, dropped;

	tgt_ring_totals(&accepted, &dropped);
	return dropped + tgt_unsent();
}

bool gtrace_flush(unsigned timeout_ms)
{
	ensure_started();
	return tgt_queue_flush(timeout_ms);
}
