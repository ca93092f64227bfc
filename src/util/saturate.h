/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_SATURATE_H
#define GTRACE_UTIL_SATURATE_H

/*
 * Arithmetic on what a recording says (durations, counts) that stops at
 * the end of its type instead of wrapping: a hostile file's spans of
 * 2^63 ns add up to "very long", never to a few ns, and every part stays
 * within its whole.
 */

#include <stdint.h>

/* a + b, or UINT64_MAX where that would wrap. */
static inline uint64_t u64_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

#endif
