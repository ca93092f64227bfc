/* SPDX-License-Identifier: MIT */
/*
 * origins OUT: writes the golden recording of span origins, one span at
 * least of every outcome a span's origin can have (src/analysis/passes/origins.c),
 * which no workload makes at once: process 300 ("app") samples its main
 * thread "app" in produce for 20 ms, then its thread "worker" in consume
 * for 10 ms (1000 Hz, one sample a millisecond); its thread "waiter" has
 * no sample. Its lanes "jobs" and "io" (kind "queue") hold:
 *   parse x2   linked: queued by app while it was sampled
 *   render     none: no origin
 *   render     bad_tid: a time but tid 0
 *   flush      bad_tid: a lane's tid
 *   read       no_thread: tid 999, which the recording does not have
 *   read       no_stack: waiter, never sampled with a stack
 *   write      too_far: worker, 170 ms after its last sample
 *   write      linked: queued by worker while it was sampled
 * Exit status 0, or 1 with a message.
 */
#include <stdio.h>

#include "tests/unit/synth.h"

#define APP 300
#define WORKER 301
#define WAITER 302
#define MS 1000000ull

static void threads(struct synth *s)
{
	uint32_t app = synth_dso(s, "/usr/bin/app");
	uint32_t main_loc = synth_loc(s, app, 0x1100, "main");
	uint32_t produce = synth_loc(s, app, 0x1200, "produce");
	uint32_t worker_main = synth_loc(s, app, 0x1300, "worker_main");
	uint32_t consume = synth_loc(s, app, 0x1400, "consume");

	synth_task(s, TR_TASK_NEW, APP, APP, 0, SYNTH_T0);
	synth_comm(s, APP, APP, "app");
	synth_task(s, TR_TASK_NEW, APP, WORKER, APP, SYNTH_T0);
	synth_comm(s, APP, WORKER, "worker");
	synth_task(s, TR_TASK_NEW, APP, WAITER, APP, SYNTH_T0);
	synth_comm(s, APP, WAITER, "waiter");
	synth_samples(s, APP, APP, synth_stack(s, (uint32_t[]){ main_loc, produce }, 2), 20);
	synth_samples(s, APP, WORKER, synth_stack(s, (uint32_t[]){ worker_main, consume }, 2), 10);
	synth_offcpu(s, WAITER, SYNTH_T0, SYNTH_T0 + 200 * MS);
	synth_task(s, TR_TASK_EXIT, APP, WORKER, 0, SYNTH_T0 + 30 * MS);
}

static void spans(struct synth *s)
{
	uint32_t jobs = synth_lane_kind(s, APP, "queue", "jobs");
	uint32_t io = synth_lane_kind(s, APP, "queue", "io");
	uint64_t t0 = SYNTH_T0;

	synth_span_from(s, jobs, "parse", t0 + 6 * MS, 2 * MS, APP, t0 + 5 * MS + 300000);
	synth_span_attr(s, "bytes", 4096);
	synth_span_from(s, jobs, "parse", t0 + 13 * MS, 3 * MS, APP, t0 + 12 * MS + 600000);
	synth_span_attr(s, "bytes", 8192);
	synth_span_from(s, jobs, "render", t0 + 17 * MS, 1 * MS, 0, 0);
	synth_span_from(s, jobs, "render", t0 + 19 * MS, 1 * MS, 0, t0 + 18 * MS);
	synth_span_from(s, jobs, "flush", t0 + 21 * MS, 500000, TR_SYNTHETIC_TID_BASE,
			t0 + 20 * MS);
	synth_span_from(s, io, "read", t0 + 9 * MS, 4 * MS, 999, t0 + 8 * MS);
	synth_span_from(s, io, "read", t0 + 14 * MS, 2 * MS, WAITER, t0 + 13 * MS);
	synth_span_from(s, io, "write", t0 + 25 * MS, 1 * MS, WORKER, t0 + 24 * MS + 200000);
	synth_span_from(s, io, "write", t0 + 200 * MS, 1 * MS, WORKER, t0 + 199 * MS);
}

/* What the recorder says of the run: it named every address (no reader looks for local files). */
static void about(struct synth *s)
{
	static const char *const meta[][2] = {
		{ "command", "app --jobs 2" }, { "event", "cpu-clock" }, { "frequency", "1000" },
		{ "call-graph", "dwarf" }, { "hostname", "golden" }, { "duration", "0.201" },
		{ "start-ns", "1000000000" }, { "end-ns", "1201000000" },
	};
	static const struct {
		const char *name;
		uint64_t value;
	} counters[] = {
		{ "samples", 30 }, { "threads", 3 }, { "processes", 1 }, { "symbols.resolved", 4 },
		{ "target.spans", 9 }, { "target.lanes", 2 }, { "target.processes", 1 },
	};

	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
		synth_meta(s, meta[i][0], meta[i][1]);
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		synth_counter(s, counters[i].name, counters[i].value);
}

int main(int argc, char **argv)
{
	struct synth s = {0};
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: origins OUT\n");
		return 1;
	}
	threads(&s);
	spans(&s);
	about(&s);
	err = synth_write(&s, argv[1], TR_FEAT_CPU_SAMPLES | TR_FEAT_DWARF_STACKS |
			       TR_FEAT_OFFCPU | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
	synth_free(&s);
	if (err) {
		fprintf(stderr, "origins: cannot write '%s': %s\n", argv[1], tr_strerror(err));
		return 1;
	}
	return 0;
}
