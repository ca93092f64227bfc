/* SPDX-License-Identifier: MIT */
/*
 * kr-compile.cu's kernels run on a real GPU, for scripts/gpu-smoke.sh:
 * ROUNDS (default 20) rounds of one_group and three_groups on 4 blocks of
 * 128 threads, each launch's regions collected through gtrace_kr_collect.
 *
 * usage: kr-real [ROUNDS]
 * Exit status: 0, 1 when a collect fails, 2 when a CUDA call fails.
 */
#include "kr-compile.cu"

#include <stdio.h>
#include <stdlib.h>

#define N (4 * 128)

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 20;
	float *in, *out;

	if (cudaMalloc(&in, N * sizeof(float)) != cudaSuccess ||
	    cudaMalloc(&out, N * sizeof(float)) != cudaSuccess ||
	    cudaMemset(in, 0, N * sizeof(float)) != cudaSuccess) {
		fprintf(stderr, "kr-real: %s\n", cudaGetErrorString(cudaGetLastError()));
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		int err = kr_compile_run(out, in, 0);

		if (err) {
			fprintf(stderr, "kr-real: gtrace_kr_collect failed: %d\n", err);
			return 1;
		}
	}
	return 0;
}
