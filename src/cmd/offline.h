/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CMD_OFFLINE_H
#define GTRACE_CMD_OFFLINE_H

/* What the commands that read a recording (report, flame, ...) share. */

#include <stddef.h>

#include "analysis/analysis.h"
#include "model/model.h"

#define DEFAULT_INPUT "gtrace.data"

/*
 * Loads path into m. On failure prints why and returns EXIT_FAIL; a
 * truncated or damaged file only gets a warning and returns 0.
 */
int offline_load(struct model *m, const char *path);

/*
 * For getopt_long's '?' and ':' (with opterr = 0 and a ':' leading the
 * option string): prints the problem and a hint, returns EXIT_USAGE.
 */
int offline_bad_option(const char *cmd, char **argv, int c);
/* For an operand the command does not take. */
int offline_extra_arg(const char *cmd, const char *arg);

/* Parses a count for -n; -EINVAL when it is not a whole number. */
int offline_parse_count(const char *s, size_t *n);

/* The --pid/--tid/--comm/--dso options report and flame share. */
#define FILTER_LONG_OPTIONS                                                    \
	{ "pid", required_argument, NULL, 'p' },                               \
	{ "tid", required_argument, NULL, 't' },                               \
	{ "comm", required_argument, NULL, 'c' },                              \
	{ "dso", required_argument, NULL, 'd' }
#define FILTER_SHORT_OPTIONS "p:t:c:d:"
#define FILTER_USAGE                                                           \
	"  -p, --pid PID[,PID..]    only these processes\n"                     \
	"  -t, --tid TID[,TID..]    only these threads\n"                       \
	"  -c, --comm NAME[,NAME..] only threads with these names\n"            \
	"  -d, --dso NAME[,NAME..]  only samples whose leaf is in these dsos (basenames)\n"

/*
 * Handles one of the filter options: returns 1 when c was one (0 done,
 * EXIT_USAGE printed into *status on a bad list), 0 when it was not.
 */
int offline_filter_option(struct sample_filter *flt, int c, const char *arg, int *status);

#endif
