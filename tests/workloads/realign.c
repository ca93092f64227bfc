/* SPDX-License-Identifier: MIT */
/*
 * realign [SECONDS]: main -> run_workload -> realigned -> hot_leaf, for
 * SECONDS (default 1), without frame pointers. realigned keeps a block
 * aligned past what the ABI gives a frame beside an array of variable
 * size, so gcc realigns its stack: its unwind table says the CFA is a
 * word stored below rbp, as in the vectorized kernels of large C++
 * libraries (libtorch has thousands). DWARF unwinding must read that word
 * to step through it to main.
 */
#include <string.h>

#include "workload.h"

static FRAME uint64_t hot_leaf(const unsigned char *block, uint64_t acc)
{
	for (int i = 0; i < 10000; i++)
		acc = workload_mix(acc + block[i % 64]);
	return acc;
}

static FRAME uint64_t realigned(size_t n, double deadline)
{
	_Alignas(64) unsigned char block[64];
	unsigned char scratch[n];
	uint64_t acc = 1;

	memset(block, 1, sizeof(block));
	memset(scratch, 2, n);
	while (workload_now() < deadline) {
		acc = hot_leaf(block, acc);
		for (size_t i = 0; i < 10000; i++)
			acc = workload_mix(acc + scratch[i % n]);
	}
	return acc;
}

static FRAME void run_workload(double seconds)
{
	workload_sink = realigned(100, workload_now() + seconds);
}

int main(int argc, char **argv)
{
	run_workload(workload_arg(argc, argv, 1, 1));
	return 0;
}
