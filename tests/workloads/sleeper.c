/* SPDX-License-Identifier: MIT */
/*
 * sleeper [N]: N times (default 50), a little work in busy_bit then a
 * 10 ms sleep, so the thread spends far more time off the CPU than on it.
 */
#include "workload.h"

static FRAME uint64_t busy_bit(uint64_t seed)
{
	for (int i = 0; i < 400000; i++)
		seed = workload_mix(seed + i);
	return seed;
}

static FRAME void nap(void)
{
	struct timespec ten_ms = { 0, 10 * 1000 * 1000 };

	while (nanosleep(&ten_ms, &ten_ms))
		;
}

int main(int argc, char **argv)
{
	long rounds = (long)workload_arg(argc, argv, 1, 50);
	uint64_t acc = 0;

	for (long i = 0; i < rounds; i++) {
		acc = busy_bit(acc);
		nap();
	}
	workload_sink = acc;
	return 0;
}
