/* SPDX-License-Identifier: MIT */
/*
 * Recordings shaped to hurt the offline views (tests/e2e/hostile-views.sh),
 * written with the project's writer:
 *
 *   view-recordings deep OUT DEPTH     one stack DEPTH frames deep, a sample
 *                                      ending at each of its depths
 *   view-recordings storm OUT N        N kernel spans of one launch (one
 *                                      correlation) and N PC sample buckets
 *                                      of a kernel none of them ran
 *   view-recordings overflow OUT       two spans of a lane whose durations
 *                                      add past 2^64 ns
 *   view-recordings names OUT          a thread renamed mid-run, names with
 *                                      terminal escapes, a newline and ';'
 *   view-recordings meta OUT N         N meta keys, each written once
 *   view-recordings launches OUT N     a training loop's shape at scale: N
 *                                      kernels, each launched 50 us after
 *                                      the last one ended, and 10 samples
 *                                      of the launching thread per kernel
 *                                      (bench/analyze.sh)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/synth.h"

#define PID 100
#define TID 100

/*
 * Frames f0 (outermost) .. f<depth-1>, and a sample at each depth: depth
 * distinct stacks whose lengths add up to depth^2 / 2.
 */
static void deep(struct synth *s, unsigned long depth)
{
	uint32_t dso = synth_dso(s, "/usr/bin/deep");
	uint32_t parent = 0;

	synth_meta(s, "event", "cpu-clock");
	synth_meta(s, "frequency", "1000");
	synth_comm(s, PID, TID, "deep");
	for (unsigned long d = 0; d < depth; d++) {
		char name[32];
		struct tr_node *node = VEC_PUSH(&s->t.nodes);

		snprintf(name, sizeof(name), "f%lu", d);
		node->parent = parent;
		node->loc = synth_loc(s, dso, 0x1000 + 16 * d, name);
		parent = (uint32_t)s->t.nodes.len;
		synth_samples(s, PID, TID, parent, 1);
	}
}

/*
 * One launch (correlation 7) whose n kernel spans each ran a kernel of
 * its own, and n buckets of a kernel "missing" none of them ran: each
 * bucket's lookup sees every span of its launch.
 */
static void storm(struct synth *s, unsigned long n)
{
	uint32_t lane = synth_lane(s, PID, "GPU0 stream 7");

	synth_comm(s, PID, TID, "storm");
	synth_meta(s, "cuda.pc.status", "on");
	for (unsigned long i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "k%lu", i);
		synth_span(s, lane, name, SYNTH_T0 + i * 1000, 500);
		synth_span_attr(s, "correlation", 7);
	}
	for (unsigned long i = 0; i < n; i++) {
		struct tr_pc_sample *b = VEC_PUSH(&s->t.pc_samples);

		b->pid = PID;
		b->correlation = 7;
		b->function = synth_str(s, "missing");
		b->pc = 16 * i;
		b->stall = synth_str(s, "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
		b->count = 1;
	}
}

/*
 * A lane's two spans whose durations add past 2^64 ns: added up, they wrap
 * to 2 ns, less than the longer one alone.
 */
static void overflow(struct synth *s)
{
	uint32_t lane = synth_lane_kind(s, PID, "queue", "big");

	synth_comm(s, PID, TID, "overflow");
	synth_span(s, lane, "long", SYNTH_T0, UINT64_MAX);
	synth_span(s, lane, "short", SYNTH_T0, 3);
}

/*
 * Thread 100 is "before" for 3 samples, then renamed "after" for 5; thread
 * 101 has a name with a terminal title escape and a screen clear, thread
 * 102 one with a newline and a ';'.
 */
static void names(struct synth *s)
{
	uint32_t dso = synth_dso(s, "/usr/bin/names");
	uint32_t locs[2] = {
		synth_loc(s, dso, 0x1000, "main"),
		synth_loc(s, dso, 0x2000, "work"),
	};
	uint32_t node = synth_stack(s, locs, 2);

	synth_meta(s, "event", "cpu-clock");
	synth_task(s, TR_TASK_COMM, PID, TID, synth_str(s, "before"), SYNTH_T0);
	synth_samples(s, PID, TID, node, 3);
	synth_task(s, TR_TASK_COMM, PID, TID, synth_str(s, "after"), s->ts);
	synth_samples(s, PID, TID, node, 5);
	synth_task(s, TR_TASK_COMM, PID, TID + 1, synth_str(s, "\x1b]0;PWN\a\x1b[2J"), s->ts);
	synth_samples(s, PID, TID + 1, node, 2);
	synth_task(s, TR_TASK_COMM, PID, TID + 2, synth_str(s, "fake\nline;frame"), s->ts);
	synth_samples(s, PID, TID + 2, node, 2);
}

