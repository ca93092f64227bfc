/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_ANALYSIS_VIEWS_DIFF_PRIVATE_H
#define GTRACE_ANALYSIS_VIEWS_DIFF_PRIVATE_H

/* What diff.c takes of diff-findings.c. */

#include "analysis/views/diff.h"

/* One figure of analyze's for a row of kind DIFF_RULE or DIFF_IDLE. */
struct diff_figure {
	enum diff_kind kind;
	char where[48];		/* the device, "" for a finding of no device */
	char name[48];		/* the rule, or "<cause> idle" */
	uint64_t ns;		/* the time at stake, or the idle time */
};

/* The figures of analyze on f's model, *n of them: findings, then idle causes. Free it. */
struct diff_figure *diff_findings(struct funcs *f, const struct diff_opts *o, size_t *n);

#endif
