/* SPDX-License-Identifier: MIT */
/*
 * CUPTI's activity buffers: handed out from a small pool, walked record by
 * record when CUPTI completes them, turned into spans on the GPU stream
 * lanes and into counts. Everything a span needs is copied out of the
 * record (gtrace_span_attrs interns the names) before the buffer goes back.
 * Completion may run on several threads at once: a walk keeps its caches
 * on its own stack and takes a lock only for a lane it has not seen.
 *
 * CUPTI hands a buffer over late: once it is full, or at a flush, and only
 * when the work of every record in it has ended. How late is measured per
 * record, from the work's end to the buffer's arrival (cuda.delay.*).
 */
#include "cuda/agent.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "contract/attrs.h"
#include "contract/lanes.h"
#include "contract/spans.h"
#include "cuda/cupti-api.h"
#include "cuda/names.h"
#include "target/agent-api.h"

/*
 * Each recording thread fills a buffer of its own: 2 MiB hold about 9,700
 * kernel records (216 bytes), a few tens of ms of a busy launching thread.
 * That is what arrives at once, what the recorder must take in one go, and
 * what a SIGKILL loses per thread; 8 MiB held 38k kernels and kept them
 * back until the last of them ended. Smaller buffers cost more completions
 * (each a walk and a counter update), which 2 MiB keeps rare.
 */
#define BUFFER_BYTES (2u << 20)
#define POOL_KEEP 4			/* free buffers kept for reuse */
#define MAX_GPU_LANES 1024
/*
 * Of a thread's queue (16384 entries by default), the part a walk may
 * fill before it waits for the target library to send them: a buffer of
 * 40,000 kernels is not dropped for want of room.
 */
#define QUEUE_PART_PER_FLUSH 4
#define FLUSH_WAIT_MS 1000
#define OCC_CACHE 64			/* per walk, direct-mapped */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static void *pool[POOL_KEEP];
static unsigned pooled;

/* Stream ids are unique within a context only. */
struct stream_key {
	uint32_t device, context, stream;
};

static pthread_mutex_t lanes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpu_lane {
	struct stream_key key;
	gtrace_lane *lane;
} gpu_lanes[MAX_GPU_LANES];
static unsigned ngpu_lanes;

static int forced_active;		/* forced flushes running */
static uint64_t forced_incomplete;	/* records with end 0 seen meanwhile */
static uint64_t delay_max_us;		/* cuda.delay.max-us, raised by any walk */

struct occ_entry {
	uint32_t device;
	struct cuda_launch_shape shape;
	struct cuda_occupancy occ;
	int err;
	bool used;
};

/* One buffer's walk. */
struct walk {
	uint64_t counts[CUDA_COUNTERS];	/* added to the agent's at the end: no atomic per record */
	uint64_t arrived_ns;		/* when CUPTI handed the buffer over */
	uint64_t delay_sum_ns, delay_max_ns;
	struct stream_key last_key;
	gtrace_lane *last_lane;
	unsigned entries;		/* queued since the last wait; a new walk's waits first */
	unsigned entries_per_flush;
	bool stalled;			/* a wait timed out: the recorder is not keeping up */
	struct occ_entry occ[OCC_CACHE];
};

void CUPTIAPI activity_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *b = NULL;

	pthread_mutex_lock(&pool_lock);
	if (pooled)
		b = pool[--pooled];
	pthread_mutex_unlock(&pool_lock);
	if (!b)
		b = malloc(BUFFER_BYTES);	/* 16-byte aligned: CUPTI needs 8 */
	if (!b)
		agent_count(CUDA_CNT_NULL_BUFFERS, 1);	/* CUPTI drops what it had, and counts it */
	*buffer = b;
	*size = b ? BUFFER_BYTES : 0;
	*max_records = 0;			/* as many as fit */
}

static void give_back(void *b)
{
	pthread_mutex_lock(&pool_lock);
	if (pooled < POOL_KEEP) {
		pool[pooled++] = b;
		b = NULL;
	}
	pthread_mutex_unlock(&pool_lock);
	free(b);
}

void activity_release_pool(void)
{
	pthread_mutex_lock(&pool_lock);
	while (pooled)
		free(pool[--pooled]);
	pthread_mutex_unlock(&pool_lock);
}

