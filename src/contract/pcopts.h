/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CONTRACT_PCOPTS_H
#define GTRACE_CONTRACT_PCOPTS_H

/*
 * The settings of GPU PC sampling: what gtrace record --gpu-pc-sampling
 * takes, and what the CUDA agent reads back from $GTRACE_CUDA_PC. One
 * parser for both ends, so that they cannot read a setting differently.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PC_OPTS_ENV "GTRACE_CUDA_PC"

struct pc_opts {
	unsigned period;	/* a sample every 2^period cycles: 5..31 */
	bool continuous;	/* else kernel-serialized */
	unsigned rate;		/* stall-reason pairs a second to keep; 0: always on */
	uint64_t cubin_max;	/* bytes of cubins a recording keeps */
};

#define PC_OPTS_DEFAULT { .period = 20, .continuous = false, .rate = 100, .cubin_max = 64u << 20 }

/*
 * Applies "key=value,..." (period, mode, rate, cubin-max) to o. Returns 0,
 * or -EINVAL with what is wrong in why ("unknown key 'x'", ...).
 */
int pc_opts_parse(struct pc_opts *o, const char *s, char *why, size_t size);

/* o in the form pc_opts_parse reads. */
void pc_opts_format(const struct pc_opts *o, char *buf, size_t size);

#endif
