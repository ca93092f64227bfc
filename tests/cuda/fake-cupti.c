/* SPDX-License-Identifier: MIT */
/*
 * A test double of CUPTI, built as libcupti.so.13: the subscriber and
 * callback API, activity buffers with the real record layouts, the
 * timestamp callback, and the NVTX injection entry point. The fake driver
 * (fake-cuda.c) produces the events through the hooks of fake.h.
 *
 * Buffers behave as CUPTI documents them, unkind parts included: each
 * thread that records asks the client for its own buffer (bufferRequested,
 * on that thread); a GPU record takes its place in the buffer of the thread
 * that queued the work, without times, and gets them when the work ends;
 * a buffer still holding such an incomplete record is withheld. A worker
 * thread delivers full, complete buffers about every 100 ms;
 * cuptiActivityFlushAll(0) delivers every complete buffer holding records,
 * on the calling thread; with FLUSH_FORCED it delivers every buffer, and
 * the records of work not yet ended keep start = end = 0, as CUPTI leaves
 * a timestamp it did not collect.
 *
 * FAKE_CUPTI_FAULTS, a comma list, makes it misbehave in the ways real
 * installations do:
 *   null-buffer          one bufferCompleted call with a NULL buffer
 *   zero-timestamps[=N]  the first N (1) kernel records have start = end = 0
 *   dropped=N            cuptiActivityGetNumDroppedRecords reports N more
 *   fatal                cuptiActivityEnable fails (CUPTI_ERROR_UNKNOWN)
 *   subscriber-conflict  cuptiSubscribe fails as under nsys (error 39)
 *   old-version          cuptiGetVersion says 120000 (CUDA 12)
 *   names-freed          kernel names are overwritten and freed as soon as
 *                        bufferCompleted returns
 *   out-of-order         records and buffers are delivered newest first
 *   causality[=N]        the first N (1) kernels start 10 ms before their
 *                        launch call
 *   fail-kind=KIND       cuptiActivityEnable fails (CUPTI_ERROR_NOT_SUPPORTED)
 *                        for that kind only, its name less CUPTI_ACTIVITY_KIND_
 *                        (MEMSET, CONCURRENT_KERNEL...)
 *   no-timestamp-callback  cuptiActivityRegisterTimestampCallback fails
 *                        (CUPTI_ERROR_NOT_SUPPORTED, as on WSL2): records
 *                        keep CUPTI's clock, CLOCK_REALTIME
 * FAKE_CUPTI_VERSION=N makes cuptiGetVersion say N.
 *
 * One subscriber at a time, as in CUPTI: a later cuptiSubscribe_v2 fails
 * with error 39 and learns the holder's name, "CUPTI for <its name>" (the
 * header's words for how CUPTI names a subscriber); nothing for a holder
 * that gave none. Buffer callbacks registered again replace the earlier
 * ones, whose buffers then go to the new client.
 */
#define NVTX_NO_IMPL
#include "fake.h"

#include <dlfcn.h>
#include <errno.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CBID_LIMIT 1024
#define KIND_LIMIT 64
#define WORKER_PERIOD_MS 100
#define CAUSALITY_SHIFT_NS 10000000
#define POISON 0x5a

static struct {
	bool null_buffer, fatal, subscriber_conflict, old_version, names_freed, out_of_order;
	bool no_timestamp_callback;
	unsigned zero_timestamps, causality;
	size_t dropped;
	CUpti_ActivityKind fail_kind;
} faults;

static struct {
	bool active;
	char name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];	/* "" when it gave none */
	CUpti_CallbackFunc fn;
	void *userdata;
	uint8_t enabled[CUPTI_CB_DOMAIN_SIZE][CBID_LIMIT / 8];
} sub;

/* One buffer of the client's, being filled or waiting for delivery. */
struct buffer {
	uint8_t *data;
	size_t size, used, records, max_records;
	size_t incomplete;	/* records whose work has not ended */
	pid_t owner;		/* the thread filling it; 0 once closed */
	char **names;		/* names-freed: the copies its records point to */
	size_t nnames;
	struct buffer *next;
};

/* The times of a GPU record, written into its buffer when the clock passes end. */
struct times {
	uint64_t start, end;
};

