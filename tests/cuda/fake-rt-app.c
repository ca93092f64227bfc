/* SPDX-License-Identifier: MIT */
/*
 * A CUDA runtime program with a known shape, run against the fake runtime
 * (libcudart.so.13 from tests/cuda) over the fake driver, so that tests
 * know exactly what a profiler must show of the runtime domain.
 *
 * usage: fake-rt-app
 *        fake-rt-app --kernels N
 *
 * The default run, on the runtime's context of device 0 with stream 13
 * (A, from cudaStreamCreate) and the default stream 7:
 *   cudaStreamCreate        the first call: the context is made inside it
 *   2 x cudaMalloc          of 1,000,000 bytes
 *   cudaMemcpy              HtoD of 1,000,000 bytes on stream 7 (100 us)
 *   cudaMemsetAsync         1,000,000 bytes on A (10 us)
 *   launch_steps            10 x { cudaGetDevice, cudaLaunchKernel of
 *                           vector_add (50 us) on A, cudaGetLastError }
 *   cudaMemcpyAsync         DtoH of 1,000,000 bytes on A (100 us)
 *   cudaStreamSynchronize   of A
 *   launch_on_default       2 x cudaLaunchKernel of _Z6matmulPfS_S_i
 *                           (200 us) on stream 7
 *   free_buffers            2 x cudaFree: the first waits for the matmuls
 *                           (400 us), the second for nothing
 *   cudaDeviceSynchronize   with nothing left to wait for
 *   reset                   cudaLaunchKernel of _Z9last_stepv (5 ms) on A,
 *                           then cudaDeviceReset while it runs: the reset
 *                           waits for it, then destroys the context
 * In all: 44 runtime calls, 24 of them neither cudaGetDevice nor
 * cudaGetLastError (13 cudaLaunchKernel, 2 cudaMalloc, 2 cudaFree and one
 * each of the others); 5 of them wait for the GPU (cudaMemcpy,
 * cudaStreamSynchronize, cudaDeviceSynchronize, 2 cudaFree); 31 driver
 * calls with callbacks, all nested in runtime calls (cuCtxCreate,
 * cuModuleLoadData and cuStreamCreate in the first, one cuModuleGetFunction
 * per kernel at its first launch, one call per runtime call's work, and
 * cuCtxSynchronize, cuModuleUnload and cuCtxDestroy in the reset). GPU
 * work: 13 kernels (10 vector_add, 2 matmul, 1 last_step); stream 13
 * holds the memset, the 10 vector_add, the DtoH copy and last_step;
 * stream 7 the HtoD copy and the 2 matmul.
 *   --kernels N   instead: N times { cudaGetDevice, cudaLaunchKernel of a
 *                 100 ns kernel on A, cudaGetLastError }, as a framework
 *                 launches; prints the launch loop's time per launch and,
 *                 once cudaDeviceReset has destroyed the context (a
 *                 profiler has processed every record then), the
 *                 process's CPU time per launch, as fake-app does
 */
#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define APP_NAME "fake-rt-app"
#include "app.h"
#include "fake.h"

#define CHECK(call) APP_CHECK(call, cudaSuccess)

/* The kernels' host stubs: their addresses are the program's handles. */
static void vector_add(void) {}
static void matmul(void) {}
static void last_step(void) {}
static void kernel(void) {}

static const struct {
	void (*host)(void);
	const char *name;
	struct fakecuda_function_attrs attrs;
} kernels[] = {
	{ vector_add, "vector_add", { .regs = 24, .duration_ns = 50000 } },
	{ matmul, "_Z6matmulPfS_S_i", { .regs = 64, .static_smem = 8192, .duration_ns = 200000 } },
	{ last_step, "_Z9last_stepv", { .regs = 16, .duration_ns = 5000000 } },
	{ kernel, "_Z6kernelPfi", { .regs = 32, .duration_ns = 100 } },
};

static void launch(void (*host)(void), unsigned grid, unsigned block, cudaStream_t stream)
{
	dim3 g = { grid, 1, 1 }, b = { block, 1, 1 };

	CHECK(cudaLaunchKernel((const void *)host, g, b, NULL, 0, stream));
}

/* A launch as frameworks make it: the device asked, the error checked. */
static void checked_launch(void (*host)(void), unsigned grid, unsigned block, cudaStream_t stream)
{
	int dev;

	CHECK(cudaGetDevice(&dev));
	launch(host, grid, block, stream);
	CHECK(cudaGetLastError());
}

FRAME static void launch_steps(cudaStream_t a)
{
	for (int i = 0; i < 10; i++)
		checked_launch(vector_add, 4096, 256, a);
}

FRAME static void launch_on_default(void)
{
	launch(matmul, 4096, 256, NULL);
	launch(matmul, 4096, 256, NULL);
}

FRAME static void free_buffers(void *in, void *out)
{
	CHECK(cudaFree(in));
	CHECK(cudaFree(out));
}

FRAME static void reset(cudaStream_t a)
{
	launch(last_step, 1, 32, a);
	CHECK(cudaDeviceReset());
}

/* All threads' CPU time, the profiler's included. */
static void print_cpu_time(long launches)
{
	struct rusage ru;
	double ns;

	getrusage(RUSAGE_SELF, &ru);
	ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	     (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	printf("fake-rt-app: process CPU time %.0f ns: %.1f ns per launch\n", ns,
	       ns / (double)launches);
}

static void many_launches(cudaStream_t a, long n)
{
	uint64_t start = now_ns(), elapsed;

	for (long i = 0; i < n; i++)
		checked_launch(kernel, 256, 128, a);
	elapsed = now_ns() - start;
	CHECK(cudaDeviceSynchronize());
	printf("fake-rt-app: %ld launches in %llu ns: %.1f ns per launch\n", n,
	       (unsigned long long)elapsed, (double)elapsed / (double)n);
	CHECK(cudaDeviceReset());
	print_cpu_time(n);
}

int main(int argc, char **argv)
{
	static char host[1000000];
	void *in, *out;
	cudaStream_t a;
	long n = 0;

	if (argc == 3 && !strcmp(argv[1], "--kernels"))
		n = atol(argv[2]);
	if (argc != 1 && n <= 0) {
		fprintf(stderr, "usage: fake-rt-app [--kernels N]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (fakecudart_register_function((const void *)kernels[i].host, kernels[i].name,
						 &kernels[i].attrs))
			return 2;
	CHECK(cudaStreamCreate(&a));
	if (n) {
		many_launches(a, n);
		return 0;
	}
	CHECK(cudaMalloc(&in, sizeof(host)));
	CHECK(cudaMalloc(&out, sizeof(host)));
	CHECK(cudaMemcpy(in, host, sizeof(host), cudaMemcpyHostToDevice));
	CHECK(cudaMemsetAsync(out, 0, sizeof(host), a));
	launch_steps(a);
	CHECK(cudaMemcpyAsync(host, out, sizeof(host), cudaMemcpyDeviceToHost, a));
	CHECK(cudaStreamSynchronize(a));
	launch_on_default();
	free_buffers(in, out);
	CHECK(cudaDeviceSynchronize());
	reset(a);
	return 0;
}
