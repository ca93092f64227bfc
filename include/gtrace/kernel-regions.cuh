/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_KERNEL_REGIONS_CUH
#define GTRACE_KERNEL_REGIONS_CUH

/*
 * Kernel regions: where the time of a CUDA kernel goes inside it. Markers
 * in device code make one leader thread per (block, group) stamp
 * %globaltimer into a buffer the kernel takes as an argument; after the
 * launch the host copies the buffer back, decodes it and, while gtrace
 * records the process, reports the regions on the timeline of the kernels
 * and CPU stacks. For programs compiled by nvcc, linked with cudart and
 * libgtrace-target (pkg-config gtrace-target). See gtrace-kernel-regions(3).
 *
 *	__global__ void attn(float *out, uint64_t *prof)
 *	{
 *		gtrace_kr kr = gtrace_kr_init(prof, threadIdx.x / 128, threadIdx.x % 128 == 0);
 *
 *		gtrace_kr_begin(&kr, LOAD);
 *		...
 *		gtrace_kr_end(&kr, LOAD);
 *		gtrace_kr_finish(&kr);
 *	}
 *
 *	gtrace_kr_buffer *b = gtrace_kr_alloc(1 << 16);
 *	attn<<<grid, 256, 0, stream>>>(out, gtrace_kr_device_ptr(b));
 *	gtrace_kr_collect(b, "attn", region_names, n_regions, stream);
 *
 * Every thread of a (block, group) calls every marker, and pays at most a
 * block fence; only its leader stores, two words per event, into the
 * buffer laid out as gtrace/target.h says: each leader claims the slot of
 * its next event ahead (one atomic add, at init and after each event), so
 * an event needs one slot, and each lane one more for the claim after its
 * last event. A buffer too small loses the events that find no slot, and
 * counts them; nothing is written past its end.
 *
 * With GTRACE_KR_DISABLE defined the markers compile to nothing and the
 * host functions do nothing (gtrace_kr_alloc returns NULL).
 */

#ifndef __CUDACC__
#error "gtrace/kernel-regions.cuh is for CUDA sources compiled by nvcc"
#endif

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <gtrace/target.h>

/* A device buffer and what its host needs to decode it: opaque. */
typedef struct gtrace_kr_buffer gtrace_kr_buffer;

#ifndef GTRACE_KR_DISABLE

/* A thread's markers; only a leader's fields are used. */
typedef struct {
	uint64_t *buf;			/* NULL: this thread stores nothing */
	uint64_t lane;			/* the block, group and thread fields of its events */
	uint64_t slot;			/* claimed for its next event */
	uint64_t capacity;		/* slots in buf */
} gtrace_kr;

static __device__ __forceinline__ uint64_t gtrace_kr_now_(void)
{
	uint64_t ns;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns) : : "memory");
	return ns;
}

/* A value too large for its field becomes the field's highest: undecodable. */
static __device__ __forceinline__ uint64_t gtrace_kr_field_(uint64_t value, uint64_t mask)
{
	return value < mask ? value : mask;
}

static __device__ __forceinline__ uint64_t gtrace_kr_claim_(uint64_t *buf)
{
	return atomicAdd((unsigned long long *)&buf[GTRACE_KR_HDR_CLAIMED], 1ull);
}

/*
 * The markers of the calling thread in group of its block (below
 * GTRACE_KR_MAX_GROUPS); leader: it is the one thread of the group that
 * stores. Call it once, before the group's first marker. A NULL buf
 * records nothing.
 */
static __device__ __forceinline__ gtrace_kr gtrace_kr_init(uint64_t *buf, unsigned group,
							    bool leader)
{
	gtrace_kr kr = { NULL, 0, 0, 0 };
	uint64_t block = blockIdx.x +
			 (uint64_t)gridDim.x * (blockIdx.y + (uint64_t)gridDim.y * blockIdx.z);
	uint64_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);

	if (!leader || !buf)
		return kr;
	kr.buf = buf;
	kr.capacity = buf[GTRACE_KR_HDR_CAPACITY];
	kr.lane = gtrace_kr_field_(group, GTRACE_KR_GROUP_MASK) << GTRACE_KR_GROUP_SHIFT |
		  thread << GTRACE_KR_THREAD_SHIFT |
		  gtrace_kr_field_(block, GTRACE_KR_BLOCK_MASK) << GTRACE_KR_BLOCK_SHIFT;
	kr.slot = gtrace_kr_claim_(buf);
	if (block == 0) {
		buf[GTRACE_KR_HDR_GRID] = gridDim.x | (uint64_t)gridDim.y << 32 |
					  (uint64_t)gridDim.z << 48;
		buf[GTRACE_KR_HDR_BLOCK] = blockDim.x | (uint64_t)blockDim.y << 16 |
					   (uint64_t)blockDim.z << 32;
	}
	return kr;
}

