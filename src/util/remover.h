/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_REMOVER_H
#define GTRACE_UTIL_REMOVER_H

/*
 * What gtrace must not leave behind however it ends, SIGKILL and crashes
 * included (a span socket and its directory, a temporary output): a helper
 * process, started on first use, holds the list and, once gtrace has gone
 * (its socket from gtrace reads end of file), removes what is still on it,
 * the last added first, each path unlinked or removed as an empty
 * directory (at a normal exit too, which waits for it). gtrace forgets a
 * path once it has removed or kept it itself.
 * A relative path is from the working directory at the first use.
 */

/* Lists path; 0, or a negative errno when it cannot be (the path is left). */
int remover_add(const char *path);
/* Takes path off the list. */
void remover_forget(const char *path);

#endif
