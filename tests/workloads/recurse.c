/* SPDX-License-Identifier: MIT */
/*
 * recurse [DEPTH [SECONDS [THREADS]]]: descends DEPTH (default 100) frames
 * of recurse_down to recurse_leaf, which holds the CPU time, again and
 * again for about SECONDS (default 1), on THREADS threads at once (default
 * 1: the main thread alone). Prints how many descents all threads made,
 * the work done in that time, by which a benchmark measures a slowdown.
 */
#include <pthread.h>

#include "workload.h"

struct recursion {
	int depth;
	double seconds;
	long descents;		/* out */
};

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

static FRAME long run_recursion(int depth, double seconds)
{
	double deadline = workload_now() + seconds;
	uint64_t acc = 0;
	long descents = 0;

	for (; workload_now() < deadline; descents++)
		acc += recurse_down(depth, acc);
	workload_sink = acc;
	return descents;
}

static void *recursion_thread(void *arg)
{
	struct recursion *r = arg;

	r->descents = run_recursion(r->depth, r->seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	struct recursion r[64] = { {
		.depth = (int)workload_arg(argc, argv, 1, 100),
		.seconds = workload_arg(argc, argv, 2, 1),
	} };
	int threads = (int)workload_arg(argc, argv, 3, 1);
	pthread_t tids[64];
	long descents;

	if (threads > 64)
		threads = 64;
	for (int i = 1; i < threads; i++) {
		r[i] = r[0];
		pthread_create(&tids[i], NULL, recursion_thread, &r[i]);
	}
	descents = run_recursion(r[0].depth, r[0].seconds);
	for (int i = 1; i < threads; i++) {
		pthread_join(tids[i], NULL);
		descents += r[i].descents;
	}
	printf("descents: %ld\n", descents);
	return 0;
}
