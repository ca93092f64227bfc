/* SPDX-License-Identifier: MIT */
/*
 * hotline [SECONDS]: one function, hot_lines, of several lines, whose
 * samples fall on known lines: about 90% on the loop marked HOT, written on
 * one line, and about 10% on the loop marked WARM, for gtrace annotate's
 * tests and its comparison with perf annotate. Each loop is one chain of
 * multiplies, so that their times stay 9 to 1 whatever the compiler does.
 */
#include "workload.h"

#define HOT_ROUNDS 90000
#define WARM_ROUNDS (HOT_ROUNDS / 9)

static FRAME uint64_t hot_lines(uint64_t seed)
{
	uint64_t a = seed * 3 + 1;
	uint64_t b = a ^ (a >> 7);

	for (int i = 0; i < HOT_ROUNDS; i++) a = a * 6364136223846793005u + (b ^ (uint64_t)i); /* HOT */
	for (int i = 0; i < WARM_ROUNDS; i++) b = (b ^ (uint64_t)i) * 0x9e3779b97f4a7c15u; /* WARM */
	b += a >> 3;
	return a ^ b;
}

int main(int argc, char **argv)
{
	double deadline = workload_now() + workload_arg(argc, argv, 1, 1);
	uint64_t acc = 1;

	while (workload_now() < deadline)
		acc = hot_lines(acc);
	workload_sink = acc;
	return 0;
}
