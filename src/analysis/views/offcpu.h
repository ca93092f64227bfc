/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_OFFCPU_H
#define GTRACE_ANALYSIS_VIEWS_OFFCPU_H

/*
 * report --off-cpu: the time threads spent off the CPU by thread name,
 * stack and reason (blocked or preempted), the stack being the one each
 * thread went off the CPU in where the recorder sampled the switches, else
 * its last sample's, and with kernel frames the kind of wait the innermost
 * of them names (futex, sleep, I/O, page fault, poll, child).
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"

struct offcpu_row {
	uint32_t comm;		/* funcs names id of the thread's name */
	uint32_t node;		/* the stack, 0 unknown */
	uint32_t reason;	/* enum tr_offcpu_reason */
	const char *wait;	/* the kernel's kind of wait, or NULL */
	uint64_t ns, intervals;
};

struct offcpu_report {
	VEC(struct offcpu_row) rows;	/* most time first */
	uint64_t total_ns, intervals;
	bool switch_stacks;	/* the stacks were sampled at the switches */
};

/* "blocked", "preempted" or "unknown" (for any other value too). */
const char *offcpu_reason_name(uint32_t reason);

/* The rows of the threads flt selects (pid, tid, comm, rank). */
void offcpu_report_build(struct offcpu_report *r, struct funcs *f,
			 const struct sample_filter *flt);
void offcpu_report_free(struct offcpu_report *r);
/* At most limit rows, 0 all. */
void offcpu_report_print(FILE *out, const struct offcpu_report *r, const struct funcs *f,
			 const char *path, size_t limit);
/* The same as one JSON document (gtrace-report(1) lists its keys). */
void offcpu_report_print_json(FILE *out, const struct offcpu_report *r,
			      const struct funcs *f, const char *path, size_t limit);

#endif