/* A GPU record in a buffer, waiting for its work to end. */
struct pending {
	struct buffer *buffer;
	size_t at;		/* the record's offset in the buffer */
	struct times times;
	uint64_t ready;		/* when the work ends */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Held while buffers are taken and delivered: a flush returns only once
 * what the worker took meanwhile was delivered too. */
static pthread_mutex_t delivery = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc buffer_requested;
static CUpti_BuffersCallbackCompleteFunc buffer_completed;
static CUpti_TimestampCallbackFunc timestamp_fn;
static CUpti_ActivityThreadIdType thread_id_type;
static bool kinds[KIND_LIMIT];
static struct buffer *open_buffers;		/* one per recording thread */
static struct buffer *closed_head, **closed_tail = &closed_head;
static struct pending *pending;
static size_t npending, pending_cap;
static size_t dropped_records;
static unsigned kernels_seen;
static pid_t activity_pid;			/* the process that enabled activity */
static bool worker_started;
static char **interned;
static size_t ninterned, interned_cap;

static pid_t my_pid;
static __thread pid_t my_tid;

static pid_t thread_tid(void)
{
	if (!my_tid)
		my_tid = gettid();
	return my_tid;
}

static void forget_ids(void)
{
	my_pid = 0;
	my_tid = 0;
}

static pid_t process_id(void)
{
	if (!my_pid)
		my_pid = getpid();
	return my_pid;
}

static void die(const char *what)
{
	fprintf(stderr, "fake cupti: %s\n", what);
	abort();
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CUPTI's clock: the client's, else CLOCK_REALTIME as the real one uses. */
static uint64_t now(void)
{
	CUpti_TimestampCallbackFunc fn = __atomic_load_n(&timestamp_fn, __ATOMIC_ACQUIRE);

	return fn ? fn() : clock_ns(CLOCK_REALTIME);
}

/* The kinds fail-kind may name. */
static CUpti_ActivityKind kind_named(const char *name)
{
	static const struct {
		const char *name;
		CUpti_ActivityKind kind;
	} known[] = {
		{ "CONCURRENT_KERNEL", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL },
		{ "MEMCPY", CUPTI_ACTIVITY_KIND_MEMCPY },
		{ "MEMCPY2", CUPTI_ACTIVITY_KIND_MEMCPY2 },
		{ "MEMSET", CUPTI_ACTIVITY_KIND_MEMSET },
		{ "RUNTIME", CUPTI_ACTIVITY_KIND_RUNTIME },
		{ "DRIVER", CUPTI_ACTIVITY_KIND_DRIVER },
		{ "SYNCHRONIZATION", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION },
		{ "OVERHEAD", CUPTI_ACTIVITY_KIND_OVERHEAD },
		{ "DEVICE", CUPTI_ACTIVITY_KIND_DEVICE },
		{ "CONTEXT", CUPTI_ACTIVITY_KIND_CONTEXT },
	};

	for (size_t i = 0; name && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(name, known[i].name))
			return known[i].kind;
	fprintf(stderr, "fake cupti: unknown activity kind '%s'\n", name ? name : "");
	return CUPTI_ACTIVITY_KIND_INVALID;
}

static unsigned fault_count(const char *value)
{
	return value ? (unsigned)strtoul(value, NULL, 10) : 1;
}

static void parse_faults(const char *env)
{
	char *copy, *item, *save = NULL;

	if (!env)
		return;
	copy = strdup(env);
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *value = strchr(item, '=');

		if (value)
			*value++ = '\0';
		if (!strcmp(item, "null-buffer"))
			faults.null_buffer = true;
		else if (!strcmp(item, "zero-timestamps"))
			faults.zero_timestamps = fault_count(value);
		else if (!strcmp(item, "dropped"))
			faults.dropped = fault_count(value);
		else if (!strcmp(item, "fatal"))
			faults.fatal = true;
		else if (!strcmp(item, "subscriber-conflict"))
			faults.subscriber_conflict = true;
		else if (!strcmp(item, "old-version"))
			faults.old_version = true;
		else if (!strcmp(item, "names-freed"))
			faults.names_freed = true;
		else if (!strcmp(item, "out-of-order"))
			faults.out_of_order = true;
		else if (!strcmp(item, "causality"))
			faults.causality = fault_count(value);
		else if (!strcmp(item, "fail-kind"))
			faults.fail_kind = kind_named(value);
		else if (!strcmp(item, "no-timestamp-callback"))
			faults.no_timestamp_callback = true;
		else
			fprintf(stderr, "fake cupti: unknown fault '%s'\n", item);
	}
	free(copy);
}

__attribute__((constructor)) static void at_load(void)
{
	pthread_atfork(NULL, NULL, forget_ids);
	parse_faults(getenv("FAKE_CUPTI_FAULTS"));
}

/* ---- the subscriber ---- */

static bool wants(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!sub.active || domain <= 0 || domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= CBID_LIMIT)
		return false;
	return sub.enabled[domain][cbid / 8] & (1u << (cbid % 8));
}

static void callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
	if (wants(domain, cbid))
		sub.fn(sub.userdata, domain, cbid, data);
}

static void enable_cbid(bool enable, CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (enable)
		sub.enabled[domain][cbid / 8] |= 1u << (cbid % 8);
	else
		sub.enabled[domain][cbid / 8] &= ~(1u << (cbid % 8));
}

/* ---- records ---- */

/* The size of a record of each kind the fake produces, as the real
 * library knows it from the kind. */
static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		return sizeof(CUpti_ActivityContext3);
	default:
		return 0;
	}
}

static CUpti_ActivityKind record_kind(const void *record)
{
	return ((const CUpti_Activity *)record)->kind;
}

