/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_WORKLOAD_H
#define GTRACE_TESTS_WORKLOAD_H

/*
 * Shared by the bundled workloads: programs whose call stacks are known in
 * advance, so tests and benchmarks can check what a profiler shows.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * Every function a test looks for must stay a frame of its own: no inlining,
 * no cloning under another name, no merging of identical bodies. (Tail calls
 * are turned off for the whole build in workloads.mk.)
 */
#if defined(__has_attribute) && __has_attribute(noipa)
#define FRAME __attribute__((noipa))
#else
#define FRAME __attribute__((noinline))
#endif

/* Results land here so the compiler cannot drop the work. */
static volatile uint64_t workload_sink;

static inline double workload_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* argv[index] as a positive number, or fallback when absent. */
static inline double workload_arg(int argc, char **argv, int index, double fallback)
{
	char *end;
	double v;

	if (index >= argc)
		return fallback;
	v = strtod(argv[index], &end);
	if (end == argv[index] || *end || v <= 0) {
		fprintf(stderr, "%s: '%s' is not a positive number\n", argv[0], argv[index]);
		exit(2);
	}
	return v;
}

/* A few nanoseconds of arithmetic the optimizer cannot fold away. */
static inline uint64_t workload_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 29;
	return x;
}

#endif
