/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_SECURE_EXEC_H
#define GTRACE_RECORD_SECURE_EXEC_H

/*
 * A program the kernel will not let gtrace go on sampling once it is
 * exec'd: one that gains rights its user lacks (set-user-ID, set-group-ID,
 * file capabilities: AT_SECURE) or that its user may not read. At such an
 * exec the kernel makes the process not dumpable and removes the events
 * that follow it (perf_event_exit_task), whoever recorded, so its samples
 * stop there. Only the command itself is looked at, not what it runs.
 */

/*
 * Why the command cmd, found as execvp finds it, will not be sampled: a
 * phrase for messages and the recording's meta, or NULL when it will be.
 */
const char *secure_exec_why(const char *cmd);

#endif
