/* SPDX-License-Identifier: MIT */
/*
 * A test double of CUPTI, built as libcupti.so.13: the subscriber and
 * callback API, activity buffers with the real record layouts, the
 * timestamp callback, the NVTX injection entry point, and the PC sampling
 * API (below). The fake driver (fake-cuda.c) produces the events through
 * the hooks of fake.h.
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
 *   completion-order     each buffer's records are delivered in the order
 *                        their work ended (records without times first),
 *                        not in the order it was queued: the records of
 *                        streams interleaved as a busy GPU ends their work
 *   jitter=NS            the GPU's clock as CUPTI converts it: every start
 *                        and end of a GPU record moves by its own amount in
 *                        [-NS, NS], drawn from a fixed sequence
 *                        (xorshift64*, seed $FAKE_CUPTI_SEED, default 1),
 *                        one start and end after the other in the order the
 *                        work is queued
 *   offset=NS            every start and end of a GPU record moves by NS
 *                        (signed): the GPU clock off CUPTI's own
 *   half-finished        a forced flush writes the start of work that has
 *                        started but not ended, leaving its end 0 (as a
 *                        real one does); without it, start stays 0 too
 *   causality[=N]        the first N (1) kernels start 10 ms before their
 *                        launch call
 *   fail-kind=KIND       cuptiActivityEnable fails (CUPTI_ERROR_NOT_SUPPORTED)
 *                        for that kind only, its name less CUPTI_ACTIVITY_KIND_
 *                        (MEMSET, CONCURRENT_KERNEL...)
 *   no-timestamp-callback  cuptiActivityRegisterTimestampCallback fails
 *                        (CUPTI_ERROR_NOT_SUPPORTED, as on WSL2): records
 *                        keep CUPTI's clock, CLOCK_REALTIME
 *   pc-refused           cuptiPCSamplingEnable fails (CUPTI_ERROR_NOT_SUPPORTED)
 *   pc-privileges        cuptiPCSamplingEnable fails
 *                        (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, as without
 *                        access to the GPU's performance counters)
 *   pc-buffer-full[=N]   once N (1) PC records have been made, the hardware
 *                        buffer is full: the samples of the PCs that come
 *                        until the context's next cuptiPCSamplingGetData are
 *                        dropped, and that call fails with
 *                        CUPTI_ERROR_OUT_OF_MEMORY, hardwareBufferFull = 1,
 *                        no records, and the dropped samples in
 *                        droppedSamples (and totalSamples); once per process
 *   pc-short[=N]         cuptiPCSamplingGetData hands at most N records a
 *                        call (default: half of collectNumPcs, at least 1),
 *                        fewer than asked for while more remain
 *   pc-dropped[=N]       the hardware drops N (1) samples of every kernel run
 *                        it samples: in droppedSamples, with no full buffer
 *   pc-names-shared      every record of a function, of every call, shares
 *                        one malloc'd functionName, as the header allows
 *                        ("might be shared across all the records ... should
 *                        not be modified or freed until post processing of
 *                        all the records is done"): the caller frees each
 *                        pointer once, at the end; one freed earlier aborts
 *                        when it is handed again; without it every record
 *                        has its own copy
 * FAKE_CUPTI_VERSION=N makes cuptiGetVersion say N. FAKE_CUPTI_LOG, a file,
 * gets a line for each timed GPU record as delivered: its kind (KERNEL,
 * MEMCPY, MEMCPY2, MEMSET), name (a kernel's; "-" else), correlation id,
 * start and end, for tests to hold the recording against.
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
	bool no_timestamp_callback, completion_order, half_finished;
	uint64_t jitter;
	int64_t offset;
	unsigned zero_timestamps, causality;
	size_t dropped;
	CUpti_ActivityKind fail_kind;
	bool pc_refused, pc_privileges, pc_names_shared, pc_short_on;
	unsigned pc_buffer_full, pc_short, pc_dropped;
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
		else if (!strcmp(item, "completion-order"))
			faults.completion_order = true;
		else if (!strcmp(item, "jitter"))
			faults.jitter = fault_count(value);
		else if (!strcmp(item, "offset"))
			faults.offset = value ? strtoll(value, NULL, 10) : 0;
		else if (!strcmp(item, "half-finished"))
			faults.half_finished = true;
		else if (!strcmp(item, "causality"))
			faults.causality = fault_count(value);
		else if (!strcmp(item, "fail-kind"))
			faults.fail_kind = kind_named(value);
		else if (!strcmp(item, "no-timestamp-callback"))
			faults.no_timestamp_callback = true;
		else if (!strcmp(item, "pc-refused"))
			faults.pc_refused = true;
		else if (!strcmp(item, "pc-privileges"))
			faults.pc_privileges = true;
		else if (!strcmp(item, "pc-buffer-full"))
			faults.pc_buffer_full = fault_count(value);
		else if (!strcmp(item, "pc-short")) {
			faults.pc_short_on = true;
			faults.pc_short = value ? fault_count(value) : 0;
		} else if (!strcmp(item, "pc-dropped"))
			faults.pc_dropped = fault_count(value);
		else if (!strcmp(item, "pc-names-shared"))
			faults.pc_names_shared = true;
		else
			fprintf(stderr, "fake cupti: unknown fault '%s'\n", item);
	}
	free(copy);
}

static void parse_pc_hot(const char *env);

__attribute__((constructor)) static void at_load(void)
{
	pthread_atfork(NULL, NULL, forget_ids);
	parse_faults(getenv("FAKE_CUPTI_FAULTS"));
	parse_pc_hot(getenv("FAKE_CUPTI_PC_HOT"));
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

/* The end of a record's work, as its buffer holds it; 0 for other kinds. */
static uint64_t record_end(const void *record)
{
	size_t start, end;

	return timestamp_offsets(record, &start, &end) ? get_u64(record, end) : 0;
}

/* completion-order: the buffer's records by the end of their work, stably. */
static void order_by_end(struct buffer *b)
{
	struct by_end {
		size_t at, size;
		uint64_t end;
	} *recs = xmalloc(b->records * sizeof(*recs));
	uint8_t *copy = xmalloc(b->used);
	size_t n = 0, to = 0;

	for (size_t at = 0; at < b->used; n++) {
		recs[n].at = at;
		recs[n].size = record_size(record_kind(b->data + at));
		recs[n].end = record_end(b->data + at);
		at += recs[n].size;
	}
	/* Insertion sort: stable, and a buffer's records are few. */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k && recs[k - 1].end > recs[k].end; k--) {
			struct by_end t = recs[k];

			recs[k] = recs[k - 1];
			recs[k - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		memcpy(copy + to, b->data + recs[i].at, recs[i].size);
		to += recs[i].size;
	}
	memcpy(b->data, copy, b->used);
	free(recs);
	free(copy);
}

