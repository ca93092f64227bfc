/* SPDX-License-Identifier: MIT */
/*
 * What libgtrace-target costs the application: gtrace_reporting_active()
 * and gtrace_span() while no recording runs, and gtrace_span() while one
 * does (run it under gtrace record with --wait-active). Spans are timed in
 * batches, paced below what the library drains, so that every call takes
 * the normal path rather than the cheaper drop path.
 *
 *   target-span [--wait-active SECONDS] [--batches N]
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gtrace/target.h>

#define ACTIVE_CALLS 100000000
#define BATCH 100
#define BATCH_EVERY_NS 100000	/* 1 million spans a second */
#define NAMES 500

static volatile uint64_t sink;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double active_ns(void)
{
	uint64_t t0 = gtrace_now_ns(), n = 0;

	for (int i = 0; i < ACTIVE_CALLS; i++)
		n += gtrace_reporting_active();
	sink = n;
	return (double)(gtrace_now_ns() - t0) / ACTIVE_CALLS;
}

/* Per-span ns of each batch of BATCH calls, sorted. */
static uint64_t *time_spans(gtrace_lane *lane, char names[][16], long batches)
{
	uint64_t *per_span = calloc(batches, sizeof(*per_span));
	uint64_t next = gtrace_now_ns();
	gtrace_origin origin = gtrace_current_origin();

	for (long b = 0; b < batches; b++) {
		uint64_t t0, t1;

		while (gtrace_now_ns() < next)
			;
		next += BATCH_EVERY_NS;
		t0 = gtrace_now_ns();
		for (int i = 0; i < BATCH; i++) {
			uint64_t k = (uint64_t)b * BATCH + i;

			gtrace_span(lane, names[k % NAMES], t0 + k, t0 + k + 1000, &origin);
		}
		t1 = gtrace_now_ns();
		per_span[b] = (t1 - t0) / BATCH;
	}
	qsort(per_span, batches, sizeof(*per_span), cmp_u64);
	return per_span;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "wait-active", required_argument, NULL, 'w' },
		{ "batches", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	static char names[NAMES][16];
	double wait_s = 0;
	long batches = 20000;
	uint64_t *ns;
	gtrace_lane *lane;
	int c;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		if (c == 'w')
			wait_s = atof(optarg);
		else if (c == 'b')
			batches = atol(optarg);
		else
			return 2;
	}
	if (batches < 1)
		return 2;
	for (int i = 0; i < NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "kernel-%d", i);

	/* off: before any other call, the library not even started (on
	 * under gtrace record, where it connects as the program loads) */
	printf("reporting_active %s: %.2f ns/call\n", gtrace_reporting_active() ? "on" : "off",
	       active_ns());

	lane = gtrace_lane_get("bench", "span cost");
	if (wait_s > 0) {
		uint64_t until = gtrace_now_ns() + (uint64_t)(wait_s * 1e9);

		while (!gtrace_reporting_active())
			if (gtrace_now_ns() > until) {
				fprintf(stderr, "target-span: reporting not active after %g s\n", wait_s);
				return 3;
			}
	}
	ns = time_spans(lane, names, batches);
	printf("span %s: median %" PRIu64 " ns, p99 %" PRIu64 " ns (%ld batches of %d)\n",
	       gtrace_reporting_active() ? "recording" : "off", ns[batches / 2],
	       ns[batches * 99 / 100], batches, BATCH);
	gtrace_flush(2000);
	printf("spans reported %" PRIu64 ", dropped %" PRIu64 "\n", gtrace_reported_spans(),
	       gtrace_dropped_spans());
	free(ns);
	return 0;
}
