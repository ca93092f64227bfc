/* SPDX-License-Identifier: MIT */
/*
 * regress [SECONDS [SLOWER [SHARE]]]: main -> run_workload, which calls
 * steady_a, steady_b and target in turn for SECONDS (default 1). target
 * gets SHARE percent of each round (default 30), steady_a and steady_b
 * the rest, 4 to 3. SLOWER (a percentage, default 0) makes target do that
 * much more work per round, for tests of gtrace diff: at 30, target's
 * share grows from about 30% to 36%.
 */
#include <string.h>

#include "workload.h"

#define ROUND 100000

/* Each function spins in its own loop, so that its samples are its own. */
static FRAME uint64_t steady_a(uint64_t seed, long n)
{
	for (long i = 0; i < n; i++)
		seed = workload_mix(seed + (uint64_t)i);
	return seed;
}

static FRAME uint64_t steady_b(uint64_t seed, long n)
{
	for (long i = 0; i < n; i++)
		seed = workload_mix(seed ^ (uint64_t)i);
	return seed;
}

static FRAME uint64_t target(uint64_t seed, long n)
{
	for (long i = 0; i < n; i++)
		seed = workload_mix(seed - (uint64_t)i);
	return seed;
}

static FRAME void run_workload(double seconds, double slower, double share)
{
	double deadline = workload_now() + seconds;
	long rest = (long)(ROUND * (100 - share) / 100);
	long a = rest * 4 / 7, b = rest - a;
	long t = (long)(ROUND * share / 100 * (1 + slower / 100));
	uint64_t acc = 1;

	while (workload_now() < deadline)
		acc = target(steady_b(steady_a(acc, a), b), t);
	workload_sink = acc;
}

/* argv[index] as a percentage, 0 allowed. */
static double percent_arg(int argc, char **argv, int index, double fallback)
{
	if (index < argc && !strcmp(argv[index], "0"))
		return 0;
	return workload_arg(argc, argv, index, fallback);
}

int main(int argc, char **argv)
{
	double share = percent_arg(argc, argv, 3, 30);

	if (share >= 100) {
		fprintf(stderr, "regress: SHARE must be under 100\n");
		return 2;
	}
	run_workload(workload_arg(argc, argv, 1, 1), percent_arg(argc, argv, 2, 0), share);
	return 0;
}