static bool is_kernel(const void *record)
{
	CUpti_ActivityKind kind = record_kind(record);

	return kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

/* Where start and end sit in a GPU record; false for other kinds. */
static bool timestamp_offsets(const void *record, size_t *start, size_t *end)
{
	switch (record_kind(record)) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		*start = offsetof(CUpti_ActivityKernel10, start);
		*end = offsetof(CUpti_ActivityKernel10, end);
		return true;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		*start = offsetof(CUpti_ActivityMemcpy6, start);
		*end = offsetof(CUpti_ActivityMemcpy6, end);
		return true;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		*start = offsetof(CUpti_ActivityMemcpyPtoP4, start);
		*end = offsetof(CUpti_ActivityMemcpyPtoP4, end);
		return true;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		*start = offsetof(CUpti_ActivityMemset4, start);
		*end = offsetof(CUpti_ActivityMemset4, end);
		return true;
	default:
		return false;
	}
}

static uint64_t get_u64(const void *record, size_t offset)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)record + offset, sizeof(v));
	return v;
}

static void set_u64(void *record, size_t offset, uint64_t v)
{
	memcpy((uint8_t *)record + offset, &v, sizeof(v));
}

/* The offset of the name pointer of kernel and device records, or 0. */
static size_t name_offset(const void *record)
{
	if (is_kernel(record))
		return offsetof(CUpti_ActivityKernel10, name);
	if (record_kind(record) == CUPTI_ACTIVITY_KIND_DEVICE)
		return offsetof(CUpti_ActivityDevice5, name);
	return 0;
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = 14695981039346656037ull;	/* FNV-1a */

	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	return h;
}

/* CUPTI keeps names for the life of the process; so does the fake, in an
 * open-addressing table that doubles when half full. */
static const char *intern(const char *name)
{
	size_t mask, i;
	char *copy;

	if (!name)
		return NULL;
	pthread_mutex_lock(&lock);
	if (2 * (ninterned + 1) > interned_cap) {
		size_t cap = interned_cap ? 2 * interned_cap : 1024;
		char **table = calloc(cap, sizeof(*table));

		if (!table)
			die("out of memory");
		for (size_t k = 0; k < interned_cap; k++) {
			if (!interned[k])
				continue;
			for (i = name_hash(interned[k]) & (cap - 1); table[i]; i = (i + 1) & (cap - 1))
				;
			table[i] = interned[k];
		}
		free(interned);
		interned = table;
		interned_cap = cap;
	}
	mask = interned_cap - 1;
	for (i = name_hash(name) & mask; interned[i]; i = (i + 1) & mask) {
		if (!strcmp(interned[i], name)) {
			pthread_mutex_unlock(&lock);
			return interned[i];
		}
	}
	copy = strdup(name);
	if (!copy)
		die("out of memory");
	interned[i] = copy;
	ninterned++;
	pthread_mutex_unlock(&lock);
	return copy;
}

/* A new buffer from the client, asked for on the calling thread without
 * holding the lock (the client may take locks of its own). */
static struct buffer *new_buffer(void)
{
	struct buffer *b;
	uint8_t *data = NULL;
	size_t size = 0, max_records = 0;

	if (!buffer_requested)
		return NULL;
	buffer_requested(&data, &size, &max_records);
	if (!data || size < sizeof(CUpti_ActivityKernel10))
		return NULL;
	b = xmalloc(sizeof(*b));
	*b = (struct buffer){ .data = data, .size = size, .max_records = max_records };
	return b;
}

static void close_locked(struct buffer *b)
{
	struct buffer **p;

	for (p = &open_buffers; *p != b; p = &(*p)->next)
		;
	*p = b->next;
	b->owner = 0;
	b->next = NULL;
	*closed_tail = b;
	closed_tail = &b->next;
}

static bool fits(const struct buffer *b, size_t size)
{
	size_t at = (b->used + 7) & ~(size_t)7;

	return at + size <= b->size && (!b->max_records || b->records < b->max_records);
}

/* Where a GPU record's times sit; false for other kinds. */
static bool time_offsets(const void *record, size_t *start, size_t *end, size_t *completed)
{
	*completed = is_kernel(record) ? offsetof(CUpti_ActivityKernel10, completed) : 0;
	return timestamp_offsets(record, start, end);
}

static void write_times(void *record, const struct times *t)
{
	size_t start, end, completed;

	if (!time_offsets(record, &start, &end, &completed))
		return;
	set_u64(record, start, t->start);
	set_u64(record, end, t->end);
	if (completed)
		set_u64(record, completed, t->end);
}

static void add_pending_locked(struct buffer *b, size_t at, const struct times *t, uint64_t ready)
{
	if (npending == pending_cap) {
		pending_cap = pending_cap ? 2 * pending_cap : 256;
		pending = xrealloc(pending, pending_cap * sizeof(*pending));
	}
	pending[npending++] = (struct pending){ b, at, *t, ready };
	b->incomplete++;
}

/*
 * Copies a record into the calling thread's buffer, with its own copy of
 * name where the record has one. Drops and counts it without a buffer.
 * times: a GPU record, which waits there without times until ready.
 */
