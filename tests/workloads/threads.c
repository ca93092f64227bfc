/* SPDX-License-Identifier: MIT */
/*
 * threads [SECONDS]: three named threads, each on its own path,
 * thread_alpha -> spin_alpha, thread_beta -> spin_beta and
 * thread_gamma -> spin_gamma, doing work in the ratio 1:2:3. The longest,
 * gamma, runs for about SECONDS (default 1) on an idle core.
 */
#include <pthread.h>

#include "workload.h"

/* Work is counted in blocks of this many rounds. */
#define BLOCK_ROUNDS 10000

static long blocks_per_share;

static FRAME uint64_t spin_alpha(long blocks)
{
	uint64_t x = 1;

	for (long i = 0; i < blocks * BLOCK_ROUNDS; i++)
		x = workload_mix(x + i);
	return x;
}

static FRAME uint64_t spin_beta(long blocks)
{
	uint64_t x = 2;

	for (long i = 0; i < blocks * BLOCK_ROUNDS; i++)
		x = workload_mix(x ^ i);
	return x;
}

static FRAME uint64_t spin_gamma(long blocks)
{
	uint64_t x = 3;

	for (long i = 0; i < blocks * BLOCK_ROUNDS; i++)
		x = workload_mix(x - i);
	return x;
}

static FRAME void *thread_alpha(void *arg)
{
	pthread_setname_np(pthread_self(), "alpha");
	workload_sink += spin_alpha(blocks_per_share);
	return arg;
}

static FRAME void *thread_beta(void *arg)
{
	pthread_setname_np(pthread_self(), "beta");
	workload_sink += spin_beta(2 * blocks_per_share);
	return arg;
}

static FRAME void *thread_gamma(void *arg)
{
	pthread_setname_np(pthread_self(), "gamma");
	workload_sink += spin_gamma(3 * blocks_per_share);
	return arg;
}

/* How many blocks this machine runs in the given time. */
static long blocks_in(double seconds)
{
	double start = workload_now(), deadline = start + seconds / 50;
	long blocks = 0;

	while (workload_now() < deadline) {
		workload_sink += spin_alpha(1);
		blocks++;
	}
	return blocks * 50;
}

int main(int argc, char **argv)
{
	void *(*const bodies[])(void *) = { thread_alpha, thread_beta, thread_gamma };
	pthread_t threads[3];

	blocks_per_share = blocks_in(workload_arg(argc, argv, 1, 1)) / 3 + 1;
	for (int i = 0; i < 3; i++)
		if (pthread_create(&threads[i], NULL, bodies[i], NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < 3; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
