/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_THREADS_H
#define GTRACE_ANALYSIS_VIEWS_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/passes/passes.h"

/*
 * threads: the real threads by samples (at most limit, 0 all), then every
 * lane, of the processes flt selects by pid and rank (NULL: all). With
 * several ranks loaded, each row leads with its rank. off_cpu splits each
 * thread's off-CPU time by why it was off: blocked, preempted (threads
 * --off-cpu).
 */
void threads_print(FILE *out, const struct model *m, const struct sample_filter *flt,
		   size_t limit, bool off_cpu);
/* The same rows as one JSON document (gtrace-threads(1) lists its keys). */
void threads_print_json(FILE *out, const struct model *m, const struct sample_filter *flt,
			const char *path, size_t limit, bool off_cpu);

#endif
