/* SPDX-License-Identifier: MIT */
/*
 * cleanup [SECONDS]: main -> run_workload -> with_cleanup (libcleanup.so)
 * -> hot_callback, for SECONDS (default 1). The library's frame has a
 * personality routine reached through the GOT, like the frames of C++
 * libraries (libstdc++, the CUDA runtime, CUPTI): DWARF unwinding must
 * read that slot to step through it to main.
 */
#include "workload.h"

void with_cleanup(void (*fn)(double), double seconds);

static FRAME void hot_callback(double seconds)
{
	double deadline = workload_now() + seconds;
	uint64_t acc = 1;

	while (workload_now() < deadline)
		for (int i = 0; i < 10000; i++)
			acc = workload_mix(acc + i);
	workload_sink = acc;
}

static FRAME void run_workload(double seconds)
{
	with_cleanup(hot_callback, seconds);
}

int main(int argc, char **argv)
{
	run_workload(workload_arg(argc, argv, 1, 1));
	return 0;
}
