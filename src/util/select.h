/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_SELECT_H
#define GTRACE_UTIL_SELECT_H

#include <stddef.h>
#include <stdint.h>

/*
 * The k-th smallest (from 0) of n > k values, which it reorders: for a
 * median, in O(n) on average where a sort orders every value. Bad pivots
 * past a depth of 2 log n end in a sort, so the worst case is O(n log n).
 */
uint64_t u64_select(uint64_t *v, size_t n, size_t k);

#endif