static void append(const void *record, size_t size, const char *name, const struct times *times,
		   uint64_t ready)
{
	static const struct times none;
	pid_t tid = thread_tid();
	struct buffer *b, *fresh;

	pthread_mutex_lock(&lock);
	for (;;) {
		for (b = open_buffers; b && b->owner != tid; b = b->next)
			;
		if (b && fits(b, size))
			break;
		if (b)
			close_locked(b);
		pthread_mutex_unlock(&lock);
		fresh = new_buffer();
		pthread_mutex_lock(&lock);
		if (!fresh) {
			dropped_records++;
			pthread_mutex_unlock(&lock);
			return;
		}
		fresh->owner = tid;
		fresh->next = open_buffers;
		open_buffers = fresh;
	}
	b->used = (b->used + 7) & ~(size_t)7;
	memcpy(b->data + b->used, record, size);
	if (name_offset(record)) {
		const char *stored = name;

		if (faults.names_freed && name) {
			char *copy = strdup(name);

			if (!copy)
				die("out of memory");
			b->names = xrealloc(b->names, (b->nnames + 1) * sizeof(*b->names));
			b->names[b->nnames++] = copy;
			stored = copy;
		}
		memcpy(b->data + b->used + name_offset(record), &stored, sizeof(stored));
	}
	if (times) {
		write_times(b->data + b->used, &none);
		add_pending_locked(b, b->used, times, ready);
	}
	b->used += size;
	b->records++;
	pthread_mutex_unlock(&lock);
}

/* out-of-order: the buffer's records newest first. All record sizes are
 * multiples of 8, so the reversed records fill the same bytes. */
static void reverse_records(struct buffer *b)
{
	uint8_t *copy = xmalloc(b->used);
	size_t at = 0, to = b->used;

	while (at < b->used) {
		size_t size = record_size(record_kind(b->data + at));

		to -= size;
		memcpy(copy + to, b->data + at, size);
		at += size;
	}
	memcpy(b->data, copy, b->used);
	free(copy);
}

/* Hands a buffer back to the client, then (names-freed) spoils the names
 * its records pointed to, as a module unload would. */
static void deliver(struct buffer *b)
{
	if (faults.out_of_order)
		reverse_records(b);
	buffer_completed(NULL, 0, b->data, b->size, b->used);
	for (size_t i = 0; i < b->nnames; i++) {
		memset(b->names[i], POISON, strlen(b->names[i]));
		free(b->names[i]);
	}
	free(b->names);
	free(b);
}

/* Takes the closed buffers whose records are all complete; the others wait. */
static struct buffer *take_complete_locked(void)
{
	struct buffer *list = NULL, **tail = &list, *b = closed_head;

	closed_head = NULL;
	closed_tail = &closed_head;
	while (b) {
		struct buffer *next = b->next;

		b->next = NULL;
		if (b->incomplete) {
			*closed_tail = b;
			closed_tail = &b->next;
		} else {
			*tail = b;
			tail = &b->next;
		}
		b = next;
	}
	return list;
}

static struct buffer *reversed(struct buffer *list)
{
	struct buffer *out = NULL;

	while (list) {
		struct buffer *next = list->next;

		list->next = out;
		out = list;
		list = next;
	}
	return out;
}

static void deliver_all(struct buffer *list)
{
	if (__atomic_exchange_n(&faults.null_buffer, false, __ATOMIC_RELAXED))
		buffer_completed(NULL, 0, NULL, 0, 0);
	if (faults.out_of_order)
		list = reversed(list);
	while (list) {
		struct buffer *next = list->next;

		deliver(list);
		list = next;
	}
}

/*
 * Writes the times of the records whose work has ended by t; forced, the
 * others count as complete too, with the zero times they hold.
 */
static void complete_locked(uint64_t t, bool forced)
{
	size_t kept = 0;

	for (size_t i = 0; i < npending; i++) {
		struct pending *p = &pending[i];

		if (p->ready <= t)
			write_times(p->buffer->data + p->at, &p->times);
		else if (!forced) {
			pending[kept++] = *p;
			continue;
		}
		p->buffer->incomplete--;
	}
	npending = kept;
}

/* Closes the buffers being filled; only complete ones unless forced. */
static void close_open_locked(bool forced)
{
	struct buffer *b = open_buffers, *next;

	for (; b; b = next) {
		next = b->next;
		if (forced || !b->incomplete)
			close_locked(b);
	}
}

static void *worker(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct timespec period = { 0, WORKER_PERIOD_MS * 1000000L };
		struct buffer *full;
		uint64_t t;

		nanosleep(&period, NULL);
		pthread_mutex_lock(&delivery);
		t = now();
		pthread_mutex_lock(&lock);
		complete_locked(t, false);
		full = take_complete_locked();
		pthread_mutex_unlock(&lock);
		deliver_all(full);
		pthread_mutex_unlock(&delivery);
	}
	return arg;
}

static void start_worker(void)
{
	pthread_t thread;

	if (worker_started)
		return;
	worker_started = true;
	if (pthread_create(&thread, NULL, worker, NULL) == 0)
		pthread_detach(thread);
}

/* ---- the hooks the driver calls ---- */

