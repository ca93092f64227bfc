/* SPDX-License-Identifier: MIT */
/*
 * crasher [SECONDS]: works in doomed_work for about SECONDS (default 0.2),
 * then dies of SIGSEGV, without leaving a core file behind.
 */
#include <signal.h>
#include <sys/resource.h>

#include "workload.h"

static FRAME uint64_t doomed_work(double seconds)
{
	double deadline = workload_now() + seconds;
	uint64_t x = 5;

	while (workload_now() < deadline)
		for (int i = 0; i < 10000; i++)
			x = workload_mix(x + i);
	return x;
}

int main(int argc, char **argv)
{
	const struct rlimit no_core = { 0, 0 };

	workload_sink = doomed_work(workload_arg(argc, argv, 1, 0.2));
	setrlimit(RLIMIT_CORE, &no_core);
	raise(SIGSEGV);
	return 0;
}
