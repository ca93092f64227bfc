/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_CLOCK_H
#define GTRACE_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL

/* The time of clock (CLOCK_MONOTONIC, CLOCK_REALTIME...) in nanoseconds. */
static inline uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#endif
