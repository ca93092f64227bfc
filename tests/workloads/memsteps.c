/* SPDX-License-Identifier: MIT */
/*
 * memsteps [STEPS [MIB [SECONDS]]]: grows its resident memory in STEPS
 * steps of MIB MiB (default 4 x 16), every page touched, and after each
 * step burns CPU on two threads for SECONDS (default 0.3). Ends by
 * printing its peak resident size as the kernel counts it (VmHWM), so a
 * test can hold a profiler's figure to it.
 */
#include <pthread.h>
#include <string.h>

#include "workload.h"

static double burn_until;

static FRAME void *burn(void *arg)
{
	uint64_t x = (uintptr_t)arg;

	while (workload_now() < burn_until)
		for (int i = 0; i < 10000; i++)
			x = workload_mix(x + (uint64_t)i);
	workload_sink += x;
	return NULL;
}

static FRAME void grow(size_t bytes)
{
	char *p = malloc(bytes);

	if (!p) {
		perror("malloc");
		exit(1);
	}
	/* Every page touched: resident, not just reserved. */
	memset(p, 1, bytes);
	workload_sink += (uint64_t)p[bytes - 1];
}

static long peak_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	int steps = (int)workload_arg(argc, argv, 1, 4);
	double mib = workload_arg(argc, argv, 2, 16);
	double seconds = workload_arg(argc, argv, 3, 0.3);

	for (int s = 0; s < steps; s++) {
		pthread_t other;

		grow((size_t)(mib * 1024 * 1024));
		burn_until = workload_now() + seconds;
		pthread_create(&other, NULL, burn, (void *)1);
		burn((void *)2);
		pthread_join(other, NULL);
	}
	printf("peak-kib: %ld\n", peak_kib());
	return 0;
}