void activity_forced_begin(void)
{
	__atomic_add_fetch(&forced_active, 1, __ATOMIC_SEQ_CST);
}

uint64_t activity_forced_end(void)
{
	__atomic_sub_fetch(&forced_active, 1, __ATOMIC_SEQ_CST);
	return __atomic_exchange_n(&forced_incomplete, 0, __ATOMIC_SEQ_CST);
}

static bool same_stream(const struct stream_key *a, const struct stream_key *b)
{
	return a->device == b->device && a->context == b->context && a->stream == b->stream;
}

/*
 * "GPU0 stream 13" for the first context seen on a device, the common
 * case; "GPU0 ctx 2 stream 13" for others. Under lanes_lock.
 */
static void lane_name(char *buf, size_t size, const struct stream_key *key)
{
	for (unsigned i = 0; i < ngpu_lanes; i++) {
		if (gpu_lanes[i].key.device == key->device &&
		    gpu_lanes[i].key.context != key->context) {
			snprintf(buf, size, CUDA_DEVICE_LANE_PREFIX "%u ctx %u stream %u", (unsigned)key->device,
				 (unsigned)key->context, (unsigned)key->stream);
			return;
		}
	}
	snprintf(buf, size, CUDA_DEVICE_LANE_PREFIX "%u stream %u", (unsigned)key->device, (unsigned)key->stream);
}

