/* SPDX-License-Identifier: MIT */
/*
 * A real CUDA program for gtrace's CUDA collector, built with nvcc:
 * kernels on two streams, host-device copies, NVTX ranges and a CUDA
 * graph. On a GPU, scripts/gpu-smoke.sh records it and checks the report;
 * on a machine without one, tests/e2e/cuda-real-nogpu.sh checks that it
 * still runs to its own end under gtrace record.
 *
 * usage: real-app [ITERATIONS]     (default 4)
 *
 * Each iteration, inside the NVTX range "iteration": launch_batch queues
 * scale<<<...>>> on stream 1 and add<<<...>>> on stream 2, 8 launches
 * each, and one busy<<<1, 1>>> of about 5 ms on stream 1; launch_graph
 * launches a graph of 3 scale kernels captured from stream 1; after 3 ms
 * asleep, wait_for_gpu synchronizes both streams (busy still runs). Both
 * launching functions spend 2 ms of CPU before and after their launches,
 * so that they are sampled around them. Before the loop: 2 HtoD copies of
 * 4 MiB; after: 1 DtoH copy of 4 MiB and the NVTX start/end range "verify"
 * around checking the result.
 *
 * Exit status: 0 when the result is right, 1 when it is wrong, 2 when a
 * CUDA call fails (no GPU or no driver: the error is printed).
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N (1 << 20)
#define LAUNCHES 8
#define GRAPH_KERNELS 3
#define BUSY_CYCLES 10000000ll	/* about 5 ms at 2 GHz */

#define CHECK(call)                                                                  \
	do {                                                                         \
		cudaError_t err_ = (call);                                           \
		if (err_ != cudaSuccess) {                                           \
			fprintf(stderr, "real-app: %s: %s\n", #call,                 \
				cudaGetErrorString(err_));                           \
			exit(2);                                                     \
		}                                                                    \
	} while (0)

__global__ void scale(float *x, float factor, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= factor;
}

__global__ void add(float *y, const float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] += x[i];
}

__global__ void busy(long long cycles)
{
	long long start = clock64();

	while (clock64() - start < cycles)
		;
}

static volatile unsigned long long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU work, so that the functions around the launches get sampled. */
__attribute__((noinline)) static void burn(double seconds)
{
	double end = now_s() + seconds;
	unsigned long long x = sink;

	while (now_s() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

__attribute__((noinline)) static void idle(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void launch_batch(float *x, float *y, cudaStream_t s1,
						   cudaStream_t s2)
{
	burn(0.002);
	for (int i = 0; i < LAUNCHES; i++) {
		scale<<<N / 256, 256, 0, s1>>>(x, 1.0f, N);
		add<<<N / 256, 256, 0, s2>>>(y, x, N);
	}
	busy<<<1, 1, 0, s1>>>(BUSY_CYCLES);
	CHECK(cudaGetLastError());
	burn(0.002);
}

__attribute__((noinline)) static void launch_graph(cudaGraphExec_t exec, cudaStream_t s)
{
	burn(0.002);
	CHECK(cudaGraphLaunch(exec, s));
	burn(0.002);
}

__attribute__((noinline)) static cudaGraphExec_t capture_graph(float *x, cudaStream_t s)
{
	cudaGraph_t graph;
	cudaGraphExec_t exec;

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < GRAPH_KERNELS; i++)
		scale<<<N / 256, 256, 0, s>>>(x, 1.0f, N);
	CHECK(cudaStreamEndCapture(s, &graph));
	CHECK(cudaGraphInstantiate(&exec, graph, 0));
	CHECK(cudaGraphDestroy(graph));
	return exec;
}

__attribute__((noinline)) static void wait_for_gpu(cudaStream_t s1, cudaStream_t s2)
{
	CHECK(cudaStreamSynchronize(s1));
	CHECK(cudaStreamSynchronize(s2));
}

int main(int argc, char **argv)
{
	int iterations = argc > 1 ? atoi(argv[1]) : 4;
	float *host, *x, *y;
	cudaStream_t s1, s2;
	cudaGraphExec_t exec;
	nvtxRangeId_t verify;
	int wrong = 0;

	host = (float *)malloc(N * sizeof(float));
	if (!host)
		return 2;
	for (int i = 0; i < N; i++)
		host[i] = 1.0f;
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreate(&s1));
	CHECK(cudaStreamCreate(&s2));
	CHECK(cudaMalloc(&x, N * sizeof(float)));
	CHECK(cudaMalloc(&y, N * sizeof(float)));
	CHECK(cudaMemcpy(x, host, N * sizeof(float), cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(y, host, N * sizeof(float), cudaMemcpyHostToDevice));
	exec = capture_graph(x, s1);

	for (int it = 0; it < iterations; it++) {
		nvtxRangePushA("iteration");
		launch_batch(x, y, s1, s2);
		launch_graph(exec, s1);
		idle(3000000);
		wait_for_gpu(s1, s2);
		nvtxRangePop();
	}

	CHECK(cudaMemcpy(host, y, N * sizeof(float), cudaMemcpyDeviceToHost));
	verify = nvtxRangeStartA("verify");
	/* y starts at 1 and gains x (1) once per add launch. */
	for (int i = 0; i < N; i++)
		wrong += host[i] != 1.0f + (float)(iterations * LAUNCHES);
	nvtxRangeEnd(verify);

	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaStreamDestroy(s1));
	CHECK(cudaStreamDestroy(s2));
	free(host);
	if (wrong) {
		fprintf(stderr, "real-app: %d wrong results\n", wrong);
		return 1;
	}
	return 0;
}
