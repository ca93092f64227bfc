/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CMD_OFFLINE_H
#define GTRACE_CMD_OFFLINE_H

/* What the commands that read a recording (report, flame, ...) share. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* The --link-window option report, flame and diagnose share. */
#define LINK_WINDOW_OPTION "link-window"
#define LINK_WINDOW_USAGE                                                      \
	"      --link-window TIME   join a span's origin to a sample of its thread\n" \
	"                           at most TIME away: 5ms, 200us, 1s or ns\n"   \
	"                           (default 4 sampling periods)\n"

/* Parses a duration: "5ms", "200us", "1.5s", "750ns" or plain ns; -EINVAL if not one. */
int offline_parse_duration(const char *s, uint64_t *ns);
/* Parses the value of --link-window: 0, or EXIT_USAGE with the problem printed. */
int offline_link_window_option(const char *arg, uint64_t *window_ns);

/* A --link-window not given: origins_default_window. */
#define LINK_WINDOW_DEFAULT UINT64_MAX

/* Links the spans' origins within window_ns (or LINK_WINDOW_DEFAULT). */
void offline_link_origins(struct origin_links *l, const struct model *m, uint64_t window_ns);

/* Whether the --tid list names lanes (synthetic tids) only. */
bool offline_only_lanes(const struct sample_filter *flt);

/* The --pid/--tid/--comm/--dso options report and flame share. */
#define FILTER_LONG_OPTIONS                                                    \
	{ "pid", required_argument, NULL, 'p' },                               \
	{ "tid", required_argument, NULL, 't' },                               \
	{ "comm", required_argument, NULL, 'c' },                              \
	{ "dso", required_argument, NULL, 'd' }
#define FILTER_SHORT_OPTIONS "p:t:c:d:"
#define FILTER_USAGE                                                           \
	"  -p, --pid PID[,PID..]    only these processes\n"                     \
	"  -t, --tid TID[,TID..]    only these threads, or lanes (0xfff00000..)\n" \
	"  -c, --comm NAME[,NAME..] only threads with these names\n"            \
	"  -d, --dso NAME[,NAME..]  only samples whose leaf is in these dsos (basenames)\n"

/*
 * Handles one of the filter options: returns 1 when c was one (0 done,
 * EXIT_USAGE printed into *status on a bad list), 0 when it was not.
 */
int offline_filter_option(struct sample_filter *flt, int c, const char *arg, int *status);

#endif
