/* SPDX-License-Identifier: MIT */
/*
 * The kernels of the PC sampling tests. Built twice: as cubins with line
 * information (nvcc -cubin -lineinfo, one per architecture), which the fake
 * driver loads and the fake CUPTI samples, and, for scripts/gpu-smoke.sh,
 * as a real program.
 *
 * pc_hot spends its time in one loop whose body is the line marked
 * PC-HOT-LINE (tests find its number by that mark); pc_cold is short.
 *
 * usage: pc-app [LAUNCHES]     (default 50) launches of each kernel, in
 *                              launch_hot and launch_cold
 * Exit status: 0 when the result is right, 1 when it is wrong, 2 when a
 * CUDA call fails.
 */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>

#define N (1 << 16)
#define HOT_ITERATIONS 4096

extern "C" __global__ void pc_hot(float *out, const float *in, int n, int iterations)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float acc = 0.0f;

	if (i >= n)
		return;
	for (int k = 0; k < iterations; k++)
		acc = acc * 0.999f + in[(i + k * 97) % n]; /* PC-HOT-LINE */
	out[i] = acc;
}

extern "C" __global__ void pc_cold(float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = out[i] * 0.5f; /* PC-COLD-LINE */
}

#define CHECK(call)                                                          \
	do {                                                                 \
		cudaError_t err_ = (call);                                   \
		if (err_ != cudaSuccess) {                                   \
			fprintf(stderr, "pc-app: %s: %s\n", #call,           \
				cudaGetErrorString(err_));                   \
			exit(2);                                             \
		}                                                            \
	} while (0)

__attribute__((noinline)) static void launch_hot(float *out, const float *in)
{
	pc_hot<<<N / 256, 256>>>(out, in, N, HOT_ITERATIONS);
	CHECK(cudaGetLastError());
}

__attribute__((noinline)) static void launch_cold(float *out)
{
	pc_cold<<<N / 256, 256>>>(out, N);
	CHECK(cudaGetLastError());
}

int main(int argc, char **argv)
{
	int launches = argc > 1 ? atoi(argv[1]) : 50;
	float *in, *out, first;

	CHECK(cudaMalloc(&in, N * sizeof(float)));
	CHECK(cudaMalloc(&out, N * sizeof(float)));
	CHECK(cudaMemset(in, 0, N * sizeof(float)));
	for (int r = 0; r < launches; r++) {
		launch_hot(out, in);
		launch_cold(out);
	}
	CHECK(cudaDeviceSynchronize());
	CHECK(cudaMemcpy(&first, out, sizeof(first), cudaMemcpyDeviceToHost));
	if (first != 0.0f) {
		fprintf(stderr, "pc-app: wrong result %g\n", first);
		return 1;
	}
	return 0;
}
