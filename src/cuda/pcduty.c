/* SPDX-License-Identifier: MIT */
#include "cuda/pcduty.h"

void pc_duty_init(struct pc_duty *d, unsigned rate)
{
	*d = (struct pc_duty){ .rate = rate };
}

enum pc_duty_action pc_duty_tick(struct pc_duty *d, uint64_t now)
{
	if (!d->open && now >= d->next_ns) {
		d->open = true;
		d->opened_ns = now;
		return PC_DUTY_START;
	}
	if (d->open && d->rate && now - d->opened_ns >= PC_WINDOW_NS) {
		d->open = false;
		return PC_DUTY_STOP;
	}
	return PC_DUTY_NONE;
}

void pc_duty_closed(struct pc_duty *d, uint64_t now, uint64_t pairs)
{
	/* The window and its gap together should hold pairs / rate seconds. */
	uint64_t span_ns = d->rate ? pairs * 1000000000ull / d->rate : 0;
	uint64_t held_ns = now - d->opened_ns;
	uint64_t gap_ns = span_ns > held_ns ? span_ns - held_ns : 0;

	d->open = false;
	d->next_ns = now + (gap_ns < PC_GAP_MAX_NS ? gap_ns : PC_GAP_MAX_NS);
}

void pc_duty_failed(struct pc_duty *d, uint64_t now)
{
	d->open = false;
	d->next_ns = now + PC_WINDOW_NS;
}