/* FAKE_CUPTI_LOG: the timed GPU records of the buffer, as delivered. */
static void log_records(const struct buffer *b)
{
	static const struct {
		CUpti_ActivityKind kind;
		const char *name;
		size_t correlation;
	} logged[] = {
		{ CUPTI_ACTIVITY_KIND_KERNEL, "KERNEL", offsetof(CUpti_ActivityKernel10, correlationId) },
		{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "KERNEL",
		  offsetof(CUpti_ActivityKernel10, correlationId) },
		{ CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", offsetof(CUpti_ActivityMemcpy6, correlationId) },
		{ CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2",
		  offsetof(CUpti_ActivityMemcpyPtoP4, correlationId) },
		{ CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", offsetof(CUpti_ActivityMemset4, correlationId) },
	};
	const char *path = getenv("FAKE_CUPTI_LOG");
	FILE *f;

	if (!path || !*path || !(f = fopen(path, "a")))
		return;
	for (size_t at = 0; at < b->used; at += record_size(record_kind(b->data + at))) {
		const uint8_t *r = b->data + at;
		size_t start, end, name = name_offset(r);
		const char *text = NULL;

		if (!timestamp_offsets(r, &start, &end))
			continue;
		for (size_t k = 0; k < sizeof(logged) / sizeof(logged[0]); k++) {
			if (logged[k].kind != record_kind(r))
				continue;
			if (name)
				memcpy(&text, r + name, sizeof(text));
			fprintf(f, "%s %s %u %llu %llu\n", logged[k].name, text ? text : "-",
				(unsigned)get_u64(r, logged[k].correlation) & 0xffffffffu,
				(unsigned long long)get_u64(r, start),
				(unsigned long long)get_u64(r, end));
		}
	}
	fclose(f);
}

/* Hands a buffer back to the client, then (names-freed) spoils the names
 * its records pointed to, as a module unload would. */
static void deliver(struct buffer *b)
{
	if (faults.out_of_order)
		reverse_records(b);
	if (faults.completion_order)
		order_by_end(b);
	log_records(b);
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
 * others count as complete too, with the zero times they hold (but for
 * half-finished: the start of those started).
 */
static void complete_locked(uint64_t t, bool forced)
{
	size_t kept = 0;

	for (size_t i = 0; i < npending; i++) {
		struct pending *p = &pending[i];

		if (p->ready <= t) {
			write_times(p->buffer->data + p->at, &p->times);
		} else if (!forced) {
			pending[kept++] = *p;
			continue;
		} else if (faults.half_finished && p->times.start <= t) {
			write_times(p->buffer->data + p->at, &(struct times){ p->times.start, 0 });
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

/* jitter and offset: a GPU record's times as a GPU clock that is off would make them. */
static struct times clock_error(struct times t)
{
	static uint64_t state;
	uint64_t draw[2] = { 0, 0 };

	if (!faults.jitter && !faults.offset)
		return t;
	pthread_mutex_lock(&lock);
	if (!state) {
		const char *seed = getenv("FAKE_CUPTI_SEED");

		state = seed && strtoull(seed, NULL, 10) ? strtoull(seed, NULL, 10) : 1;
	}
	for (int i = 0; i < 2; i++) {
		state ^= state >> 12;
		state ^= state << 25;
		state ^= state >> 27;
		draw[i] = state * 0x2545f4914f6cdd1dull;
	}
	pthread_mutex_unlock(&lock);
	if (faults.jitter) {
		t.start += draw[0] % (2 * faults.jitter + 1) - faults.jitter;
		t.end += draw[1] % (2 * faults.jitter + 1) - faults.jitter;
	}
	t.start += (uint64_t)faults.offset;
	t.end += (uint64_t)faults.offset;
	return t;
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
	t = clock_error((struct times){ get_u64(rec, start), get_u64(rec, end) });
	if (is_kernel(rec)) {
		unsigned seen = __atomic_fetch_add(&kernels_seen, 1, __ATOMIC_RELAXED);

		if (seen < faults.zero_timestamps)
			t = (struct times){ 0, 0 };
		else if (seen < faults.zero_timestamps + faults.causality)
			t.start -= CAUSALITY_SHIFT_NS;
	}
	append(rec, size, name, &t, ready);
}

static uint64_t pc_cubin_crc(const void *cubin, size_t size);
static bool pc_serializes(CUcontext ctx);
static void pc_sm_work(const struct fake_sm_work *work);
static void pc_context_destroyed(CUcontext ctx);

static const struct fake_cupti_hooks hooks = {
	.now = now,
	.wants = wants,
	.callback = callback,
	.collects = collects,
	.api_record = api_record,
	.record = record,
	.cubin_crc = pc_cubin_crc,
	.serializes = pc_serializes,
	.sm_work = pc_sm_work,
	.context_destroyed = pc_context_destroyed,
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
		{ CUPTI_ERROR_OUT_OF_MEMORY, "CUPTI_ERROR_OUT_OF_MEMORY" },
		{ CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" },
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

/* ---- PC sampling (cupti_pcsampling.h) ---- */

/*
 * Per context, as in CUPTI: cuptiPCSamplingEnable first (every other call
 * on a context that is not enabled fails with CUPTI_ERROR_INVALID_OPERATION),
 * then the stall reasons and the configuration. Every params struct must
 * have its size field exactly at its *ParamsSize, and a context, as the real
 * library checks before anything else (CUPTI_ERROR_INVALID_PARAMETER).
 *
 * The SMs sample what runs, not what was launched: sampling is on in
 * windows of CUPTI's clock, from cuptiPCSamplingEnable to Disable when
 * start/stop control is off (the default), else from each
 * cuptiPCSamplingStart to its Stop, each window a range (rangeId, from 0
 * for the first window of the context). Each kernel run gets
 * floor(overlap_ns * FAKE_SM_CLOCK_MHZ * FAKE_SM_COUNT / 1000 / 2^period)
 * samples (fake.h) for its overlap with each window: all of it for a run
 * inside one. A run's samples are there once it has ended or its window
 * closed, whichever comes first: never earlier, since GetData does not
 * synchronize; after a Stop, everything of the range is there. They are
 * spread over the function's instructions, every FAKE_SASS_INSTRUCTION_BYTES
 * of its .text.<name> (FAKE_DUMMY_TEXT_BYTES for dummy modules), by weights
 * of 1 to 8 from a hash of the function and offset; FAKE_CUPTI_PC_HOT steers
 * them:
 *     FAKE_CUPTI_PC_HOT=pc_hot:0x1a0+0x1b0,pc_cold:0x40
 * gives FAKE_PC_HOT_PERCENT (80) percent of a run's samples of pc_hot to
 * 0x1a0 and 0x1b0, evenly, the rest spread as usual over all of its
 * instructions (offsets past its code or not multiples of 16 are ignored).
 * At each PC the samples have a stall-reason mix from a hash of function
 * and offset: half one reason, a quarter a second, 15% "selected", the rest
 * a third; every reason but "selected" also counts its "_not_issued"
 * variant, the samples of it whose warp did not issue (15/16 of them): the
 * "_not_issued" counts are part of the others', not more samples.
 *
 * Kernel-serialized mode: kernels of the context run one at a time (the
 * driver asks), and every (kernel run, PC) is a record with the launch's
 * correlation id, the kernel record's. Continuous: correlationId 0, and a
 * PC's samples add up in one record until GetData hands it. Records carry
 * cubinCrc (of the module, as cuptiGetCubinCrc computes it, or the
 * registered callback; 0 for dummy modules), pcOffset, functionIndex (the symbol's index in the
 * cubin's .symtab; dummy modules number their functions from 1),
 * functionName (malloc'd: the caller frees it; see pc-names-shared) and the
 * selected stall reasons with samples (PCs with none are not records; their
 * samples count in totalSamples only). Memsets run as kernels of the
 * driver's own: nonUsrKernelsTotalSamples.
 *
 * cuptiPCSamplingGetData fills at most collectNumPcs records (pc-short:
 * fewer), of one range, oldest first: totalNumPcs is the number filled,
 * remainingNumPcs what is left, of every range; totalSamples the samples of
 * the records filled plus those never to be records (unselected PCs,
 * non-user kernels, dropped) since the last call, droppedSamples and
 * nonUsrKernelsTotalSamples those since the last call. Disable copies what
 * is left into the SAMPLING_DATA_BUFFER, as many as it holds, and discards
 * the rest; destroying a context discards what is left. Configuration
 * sizes (scratch, hardware buffer) are checked, not modelled: only
 * pc-buffer-full fills the hardware buffer.
 *
 * FAKE_CUPTI_PC_LOG=FILE ("-": stderr): at exit, the process that used the
 * API writes what the SMs sampled and where it went, lines of words:
 *   samples produced P collected C dropped D filtered F uncollected U discarded X
 *   nonuser N
 *   records produced R collected C
 *   runs K
 *   function NAME produced P collected C dropped D filtered F uncollected U discarded X
 *   pc NAME 0xOFFSET produced P collected C
 *   reason NAME produced P collected C
 * produced: samples of user kernel runs in windows (P = C + D + F + U + X);
 * collected: handed to the client in records, by GetData or Disable;
 * dropped: pc-dropped and pc-buffer-full; filtered: at PCs without a
 * selected stall reason; uncollected: in records still held at exit;
 * discarded: left when the context was disabled or destroyed. For pc and
 * reason lines, produced counts what reached records (after drops); a
 * reason's counts are its own ("_not_issued" ones are part of the others').
 *
 * cuptiGetCubinCrc and cuptiGetSassToSourceCorrelation are the toolkit's:
 * the fake forwards them to the real libcupti.so.13 (FAKE_CUPTI_REAL, else
 * the one of the toolkit the fakes were built with), which computes both
 * without a GPU. When it does not load (FAKE_CUPTI_REAL=none), the CRC is
 * the fake's own, a CRC-32 of the bytes (not the real value), and source
 * correlation fails with CUPTI_ERROR_NOT_SUPPORTED.
 */

/* The stall reasons of the fake device, with indexes that leave gaps, as a
 * real device's do (the values are the fake's). Each "_not_issued" one
 * follows its reason. */
#define STALL(name, index, not_issued_index)                              \
	{ index, "smsp__pcsamp_warps_issue_stalled_" name },              \
	{ not_issued_index, "smsp__pcsamp_warps_issue_stalled_" name "_not_issued" }

static const struct {
	uint32_t index;
	const char *name;
} stall_reasons[] = {
	STALL("barrier", 2, 3),
	STALL("branch_resolving", 4, 5),
	STALL("dispatch_stall", 7, 8),
	STALL("drain", 9, 10),
	STALL("imc_miss", 12, 13),
	STALL("lg_throttle", 14, 15),
	STALL("long_scoreboard", 17, 18),
	STALL("math_pipe_throttle", 19, 20),
	STALL("membar", 22, 23),
	STALL("mio_throttle", 24, 25),
	STALL("misc", 27, 28),
	STALL("no_instructions", 29, 30),
	STALL("not_selected", 32, 33),
	STALL("selected", 34, 35),
	STALL("short_scoreboard", 37, 38),
	STALL("sleeping", 39, 40),
	STALL("tex_throttle", 42, 43),
	STALL("wait", 44, 45),
};
#undef STALL

#define NREASONS (sizeof(stall_reasons) / sizeof(stall_reasons[0]))
#define NBASE (NREASONS / 2)
#define SELECTED 13			/* the reason a warp has when it issued */
/* What CUPTI picks from the number of SMs; the fake's choice. */
#define PC_DEFAULT_PERIOD 12
#define PC_DEFAULT_SCRATCH (1u << 20)
#define PC_DEFAULT_HARDWARE (512u << 20)
#define PC_DEFAULT_SLEEP_MS 100
#define PC_OPEN UINT64_MAX		/* the stop of a window still open */
/* The oldest CUpti_PCSamplingData the fake takes: up to nonUsrKernelsTotalSamples. */
#define PC_DATA_MIN_SIZE CUPTI_PCSAMPLING_STRUCT_SIZE(CUpti_PCSamplingData, nonUsrKernelsTotalSamples)

struct pc_window {
	uint64_t start, stop;
	uint64_t range;
};

/* Work the SMs ran, waiting for its windows to be over. */
struct pc_run {
	struct fake_sm_work work;	/* function interned */
	size_t window;			/* the first window it may still overlap */
};

struct pc_record {
	uint64_t range, crc, pc;
	uint64_t total;			/* its samples, of every reason */
	const char *function;		/* interned */
	uint32_t function_index, correlation;
	uint64_t counts[NREASONS];	/* of the selected reasons */
};

struct pc_context {
	CUcontext ctx;
	struct pc_context *next;
	uint32_t period, sleep_span;
	CUpti_PCSamplingCollectionMode mode;
	bool start_stop, started;
	size_t scratch, hardware;
	CUpti_PCSamplingData *buffer;	/* SAMPLING_DATA_BUFFER */
	bool selected[NREASONS];
	size_t nselected;
	struct pc_window *windows;
	size_t nwindows, windows_cap;
	uint64_t next_range;
	struct pc_run *runs;
	size_t nruns, runs_cap;
	/* The records held, oldest first: records[head..nrecords); sequence
	 * numbers count from first_seq at records[0]. */
	struct pc_record *records;
	size_t head, nrecords, records_cap;
	uint64_t first_seq;
	/* Continuous mode: sequence number + 1 of the held record of a key. */
	uint64_t *slots;
	size_t nslots, used_slots;
	/* Samples in no record, for the next GetData. */
	uint64_t other, dropped, nonuser;
	/* pc-buffer-full: full, and what it dropped. */
	bool full;
	uint64_t full_dropped;
};

/* Where the samples of a function, or of one of its PCs, went. */
struct pc_tally {
	const char *function;
	uint64_t pc;			/* PC_OPEN: the function's */
	char *name;			/* pc-names-shared, PC_OPEN: the functionName handed */
	uint64_t produced, collected, dropped, filtered, uncollected, discarded;
};

struct pc_hot {
	char *function;
	uint64_t *offsets;
	size_t n;
};

static pthread_mutex_t pc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pc_context *pc_contexts;
static unsigned pc_enabled;		/* contexts in pc_contexts: launches skip the lock at 0 */
static pid_t pc_pid;			/* the process that used the API */
static uint64_t pc_records_made;
static int pc_full_state;		/* pc-buffer-full: 0 before, 1 full, 2 reported */
static struct pc_hot *pc_hots;
static size_t npc_hots;
static CUpti_ComputeCrcCallbackFunc crc_callback;
static struct {
	uint64_t produced, collected, dropped, filtered, uncollected, discarded, nonuser;
	uint64_t records_made, records_out, runs;
	uint64_t reason_produced[NREASONS], reason_collected[NREASONS];
	struct pc_tally *tallies;
	size_t ntallies, tallies_cap;
	size_t *index;			/* position + 1 in tallies */
	size_t index_cap;
} pc_log;

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

static void parse_pc_hot(const char *env)
{
	char *copy, *item, *save = NULL;

	if (!env)
		return;
	copy = strdup(env);
	if (!copy)
		die("out of memory");
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *offsets = strchr(item, ':'), *one, *save2 = NULL;
		struct pc_hot *h;

		if (!offsets || offsets == item) {
			fprintf(stderr, "fake cupti: FAKE_CUPTI_PC_HOT: '%s' is not FUNCTION:OFFSET+...\n",
				item);
			continue;
		}
		*offsets++ = '\0';
		pc_hots = xrealloc(pc_hots, (npc_hots + 1) * sizeof(*pc_hots));
		h = &pc_hots[npc_hots++];
		*h = (struct pc_hot){ .function = strdup(item) };
		for (one = strtok_r(offsets, "+", &save2); one; one = strtok_r(NULL, "+", &save2)) {
			h->offsets = xrealloc(h->offsets, (h->n + 1) * sizeof(*h->offsets));
			h->offsets[h->n++] = strtoull(one, NULL, 0);
		}
	}
	free(copy);
}

/* ---- what the log tells ---- */

static size_t tally_hash(const char *function, uint64_t pc)
{
	return (size_t)mix((uint64_t)(uintptr_t)function * 31 + pc);
}

/* Under pc_lock: the tally of a function (pc PC_OPEN) or of one of its PCs. */
static struct pc_tally *tally(const char *function, uint64_t pc)
{
	size_t mask, i;

	if (2 * (pc_log.ntallies + 1) > pc_log.index_cap) {
		size_t cap = pc_log.index_cap ? 2 * pc_log.index_cap : 256;

		free(pc_log.index);
		pc_log.index = calloc(cap, sizeof(*pc_log.index));
		if (!pc_log.index)
			die("out of memory");
		pc_log.index_cap = cap;
		for (size_t k = 0; k < pc_log.ntallies; k++) {
			const struct pc_tally *t = &pc_log.tallies[k];

			for (i = tally_hash(t->function, t->pc) & (cap - 1); pc_log.index[i];
			     i = (i + 1) & (cap - 1))
				;
			pc_log.index[i] = k + 1;
		}
	}
	mask = pc_log.index_cap - 1;
	for (i = tally_hash(function, pc) & mask; pc_log.index[i]; i = (i + 1) & mask) {
		struct pc_tally *t = &pc_log.tallies[pc_log.index[i] - 1];

		if (t->function == function && t->pc == pc)
			return t;
	}
	if (pc_log.ntallies == pc_log.tallies_cap) {
		pc_log.tallies_cap = pc_log.tallies_cap ? 2 * pc_log.tallies_cap : 256;
		pc_log.tallies = xrealloc(pc_log.tallies,
					  pc_log.tallies_cap * sizeof(*pc_log.tallies));
	}
	pc_log.tallies[pc_log.ntallies] = (struct pc_tally){ .function = function, .pc = pc };
	pc_log.index[i] = ++pc_log.ntallies;
	return &pc_log.tallies[pc_log.ntallies - 1];
}

static void write_pc_log(FILE *f)
{
	fprintf(f, "# fake cupti PC sampling, pid %d: the samples the SMs took, and where "
		   "they went\n", (int)getpid());
	fprintf(f, "samples produced %llu collected %llu dropped %llu filtered %llu "
		   "uncollected %llu discarded %llu\n",
		(unsigned long long)pc_log.produced, (unsigned long long)pc_log.collected,
		(unsigned long long)pc_log.dropped, (unsigned long long)pc_log.filtered,
		(unsigned long long)pc_log.uncollected, (unsigned long long)pc_log.discarded);
	fprintf(f, "nonuser %llu\n", (unsigned long long)pc_log.nonuser);
	fprintf(f, "records produced %llu collected %llu\n",
		(unsigned long long)pc_log.records_made, (unsigned long long)pc_log.records_out);
	fprintf(f, "runs %llu\n", (unsigned long long)pc_log.runs);
	for (size_t i = 0; i < pc_log.ntallies; i++) {
		const struct pc_tally *t = &pc_log.tallies[i];

		if (t->pc != PC_OPEN)
			continue;
		fprintf(f, "function %s produced %llu collected %llu dropped %llu filtered %llu "
			   "uncollected %llu discarded %llu\n", t->function,
			(unsigned long long)t->produced, (unsigned long long)t->collected,
			(unsigned long long)t->dropped, (unsigned long long)t->filtered,
			(unsigned long long)t->uncollected, (unsigned long long)t->discarded);
	}
	for (size_t i = 0; i < pc_log.ntallies; i++) {
		const struct pc_tally *t = &pc_log.tallies[i];

		if (t->pc != PC_OPEN)
			fprintf(f, "pc %s 0x%llx produced %llu collected %llu\n", t->function,
				(unsigned long long)t->pc, (unsigned long long)t->produced,
				(unsigned long long)t->collected);
	}
	for (size_t k = 0; k < NREASONS; k++)
		fprintf(f, "reason %s produced %llu collected %llu\n", stall_reasons[k].name,
			(unsigned long long)pc_log.reason_produced[k],
			(unsigned long long)pc_log.reason_collected[k]);
}

/* ---- the records held ---- */

static size_t held(const struct pc_context *pc)
{
	return pc->nrecords - pc->head;
}

static uint64_t record_hash(uint64_t range, uint64_t crc, const char *function, uint32_t index,
			    uint64_t offset)
{
	return mix(mix(mix(range * 0x9e3779b97f4a7c15ull ^ crc) ^ (uintptr_t)function) ^
		   ((uint64_t)index << 32 | (offset & 0xffffffffu)));
}

static uint64_t slot_hash(const struct pc_record *r)
{
	return record_hash(r->range, r->crc, r->function, r->function_index, r->pc);
}

/* The held record of sequence number seq, NULL once handed. */
static struct pc_record *held_record(struct pc_context *pc, uint64_t seq)
{
	if (seq < pc->first_seq + pc->head || seq >= pc->first_seq + pc->nrecords)
		return NULL;
	return &pc->records[seq - pc->first_seq];
}

/* Rebuilds the table of held records by key, for at least one more. */
static void rehash(struct pc_context *pc)
{
	size_t cap = 64;

	while (cap < 4 * (held(pc) + 1))
		cap *= 2;
	free(pc->slots);
	pc->slots = calloc(cap, sizeof(*pc->slots));
	if (!pc->slots)
		die("out of memory");
	pc->nslots = cap;
	pc->used_slots = 0;
	for (size_t k = pc->head; k < pc->nrecords; k++) {
		size_t i = (size_t)slot_hash(&pc->records[k]) & (cap - 1);

		while (pc->slots[i])
			i = (i + 1) & (cap - 1);
		pc->slots[i] = pc->first_seq + k + 1;
		pc->used_slots++;
	}
}

/* Room for one more record: the handed ones go first. */
static void make_room(struct pc_context *pc)
{
	if (pc->head && pc->nrecords == pc->records_cap) {
		memmove(pc->records, pc->records + pc->head, held(pc) * sizeof(*pc->records));
		pc->first_seq += pc->head;
		pc->nrecords -= pc->head;
		pc->head = 0;
	}
	if (pc->nrecords == pc->records_cap) {
		pc->records_cap = pc->records_cap ? 2 * pc->records_cap : 256;
		pc->records = xrealloc(pc->records, pc->records_cap * sizeof(*pc->records));
	}
}

/*
 * The record samples at a PC add to: in continuous mode, the held one of
 * the same range, cubin, function and PC; else a new one.
 */
static struct pc_record *record_for(struct pc_context *pc, uint64_t range,
				    const struct fake_sm_work *w, uint64_t offset, bool *made)
{
	bool continuous = pc->mode == CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
	struct pc_record *r;
	size_t i = 0;

	*made = false;
	if (continuous) {
		if (2 * (pc->used_slots + 1) > pc->nslots)
			rehash(pc);
		for (i = (size_t)record_hash(range, w->cubin_crc, w->function, w->function_index,
					     offset) & (pc->nslots - 1);
		     pc->slots[i]; i = (i + 1) & (pc->nslots - 1)) {
			r = held_record(pc, pc->slots[i] - 1);
			if (r && r->range == range && r->crc == w->cubin_crc &&
			    r->function == w->function && r->function_index == w->function_index &&
			    r->pc == offset)
				return r;
		}
	}
	make_room(pc);
	r = &pc->records[pc->nrecords++];
	*r = (struct pc_record){
		.range = range,
		.crc = w->cubin_crc,
		.pc = offset,
		.function = w->function,
		.function_index = w->function_index,
		.correlation = continuous ? 0 : w->correlation,
	};
	if (continuous) {
		pc->slots[i] = pc->first_seq + pc->nrecords;	/* its sequence number + 1 */
		pc->used_slots++;
	}
	*made = true;
	return r;
}

/* ---- the samples of a run ---- */

static uint64_t samples_in(uint64_t from, uint64_t to, uint32_t period)
{
	if (to <= from)
		return 0;
	return (to - from) * FAKE_SM_CLOCK_MHZ * FAKE_SM_COUNT / 1000 >> period;
}

/* The mix of stall reasons of n samples at a PC, by table position. */
static void stall_mix(const char *function, uint64_t offset, uint64_t n, uint64_t *counts)
{
	uint64_t h = mix(name_hash(function) ^ offset);
	size_t pick[3];
	uint64_t share[3];

	for (size_t k = 0; k < 3; k++) {
		size_t b;
		bool again;

		/* Distinct reasons other than "selected". */
		do {
			h = mix(h + k + 1);
			b = (size_t)(h % (NBASE - 1));
			b += b >= SELECTED;
			again = false;
			for (size_t j = 0; j < k; j++)
				again |= pick[j] == b;
		} while (again);
		pick[k] = b;
	}
	share[0] = n / 2;
	share[1] = n / 4;
	counts[2 * SELECTED] += n * 15 / 100;
	share[2] = n - share[0] - share[1] - n * 15 / 100;
	for (size_t k = 0; k < 3; k++) {
		counts[2 * pick[k]] += share[k];
		counts[2 * pick[k] + 1] += share[k] - share[k] / 16;
	}
}

static const struct pc_hot *hot_of(const char *function)
{
	for (size_t i = 0; i < npc_hots; i++)
		if (!strcmp(pc_hots[i].function, function))
			return &pc_hots[i];
	return NULL;
}

/* Spreads n samples over the ninst instructions of function: out[i]. */
static void spread(const char *function, size_t ninst, uint64_t n, uint64_t *out)
{
	const struct pc_hot *hot = hot_of(function);
	uint64_t weights = 0, given = 0, rest, hot_total = 0;
	size_t nhot = 0;

	for (size_t j = 0; hot && j < hot->n; j++)
		nhot += hot->offsets[j] % FAKE_SASS_INSTRUCTION_BYTES == 0 &&
			hot->offsets[j] / FAKE_SASS_INSTRUCTION_BYTES < ninst;
	if (nhot) {
		size_t k = 0;

		hot_total = n * FAKE_PC_HOT_PERCENT / 100;
		for (size_t j = 0; j < hot->n; j++) {
			uint64_t at = hot->offsets[j] / FAKE_SASS_INSTRUCTION_BYTES;

			if (hot->offsets[j] % FAKE_SASS_INSTRUCTION_BYTES || at >= ninst)
				continue;
			out[at] += hot_total / nhot + (k++ < hot_total % nhot);
		}
	}
	rest = n - hot_total;
	for (size_t i = 0; i < ninst; i++)
		weights += 1 + mix(name_hash(function) + i) % 8;
	for (size_t i = 0; i < ninst; i++) {
		uint64_t share = rest * (1 + mix(name_hash(function) + i) % 8) / weights;

		out[i] += share;
		given += share;
	}
	for (size_t i = 0; given < rest; i = (i + 1) % ninst, given++)
		out[i]++;
}

/* Under pc_lock: n samples of a user kernel run at a PC, into its records. */
static void add_samples(struct pc_context *pc, uint64_t range, const struct fake_sm_work *w,
			uint64_t offset, uint64_t n)
{
	uint64_t counts[NREASONS] = { 0 };
	struct pc_tally *fn = tally(w->function, PC_OPEN);
	struct pc_record *r;
	bool any = false, made;

	stall_mix(w->function, offset, n, counts);
	if (!pc->full && pc_full_state == 0 && faults.pc_buffer_full &&
	    pc_records_made >= faults.pc_buffer_full) {
		pc->full = true;
		pc_full_state = 1;
	}
	if (pc->full) {
		pc->full_dropped += n;
		pc_log.dropped += n;
		fn->dropped += n;
		return;
	}
	tally(w->function, offset)->produced += n;
	for (size_t k = 0; k < NREASONS; k++) {
		pc_log.reason_produced[k] += counts[k];
		if (!pc->selected[k])
			counts[k] = 0;
		any |= counts[k] != 0;
	}
	if (!any) {
		/* CUPTI makes no record of a PC whose selected reasons have no samples. */
		pc->other += n;
		pc_log.filtered += n;
		fn->filtered += n;
		return;
	}
	r = record_for(pc, range, w, offset, &made);
	if (made) {
		pc_records_made++;
		pc_log.records_made++;
	}
	r->total += n;
	for (size_t k = 0; k < NREASONS; k++)
		r->counts[k] += counts[k];
}

/* Under pc_lock: the samples of a run's overlap with a window. */
static void produce(struct pc_context *pc, const struct fake_sm_work *w, uint64_t range,
		    uint64_t n)
{
	size_t ninst = w->text_bytes / FAKE_SASS_INSTRUCTION_BYTES;
	struct pc_tally *fn;
	uint64_t drop, *at;

	if (!n)
		return;
	if (!w->user) {
		pc->nonuser += n;
		pc->other += n;
		pc_log.nonuser += n;
		return;
	}
	fn = tally(w->function, PC_OPEN);
	pc_log.runs++;
	pc_log.produced += n;
	fn->produced += n;
	drop = n < faults.pc_dropped ? n : faults.pc_dropped;
	pc->dropped += drop;
	pc_log.dropped += drop;
	fn->dropped += drop;
	n -= drop;
	if (!ninst)
		ninst = 1;
	at = calloc(ninst, sizeof(*at));
	if (!at)
		die("out of memory");
	spread(w->function, ninst, n, at);
	for (size_t i = 0; i < ninst; i++)
		if (at[i])
			add_samples(pc, range, w, i * FAKE_SASS_INSTRUCTION_BYTES, at[i]);
	free(at);
}

/*
 * Under pc_lock: the samples of the runs whose overlap with a window is
 * over by t. A run waits while it may still run in a window: until it has
 * ended, and the window it is in has closed or it ended in it.
 */
static void settle(struct pc_context *pc, uint64_t t)
{
	size_t kept = 0;

	for (size_t i = 0; i < pc->nruns; i++) {
		struct pc_run *r = &pc->runs[i];
		bool done = false;

		for (;;) {
			const struct pc_window *w;
			uint64_t from, to;

			if (r->window == pc->nwindows) {
				/* A window opened later cannot catch what ended by now. */
				done = r->work.end <= t;
				break;
			}
			w = &pc->windows[r->window];
			if (w->start >= r->work.end) {
				done = true;
				break;
			}
			from = r->work.start > w->start ? r->work.start : w->start;
			to = r->work.end < w->stop ? r->work.end : w->stop;
			if (to > t)
				break;
			produce(pc, &r->work, w->range, samples_in(from, to, pc->period));
			r->window++;
			if (w->stop >= r->work.end) {
				done = true;
				break;
			}
		}
		if (!done)
			pc->runs[kept++] = *r;
	}
	pc->nruns = kept;
}

static void open_window(struct pc_context *pc, uint64_t t)
{
	if (pc->nwindows == pc->windows_cap) {
		pc->windows_cap = pc->windows_cap ? 2 * pc->windows_cap : 16;
		pc->windows = xrealloc(pc->windows, pc->windows_cap * sizeof(*pc->windows));
	}
	pc->windows[pc->nwindows++] = (struct pc_window){ t, PC_OPEN, pc->next_range++ };
}

static void close_window(struct pc_context *pc, uint64_t t)
{
	if (pc->nwindows && pc->windows[pc->nwindows - 1].stop == PC_OPEN)
		pc->windows[pc->nwindows - 1].stop = t;
}

/* The range of the latest window, as rangeId says when nothing is handed. */
static uint64_t current_range(const struct pc_context *pc)
{
	return pc->nwindows ? pc->windows[pc->nwindows - 1].range : 0;
}

/* ---- the API ---- */

static struct pc_context *pc_find(CUcontext ctx)
{
	struct pc_context *pc;

	for (pc = pc_contexts; pc && pc->ctx != ctx; pc = pc->next)
		;
	return pc;
}

/* Under pc_lock: the enabled context of a call, NULL when it is not. */
static struct pc_context *pc_begin(CUcontext ctx)
{
	if (!pc_pid)
		pc_pid = getpid();
	return pc_find(ctx);
}

static bool data_valid(const CUpti_PCSamplingData *d)
{
	return d && d->size >= PC_DATA_MIN_SIZE && d->collectNumPcs && d->pPcData;
}

/* Under pc_lock: the functionName of a record: its own copy, or
 * (pc-names-shared) the one copy of the function. */
static char *record_name(const char *function)
{
	struct pc_tally *t = faults.pc_names_shared ? tally(function, PC_OPEN) : NULL;
	char *copy;

	if (t && t->name) {
		/* Freed, its bytes are the allocator's: they no longer read as the name. */
		if (strcmp(t->name, function))
			die("a functionName was freed before all the records were processed");
		return t->name;
	}
	copy = strdup(function);
	if (!copy)
		die("out of memory");
	if (t)
		t->name = copy;
	return copy;
}

/*
 * Under pc_lock: fills d with up to limit held records, of the oldest
 * range only unless all_ranges, and the header; hands the samples in no
 * record since the last time. pc-buffer-full: the full buffer instead.
 */
static CUptiResult fill(struct pc_context *pc, CUpti_PCSamplingData *d, size_t limit,
			bool all_ranges)
{
	bool has_full = d->size > offsetof(CUpti_PCSamplingData, hardwareBufferFull);
	uint64_t range = held(pc) ? pc->records[pc->head].range : current_range(pc);
	uint64_t samples = 0;
	size_t n = 0;

	if (pc->full) {
		d->totalNumPcs = 0;
		d->remainingNumPcs = held(pc);
		d->totalSamples = pc->full_dropped;
		d->droppedSamples = pc->full_dropped;
		d->nonUsrKernelsTotalSamples = 0;
		d->rangeId = range;
		if (has_full)
			d->hardwareBufferFull = 1;
		pc->full = false;
		pc->full_dropped = 0;
		pc_full_state = 2;
		return CUPTI_ERROR_OUT_OF_MEMORY;
	}
	if (limit > held(pc))
		limit = held(pc);
	/* The caller's stall reason arrays, before anything is taken. */
	for (size_t i = 0; i < limit; i++)
		if (!d->pPcData[i].stallReason)
			return CUPTI_ERROR_INVALID_PARAMETER;
	while (n < limit && (all_ranges || pc->records[pc->head].range == range)) {
		struct pc_record *r = &pc->records[pc->head++];
		CUpti_PCSamplingPCData *out = &d->pPcData[n++];
		size_t k = 0;

		out->cubinCrc = r->crc;
		out->pcOffset = r->pc;
		out->functionIndex = r->function_index;
		out->functionName = record_name(r->function);
		out->correlationId = r->correlation;
		for (size_t j = 0; j < NREASONS && k < pc->nselected; j++) {
			if (!r->counts[j])
				continue;
			out->stallReason[k].pcSamplingStallReasonIndex = stall_reasons[j].index;
			out->stallReason[k++].samples =
				r->counts[j] > UINT32_MAX ? UINT32_MAX : (uint32_t)r->counts[j];
			pc_log.reason_collected[j] += r->counts[j];
		}
		out->stallReasonCount = k;
		samples += r->total;
		pc_log.collected += r->total;
		pc_log.records_out++;
		tally(r->function, PC_OPEN)->collected += r->total;
		tally(r->function, r->pc)->collected += r->total;
	}
	d->totalNumPcs = n;
	d->remainingNumPcs = held(pc);
	d->totalSamples = samples + pc->other + pc->dropped;
	d->droppedSamples = pc->dropped;
	d->nonUsrKernelsTotalSamples = pc->nonuser;
	d->rangeId = range;
	if (has_full)
		d->hardwareBufferFull = 0;
	pc->other = pc->dropped = pc->nonuser = 0;
	return CUPTI_SUCCESS;
}

/* Under pc_lock: the records left, counted as uncollected (at the exit) or discarded. */
static void count_left(struct pc_context *pc, bool discarded)
{
	for (size_t k = pc->head; k < pc->nrecords; k++) {
		const struct pc_record *r = &pc->records[k];
		struct pc_tally *t = tally(r->function, PC_OPEN);

		if (discarded) {
			pc_log.discarded += r->total;
			t->discarded += r->total;
		} else {
			pc_log.uncollected += r->total;
			t->uncollected += r->total;
		}
	}
	pc->head = pc->nrecords;
}

/* Under pc_lock: sampling ends on the context; what is left goes to its
 * buffer (into_buffer, as Disable does), else is discarded. */
static void teardown(struct pc_context *pc, bool into_buffer)
{
	struct pc_context **p;

	close_window(pc, now());
	settle(pc, now());
	if (pc->full) {
		pc->full = false;
		pc_full_state = 2;
	}
	if (into_buffer && pc->buffer) {
		fill(pc, pc->buffer, pc->buffer->collectNumPcs, true);
		pc->buffer->remainingNumPcs = 0;
	}
	count_left(pc, true);
	for (p = &pc_contexts; *p != pc; p = &(*p)->next)
		;
	*p = pc->next;
	__atomic_sub_fetch(&pc_enabled, 1, __ATOMIC_RELAXED);
	free(pc->windows);
	free(pc->runs);
	free(pc->records);
	free(pc->slots);
	free(pc);
}

/* Checks one attribute to set: a CUptiResult for its attributeStatus. */
static CUptiResult check_attribute(const CUpti_PCSamplingConfigurationInfo *a)
{
	switch (a->attributeType) {
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD:
		return a->attributeData.samplingPeriodData.samplingPeriod >= 5 &&
		       a->attributeData.samplingPeriodData.samplingPeriod <= 31 ?
			       CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON: {
		size_t n = a->attributeData.stallReasonData.stallReasonCount;
		const uint32_t *ids = a->attributeData.stallReasonData.pStallReasonIndex;

		if (!n || n > NREASONS || !ids)
			return CUPTI_ERROR_INVALID_PARAMETER;
		for (size_t i = 0; i < n; i++) {
			bool known = false;

			for (size_t k = 0; k < NREASONS; k++)
				known |= stall_reasons[k].index == ids[i];
			if (!known)
				return CUPTI_ERROR_INVALID_PARAMETER;
		}
		return CUPTI_SUCCESS;
	}
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE:
		return a->attributeData.scratchBufferSizeData.scratchBufferSize ?
			       CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE:
		return a->attributeData.hardwareBufferSizeData.hardwareBufferSize ?
			       CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE:
		return a->attributeData.collectionModeData.collectionMode ==
				       CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS ||
			       a->attributeData.collectionModeData.collectionMode ==
				       CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED ?
			       CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL:
		return a->attributeData.enableStartStopControlData.enableStartStopControl <= 1 ?
			       CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT:
		return a->attributeData.outputDataFormatData.outputDataFormat ==
				       CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED ?
			       CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER:
		return data_valid(a->attributeData.samplingDataBufferData.samplingDataBuffer) ?
			       CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN:
		return a->attributeData.workerThreadPeriodicSleepSpanData
				       .workerThreadPeriodicSleepSpan ?
			       CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
	default:
		return CUPTI_ERROR_INVALID_OPERATION;
	}
}

/* Under pc_lock: sets one checked attribute. */
static void set_attribute(struct pc_context *pc, const CUpti_PCSamplingConfigurationInfo *a)
{
	const __typeof__(a->attributeData) *v = &a->attributeData;

	switch (a->attributeType) {
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD:
		pc->period = v->samplingPeriodData.samplingPeriod;
		break;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON:
		memset(pc->selected, 0, sizeof(pc->selected));
		pc->nselected = 0;
		for (size_t i = 0; i < v->stallReasonData.stallReasonCount; i++) {
			for (size_t k = 0; k < NREASONS; k++) {
				if (stall_reasons[k].index != v->stallReasonData.pStallReasonIndex[i] ||
				    pc->selected[k])
					continue;
				pc->selected[k] = true;
				pc->nselected++;
			}
		}
		break;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE:
		pc->scratch = v->scratchBufferSizeData.scratchBufferSize;
		break;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE:
		pc->hardware = v->hardwareBufferSizeData.hardwareBufferSize;
		break;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE:
		pc->mode = v->collectionModeData.collectionMode;
		break;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL: {
		bool on = v->enableStartStopControlData.enableStartStopControl;

		/* With control, sampling waits for Start; without, it is on. */
		if (on && !pc->start_stop)
			close_window(pc, now());
		else if (!on && pc->start_stop)
			open_window(pc, now());
		pc->start_stop = on;
		break;
	}
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER:
		pc->buffer = v->samplingDataBufferData.samplingDataBuffer;
		break;
	case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN:
		pc->sleep_span = v->workerThreadPeriodicSleepSpanData.workerThreadPeriodicSleepSpan;
		break;
	default:
		break;
	}
}

CUptiResult CUPTIAPI cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *p)
{
	struct pc_context *pc;

	if (!p || p->size != CUpti_PCSamplingEnableParamsSize || !p->ctx)
		return CUPTI_ERROR_INVALID_PARAMETER;
	attach_driver();
	pthread_mutex_lock(&pc_lock);
	if (pc_begin(p->ctx)) {
		pthread_mutex_unlock(&pc_lock);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	if (faults.pc_refused || faults.pc_privileges) {
		pthread_mutex_unlock(&pc_lock);
		return faults.pc_refused ? CUPTI_ERROR_NOT_SUPPORTED :
					   CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	}
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		die("out of memory");
	*pc = (struct pc_context){
		.ctx = p->ctx,
		.next = pc_contexts,
		.period = PC_DEFAULT_PERIOD,
		.sleep_span = PC_DEFAULT_SLEEP_MS,
		.mode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS,
		.scratch = PC_DEFAULT_SCRATCH,
		.hardware = PC_DEFAULT_HARDWARE,
		.nselected = NREASONS,
	};
	for (size_t k = 0; k < NREASONS; k++)
		pc->selected[k] = true;
	open_window(pc, now());
	pc_contexts = pc;
	__atomic_add_fetch(&pc_enabled, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&pc_lock);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *p)
{
	struct pc_context *pc;

	if (!p || p->size != CUpti_PCSamplingDisableParamsSize || !p->ctx)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&pc_lock);
	pc = pc_begin(p->ctx);
	if (pc)
		teardown(pc, true);
	pthread_mutex_unlock(&pc_lock);
	return pc ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_OPERATION;
}

CUptiResult CUPTIAPI cuptiPCSamplingGetNumStallReasons(CUpti_PCSamplingGetNumStallReasonsParams *p)
{
	struct pc_context *pc;

	if (!p || p->size != CUpti_PCSamplingGetNumStallReasonsParamsSize || !p->ctx ||
	    !p->numStallReasons)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&pc_lock);
	pc = pc_begin(p->ctx);
	pthread_mutex_unlock(&pc_lock);
	if (!pc)
		return CUPTI_ERROR_INVALID_OPERATION;
	*p->numStallReasons = NREASONS;
	return CUPTI_SUCCESS;
}

/* Fills the first numStallReasons of the table, each name into the
 * caller's CUPTI_STALL_REASON_STRING_SIZE bytes. */
CUptiResult CUPTIAPI cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams *p)
{
	struct pc_context *pc;
	size_t n;

	if (!p || p->size != CUpti_PCSamplingGetStallReasonsParamsSize || !p->ctx ||
	    !p->numStallReasons || !p->stallReasonIndex || !p->stallReasons)
		return CUPTI_ERROR_INVALID_PARAMETER;
	n = p->numStallReasons < NREASONS ? p->numStallReasons : NREASONS;
	for (size_t i = 0; i < n; i++)
		if (!p->stallReasons[i])
			return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&pc_lock);
	pc = pc_begin(p->ctx);
	pthread_mutex_unlock(&pc_lock);
	if (!pc)
		return CUPTI_ERROR_INVALID_OPERATION;
	for (size_t i = 0; i < n; i++) {
		p->stallReasonIndex[i] = stall_reasons[i].index;
		snprintf(p->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE, "%s",
			 stall_reasons[i].name);
	}
	return CUPTI_SUCCESS;
}

/*
 * Checks a configuration call's parameters and, with pc_lock taken, finds
 * its context: NULL with *result set when either is wrong (the lock free).
 */
static struct pc_context *config_begin(CUpti_PCSamplingConfigurationInfoParams *p,
				       CUptiResult *result)
{
	struct pc_context *pc;

	if (!p || p->size != CUpti_PCSamplingConfigurationInfoParamsSize || !p->ctx ||
	    (p->numAttributes && !p->pPCSamplingConfigurationInfo)) {
		*result = CUPTI_ERROR_INVALID_PARAMETER;
		return NULL;
	}
	pthread_mutex_lock(&pc_lock);
	pc = pc_begin(p->ctx);
	if (!pc) {
		pthread_mutex_unlock(&pc_lock);
		*result = CUPTI_ERROR_INVALID_OPERATION;
	}
	return pc;
}

/*
 * Sets every attribute, or none: each gets its attributeStatus, and the
 * call the first failure. A value out of range (a period outside 5..31)
 * is CUPTI_ERROR_INVALID_PARAMETER, an unknown attribute
 * CUPTI_ERROR_INVALID_OPERATION, as the function's documentation has them
 * (the struct's swaps the two); nothing changes between Start and Stop.
 */
CUptiResult CUPTIAPI cuptiPCSamplingSetConfigurationAttribute(
	CUpti_PCSamplingConfigurationInfoParams *p)
{
	CUptiResult result = CUPTI_SUCCESS;
	struct pc_context *pc = config_begin(p, &result);

	if (!pc)
		return result;
	for (size_t i = 0; i < p->numAttributes; i++) {
		CUpti_PCSamplingConfigurationInfo *a = &p->pPCSamplingConfigurationInfo[i];

		a->attributeStatus = pc->started ? CUPTI_ERROR_INVALID_OPERATION :
						   check_attribute(a);
		if (result == CUPTI_SUCCESS)
			result = a->attributeStatus;
	}
	for (size_t i = 0; result == CUPTI_SUCCESS && i < p->numAttributes; i++)
		set_attribute(pc, &p->pPCSamplingConfigurationInfo[i]);
	pthread_mutex_unlock(&pc_lock);
	return result;
}

/* Reads the [rw] attributes; the [w] ones (stall reasons, output format,
 * data buffer) and unknown ones are CUPTI_ERROR_INVALID_PARAMETER. */
CUptiResult CUPTIAPI cuptiPCSamplingGetConfigurationAttribute(
	CUpti_PCSamplingConfigurationInfoParams *p)
{
	CUptiResult result = CUPTI_SUCCESS;
	struct pc_context *pc = config_begin(p, &result);

	if (!pc)
		return result;
	for (size_t i = 0; i < p->numAttributes; i++) {
		CUpti_PCSamplingConfigurationInfo *a = &p->pPCSamplingConfigurationInfo[i];

		a->attributeStatus = CUPTI_SUCCESS;
		switch (a->attributeType) {
		case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD:
			a->attributeData.samplingPeriodData.samplingPeriod = pc->period;
			break;
		case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE:
			a->attributeData.scratchBufferSizeData.scratchBufferSize = pc->scratch;
			break;
		case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE:
			a->attributeData.hardwareBufferSizeData.hardwareBufferSize = pc->hardware;
			break;
		case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE:
			a->attributeData.collectionModeData.collectionMode = pc->mode;
			break;
		case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL:
			a->attributeData.enableStartStopControlData.enableStartStopControl =
				pc->start_stop;
			break;
		case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN:
			a->attributeData.workerThreadPeriodicSleepSpanData
				.workerThreadPeriodicSleepSpan = pc->sleep_span;
			break;
		default:
			a->attributeStatus = CUPTI_ERROR_INVALID_PARAMETER;
			break;
		}
		if (result == CUPTI_SUCCESS)
			result = a->attributeStatus;
	}
	pthread_mutex_unlock(&pc_lock);
	return result;
}

/* Opens a window: only with start/stop control on, not twice, and with a
 * data buffer configured (else CUPTI_ERROR_INVALID_OPERATION). */
CUptiResult CUPTIAPI cuptiPCSamplingStart(CUpti_PCSamplingStartParams *p)
{
	CUptiResult result = CUPTI_ERROR_INVALID_OPERATION;
	struct pc_context *pc;

	if (!p || p->size != CUpti_PCSamplingStartParamsSize || !p->ctx)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&pc_lock);
	pc = pc_begin(p->ctx);
	if (pc && pc->start_stop && !pc->started && pc->buffer) {
		open_window(pc, now());
		pc->started = true;
		result = CUPTI_SUCCESS;
	}
	pthread_mutex_unlock(&pc_lock);
	return result;
}

/* Closes the window: what ran in it can be had at once. */
CUptiResult CUPTIAPI cuptiPCSamplingStop(CUpti_PCSamplingStopParams *p)
{
	CUptiResult result = CUPTI_ERROR_INVALID_OPERATION;
	struct pc_context *pc;

	if (!p || p->size != CUpti_PCSamplingStopParamsSize || !p->ctx)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&pc_lock);
	pc = pc_begin(p->ctx);
	if (pc && pc->started) {
		uint64_t t = now();

		close_window(pc, t);
		settle(pc, t);
		pc->started = false;
		result = CUPTI_SUCCESS;
	}
	pthread_mutex_unlock(&pc_lock);
	return result;
}

CUptiResult CUPTIAPI cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *p)
{
	CUpti_PCSamplingData *d;
	struct pc_context *pc;
	CUptiResult result;
	size_t limit;

	if (!p || p->size != CUpti_PCSamplingGetDataParamsSize || !p->ctx || !p->pcSamplingData)
		return CUPTI_ERROR_INVALID_PARAMETER;
	d = p->pcSamplingData;
	pthread_mutex_lock(&pc_lock);
	pc = pc_begin(p->ctx);
	if (!pc) {
		pthread_mutex_unlock(&pc_lock);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	if (!data_valid(d)) {
		pthread_mutex_unlock(&pc_lock);
		return CUPTI_ERROR_INVALID_PARAMETER;
	}
	settle(pc, now());
	limit = d->collectNumPcs;
	if (faults.pc_short_on) {
		size_t most = faults.pc_short ? faults.pc_short : (limit + 1) / 2;

		limit = most < limit ? most : limit;
	}
	result = fill(pc, d, limit, false);
	pthread_mutex_unlock(&pc_lock);
	return result;
}

/* ---- the hooks of PC sampling ---- */

static bool pc_serializes(CUcontext ctx)
{
	struct pc_context *pc;
	bool serial;

	if (!__atomic_load_n(&pc_enabled, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&pc_lock);
	pc = pc_find(ctx);
	serial = pc && pc->mode == CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
	pthread_mutex_unlock(&pc_lock);
	return serial;
}

static void pc_sm_work(const struct fake_sm_work *work)
{
	struct pc_context *pc;
	struct pc_run *r;

	if (!__atomic_load_n(&pc_enabled, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&pc_lock);
	pc = pc_find(work->ctx);
	if (!pc) {
		pthread_mutex_unlock(&pc_lock);
		return;
	}
	if (pc->nruns == pc->runs_cap) {
		pc->runs_cap = pc->runs_cap ? 2 * pc->runs_cap : 64;
		pc->runs = xrealloc(pc->runs, pc->runs_cap * sizeof(*pc->runs));
	}
	r = &pc->runs[pc->nruns++];
	*r = (struct pc_run){ .work = *work, .window = 0 };
	r->work.function = work->function ? intern(work->function) : NULL;
	/* Windows that closed before it started cannot catch it. */
	while (r->window < pc->nwindows && pc->windows[r->window].stop <= work->start)
		r->window++;
	settle(pc, now());
	pthread_mutex_unlock(&pc_lock);
}

static void pc_context_destroyed(CUcontext ctx)
{
	struct pc_context *pc;

	pthread_mutex_lock(&pc_lock);
	pc = pc_find(ctx);
	if (pc)
		teardown(pc, false);
	pthread_mutex_unlock(&pc_lock);
}

/* At the exit of the process that used the API: the log. */
__attribute__((destructor)) static void pc_at_exit(void)
{
	const char *path = getenv("FAKE_CUPTI_PC_LOG");
	FILE *f;

	if (!path || !*path || !pc_pid || pc_pid != getpid())
		return;
	pthread_mutex_lock(&pc_lock);
	for (struct pc_context *pc = pc_contexts; pc; pc = pc->next) {
		close_window(pc, now());
		settle(pc, now());
		count_left(pc, false);
	}
	f = strcmp(path, "-") ? fopen(path, "w") : stderr;
	if (f) {
		write_pc_log(f);
		if (f != stderr)
			fclose(f);
	} else {
		fprintf(stderr, "fake cupti: %s: %s\n", path, strerror(errno));
	}
	pthread_mutex_unlock(&pc_lock);
}

/* ---- cubin CRCs and source lines: the toolkit's CUPTI's ---- */

static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static CUptiResult (*real_crc)(CUpti_GetCubinCrcParams *);
static CUptiResult (*real_sass)(CUpti_GetSassToSourceCorrelationParams *);

/* Loads the real library next to the fake, its symbols its own (it is
 * linked -Bsymbolic): it computes both without a driver. */
static void load_real(void)
{
	const char *path = getenv("FAKE_CUPTI_REAL");
	void *lib;

#ifdef FAKE_CUPTI_REAL_PATH
	if (!path)
		path = FAKE_CUPTI_REAL_PATH;
#endif
	if (!path || !*path || !strcmp(path, "none"))
		return;
	lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (!lib)
		return;
	real_crc = (CUptiResult (*)(CUpti_GetCubinCrcParams *))dlsym(lib, "cuptiGetCubinCrc");
	real_sass = (CUptiResult (*)(CUpti_GetSassToSourceCorrelationParams *))dlsym(
		lib, "cuptiGetSassToSourceCorrelation");
}

/* The fake's own, without the real library: CRC-32 (zlib's), widened. */
static uint64_t crc32_of(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

/* As the real one: the size must be exactly CUpti_GetCubinCrcParamsSize. */
CUptiResult CUPTIAPI cuptiGetCubinCrc(CUpti_GetCubinCrcParams *p)
{
	if (!p || p->size != CUpti_GetCubinCrcParamsSize || !p->cubin || !p->cubinSize)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_once(&real_once, load_real);
	if (real_crc)
		return real_crc(p);
	p->cubinCrc = crc32_of(p->cubin, p->cubinSize);
	return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetSassToSourceCorrelation(CUpti_GetSassToSourceCorrelationParams *p)
{
	if (!p || p->size != CUpti_GetSassToSourceCorrelationParamsSize || !p->cubin ||
	    !p->functionName || !p->cubinSize)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_once(&real_once, load_real);
	return real_sass ? real_sass(p) : CUPTI_ERROR_NOT_SUPPORTED;
}

CUptiResult CUPTIAPI cuptiRegisterComputeCrcCallback(CUpti_ComputeCrcCallbackFunc fn)
{
	if (!fn)
		return CUPTI_ERROR_INVALID_PARAMETER;
	__atomic_store_n(&crc_callback, fn, __ATOMIC_RELEASE);
	return CUPTI_SUCCESS;
}

/* What records carry for a module loaded: the client's CRC, else CUPTI's. */
static uint64_t pc_cubin_crc(const void *cubin, size_t size)
{
	CUpti_ComputeCrcCallbackFunc fn = __atomic_load_n(&crc_callback, __ATOMIC_ACQUIRE);
	CUpti_GetCubinCrcParams p = {
		.size = CUpti_GetCubinCrcParamsSize,
		.cubinSize = size,
		.cubin = cubin,
	};
	uint64_t crc = 0;

	if (fn)
		fn(cubin, size, &crc);
	else if (cuptiGetCubinCrc(&p) == CUPTI_SUCCESS)
		crc = p.cubinCrc;
	return crc;
}