/* A leader's event: two stores into its slot, or a count of it lost. */
static __device__ __forceinline__ void gtrace_kr_record_(gtrace_kr *kr, uint64_t kind,
							  unsigned region)
{
	uint64_t ns = gtrace_kr_now_();
	uint64_t *event;

	if (kr->slot >= kr->capacity) {
		atomicAdd((unsigned long long *)&kr->buf[GTRACE_KR_HDR_LOST], 1ull);
		return;
	}
	event = kr->buf + GTRACE_KR_HEADER_WORDS + kr->slot * GTRACE_KR_SLOT_WORDS;
	event[0] = ns;
	event[1] = kr->lane | kind |
		   gtrace_kr_field_(region, GTRACE_KR_REGION_MASK) << GTRACE_KR_REGION_SHIFT;
	/* the add's latency hides behind the work up to the next event */
	kr->slot = gtrace_kr_claim_(kr->buf);
}

/* The fences keep the region's memory traffic between its two stamps. */
static __device__ __forceinline__ void gtrace_kr_begin(gtrace_kr *kr, unsigned region)
{
	if (kr->buf)
		gtrace_kr_record_(kr, GTRACE_KR_BEGIN, region);
	__threadfence_block();
}

static __device__ __forceinline__ void gtrace_kr_end(gtrace_kr *kr, unsigned region)
{
	__threadfence_block();
	if (kr->buf)
		gtrace_kr_record_(kr, GTRACE_KR_END, region);
}

/* Marks the lane done: regions still open then are counted unmatched. */
static __device__ __forceinline__ void gtrace_kr_finish(gtrace_kr *kr)
{
	__threadfence_block();
	if (kr->buf)
		gtrace_kr_record_(kr, GTRACE_KR_FINISH, 0);
}

struct gtrace_kr_buffer {
	uint64_t *dev;			/* the header and slots, on the GPU */
	uint64_t *host;			/* where collect copies them */
	uint64_t capacity;		/* event slots */
	int64_t clock_offset_ns;	/* gtrace_now_ns() minus %globaltimer */
	uint64_t clock_error_ns;	/* the offset's precision */
};

#define GTRACE_KR_CLOCK_TRIES 5

static __global__ void gtrace_kr_clock_kernel_(uint64_t *out)
{
	*out = gtrace_kr_now_();
}

/*
 * The offset from %globaltimer to gtrace_now_ns(): a one-thread kernel
 * stamps the first between two readings of the second; the offset is
 * their midpoint minus the stamp, precise to half their distance. The
 * narrowest of a few tries counts (the first may load the module).
 */
static inline cudaError_t gtrace_kr_clock_(gtrace_kr_buffer *b, cudaStream_t stream)
{
	uint64_t best = UINT64_MAX;
	void *args[] = { &b->dev };
	cudaError_t err = cudaSuccess;

	for (int i = 0; i < GTRACE_KR_CLOCK_TRIES && err == cudaSuccess; i++) {
		uint64_t gpu_ns, before = gtrace_now_ns(), after;

		err = cudaLaunchKernel((const void *)gtrace_kr_clock_kernel_, dim3(1), dim3(1),
				       args, 0, stream);
		if (err == cudaSuccess)
			err = cudaStreamSynchronize(stream);
		after = gtrace_now_ns();
		if (err == cudaSuccess)
			err = cudaMemcpyAsync(&gpu_ns, b->dev, sizeof(gpu_ns),
					      cudaMemcpyDeviceToHost, stream);
		if (err == cudaSuccess)
			err = cudaStreamSynchronize(stream);
		if (err == cudaSuccess && after - before < best) {
			best = after - before;
			b->clock_offset_ns = (int64_t)(before + best / 2 - gpu_ns);
			b->clock_error_ns = best - best / 2;
		}
	}
	return err;
}

static inline void gtrace_kr_free(gtrace_kr_buffer *b)
{
	if (!b)
		return;
	cudaFree(b->dev);
	free(b->host);
	free(b);
}

/*
 * A zeroed buffer for events event slots on the current device, with the
 * offset of its clock; NULL when events is 0 or too large, or when memory
 * or CUDA fails. On a stream of its own: it waits for no other work.
 */
