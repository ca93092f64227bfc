/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_GPU_H
#define GTRACE_ANALYSIS_VIEWS_GPU_H

/*
 * report --gpu: the kernels, copies, memsets, CUDA calls and waits by
 * name, and the kernel regions.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"
#include "util/vec.h"

/* report --gpu: a summary of each CUDA table by span name, per rank with several. */
struct gpu_stats {
	uint64_t count;
	uint64_t total_ns, min_ns, max_ns;	/* exact */
	double median_ns;	/* of the sorted durations; two middle ones averaged */
	double stddev_ns;	/* sample standard deviation, 0 for one span */
};

#define KERNEL_CONFIG_UNKNOWN UINT64_MAX	/* a value the kernel's record lacked */

/* How a kernel was launched, from its span's attributes. */
struct kernel_config {
	uint64_t grid[3], block[3];
	uint64_t regs;
	uint64_t occupancy;	/* theoretical occupancy x 1000 */
	uint64_t limiter;	/* 0 unknown, 1 warps, 2 registers, 3 shared memory, 4 blocks */
};

struct gpu_row {
	uint32_t rank;		/* index in m->ranks of its lanes' recording */
	uint32_t name;		/* string id of the span name */
	struct gpu_stats st;
	struct kernel_config config;	/* kernels: the most frequent one */
	uint64_t configs;	/* kernels: how many distinct configurations */
	uint64_t bytes;		/* copies and memsets */
	double min_gbps, max_gbps; /* copies: of the slowest and the fastest */
};

struct gpu_table {
	VEC(struct gpu_row) rows;	/* by rank, then total time, descending */
	uint64_t count, total_ns, bytes;
};

/* Kernel regions (gtrace-kernel-regions(3)), from the spans of their lanes (contract/lanes.h). */

/* One region of one kernel, over the collects of its summary spans. */
struct kregion_row {
	uint32_t rank;		/* index in m->ranks of its lanes' recording */
	uint32_t lane_name;	/* string id of its summary lane's name */
	uint32_t region;	/* string id of the region's name */
	uint64_t collects;
	uint64_t instances, sum_ns, min_ns, max_ns;	/* exact */
	double median_ns;	/* one collect's; of several, the median of theirs */
	double block_median_ns;	/* likewise, of the time per block */
	uint64_t block_max_ns;	/* exact: the largest */
	double lane_ns;		/* per collect, sum_ns over its (block, group) lanes, summed */
	uint64_t kernel_ns;	/* GPU time of its rank's kernel spans of that name; 0 none */
};

struct gpu_report {
	struct gpu_table kernels;	/* kernels of the "cuda" lanes, by name */
	struct gpu_table copies;	/* their copies and memsets, by kind */
	struct gpu_table api;		/* calls on the "cuda-api" lanes, by function */
	struct gpu_table waits;		/* spans of the "cuda-wait" lanes, by function */
	size_t lanes;			/* lanes of those kinds in the recording */
	VEC(struct kregion_row) regions; /* by rank, kernel, region; in order of appearance */
	size_t region_kernels;		/* distinct kernels of the regions, per rank */
	uint64_t region_collects;	/* per kernel, the most collects of one region, summed */
};

/*
 * A span counts when its lane passes the filter as a thread would, or its
 * origin thread does: --tid of a CPU thread selects the work it launched.
 */
void gpu_report_build(struct gpu_report *r, struct funcs *f, const struct sample_filter *flt);
/* Kernel names demangled; limit rows per table, 0 all. */
void gpu_report_print(FILE *out, const struct gpu_report *r, const struct model *m,
		      const char *path, size_t limit);
/* The same tables as one JSON document (gtrace-report(1) lists its keys). */
void gpu_report_print_json(FILE *out, const struct gpu_report *r, const struct model *m,
			   const char *path, size_t limit);
void gpu_report_free(struct gpu_report *r);

#endif