static gtrace_lane *find_lane(const struct stream_key *key)
{
	unsigned n = __atomic_load_n(&ngpu_lanes, __ATOMIC_ACQUIRE);
	gtrace_lane *lane = NULL;
	char name[64];

	for (unsigned i = 0; i < n; i++)
		if (same_stream(&gpu_lanes[i].key, key))
			return gpu_lanes[i].lane;
	pthread_mutex_lock(&lanes_lock);
	for (unsigned i = n; i < ngpu_lanes && !lane; i++)
		if (same_stream(&gpu_lanes[i].key, key))
			lane = gpu_lanes[i].lane;
	if (!lane) {
		lane_name(name, sizeof(name), key);
		lane = gtrace_lane_get(CUDA_LANE_KIND, name);
		if (lane && ngpu_lanes < MAX_GPU_LANES) {
			gpu_lanes[ngpu_lanes].key = *key;
			gpu_lanes[ngpu_lanes].lane = lane;
			__atomic_store_n(&ngpu_lanes, ngpu_lanes + 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&lanes_lock);
	return lane;
}

static gtrace_lane *stream_lane(struct walk *w, uint32_t device, uint32_t context,
				uint32_t stream)
{
	struct stream_key key = { device, context, stream };

	if (!w->last_lane || !same_stream(&w->last_key, &key)) {
		w->last_lane = find_lane(&key);
		w->last_key = key;
	}
	return w->last_lane;
}

/*
 * Whether the record's times can be shown; counts those that cannot. A
 * forced flush hands over work not yet ended with end 0, and start 0 too
 * when it had not started: incomplete. Complete buffers came first, in the
 * flag-0 flush before it, so a zero there is a time CUPTI did not collect.
 */
static bool timed(struct walk *w, uint64_t start, uint64_t end)
{
	if (start && end && end >= start) {
		uint64_t delay = w->arrived_ns > end ? w->arrived_ns - end : 0;

		w->delay_sum_ns += delay;
		if (delay > w->delay_max_ns)
			w->delay_max_ns = delay;
		w->counts[CUDA_CNT_DELAY_RECORDS]++;
		return true;
	}
	if (!end && __atomic_load_n(&forced_active, __ATOMIC_SEQ_CST)) {
		w->counts[CUDA_CNT_INCOMPLETE]++;
		__atomic_add_fetch(&forced_incomplete, 1, __ATOMIC_SEQ_CST);
	} else {
		w->counts[CUDA_CNT_NO_TIMESTAMP]++;
	}
	return false;
}

/*
 * The API call that queued the work, if still known; work never starts
 * before it: an earlier start is counted and moved to the call.
 */
static const gtrace_origin *origin_of(struct walk *w, uint32_t correlation, uint64_t *start,
				      uint64_t *end, gtrace_origin *o)
{
	if (!origins_get(correlation, o)) {
		w->counts[CUDA_CNT_NO_ORIGIN]++;
		return NULL;
	}
	if (*start < o->ts_ns) {
		w->counts[CUDA_CNT_CAUSALITY]++;
		*end += o->ts_ns - *start;
		*start = o->ts_ns;
	}
	return o;
}

static void emit(struct walk *w, gtrace_lane *lane, const char *name, uint64_t start,
		 uint64_t end, const gtrace_origin *origin, const gtrace_attr *attrs, unsigned n)
{
	if (!gtrace_reporting_active())
		return;
	/*
	 * Room before each entries_per_flush, the first included: on the
	 * application's thread (exit, cudaDeviceReset) the walk finds the
	 * queue full of its launch calls' spans. One timed-out wait per buffer
	 * at most: that thread must not stall for a second per few thousand
	 * kernels. The queue drops what does not fit.
	 */
	if (w->entries >= w->entries_per_flush && !w->stalled) {
		w->stalled = !gtrace_flush(FLUSH_WAIT_MS);
		w->entries = 0;
	}
	gtrace_span_attrs(lane, name, start, end, origin, attrs, n);
	w->entries += 1 + (n + 2) / 3;
}

static bool same_shape(const struct cuda_launch_shape *a, const struct cuda_launch_shape *b)
{
	return a->block_threads == b->block_threads && a->regs_per_thread == b->regs_per_thread &&
	       a->smem_static == b->smem_static && a->smem_dynamic == b->smem_dynamic &&
	       a->smem_optin == b->smem_optin && a->carveout == b->carveout;
}

/* Launches repeat: a walk computes each (device, shape) once. */
static const struct cuda_occupancy *occupancy_of(struct walk *w, uint32_t device,
						 const struct cuda_launch_shape *s)
{
	const struct cuda_device_limits *limits = devices_limits(device);
	uint32_t h = device * 31 + (uint32_t)s->block_threads * 7 + (uint32_t)s->regs_per_thread * 3 +
		     (uint32_t)s->smem_static + (uint32_t)s->smem_dynamic;
	struct occ_entry *e = &w->occ[h % OCC_CACHE];

	if (!limits)
		return NULL;
	if (!e->used || e->device != device || !same_shape(&e->shape, s)) {
		e->used = true;
		e->device = device;
		e->shape = *s;
		e->err = cuda_occupancy(limits, s, &e->occ);
	}
	return e->err ? NULL : &e->occ;
}

#define ATTR(k, v) (gtrace_attr){ .key = (k), .value = (uint64_t)(v) }

static void kernel(struct walk *w, const CUpti_ActivityKernel10 *k)
{
	struct cuda_launch_shape shape = {
		.block_threads = k->blockX * k->blockY * k->blockZ,
		.regs_per_thread = k->registersPerThread,
		.smem_static = (size_t)k->staticSharedMemory,
		.smem_dynamic = (size_t)k->dynamicSharedMemory,
		.smem_optin = k->shmemLimitConfig == CUPTI_FUNC_SHMEM_LIMIT_OPTIN,
		.carveout = k->isSharedMemoryCarveoutRequested ? k->sharedMemoryCarveoutRequested : -1,
	};
	gtrace_attr a[GTRACE_MAX_ATTRS];
	uint64_t start = agent_gpu_ns(k->start), end = agent_gpu_ns(k->end);
	const struct cuda_occupancy *occ;
	const gtrace_origin *origin;
	gtrace_lane *lane;
	gtrace_origin o;
	unsigned n = 0;

	w->counts[CUDA_CNT_KERNEL]++;
	if (!timed(w, start, end))
		return;
	origin = origin_of(w, k->correlationId, &start, &end, &o);
	lane = stream_lane(w, k->deviceId, k->contextId, k->streamId);
	a[n++] = ATTR(CUDA_ATTR_GRID_X, k->gridX);
	a[n++] = ATTR(CUDA_ATTR_GRID_Y, k->gridY);
	a[n++] = ATTR(CUDA_ATTR_GRID_Z, k->gridZ);
	a[n++] = ATTR(CUDA_ATTR_BLOCK_X, k->blockX);
	a[n++] = ATTR(CUDA_ATTR_BLOCK_Y, k->blockY);
	a[n++] = ATTR(CUDA_ATTR_BLOCK_Z, k->blockZ);
	a[n++] = ATTR(CUDA_ATTR_REGS, k->registersPerThread);
	a[n++] = ATTR(CUDA_ATTR_SMEM_STATIC, k->staticSharedMemory);
	a[n++] = ATTR(CUDA_ATTR_SMEM_DYNAMIC, k->dynamicSharedMemory);
	a[n++] = ATTR(CUDA_ATTR_LOCAL_PER_THREAD, k->localMemoryPerThread);
	a[n++] = ATTR(CUDA_ATTR_LOCAL_TOTAL, k->localMemoryTotal_v2);
	if (k->graphId) {			/* absent: not launched from a graph */
		a[n++] = ATTR(CUDA_ATTR_GRAPH_ID, k->graphId);
		a[n++] = ATTR(CUDA_ATTR_GRAPH_NODE, k->graphNodeId);
	}
	a[n++] = ATTR(CUDA_ATTR_DEVICE, k->deviceId);
	a[n++] = ATTR(CUDA_ATTR_CONTEXT, k->contextId);
	a[n++] = ATTR(CUDA_ATTR_STREAM, k->streamId);
	a[n++] = ATTR(CUDA_ATTR_CORRELATION, k->correlationId);
	occ = occupancy_of(w, k->deviceId, &shape);
	if (occ) {
		a[n++] = ATTR(CUDA_ATTR_OCCUPANCY_PERMILLE, occ->permille);
		a[n++] = ATTR(CUDA_ATTR_OCCUPANCY_LIMITER, occ->limiter);
		a[n++] = ATTR(CUDA_ATTR_OCCUPANCY_BLOCKS_PER_SM, occ->blocks_per_sm);
	} else {
		a[n++] = ATTR(CUDA_ATTR_OCCUPANCY_LIMITER, CUDA_OCC_LIMIT_UNKNOWN);
	}
	emit(w, lane, k->name ? k->name : "[unknown kernel]", start, end, origin, a, n);
}

static void memcpy_record(struct walk *w, const CUpti_ActivityMemcpy6 *c)
{
	uint64_t start = agent_gpu_ns(c->start), end = agent_gpu_ns(c->end);
	const gtrace_origin *origin;
	gtrace_origin o;
	char buf[32];
	gtrace_attr a[] = {
		ATTR(CUDA_ATTR_COPY_KIND, c->copyKind),
		ATTR(CUDA_ATTR_COPY_SRC, c->srcKind),
		ATTR(CUDA_ATTR_COPY_DST, c->dstKind),
		ATTR(CUDA_ATTR_BYTES, c->bytes),
		ATTR(CUDA_ATTR_DEVICE, c->deviceId),
		ATTR(CUDA_ATTR_CONTEXT, c->contextId),
		ATTR(CUDA_ATTR_STREAM, c->streamId),
		ATTR(CUDA_ATTR_CORRELATION, c->correlationId),
	};

	w->counts[CUDA_CNT_MEMCPY]++;
	if (!timed(w, start, end))
		return;
	origin = origin_of(w, c->correlationId, &start, &end, &o);
	emit(w, stream_lane(w, c->deviceId, c->contextId, c->streamId),
	     cuda_copy_name(c->copyKind, buf, sizeof(buf)),
	     start, end, origin, a, sizeof(a) / sizeof(a[0]));
}

static void peer_copy(struct walk *w, const CUpti_ActivityMemcpyPtoP4 *c)
{
	uint64_t start = agent_gpu_ns(c->start), end = agent_gpu_ns(c->end);
	const gtrace_origin *origin;
	gtrace_origin o;
	char buf[32];
	gtrace_attr a[] = {
		ATTR(CUDA_ATTR_COPY_KIND, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP),
		ATTR(CUDA_ATTR_COPY_SRC, c->srcKind),
		ATTR(CUDA_ATTR_COPY_DST, c->dstKind),
		ATTR(CUDA_ATTR_BYTES, c->bytes),
		ATTR(CUDA_ATTR_DEVICE, c->deviceId),
		ATTR(CUDA_ATTR_CONTEXT, c->contextId),
		ATTR(CUDA_ATTR_STREAM, c->streamId),
		ATTR(CUDA_ATTR_CORRELATION, c->correlationId),
		ATTR(CUDA_ATTR_SRC_DEVICE, c->srcDeviceId),
		ATTR(CUDA_ATTR_DST_DEVICE, c->dstDeviceId),
	};

	w->counts[CUDA_CNT_MEMCPY]++;
	if (!timed(w, start, end))
		return;
	origin = origin_of(w, c->correlationId, &start, &end, &o);
	emit(w, stream_lane(w, c->deviceId, c->contextId, c->streamId),
	     cuda_copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, buf, sizeof(buf)), start, end, origin,
	     a, sizeof(a) / sizeof(a[0]));
}

static void memset_record(struct walk *w, const CUpti_ActivityMemset4 *m)
{
	uint64_t start = agent_gpu_ns(m->start), end = agent_gpu_ns(m->end);
	const gtrace_origin *origin;
	gtrace_origin o;
	gtrace_attr a[] = {
		ATTR(CUDA_ATTR_BYTES, m->bytes),
		ATTR(CUDA_ATTR_VALUE, m->value),
		ATTR(CUDA_ATTR_DEVICE, m->deviceId),
		ATTR(CUDA_ATTR_CONTEXT, m->contextId),
		ATTR(CUDA_ATTR_STREAM, m->streamId),
		ATTR(CUDA_ATTR_CORRELATION, m->correlationId),
	};

	w->counts[CUDA_CNT_MEMSET]++;
	if (!timed(w, start, end))
		return;
	origin = origin_of(w, m->correlationId, &start, &end, &o);
	emit(w, stream_lane(w, m->deviceId, m->contextId, m->streamId), CUDA_MEMSET_SPAN, start,
	     end, origin, a, sizeof(a) / sizeof(a[0]));
}

static void record(struct walk *w, const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		kernel(w, (const CUpti_ActivityKernel10 *)r);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		memcpy_record(w, (const CUpti_ActivityMemcpy6 *)r);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		peer_copy(w, (const CUpti_ActivityMemcpyPtoP4 *)r);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		memset_record(w, (const CUpti_ActivityMemset4 *)r);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		w->counts[CUDA_CNT_SYNC]++;
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		w->counts[CUDA_CNT_OVERHEAD]++;
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		w->counts[CUDA_CNT_DEVICE]++;
		devices_from_record((const CUpti_ActivityDevice5 *)r);
		break;
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		w->counts[CUDA_CNT_CONTEXT]++;
		break;
	default:
		w->counts[CUDA_CNT_OTHER]++;
		break;
	}
}

