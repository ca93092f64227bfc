/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_DURATION_H
#define GTRACE_UTIL_DURATION_H

#include <stdint.h>

/*
 * The one parser of the time options (record's --duration and
 * --metrics-interval, the views' --link-window, export's --start and --end):
 * a decimal number, fractional or not, with ns, us, ms or s after it, or
 * with nothing after it, in units of bare_unit_ns (1e9 for an option that
 * documents seconds, 1 for one that documents nanoseconds). Returns 0 or
 * -EINVAL (a sign, blanks, another unit, a time past 2^64 ns).
 */
int duration_parse(const char *s, uint64_t bare_unit_ns, uint64_t *ns);

#endif
