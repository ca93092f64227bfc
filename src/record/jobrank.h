/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_JOBRANK_H
#define GTRACE_RECORD_JOBRANK_H

/*
 * Where a recording stands in a job of many processes that a launcher
 * (torchrun, mpirun, srun) started: its rank, from the environment the
 * launcher set, and the output names that tell the ranks' files apart.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct job_rank {
	int64_t rank;		/* -1: not in such a job */
	int64_t local_rank;	/* on this machine; -1 unknown */
	int64_t world_size;	/* -1 unknown */
	const char *from;	/* the variable the rank came from */
	const char *malformed;	/* the first variable read that is set but not a
				   whole number from 0, else NULL */
};

/* The launchers' variables, the first one set deciding. */
void job_rank_from_env(struct job_rank *r);

/* Every variable job_rank_from_env looks for a rank in, for messages. */
extern const char job_rank_variables[];

/*
 * The output file name of tmpl: %r the rank, %l the local rank, %h the
 * short host name, %p pid, %% a '%'. Returns 0, -ENOENT for a %r or %l
 * with no rank known, -EINVAL for another '%' (*bad: its letter), or
 * -ENAMETOOLONG.
 */
int job_output_name(const char *tmpl, const struct job_rank *r, const char *host, pid_t pid,
		    char *out, size_t size, char *bad);

/* CLOCK_REALTIME and CLOCK_MONOTONIC read as close together as can be, in ns. */
void job_clock_pair(int64_t *realtime, int64_t *monotonic);

#endif
