/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_LOG_H
#define GTRACE_UTIL_LOG_H

/*
 * Messages on stderr, for commands only: lower layers return errors and
 * leave the wording to the command. Messages are lowercase, problem first,
 * subject quoted, no final full stop:
 *
 *	pr_err("cannot open '%s': %s", path, tr_strerror(err));
 */

extern int verbose;	/* each -v raises it */
extern int quiet;	/* -q: warnings off too */

void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* unless -q */
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));	/* with -v */

#endif