static bool collects(CUpti_ActivityKind kind)
{
	return kind >= 0 && kind < KIND_LIMIT && __atomic_load_n(&kinds[kind], __ATOMIC_RELAXED);
}

static uint32_t record_thread_id(void)
{
	if (thread_id_type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return (uint32_t)thread_tid();
	return (uint32_t)pthread_self();
}

static void api_record(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint64_t start,
		       uint64_t end, uint32_t correlation, uint32_t result)
{
	CUpti_ActivityAPI r = {
		.kind = kind,
		.cbid = cbid,
		.start = start,
		.end = end,
		.processId = (uint32_t)process_id(),
		.threadId = record_thread_id(),
		.correlationId = correlation,
		.returnValue = result,
	};

	if (collects(kind))
		append(&r, sizeof(r), NULL, NULL, 0);
}

static void record(const void *rec, size_t size, const char *name, uint64_t ready)
{
	struct times t;
	size_t start, end;

	if (!collects(record_kind(rec)))
		return;
	name = intern(name);
	if (!ready || !timestamp_offsets(rec, &start, &end)) {
		append(rec, size, name, NULL, 0);
		return;
	}
	t = (struct times){ get_u64(rec, start), get_u64(rec, end) };
	if (is_kernel(rec)) {
		unsigned seen = __atomic_fetch_add(&kernels_seen, 1, __ATOMIC_RELAXED);

		if (seen < faults.zero_timestamps)
			t = (struct times){ 0, 0 };
		else if (seen < faults.zero_timestamps + faults.causality)
			t.start -= CAUSALITY_SHIFT_NS;
	}
	append(rec, size, name, &t, ready);
}

static const struct fake_cupti_hooks hooks = {
	.now = now,
	.wants = wants,
	.callback = callback,
	.collects = collects,
	.api_record = api_record,
	.record = record,
};

/* Finds the driver in the process, as the real CUPTI does, and attaches. */
static void attach_driver(void)
{
	static bool attached;
	void *driver;
	void (*attach)(const struct fake_cupti_hooks *);

	if (attached)
		return;
	driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!driver)
		return;
	attach = (void (*)(const struct fake_cupti_hooks *))dlsym(driver, "fakecuda_attach_cupti");
	if (attach) {
		attach(&hooks);
		attached = true;
	}
	dlclose(driver);
}

