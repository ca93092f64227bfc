/* SPDX-License-Identifier: MIT */
/*
 * recurse [DEPTH [SECONDS]]: descends DEPTH (default 100) frames of
 * recurse_down to recurse_leaf, which holds the CPU time, again and again
 * for about SECONDS (default 1).
 */
#include "workload.h"

static FRAME uint64_t recurse_leaf(uint64_t seed)
{
	for (int i = 0; i < 20000; i++)
		seed = workload_mix(seed + i);
	return seed;
}

/* The addition after the call keeps each level a real frame. */
static FRAME uint64_t recurse_down(int depth, uint64_t seed)
{
	if (depth <= 1)
		return recurse_leaf(seed) + 1;
	return recurse_down(depth - 1, seed ^ depth) + depth;
}

static FRAME void run_recursion(int depth, double seconds)
{
	double deadline = workload_now() + seconds;
	uint64_t acc = 0;

	while (workload_now() < deadline)
		acc += recurse_down(depth, acc);
	workload_sink = acc;
}

int main(int argc, char **argv)
{
	run_recursion((int)workload_arg(argc, argv, 1, 100), workload_arg(argc, argv, 2, 1));
	return 0;
}
