/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_CUDA_APP_H
#define GTRACE_TESTS_CUDA_APP_H

/*
 * What the CUDA test programs (fake-app, fake-rt-app, idle-app) share:
 * frames tests look for, a check of each call, the clock and CPU work.
 * Each defines APP_NAME, its name in messages, before including it.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Each a frame of its own; noclone is gcc's, not clang's (make UBSAN=1). */
#if defined(__has_attribute) && __has_attribute(noipa)
#define FRAME __attribute__((noipa))
#else
#define FRAME __attribute__((noinline))
#endif

/* Exits with status 2 unless call returns ok (CUDA_SUCCESS, cudaSuccess). */
#define APP_CHECK(call, ok)                                                      \
	do {                                                                     \
		int status_ = (int)(call);                                       \
		if (status_ != (int)(ok)) {                                      \
			fprintf(stderr, APP_NAME ": %s failed with %d\n", #call, \
				status_);                                        \
			exit(2);                                                 \
		}                                                                \
	} while (0)

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU work until ns have passed, in the caller's frame: its samples name the caller. */
static inline void spin(uint64_t ns)
{
	static volatile uint64_t sink;
	uint64_t end = now_ns() + ns, x = sink;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

#endif