/* ---- the CUPTI API ---- */

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
	const char *env = getenv("FAKE_CUPTI_VERSION");

	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (env)
		*version = (uint32_t)strtoul(env, NULL, 10);
	else
		*version = faults.old_version ? 120000 : CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
	static const struct {
		CUptiResult result;
		const char *name;
	} names[] = {
		{ CUPTI_SUCCESS, "CUPTI_SUCCESS" },
		{ CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER" },
		{ CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION" },
		{ CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED" },
		{ CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED" },
		{ CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND" },
		{ CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED" },
		{ CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
		  "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" },
		{ CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN" },
	};

	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].result == result) {
			*str = names[i].name;
			return CUPTI_SUCCESS;
		}
	}
	*str = "CUPTI_ERROR_UNKNOWN";
	return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetErrorMessage(CUptiResult result, const char **str)
{
	return cuptiGetResultString(result, str);
}

CUptiResult CUPTIAPI cuptiGetLastError(void)
{
	return CUPTI_SUCCESS;
}

/* Subscribes, as name (NULL: none), or says who holds the subscription. */
static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc fn,
			     void *userdata, const char *name, char *holder, size_t holder_size)
{
	if (!subscriber || !fn)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	if (faults.subscriber_conflict || sub.active) {
		if (holder && holder_size)
			snprintf(holder, holder_size, "%s",
				 sub.active ? sub.name : "Nsight Systems");
		pthread_mutex_unlock(&lock);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	memset(sub.enabled, 0, sizeof(sub.enabled));
	sub.fn = fn;
	sub.userdata = userdata;
	if (name)
		snprintf(sub.name, sizeof(sub.name), "CUPTI for %.*s", CUPTI_SUBSCRIBER_NAME_MAX_LEN,
			 name);
	else
		sub.name[0] = '\0';
	sub.active = true;
	pthread_mutex_unlock(&lock);
	attach_driver();
	*subscriber = (CUpti_SubscriberHandle)&sub;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc fn,
				    void *userdata)
{
	return subscribe(subscriber, fn, userdata, NULL, NULL, 0);
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc fn,
				       void *userdata, CUpti_SubscriberParams *params)
{
	if (!params)
		return subscribe(subscriber, fn, userdata, NULL, NULL, 0);
	if (params->structSize < CUpti_SubscriberParams_STRUCT_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	return subscribe(subscriber, fn, userdata, params->subscriberName,
			 params->oldSubscriberName, params->oldSubscriberSize);
}

static bool valid_subscriber(CUpti_SubscriberHandle subscriber)
{
	return sub.active && subscriber == (CUpti_SubscriberHandle)&sub;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	if (!valid_subscriber(subscriber))
		return CUPTI_ERROR_INVALID_PARAMETER;
	sub.active = false;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
					 CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!valid_subscriber(subscriber) || domain <= 0 || domain >= CUPTI_CB_DOMAIN_SIZE ||
	    cbid >= CBID_LIMIT)
		return CUPTI_ERROR_INVALID_PARAMETER;
	enable_cbid(enable, domain, cbid);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
				       CUpti_CallbackDomain domain)
{
	if (!valid_subscriber(subscriber) || domain <= 0 || domain >= CUPTI_CB_DOMAIN_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (CUpti_CallbackId cbid = 0; cbid < CBID_LIMIT; cbid++)
		enable_cbid(enable, domain, cbid);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
	for (int domain = 1; domain < CUPTI_CB_DOMAIN_SIZE; domain++) {
		CUptiResult status = cuptiEnableDomain(enable, subscriber, domain);

		if (status != CUPTI_SUCCESS)
			return status;
	}
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
					   CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!enable || !valid_subscriber(subscriber))
		return CUPTI_ERROR_INVALID_PARAMETER;
	*enable = wants(domain, cbid);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
					  const char **name)
{
	if (!name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		switch (cbid) {
#define FAKE_NAME(fn)                             \
		case CUPTI_DRIVER_TRACE_CBID_##fn: \
			*name = #fn;              \
			return CUPTI_SUCCESS;
			FAKE_DRIVER_FUNCTIONS(FAKE_NAME)
#undef FAKE_NAME
		}
	}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (kind <= 0 || kind >= KIND_LIMIT)
		return CUPTI_ERROR_INVALID_KIND;
	if (faults.fatal)
		return CUPTI_ERROR_UNKNOWN;
	if (kind == faults.fail_kind)
		return CUPTI_ERROR_NOT_SUPPORTED;
	attach_driver();
	if (!activity_pid)
		activity_pid = getpid();
	__atomic_store_n(&kinds[kind], true, __ATOMIC_RELAXED);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if (kind <= 0 || kind >= KIND_LIMIT)
		return CUPTI_ERROR_INVALID_KIND;
	__atomic_store_n(&kinds[kind], false, __ATOMIC_RELAXED);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
						    CUpti_BuffersCallbackCompleteFunc completed)
{
	if (!requested || !completed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	buffer_requested = requested;
	buffer_completed = completed;
	start_worker();
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	if (!fn)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (faults.no_timestamp_callback)
		return CUPTI_ERROR_NOT_SUPPORTED;
	__atomic_store_n(&timestamp_fn, fn, __ATOMIC_RELEASE);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT &&
	    type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return CUPTI_ERROR_INVALID_PARAMETER;
	thread_id_type = type;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
	if (!type)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*type = thread_id_type;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
						CUpti_Activity **record)
{
	size_t at, size;

	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (*record) {
		size = record_size((*record)->kind);
		at = ((size_t)((uint8_t *)*record - buffer) + size + 7) & ~(size_t)7;
	} else {
		at = 0;
	}
	if (at >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	size = record_size(((CUpti_Activity *)(buffer + at))->kind);
	if (!size || at + size > valid)
		return CUPTI_ERROR_INVALID_KIND;
	*record = (CUpti_Activity *)(buffer + at);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream,
						       size_t *dropped)
{
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	*dropped = dropped_records + faults.dropped;
	dropped_records = 0;
	faults.dropped = 0;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	bool forced = flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED;
	struct buffer *list;
	uint64_t t;

	if (!buffer_completed)
		return CUPTI_ERROR_INVALID_OPERATION;
	/* CUPTI's threads and locks do not survive fork: a child that flushes
	 * what it inherited would hang or deliver its parent's records. */
	if (activity_pid && getpid() != activity_pid)
		die("cuptiActivityFlushAll in a child forked after CUDA was initialized");
	pthread_mutex_lock(&delivery);
	t = now();
	pthread_mutex_lock(&lock);
	complete_locked(t, forced);
	close_open_locked(forced);
	list = take_complete_locked();
	pthread_mutex_unlock(&lock);
	deliver_all(list);
	pthread_mutex_unlock(&delivery);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext context, uint32_t stream, uint32_t flag)
{
	return cuptiActivityFlushAll(flag);
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t ms)
{
	/* The worker delivers full buffers on its own period either way. */
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*timestamp = now();
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t *id)
{
	if (!context || !id)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*id = context->id;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t *id)
{
	if (!context || !id)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*id = (uint32_t)context->device;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t *id)
{
	if (!id)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*id = stream ? stream->id : FAKE_NULL_STREAM_ID;
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t per_thread,
					uint32_t *id)
{
	return cuptiGetStreamId(context, stream, id);
}

CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableLaunchAttributes(uint8_t enable)
{
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t *size,
					       void *value)
{
	return CUPTI_ERROR_NOT_SUPPORTED;
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size,
					       void *value)
{
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiFinalize(void)
{
	sub.active = false;
	return CUPTI_SUCCESS;
}

/* ---- NVTX: the injection entry point and the functions it installs ---- */

/*
 * Domain and registered-string handles are opaque to the application: the
 * fake's are numbers. Push depths are kept per thread and domain, the
 * default domain (NULL) at 0, as NVTX returns them.
 */
#define NVTX_DOMAIN_LIMIT 64

static nvtxRangeId_t next_range_id = 1;
static uintptr_t next_domain = 1, next_string = 1;
static __thread int push_depth[NVTX_DOMAIN_LIMIT];

static void nvtx_callback(CUpti_nvtx_api_trace_cbid cbid, const char *fn, const void *params,
			  const void *result)
{
	CUpti_NvtxData data = {
		.functionName = fn,
		.functionParams = params,
		.functionReturnValue = result,
	};

	callback(CUPTI_CB_DOMAIN_NVTX, cbid, &data);
}

/* The push depth of domain on this thread, NULL past the fake's domains. */
static int *depth_of(nvtxDomainHandle_t domain)
{
	uintptr_t i = (uintptr_t)domain;

	return i < NVTX_DOMAIN_LIMIT ? &push_depth[i] : NULL;
}

static int pushed(nvtxDomainHandle_t domain)
{
	int *depth = depth_of(domain);

	return depth ? (*depth)++ : NVTX_NO_PUSH_POP_TRACKING;
}

static int popped(nvtxDomainHandle_t domain)
{
	int *depth = depth_of(domain);

	if (!depth)
		return NVTX_NO_PUSH_POP_TRACKING;
	return *depth ? --*depth : -1;
}

static nvtxRangeId_t new_range_id(void)
{
	return __atomic_fetch_add(&next_range_id, 1, __ATOMIC_RELAXED);
}

static int nvtx_push_a(const char *message)
{
	nvtxRangePushA_params params = { message };
	int level = pushed(NULL);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxRangePushA, "nvtxRangePushA", &params, &level);
	return level;
}

static int nvtx_push_w(const wchar_t *message)
{
	nvtxRangePushW_params params = { message };
	int level = pushed(NULL);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxRangePushW, "nvtxRangePushW", &params, &level);
	return level;
}

static int nvtx_push_ex(const nvtxEventAttributes_t *attributes)
{
	nvtxRangePushEx_params params = { attributes };
	int level = pushed(NULL);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxRangePushEx, "nvtxRangePushEx", &params, &level);
	return level;
}

static int nvtx_pop(void)
{
	nvtxRangePop_params params = { NULL };
	int level = popped(NULL);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxRangePop, "nvtxRangePop", &params, &level);
	return level;
}

static nvtxRangeId_t nvtx_start_a(const char *message)
{
	nvtxRangeStartA_params params = { message };
	nvtxRangeId_t id = new_range_id();

	nvtx_callback(CUPTI_CBID_NVTX_nvtxRangeStartA, "nvtxRangeStartA", &params, &id);
	return id;
}

static nvtxRangeId_t nvtx_start_w(const wchar_t *message)
{
	nvtxRangeStartW_params params = { message };
	nvtxRangeId_t id = new_range_id();

	nvtx_callback(CUPTI_CBID_NVTX_nvtxRangeStartW, "nvtxRangeStartW", &params, &id);
	return id;
}

static nvtxRangeId_t nvtx_start_ex(const nvtxEventAttributes_t *attributes)
{
	nvtxRangeStartEx_params params = { attributes };
	nvtxRangeId_t id = new_range_id();

	nvtx_callback(CUPTI_CBID_NVTX_nvtxRangeStartEx, "nvtxRangeStartEx", &params, &id);
	return id;
}

static void nvtx_end(nvtxRangeId_t id)
{
	nvtxRangeEnd_params params = { id };

	nvtx_callback(CUPTI_CBID_NVTX_nvtxRangeEnd, "nvtxRangeEnd", &params, NULL);
}

static void nvtx_mark_a(const char *message)
{
	nvtxMarkA_params params = { message };

	nvtx_callback(CUPTI_CBID_NVTX_nvtxMarkA, "nvtxMarkA", &params, NULL);
}

static void nvtx_mark_w(const wchar_t *message)
{
	nvtxMarkW_params params = { message };

	nvtx_callback(CUPTI_CBID_NVTX_nvtxMarkW, "nvtxMarkW", &params, NULL);
}

static nvtxDomainHandle_t nvtx_domain_create_a(const char *name)
{
	nvtxDomainCreateA_params params = { name };
	nvtxDomainHandle_t domain =
		(nvtxDomainHandle_t)__atomic_fetch_add(&next_domain, 1, __ATOMIC_RELAXED);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainCreateA, "nvtxDomainCreateA", &params, &domain);
	return domain;
}

static nvtxDomainHandle_t nvtx_domain_create_w(const wchar_t *name)
{
	/* generated_nvtx_meta.h has no struct for it: the A one's, wide. */
	struct { const wchar_t *name; } params = { name };
	nvtxDomainHandle_t domain =
		(nvtxDomainHandle_t)__atomic_fetch_add(&next_domain, 1, __ATOMIC_RELAXED);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainCreateW, "nvtxDomainCreateW", &params, &domain);
	return domain;
}

static void nvtx_domain_destroy(nvtxDomainHandle_t domain)
{
	nvtxDomainDestroy_params params = { domain };

	nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainDestroy, "nvtxDomainDestroy", &params, NULL);
}

