/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_PROCFS_H
#define GTRACE_RECORD_PROCFS_H

/*
 * What the recorder reads of a recorded process in /proc when no record
 * told it: the names and states of the threads of a process attached to,
 * and the start of a process whose FORK record was lost.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A thread's name; "" when it cannot be read. */
void procfs_comm(uint32_t pid, uint32_t tid, char *buf, size_t size);

/* Whether a thread is on a CPU or ready for one (state R); false when unknown. */
bool procfs_thread_running(uint32_t pid, uint32_t tid);

/*
 * When pid's process started, on CLOCK_MONOTONIC (to the clock tick, and
 * earlier if the machine slept since): 0 or a negative errno.
 */
int procfs_start_ns(uint32_t pid, uint64_t *ns);

#endif
