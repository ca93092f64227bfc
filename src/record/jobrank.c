/* SPDX-License-Identifier: MIT */
#include "record/jobrank.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"

/*
 * Each launcher's names for the rank, the local rank and the size of the
 * job, in the order they are trusted: torchrun's run under srun or mpirun
 * too, and is the worker's own; mpirun's inside a Slurm allocation.
 */
static const struct {
	const char *rank, *local, *size;
} sources[] = {
	{ "RANK", "LOCAL_RANK", "WORLD_SIZE" },			/* torchrun */
	{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE" },
	{ "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE" },		/* MPICH's hydra */
	{ "PMIX_RANK", NULL, NULL },
	{ "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS" },
	{ "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_SIZE" },
};

const char job_rank_variables[] = "RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, "
				  "SLURM_PROCID, MV2_COMM_WORLD_RANK";

/*
 * A variable holding a whole number from 0, or -1; one that holds anything
 * else is the first such of r->malformed.
 */
static int64_t env_number(const char *name, struct job_rank *r)
{
	const char *s = name ? getenv(name) : NULL;
	char *end = NULL;
	long long v = -1;

	if (!s)
		return -1;
	errno = 0;
	if (*s >= '0' && *s <= '9')
		v = strtoll(s, &end, 10);
	if (v < 0 || errno || *end) {
		if (!r->malformed)
			r->malformed = name;
		return -1;
	}
	return (int64_t)v;
}

void job_rank_from_env(struct job_rank *r)
{
	*r = (struct job_rank){ -1, -1, -1, NULL, NULL };
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		int64_t rank = env_number(sources[i].rank, r);

		if (rank < 0)
			continue;
		r->rank = rank;
		r->local_rank = env_number(sources[i].local, r);
		r->world_size = env_number(sources[i].size, r);
		r->from = sources[i].rank;
		return;
	}
}

int job_output_name(const char *tmpl, const struct job_rank *r, const char *host, pid_t pid,
		    char *out, size_t size, char *bad)
{
	size_t len = 0;

	for (const char *p = tmpl; *p; p++) {
		char piece[256];
		int64_t number;

		if (*p != '%') {
			piece[0] = *p;
			piece[1] = '\0';
		} else {
			switch (*++p) {
			case 'r':
			case 'l':
				number = *p == 'r' ? r->rank : r->local_rank;
				if (number < 0)
					return -ENOENT;
				snprintf(piece, sizeof(piece), "%lld", (long long)number);
				break;
			case 'h':
				snprintf(piece, sizeof(piece), "%.*s", (int)strcspn(host, "."), host);
				break;
			case 'p':
				snprintf(piece, sizeof(piece), "%d", (int)pid);
				break;
			case '%':
				snprintf(piece, sizeof(piece), "%%");
				break;
			default:
				*bad = *p;
				return -EINVAL;
			}
		}
		if (len + strlen(piece) >= size)
			return -ENAMETOOLONG;
		memcpy(out + len, piece, strlen(piece) + 1);
		len += strlen(piece);
	}
	if (!len)
		out[0] = '\0';
	return 0;
}

void job_clock_pair(int64_t *realtime, int64_t *monotonic)
{
	uint64_t best = UINT64_MAX;

	/* The realtime read between two monotonic reads, the closest of a few tries. */
	for (int i = 0; i < 5; i++) {
		uint64_t before = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME);
		uint64_t after = now_ns(CLOCK_MONOTONIC);

		if (after - before < best) {
			best = after - before;
			*realtime = (int64_t)real;
			*monotonic = (int64_t)(before + (after - before) / 2);
		}
	}
}