static nvtxStringHandle_t nvtx_register_string_a(nvtxDomainHandle_t domain, const char *string)
{
	nvtxDomainRegisterStringA_params params = { domain, string };
	nvtxStringHandle_t handle =
		(nvtxStringHandle_t)__atomic_fetch_add(&next_string, 1, __ATOMIC_RELAXED);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRegisterStringA, "nvtxDomainRegisterStringA",
		      &params, &handle);
	return handle;
}

static nvtxStringHandle_t nvtx_register_string_w(nvtxDomainHandle_t domain,
						 const wchar_t *string)
{
	/* The header types the string as char; it carries the wide one. */
	nvtxDomainRegisterStringW_params params = { domain, (const char *)string };
	nvtxStringHandle_t handle =
		(nvtxStringHandle_t)__atomic_fetch_add(&next_string, 1, __ATOMIC_RELAXED);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRegisterStringW, "nvtxDomainRegisterStringW",
		      &params, &handle);
	return handle;
}

static int nvtx_domain_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *attributes)
{
	nvtxDomainRangePushEx_params params = { domain, { attributes } };
	int level = pushed(domain);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, "nvtxDomainRangePushEx", &params,
		      &level);
	return level;
}

static int nvtx_domain_pop(nvtxDomainHandle_t domain)
{
	nvtxDomainRangePop_params params = { domain };
	int level = popped(domain);

	nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRangePop, "nvtxDomainRangePop", &params, &level);
	return level;
}

