/* SPDX-License-Identifier: MIT */
/*
 * memsteps [STEPS [MIB [SECONDS]]]: grows its resident memory in STEPS
 * steps of MIB MiB (default 4 x 16), every page touched, and after each
 * step burns CPU on two threads for SECONDS (default 0.3). Ends by
 * printing its peak resident size as the kernel counts it (VmHWM) and the
 * CPU it had over its run, in % of one CPU (two threads on an idle machine:
 * about 200), so a test can hold a profiler's figures to them.
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

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double start = workload_now();
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
	printf("cpu-percent: %.1f\n", cpu_seconds() / (workload_now() - start) * 100);
	return 0;
}
