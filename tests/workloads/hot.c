/* SPDX-License-Identifier: MIT */
/*
 * hot [SECONDS | --loops N]: one hot path, main -> run_workload ->
 * compute_outer -> hot_leaf, with about 90% of the time in hot_leaf.
 * SECONDS (default 1) bounds the run by time; --loops N fixes the work
 * instead and prints how long it took, for benchmarks of the slowdown a
 * profiler causes.
 */
#include <string.h>

#include "workload.h"

#define LEAF_ROUNDS 90000
#define OUTER_ROUNDS (LEAF_ROUNDS / 9)

static FRAME uint64_t hot_leaf(uint64_t seed)
{
	for (int i = 0; i < LEAF_ROUNDS; i++)
		seed = workload_mix(seed + i);
	return seed;
}

static FRAME uint64_t compute_outer(uint64_t seed)
{
	for (int i = 0; i < OUTER_ROUNDS; i++)
		seed = workload_mix(seed ^ i);
	return hot_leaf(seed) + 1;
}

static FRAME void run_workload(double seconds, long loops)
{
	double deadline = workload_now() + seconds;
	uint64_t acc = 1;

	for (long n = 0; loops ? n < loops : workload_now() < deadline; n++)
		acc = compute_outer(acc);
	workload_sink = acc;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--loops")) {
		long loops = (long)workload_arg(argc, argv, 2, 1);
		double start = workload_now();

		run_workload(0, loops);
		fprintf(stderr, "hot: %ld loops in %.3f s\n", loops, workload_now() - start);
	} else {
		run_workload(workload_arg(argc, argv, 1, 1), 0);
	}
	return 0;
}
