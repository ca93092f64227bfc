/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_PROGRAM_H
#define GTRACE_RECORD_PROGRAM_H

/* What the recorded command, or an attached process, runs. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The file execvp would run for cmd, into path: true, or false if none. */
bool program_path(const char *cmd, char *path, size_t size);

/*
 * Whether cmd, found as execvp finds it, is a CPython interpreter: the
 * file itself (python3.X), or the interpreter its "#!" line names,
 * through env(1) too.
 */
bool program_runs_python(const char *cmd);

/* Whether process pid runs a CPython interpreter (by /proc/PID/exe). */
bool process_runs_python(pid_t pid);

#endif
