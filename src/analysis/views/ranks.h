/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_RANKS_H
#define GTRACE_ANALYSIS_VIEWS_RANKS_H

/*
 * report --ranks: the recordings of one job, merged into one model
 * (model_merge), one row per rank, and the straggler: the rank the others
 * waited for in their collectives.
 *
 * Collectives are seen two ways. On the GPU, as kernels whose demangled
 * name starts with "nccl": the k-th kernel of one name on each rank is one
 * collective, the rank whose kernel started last the one its peers waited
 * for, and the straggler the rank that was last most often. On the CPU, as
 * samples with a collective call on their stack (MPI's blocking collectives
 * and waits, NCCL's and torch.distributed's collectives). Without
 * collective kernels the straggler is the rank with the most time on a CPU
 * outside collective calls: the others wait in their collectives while it
 * computes. Not the one with the least time in collectives: a rank that
 * waits asleep (as MPI's do when ranks outnumber the CPUs) has no samples
 * there either.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"

/* Whether a kernel, by its (demangled) name, is a collective: NCCL's, named "nccl...". */
bool ranks_collective_kernel(const char *name);

/*
 * --align collectives: moves each rank after the first by the median
 * distance of its collective kernels' ends from the first rank's, setting
 * its aligned_by and residual_ns; f names m's kernels. Returns the ranks
 * aligned.
 */
size_t align_collectives(struct model *m, struct funcs *f);

struct rank_row {
	size_t index;		/* in m->ranks */
	uint64_t wall_ns;	/* the recording's start to end, else its first to last event */
	uint64_t cpu_ns;	/* its threads' on-CPU time (model_thread_oncpu_ns) */
	uint64_t samples;
	uint64_t coll_samples;	/* of those, with a collective call on the stack */
	uint64_t coll_cpu_ns;	/* coll_samples times the sampling period */
	uint64_t compute_ns;	/* its other samples times the sampling period */
	uint64_t gpu_ns;	/* wall-clock time when any of its kernels ran, on any stream */
	uint64_t coll_gpu_ns;	/* the same for its collective kernels */
	uint64_t gpu_wait_ns;	/* its threads' time waiting on the GPU: its cuda-wait spans */
	uint64_t coll_kernels;	/* its collective kernels */
	uint64_t started_last;	/* of those matched across ranks, the ones it started last */
};

enum straggler_basis {
	STRAGGLER_NONE,		/* one rank, or no collective seen */
	STRAGGLER_GPU,		/* most collective kernels started last */
	STRAGGLER_CPU,		/* most time on a CPU outside collective calls */
};

struct rank_report {
	VEC(struct rank_row) rows;	/* by rank number */
	size_t hosts;			/* distinct meta "hostname" values */
	uint64_t matched;		/* collective kernels run by two ranks or more */
	enum straggler_basis basis;
	size_t straggler;		/* its row, unless basis is STRAGGLER_NONE */
};

/* Threads, lanes and spans are selected as report --gpu selects them. */
void rank_report_build(struct rank_report *r, struct funcs *f, const struct sample_filter *flt);
/* The header names path unless it is NULL; limit rows, 0 all. */
void rank_report_print(FILE *out, const struct rank_report *r, const struct model *m,
		       const char *path, size_t limit);
/* The same as one JSON document (gtrace-report(1) lists its keys). */
void rank_report_print_json(FILE *out, const struct rank_report *r, const struct model *m,
			    const char *path, size_t limit);
void rank_report_free(struct rank_report *r);

#endif
