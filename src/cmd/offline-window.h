/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CMD_OFFLINE_WINDOW_H
#define GTRACE_CMD_OFFLINE_WINDOW_H

/* The window of offline_args (offline-window.c): for offline.c only. */

#include "cmd/offline.h"

/* --start or --end TIME into *ns: 0, or EXIT_USAGE after saying why. */
int offline_time_option(const char *opt, const char *arg, uint64_t *ns);
/* --time arg, or NULL for a --start or --end after a --time: an error. */
int offline_time_window_option(struct offline_args *a, const char *arg);
/* At the end of the options: a window that holds no time is an error. */
int offline_check_window(const struct offline_args *a);
/* Whether the command was given a window. */
bool offline_windowed(const struct offline_args *a);
/*
 * Once m is loaded: a --time in percent becomes the ns of m's length, and
 * for a command that shows the model cut to the window, m is cut. Returns
 * 0, or EXIT_FAIL when the window holds no events.
 */
int offline_apply_window(struct offline_args *a, struct model *m);

#endif
