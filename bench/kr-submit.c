/* SPDX-License-Identifier: MIT */
/*
 * What gtrace_kr_submit costs the host and the file: buffers as a kernel of
 * 16 blocks x 3 groups leaves them, each lane's leader marking 3 regions
 * (load, compute, store) and finishing, decoded and reported COLLECTS
 * times, one a millisecond (a launch's pace, which the library's queue
 * keeps up with). Prints the CPU time per 1000 events; run under gtrace
 * record with --wait-active, the recording holds every region as a span.
 *
 *   kr-submit [--wait-active SECONDS] [--collects N]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kr-encode.h"

#define BLOCKS 16
#define GROUPS 3
#define REGIONS 3
/* Per lane: a begin and an end per region, and the finish. */
#define LANE_EVENTS (2 * REGIONS + 1)

static const char *const region_names[REGIONS] = { "load", "compute", "store" };

/* One launch's buffer; its GPU times start at t0, compute the longest region. */
static void fill(uint64_t *buf, uint64_t t0)
{
	static const uint64_t region_ns[REGIONS] = { 2000, 40000, 1500 };
	struct launch l = launch_1d(BLOCKS, GROUPS);

	for (uint32_t b = 0; b < BLOCKS; b++) {
		for (unsigned g = 0; g < GROUPS; g++) {
			struct leader k = leader_1d(buf, &l, b, g);
			uint64_t t = t0 + 100 * b + 10 * g;

			for (unsigned r = 0; r < REGIONS; r++) {
				begin(&k, r, t);
				t += region_ns[r] + (b * 37 + g * 11) % 500;
				end(&k, r, t);
			}
			finish(&k, t);
		}
	}
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "wait-active", required_argument, NULL, 'w' },
		{ "collects", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t capacity = BLOCKS * GROUPS * (LANE_EVENTS + 1), t0, events = 0;
	double wait_s = 0;
	long collects = 1000;
	uint64_t *buf;
	int opt;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (opt == 'w')
			wait_s = atof(optarg);
		else if (opt == 'c')
			collects = atol(optarg);
		else
			return 2;
	}
	for (uint64_t until = gtrace_now_ns() + (uint64_t)(wait_s * 1e9);
	     wait_s > 0 && !gtrace_reporting_active() && gtrace_now_ns() < until;)
		;
	buf = buffer_new(capacity);
	t0 = cpu_ns();
	for (long c = 0; c < collects; c++) {
		const struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
		fill(buf, 1000000000ull + (uint64_t)c * 100000);
		if (gtrace_kr_submit(buf, buffer_words(buf), "attn_fwd", region_names, REGIONS,
				     0, 500))
			return 1;
		events += buf[GTRACE_KR_HDR_CLAIMED] - BLOCKS * GROUPS;
		for (size_t w = GTRACE_KR_HDR_CLAIMED; w < buffer_words(buf); w++)
			buf[w] = 0;
	}
	printf("%ld collects, %llu events: %.1f us of CPU per 1000 events\n", collects,
	       (unsigned long long)events, (double)(cpu_ns() - t0) / 1000.0 / ((double)events / 1000));
	gtrace_flush(2000);
	free(buf);
	return 0;
}