static nvtxRangeId_t nvtx_domain_start_ex(nvtxDomainHandle_t domain,
					  const nvtxEventAttributes_t *attributes)
{
	nvtxDomainRangeStartEx_params params = { domain, { attributes } };
	nvtxRangeId_t id = new_range_id();

	nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, "nvtxDomainRangeStartEx", &params,
		      &id);
	return id;
}

static void nvtx_domain_end(nvtxDomainHandle_t domain, nvtxRangeId_t id)
{
	nvtxDomainRangeEnd_params params = { domain, { id } };

	nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, "nvtxDomainRangeEnd", &params, NULL);
}

/* Installs fn in slot id of a module's table of function-pointer slots. */
static void install(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
	if (id < size && table[id])
		*table[id] = fn;
}

/* The module's table of function-pointer slots, as the loader hands it. */
static bool module_table(const NvtxExportTableCallbacks *callbacks, NvtxCallbackModule module,
			 NvtxFunctionTable *table, unsigned *size)
{
	*table = NULL;
	*size = 0;
	return callbacks->GetModuleFunctionTable(module, table, size) && *table;
}

int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	const NvtxExportTableCallbacks *callbacks;
	NvtxFunctionTable table;
	unsigned size;

	callbacks = get_export_table(NVTX_ETID_CALLBACKS);
	if (!callbacks || !callbacks->GetModuleFunctionTable ||
	    !module_table(callbacks, NVTX_CB_MODULE_CORE, &table, &size))
		return 0;
	install(table, size, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)nvtx_push_a);
	install(table, size, NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)nvtx_push_w);
	install(table, size, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)nvtx_push_ex);
	install(table, size, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)nvtx_pop);
	install(table, size, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)nvtx_start_a);
	install(table, size, NVTX_CBID_CORE_RangeStartW, (NvtxFunctionPointer)nvtx_start_w);
	install(table, size, NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)nvtx_start_ex);
	install(table, size, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)nvtx_end);
	install(table, size, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)nvtx_mark_a);
	install(table, size, NVTX_CBID_CORE_MarkW, (NvtxFunctionPointer)nvtx_mark_w);
	if (!module_table(callbacks, NVTX_CB_MODULE_CORE2, &table, &size))
		return 1;
	install(table, size, NVTX_CBID_CORE2_DomainCreateA,
		(NvtxFunctionPointer)nvtx_domain_create_a);
	install(table, size, NVTX_CBID_CORE2_DomainCreateW,
		(NvtxFunctionPointer)nvtx_domain_create_w);
	install(table, size, NVTX_CBID_CORE2_DomainDestroy,
		(NvtxFunctionPointer)nvtx_domain_destroy);
	install(table, size, NVTX_CBID_CORE2_DomainRegisterStringA,
		(NvtxFunctionPointer)nvtx_register_string_a);
	install(table, size, NVTX_CBID_CORE2_DomainRegisterStringW,
		(NvtxFunctionPointer)nvtx_register_string_w);
	install(table, size, NVTX_CBID_CORE2_DomainRangePushEx,
		(NvtxFunctionPointer)nvtx_domain_push_ex);
	install(table, size, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)nvtx_domain_pop);
	install(table, size, NVTX_CBID_CORE2_DomainRangeStartEx,
		(NvtxFunctionPointer)nvtx_domain_start_ex);
	install(table, size, NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)nvtx_domain_end);
	return 1;
}