static inline gtrace_kr_buffer *gtrace_kr_alloc(size_t events)
{
	const uint64_t header[GTRACE_KR_HEADER_WORDS] = { GTRACE_KR_MAGIC, events };
	size_t bytes = (GTRACE_KR_HEADER_WORDS + events * GTRACE_KR_SLOT_WORDS) * sizeof(uint64_t);
	gtrace_kr_buffer *b;
	cudaStream_t stream;
	bool ok;

	if (!events || events > (SIZE_MAX / sizeof(uint64_t) - GTRACE_KR_HEADER_WORDS) /
					GTRACE_KR_SLOT_WORDS)
		return NULL;
	b = (gtrace_kr_buffer *)calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->capacity = events;
	b->host = (uint64_t *)malloc(bytes);
	if (!b->host || cudaMalloc((void **)&b->dev, bytes) != cudaSuccess ||
	    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
		gtrace_kr_free(b);
		return NULL;
	}
	ok = gtrace_kr_clock_(b, stream) == cudaSuccess &&
	     cudaMemsetAsync(b->dev, 0, bytes, stream) == cudaSuccess &&
	     cudaMemcpyAsync(b->dev, header, sizeof(header), cudaMemcpyHostToDevice, stream) ==
		     cudaSuccess &&
	     cudaStreamSynchronize(stream) == cudaSuccess;
	cudaStreamDestroy(stream);
	if (!ok) {
		gtrace_kr_free(b);
		return NULL;
	}
	return b;
}

/* What the kernel takes: NULL for a NULL b, and then it records nothing. */
static inline uint64_t *gtrace_kr_device_ptr(gtrace_kr_buffer *b)
{
	return b ? b->dev : NULL;
}

/*
 * After a launch on stream that was given b: waits for it, copies back the
 * header and the slots claimed, hands them to gtrace_kr_submit (which
 * reports them while a recording runs) and zeroes them on stream for the
 * next launch. Returns 0 or what gtrace_kr_submit returns; -EINVAL for a
 * NULL b, -EIO when CUDA fails.
 */
static inline int gtrace_kr_collect(gtrace_kr_buffer *b, const char *kernel,
				    const char *const *region_names, unsigned n_regions,
				    cudaStream_t stream)
{
	uint64_t slots;
	int err;

	if (!b)
		return -EINVAL;
	if (cudaMemcpyAsync(b->host, b->dev, GTRACE_KR_HEADER_WORDS * sizeof(uint64_t),
			    cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
	    cudaStreamSynchronize(stream) != cudaSuccess)
		return -EIO;
	slots = b->host[GTRACE_KR_HDR_CLAIMED];
	if (slots > b->capacity)
		slots = b->capacity;
	if (slots && (cudaMemcpyAsync(b->host + GTRACE_KR_HEADER_WORDS,
				      b->dev + GTRACE_KR_HEADER_WORDS,
				      slots * GTRACE_KR_SLOT_WORDS * sizeof(uint64_t),
				      cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
		      cudaStreamSynchronize(stream) != cudaSuccess))
		return -EIO;
	err = gtrace_kr_submit(b->host, GTRACE_KR_HEADER_WORDS + slots * GTRACE_KR_SLOT_WORDS,
			       kernel, region_names, n_regions, b->clock_offset_ns,
			       b->clock_error_ns);
	/* from the claim counter on: the magic and the capacity stay */
	if (cudaMemsetAsync(b->dev + GTRACE_KR_HDR_CLAIMED, 0,
			    (GTRACE_KR_HEADER_WORDS - GTRACE_KR_HDR_CLAIMED +
			     slots * GTRACE_KR_SLOT_WORDS) * sizeof(uint64_t),
			    stream) != cudaSuccess)
		return -EIO;
	return err;
}

#else /* GTRACE_KR_DISABLE */

typedef struct {
} gtrace_kr;

static __device__ __forceinline__ gtrace_kr gtrace_kr_init(uint64_t *, unsigned, bool)
{
	return gtrace_kr();
}

static __device__ __forceinline__ void gtrace_kr_begin(gtrace_kr *, unsigned)
{
}

static __device__ __forceinline__ void gtrace_kr_end(gtrace_kr *, unsigned)
{
}

static __device__ __forceinline__ void gtrace_kr_finish(gtrace_kr *)
{
}

static inline gtrace_kr_buffer *gtrace_kr_alloc(size_t)
{
	return NULL;
}

static inline uint64_t *gtrace_kr_device_ptr(gtrace_kr_buffer *)
{
	return NULL;
}

static inline int gtrace_kr_collect(gtrace_kr_buffer *, const char *, const char *const *,
				    unsigned, cudaStream_t)
{
	return 0;
}

static inline void gtrace_kr_free(gtrace_kr_buffer *)
{
}

#endif /* GTRACE_KR_DISABLE */

#endif