/* n distinct meta keys: a view that looks each up among all the others is quadratic. */
static void meta(struct synth *s, unsigned long n)
{
	uint32_t dso = synth_dso(s, "/usr/bin/meta");
	uint32_t loc = synth_loc(s, dso, 0x1000, "main");

	synth_comm(s, PID, TID, "meta");
	synth_samples(s, PID, TID, synth_stack(s, &loc, 1), 1);
	for (unsigned long i = 0; i < n; i++) {
		char key[32];

		snprintf(key, sizeof(key), "k%lu", i);
		synth_meta(s, key, "v");
	}
}

/*
 * N slots of 100 us: a launch call (5 us) at the start of each, its kernel
 * from 10 us to 60 us, a synchronizing call every 100th slot; samples of
 * the launching thread every 10 us on 4 stacks 20 frames deep.
 */
static void launches(struct synth *s, unsigned long n)
{
	uint32_t dso = synth_dso(s, "/usr/bin/train");
	uint32_t stream = synth_lane(s, PID, "GPU0 stream 7");
	uint32_t api = synth_lane_kind(s, PID, "cuda-api", "CUDA API");
	uint32_t wait = synth_lane_kind(s, PID, "cuda-wait", "CPU wait");
	uint32_t stacks[4], locs[20];

	synth_meta(s, "event", "cpu-clock");
	synth_meta(s, "frequency", "100000");
	synth_comm(s, PID, TID, "train");
	for (int k = 0; k < 4; k++) {
		for (int d = 0; d < 20; d++) {
			char name[32];

			snprintf(name, sizeof(name), "f%d_%d", d, d < 10 ? 0 : k);
			locs[d] = synth_loc(s, dso, 0x1000 + 16 * (uint64_t)(k * 20 + d), name);
		}
		stacks[k] = synth_stack(s, locs, 20);
	}
	for (unsigned long i = 0; i < n; i++) {
		uint64_t t = SYNTH_T0 + i * 100000;

		synth_span_from(s, api, "cuLaunchKernel", t, 5000, TID, t);
		synth_span_from(s, stream, i % 2 ? "step_a" : "step_b", t + 10000, 50000, TID,
				t + 1000);
		if (i % 100 == 99)
			synth_span_from(s, wait, "cuCtxSynchronize", t + 6000, 54000, TID, t + 6000);
		for (int j = 0; j < 10; j++) {
			struct tr_sample *smp = VEC_PUSH(&s->t.samples);

			*smp = (struct tr_sample){ .ts = t + (uint64_t)j * 10000, .pid = PID,
						   .tid = TID, .node = stacks[(i + j) % 4] };
		}
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: view-recordings deep OUT DEPTH | storm OUT N | overflow OUT |"
		" names OUT |\n       meta OUT N | launches OUT N\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct synth s = {0};
	uint64_t features = TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS;
	unsigned long n = 0;
	int err;

	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "deep") || !strcmp(argv[1], "storm") || !strcmp(argv[1], "meta") ||
	    !strcmp(argv[1], "launches")) {
		if (argc != 4 || !(n = strtoul(argv[3], NULL, 10)) || n > UINT32_MAX / 2)
			return usage();
	} else if (argc != 3) {
		return usage();
	}
	if (!strcmp(argv[1], "deep")) {
		deep(&s, n);
	} else if (!strcmp(argv[1], "storm")) {
		storm(&s, n);
		features = TR_FEAT_LANES | TR_FEAT_GPU_PC;
	} else if (!strcmp(argv[1], "overflow")) {
		overflow(&s);
		features = TR_FEAT_LANES;
	} else if (!strcmp(argv[1], "meta")) {
		meta(&s, n);
	} else if (!strcmp(argv[1], "names")) {
		names(&s);
	} else if (!strcmp(argv[1], "launches")) {
		launches(&s, n);
		features |= TR_FEAT_LANES;
	} else {
		return usage();
	}
	err = synth_write(&s, argv[2], features);
	synth_free(&s);
	if (err) {
		fprintf(stderr, "view-recordings: cannot write '%s': error %d\n", argv[2], err);
		return 1;
	}
	return 0;
}
