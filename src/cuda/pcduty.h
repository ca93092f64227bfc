/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CUDA_PCDUTY_H
#define GTRACE_CUDA_PCDUTY_H

/*
 * When PC sampling is on: short windows with gaps between them, the gaps
 * steered so that about `rate` stall-reason pairs a second are kept. What
 * a window brought sets the gap after it: a kernel that fills the buffers
 * in 50 ms gets seconds of rest, a quiet GPU almost none. Pure: the caller
 * brings the clock, at the moments it may start or stop sampling.
 */

#include <stdbool.h>
#include <stdint.h>

#define PC_WINDOW_NS (50ull * 1000000)
#define PC_GAP_MAX_NS (30ull * 1000000000)	/* a window at least this often */

enum pc_duty_action {
	PC_DUTY_NONE,
	PC_DUTY_START,
	PC_DUTY_STOP,
};

struct pc_duty {
	unsigned rate;		/* pairs a second; 0: one window, never closed */
	bool open;
	uint64_t opened_ns;	/* the open window's start */
	uint64_t next_ns;	/* the next window's earliest start */
};

/* The first window may open at once. */
void pc_duty_init(struct pc_duty *d, unsigned rate);

/* What to do now; START and STOP are done (the window open or not) on return. */
enum pc_duty_action pc_duty_tick(struct pc_duty *d, uint64_t now);

/* The window that STOP closed at now brought pairs: sets the gap. */
void pc_duty_closed(struct pc_duty *d, uint64_t now, uint64_t pairs);

/* A START that failed: the window counts as not opened, the next try after a window. */
void pc_duty_failed(struct pc_duty *d, uint64_t now);

#endif