/* The counter goes up by each raise: walks on other threads may raise it too. */
static void raise_delay_max(uint64_t us)
{
	uint64_t old = __atomic_load_n(&delay_max_us, __ATOMIC_RELAXED);

	while (us > old) {
		if (__atomic_compare_exchange_n(&delay_max_us, &old, us, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			agent_count(CUDA_CNT_DELAY_MAX_US, us - old);
			return;
		}
	}
}

void CUPTIAPI activity_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	size_t dropped = 0;
	unsigned per_flush = tgt_queue_capacity() / QUEUE_PART_PER_FLUSH;
	struct walk w = { .entries = per_flush, .entries_per_flush = per_flush };

	if (!buffer) {
		agent_count(CUDA_CNT_NULL_BUFFERS, 1);
		return;
	}
	/* A forked child, or after a fatal error: only the buffer matters. */
	if (!agent_collecting()) {
		give_back(buffer);
		return;
	}
	agent_count(CUDA_CNT_BUFFERS, 1);
	agent_buffer_arrived();
	w.arrived_ns = gtrace_now_ns();
	while (cupti.cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
		record(&w, r);
	w.counts[CUDA_CNT_DELAY_SUM_US] = w.delay_sum_ns / 1000;
	raise_delay_max(w.delay_max_ns / 1000);
	for (int i = 0; i < CUDA_COUNTERS; i++)
		if (w.counts[i])
			agent_count(i, w.counts[i]);
	if (cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		agent_count(CUDA_CNT_DROPPED, dropped);
	give_back(buffer);
	agent_publish_counters();
}
