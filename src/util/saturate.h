/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_SATURATE_H
#define GTRACE_UTIL_SATURATE_H

/*
 * Arithmetic on what a recording says (durations, clock readings, shifts)
 * that stops at the ends of its type instead of wrapping: a hostile file's
 * spans of 2^63 ns add up to "very long", never to a few ns, and its
 * clock offsets at the ends of int64 never overflow a signed add, which
 * C leaves undefined.
 */

#include <stdint.h>

/* a + b, or UINT64_MAX where that would wrap. */
static inline uint64_t u64_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* a + b, or the end of int64 it would pass. */
static inline int64_t i64_sat_add(int64_t a, int64_t b)
{
	int64_t sum;

	if (__builtin_add_overflow(a, b, &sum))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return sum;
}

/* a - b, or the end of int64 it would pass. */
static inline int64_t i64_sat_sub(int64_t a, int64_t b)
{
	int64_t diff;

	if (__builtin_sub_overflow(a, b, &diff))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return diff;
}

#endif
