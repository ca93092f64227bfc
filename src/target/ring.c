/* SPDX-License-Identifier: MIT */
/*
 * Per-thread rings: single producer (the reporting thread), single consumer
 * (the drain thread). A thread's ring outlives it until drained, so spans
 * reported just before a thread exits are still sent.
 */
#include "target/internal.h"

#include <stdlib.h>
#include <string.h>

__thread struct tgt_ring *tgt_self __attribute__((tls_model("initial-exec")));

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tgt_ring *registry;
/* The counts of rings already freed, under registry_lock. */
static uint64_t retired_accepted, retired_drops;
static uint64_t lost;			/* atomic: no ring to count them in */
static uint32_t ring_cap = TGT_QUEUE_DEFAULT;

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static bool exit_key_made;

void tgt_ring_configure(uint32_t cap)
{
	TGT_STORE(&ring_cap, cap ? cap : 1);
}

uint32_t tgt_queue_capacity(void)
{
	return TGT_LOAD(&ring_cap);
}

struct tgt_ring *tgt_ring_new(uint32_t cap)
{
	struct tgt_ring *r = aligned_alloc(64, sizeof(*r));

	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->cap = cap;
	r->spans = malloc((size_t)cap * sizeof(*r->spans));
	if (!r->spans) {
		free(r);
		return NULL;
	}
	return r;
}

void tgt_ring_free(struct tgt_ring *r)
{
	if (r) {
		free(r->spans);
		free(r);
	}
}

/* The pthread key destructor: runs in the thread as it exits. */
static void thread_exit(void *ring)
{
	struct tgt_ring *r = ring;

	if (tgt_self == r)
		tgt_self = NULL;
	__atomic_store_n(&r->exited, 1, __ATOMIC_RELEASE);
}

static void make_exit_key(void)
{
	exit_key_made = pthread_key_create(&exit_key, thread_exit) == 0;
}

struct tgt_ring *tgt_ring_attach(void)
{
	struct tgt_ring *r;

	pthread_once(&exit_key_once, make_exit_key);
	if (!exit_key_made)
		return NULL;
	r = tgt_ring_new(TGT_LOAD(&ring_cap));
	if (!r)
		return NULL;
	if (pthread_setspecific(exit_key, r)) {
		tgt_ring_free(r);
		return NULL;
	}
	pthread_mutex_lock(&registry_lock);
	r->next = registry;
	registry = r;
	pthread_mutex_unlock(&registry_lock);
	tgt_self = r;
	return r;
}

bool tgt_ring_push_attrs(struct tgt_ring *r, const struct wire_span *s,
			 const struct wire_attrs *attrs, uint32_t n)
{
	if (!tgt_ring_room(r, 1 + n))
		return false;
	r->spans[r->put] = *s;
	for (uint32_t i = 0; i < n; i++) {
		if (++r->put == r->cap)
			r->put = 0;
		memcpy(&r->spans[r->put], &attrs[i], sizeof(attrs[i]));
	}
	if (++r->put == r->cap)
		r->put = 0;
	__atomic_store_n(&r->head, r->head + 1 + n, __ATOMIC_RELEASE);
	/* After head: a reader that sees these entries sees them in head. */
	__atomic_store_n(&r->attr_entries, r->attr_entries + n, __ATOMIC_RELEASE);
	return true;
}

/*
 * The whole spans among the first max of avail queued entries: how many
 * entries they take, and how many spans they are.
 */
static uint32_t whole_spans(const struct tgt_ring *r, uint64_t avail, uint32_t max,
			    uint32_t *spans)
{
	uint64_t n = 0;

	*spans = 0;
	while (n < avail) {
		uint32_t need = 1 + wire_attr_entries(r->spans[(r->take + n) % r->cap].nattrs);

		if (n + need > max)
			break;
		n += need;
		++*spans;
	}
	return (uint32_t)n;
}

static void advance(struct tgt_ring *r, uint64_t n)
{
	r->take = (uint32_t)((r->take + n) % r->cap);
	__atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
}

uint32_t tgt_ring_pop(struct tgt_ring *r, struct wire_span *out, uint32_t max,
		      uint32_t *spans, bool *more)
{
	uint64_t avail = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - r->tail;
	uint32_t n = whole_spans(r, avail, max, spans);
	uint32_t first = r->cap - r->take < n ? r->cap - r->take : n;

	memcpy(out, &r->spans[r->take], first * sizeof(*out));
	memcpy(out + first, r->spans, (n - first) * sizeof(*out));
	advance(r, n);
	*more = n < avail;
	return n;
}

uint64_t tgt_ring_discard(struct tgt_ring *r)
{
	uint64_t avail = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - r->tail;
	uint32_t spans;

	advance(r, whole_spans(r, avail, UINT32_MAX, &spans));
	return spans;
}

void tgt_rings_visit(bool (*visit)(struct tgt_ring *r, void *ctx), void *ctx)
{
	struct tgt_ring **link;

	pthread_mutex_lock(&registry_lock);
	for (link = &registry; *link;) {
		struct tgt_ring *r = *link;
		/* exited before the last look at head: nothing can follow */
		bool gone = __atomic_load_n(&r->exited, __ATOMIC_ACQUIRE);

		if (!visit(r, ctx))
			break;
		if (gone && __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == r->tail) {
			*link = r->next;
			retired_accepted += r->head - TGT_LOAD(&r->attr_entries);
			retired_drops += TGT_LOAD(&r->drops);
			tgt_ring_free(r);
		} else {
			link = &r->next;
		}
	}
	pthread_mutex_unlock(&registry_lock);
}

void tgt_ring_totals(uint64_t *accepted, uint64_t *dropped)
{
	pthread_mutex_lock(&registry_lock);
	*accepted = retired_accepted;
	*dropped = retired_drops + TGT_LOAD(&lost);
	for (struct tgt_ring *r = registry; r; r = r->next) {
		/* attr_entries first: head counts every entry it counts */
		uint64_t attrs = __atomic_load_n(&r->attr_entries, __ATOMIC_ACQUIRE);

		*accepted += __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) - attrs;
		*dropped += TGT_LOAD(&r->drops);
	}
	pthread_mutex_unlock(&registry_lock);
}

void tgt_ring_count_lost(void)
{
	TGT_ADD(&lost, 1);
}

void tgt_registry_lock(void)
{
	pthread_mutex_lock(&registry_lock);
}

void tgt_registry_unlock(void)
{
	pthread_mutex_unlock(&registry_lock);
}

void tgt_registry_reset_child(void)
{
	while (registry) {
		struct tgt_ring *r = registry;

		registry = r->next;
		tgt_ring_free(r);
	}
	retired_accepted = retired_drops = 0;
	lost = 0;
	tgt_self = NULL;
	if (exit_key_made)
		pthread_setspecific(exit_key, NULL);
}
