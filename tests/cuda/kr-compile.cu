/* SPDX-License-Identifier: MIT */
/*
 * gtrace/kernel-regions.cuh in use, compiled but not run (tests/cuda/cuda.mk):
 * a kernel with nested regions in one group, one with the seed's three
 * groups of 48, 48 and 32 threads, and the host's buffer, launch and
 * collect. Built for each architecture with the markers and with
 * GTRACE_KR_DISABLE, whose PTX must read no %globaltimer.
 */
#include <gtrace/kernel-regions.cuh>

enum region { LOAD, COMPUTE, STORE, N_REGIONS };

static const char *const region_names[N_REGIONS] = { "load", "compute", "store" };

#define ITERATIONS 4000

/* One group, led by thread 0; store nested in compute. */
__global__ void one_group(float *out, const float *in, uint64_t *prof)
{
	gtrace_kr kr = gtrace_kr_init(prof, 0, threadIdx.x == 0);
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	float x, acc = 0.0f;

	gtrace_kr_begin(&kr, LOAD);
	x = in[i];
	gtrace_kr_end(&kr, LOAD);
	gtrace_kr_begin(&kr, COMPUTE);
	for (int k = 0; k < ITERATIONS; k++)
		acc = acc * 1.0001f + x;
	gtrace_kr_begin(&kr, STORE);
	out[i] = acc;
	gtrace_kr_end(&kr, STORE);
	gtrace_kr_end(&kr, COMPUTE);
	gtrace_kr_finish(&kr);
}

/*
 * 128 threads in groups [0, 48), [48, 96) and [96, 128), each led by its
 * first thread: the 48-thread groups cross warp boundaries.
 */
__global__ void three_groups(float *out, const float *in, uint64_t *prof)
{
	unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
	unsigned group = t < 48 ? 0 : t < 96 ? 1 : 2;
	gtrace_kr kr = gtrace_kr_init(prof, group, t == 0 || t == 48 || t == 96);
	float x, acc = 0.0f;

	gtrace_kr_begin(&kr, LOAD);
	x = in[i];
	gtrace_kr_end(&kr, LOAD);
	gtrace_kr_begin(&kr, COMPUTE);
	for (unsigned k = 0; k < ITERATIONS * (group + 1); k++)
		acc = acc * 1.0001f + x;
	gtrace_kr_end(&kr, COMPUTE);
	gtrace_kr_begin(&kr, STORE);
	out[i] = acc;
	gtrace_kr_end(&kr, STORE);
	gtrace_kr_finish(&kr);
}

extern "C" int kr_compile_run(float *out, const float *in, cudaStream_t stream)
{
	gtrace_kr_buffer *b = gtrace_kr_alloc(4 * 3 * 8);
	int err;

	one_group<<<4, 128, 0, stream>>>(out, in, gtrace_kr_device_ptr(b));
	err = gtrace_kr_collect(b, "one_group", region_names, N_REGIONS, stream);
	three_groups<<<4, 128, 0, stream>>>(out, in, gtrace_kr_device_ptr(b));
	if (!err)
		err = gtrace_kr_collect(b, "three_groups", region_names, N_REGIONS, stream);
	gtrace_kr_free(b);
	return err;
}
