/* SPDX-License-Identifier: MIT */
/*
 * gtrace export on synthetic recordings: what the walk decides (which
 * track a span goes to, GPU groups, NVTX threads, flows, the window) and
 * how the writers escape what the file may hold (quotes, control bytes,
 * bytes that are not UTF-8). The e2e test decodes whole traces.
 */
#include <stdio.h>

#include "analysis/encoders/export.h"
#include "analysis/passes/passes.h"
#include "contract/attrs.h"
#include "contract/lanes.h"
#include "exports.h"
#include "synth.h"
#include "test.h"

#define PID 10
#define WORKER 11
#define US 1000ull

/*
 * A process whose main thread has a name to escape, a worker, a GPU
 * stream with three kernels (b inside a, c overlapping a without nesting)
 * and an NVTX lane with ranges of both threads.
 */
static void make_model(struct model *m)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t locs[] = { synth_loc(&s, dso, 0x1000, "main"), synth_loc(&s, dso, 0x2000, "launch") };
	uint32_t stream, nvtx;

	synth_meta(&s, "command", "app --flag \"x\"");
	synth_comm(&s, PID, PID, "app\"\\\x01\xff");
	synth_comm(&s, PID, WORKER, "worker");
	synth_samples(&s, PID, PID, synth_stack(&s, locs, 2), 10);	/* 1 s .. 1.009 s */
	synth_samples(&s, PID, WORKER, synth_stack(&s, locs, 1), 10);	/* 1.010 s .. */
	synth_offcpu(&s, WORKER, SYNTH_T0, SYNTH_T0 + 5 * SYNTH_PERIOD);
	stream = synth_lane(&s, PID, "GPU1 stream 3");
	synth_span_from(&s, stream, "a", SYNTH_T0 + 100 * US, 100 * US, PID, SYNTH_T0);
	synth_span_attr(&s, "grid.x", 4096);
	synth_span_attr(&s, "occupancy.limiter", CUDA_OCC_LIMIT_REGISTERS);
	synth_span(&s, stream, "b", SYNTH_T0 + 120 * US, 30 * US);
	synth_span_from(&s, stream, "c", SYNTH_T0 + 180 * US, 80 * US, 12345, SYNTH_T0);
	nvtx = synth_lane_kind(&s, PID, "nvtx", "NVTX");
	synth_span_from(&s, nvtx, "main range", SYNTH_T0, 5 * SYNTH_PERIOD, PID, SYNTH_T0);
	synth_span_from(&s, nvtx, "worker range", SYNTH_T0, 5 * SYNTH_PERIOD, WORKER, SYNTH_T0);
	synth_counter(&s, "samples", 20);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_OFFCPU | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
	synth_free(&s);
}

static void test_chrome(void)
{
	struct model m;
	size_t len;
	char *json;

	make_model(&m);
	json = export_text(&m, EXPORT_CHROME, NULL, 0, UINT64_MAX, &len);
	/* Escaped, and the stray byte replaced: the JSON stays valid UTF-8. */
	CHECK(export_count(json, len, "\"name\":\"app\\\"\\\\\\u0001\xef\xbf\xbd\"") == 2);	/* process and thread */
	CHECK(export_count(json, len, "\"command\":\"app --flag \\\"x\\\"\"") == 2);	/* instant and metadata */
	/* b nests in a; c overlaps a, so it goes to a second track of the lane. */
	CHECK(export_count(json, len, "\"args\":{\"name\":\"GPU1 stream 3\"}") == 1);
	CHECK(export_count(json, len, "\"args\":{\"name\":\"GPU1 stream 3 #2\"}") == 1);
	CHECK(export_count(json, len, "\"name\":\"a\",\"pid\":10,\"tid\":4293918720,") == 1);
	CHECK(export_count(json, len, "\"name\":\"b\",\"pid\":10,\"tid\":4293918720,") == 1);
	/* Past the busy row's tid, the first past the lanes'. */
	CHECK(export_count(json, len, "\"name\":\"c\",\"pid\":10,\"tid\":4293918723,") == 1);
	/* The occupancy limiter by its name, as report --gpu prints it. */
	CHECK(export_count(json, len, "\"ts\":100.000,\"dur\":100.000,\"args\":{\"grid.x\":4096,"
			       "\"occupancy.limiter\":\"registers\","
			       "\"origin.tid\":10,\"origin\":\"linked\",\"queue.delay.ns\":100000}") == 1);
	/* c's origin names a thread the recording never saw: an attribute, no flow. */
	CHECK(export_count(json, len, "\"origin.tid\":12345,\"origin\":\"no_thread\"") == 1);
	/* a and the main thread's range; the worker's range began too far from its samples. */
	CHECK(export_count(json, len, "\"ph\":\"s\"") == 2);
	CHECK(export_count(json, len, "\"ph\":\"f\"") == 2);
	CHECK(export_count(json, len, "\"origin.tid\":11,\"origin\":\"too_far\"") == 1);
	/* NVTX ranges: a track per thread, named after it, listed with it (the worker is track 4). */
	CHECK(export_count(json, len, "\"args\":{\"name\":\"worker 11 NVTX\"}") == 1);
	CHECK(export_count(json, len, "\"args\":{\"sort_index\":4}") == 2);
	CHECK(export_count(json, len, "\"name\":\"off-CPU\",\"pid\":10,\"tid\":11,\"cat\":\"off-cpu\","
			       "\"ts\":0.000,\"dur\":5000.000}") == 1);
	CHECK(export_count(json, len, "\"cat\":\"cpu\"") == 20);
	/* The stacks' frames, then those of the lanes' slices, b inside a. */
	CHECK(export_count(json, len, "\"stackFrames\":{\n\"1\":{\"name\":\"main\",\"category\":\"app\"},"
			       "\n\"2\":{\"name\":\"launch\",\"category\":\"app\",\"parent\":\"1\"},"
			       "\n\"3\":{\"name\":\"busy\",\"category\":\"busy\"},"
			       "\n\"4\":{\"name\":\"a\",\"category\":\"cuda\"},"
			       "\n\"5\":{\"name\":\"b\",\"category\":\"cuda\",\"parent\":\"4\"},") == 1);
	/* The lane's slices in "samples", for speedscope: where each starts and ends. */
	CHECK(export_count(json, len, "\n{\"pid\":10,\"tid\":4293918720,\"ts\":100.000,\"name\":\"a\",\"sf\":4},"
			       "\n{\"pid\":10,\"tid\":4293918720,\"ts\":120.000,\"name\":\"b\",\"sf\":5},"
			       "\n{\"pid\":10,\"tid\":4293918720,\"ts\":150.000,\"name\":\"a\",\"sf\":4},"
			       "\n{\"pid\":10,\"tid\":4293918720,\"ts\":200.000},\n") == 1);
	free(json);
	model_free(&m);
}

static void test_window_and_filter(void)
{
	struct sample_filter flt = {0};
	struct model m;
	size_t len;
	char *json;

	make_model(&m);
	/* From 1.010 s on: the worker's samples only, and no span. */
	json = export_text(&m, EXPORT_CHROME, NULL, 10 * SYNTH_PERIOD, UINT64_MAX, &len);
	CHECK(export_count(json, len, "\"cat\":\"cpu\"") == 10);
	CHECK(export_count(json, len, "\"cat\":\"cpu\",\"ts\":10000.000") == 1);
	CHECK(export_count(json, len, "\"ph\":\"X\"") == 0);
	free(json);
	/* Up to 150 us: the spans that began before, whole. */
	json = export_text(&m, EXPORT_CHROME, NULL, 0, 150 * US, &len);
	CHECK(export_count(json, len, "\"cat\":\"cpu\"") == 1);
	CHECK(export_count(json, len, "\"name\":\"a\",\"pid\"") == 2);	/* the span and its origin */
	CHECK(export_count(json, len, "\"name\":\"c\"") == 0);
	free(json);
	/* The worker: its track, its range and off-CPU time; not the main thread's. */
	CHECK(filter_add(&flt, FILTER_TID, "11") == 0);
	json = export_text(&m, EXPORT_CHROME, &flt, 0, UINT64_MAX, &len);
	CHECK(export_count(json, len, "\"thread_name\"") == 2);	/* the worker, its NVTX track */
	CHECK(export_count(json, len, "\"cat\":\"cpu\"") == 10);
	CHECK(export_count(json, len, "\"name\":\"worker range\",\"pid\"") == 1);
	CHECK(export_count(json, len, "\"name\":\"main range\"") == 0);
	free(json);
	filter_free(&flt);
	CHECK(model_window_has_events(&m, 0, 1));
	CHECK(!model_window_has_events(&m, 30 * SYNTH_PERIOD, UINT64_MAX));
	CHECK(!model_window_has_events(&m, 5, 5));
	model_free(&m);
}

/*
 * Speedscope weighs a sample by the time to its thread's next entry in
 * "samples": after a sample whose thread's next comes more than two
 * periods later, and after its last, an idle entry one period on.
 */
static void test_idle_entries(void)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t loc = synth_loc(&s, dso, 0x1000, "main");
	struct model m;
	size_t len;
	char *json;

	synth_meta(&s, "frequency", "1000");		/* a period of SYNTH_PERIOD */
	synth_comm(&s, PID, PID, "app");
	synth_samples(&s, PID, PID, synth_stack(&s, &loc, 1), 2);	/* 0 and 1 ms */
	s.ts += 5 * SYNTH_PERIOD;
	synth_samples(&s, PID, PID, synth_stack(&s, &loc, 1), 1);	/* 7 ms */
	s.ts += SYNTH_PERIOD;
	synth_samples(&s, PID, PID, synth_stack(&s, &loc, 1), 1);	/* 9 ms: two periods on */
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS);
	synth_free(&s);
	json = export_text(&m, EXPORT_CHROME, NULL, 0, UINT64_MAX, &len);
	CHECK(export_count(json, len, "\"samples\":[\n"
			       "{\"pid\":10,\"tid\":10,\"ts\":0.000,\"cpu\":0,\"name\":\"main\",\"sf\":1},\n"
			       "{\"pid\":10,\"tid\":10,\"ts\":1000.000,\"cpu\":0,\"name\":\"main\",\"sf\":1},\n"
			       "{\"pid\":10,\"tid\":10,\"ts\":2000.000},\n"
			       "{\"pid\":10,\"tid\":10,\"ts\":7000.000,\"cpu\":0,\"name\":\"main\",\"sf\":1},\n"
			       "{\"pid\":10,\"tid\":10,\"ts\":9000.000,\"cpu\":0,\"name\":\"main\",\"sf\":1},\n"
			       "{\"pid\":10,\"tid\":10,\"ts\":10000.000}],") == 1);
	free(json);
	model_free(&m);
}

static void test_perfetto(void)
{
	struct model m;
	size_t len;
	char *pb;

	make_model(&m);
	pb = export_text(&m, EXPORT_PERFETTO, NULL, 0, UINT64_MAX, &len);
	/* A Trace: TracePacket fields, the first a track descriptor clearing the state. */
	CHECK(len > 4 && (uint8_t)pb[0] == 0x0a && (uint8_t)pb[2] == 0xe2 && (uint8_t)pb[3] == 0x03);
	CHECK(export_count(pb, len, "GPU 1") == 2);		/* the stream's group, its busy row */
	CHECK(export_count(pb, len, "GPU1 stream 3 #2") == 1);
	CHECK(export_count(pb, len, "grid.x") == 1);		/* interned once */
	CHECK(export_count(pb, len, "registers") == 1);		/* the limiter by name */
	CHECK(export_count(pb, len, "launch") == 1);
	free(pb);
	model_free(&m);
}

#define REALTIME_T0 1700000000000000000ull	/* CLOCK_REALTIME at SYNTH_T0 */

/*
 * A process read at three ticks, 1, 3 and 4 ms in: its CPU share (an
 * average since the tick before, so none at the first) and its RSS (what
 * it was at the tick); the clocks read together at SYNTH_T0.
 */
static void make_metrics_model(struct model *m)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t loc = synth_loc(&s, dso, 0x1000, "main");
	uint32_t user, rss;
	char clocks[64];

	snprintf(clocks, sizeof(clocks), "%llu %llu", REALTIME_T0, SYNTH_T0);
	synth_meta(&s, "clock-start", clocks);
	synth_comm(&s, PID, PID, "app");
	synth_samples(&s, PID, PID, synth_stack(&s, &loc, 1), 5);
	user = synth_metric(&s, "proc.cpu.user", "%", PID, 0, 1);
	rss = synth_metric(&s, "proc.rss", "KiB", PID, 0, 0);
	synth_metric_tick(&s, SYNTH_T0 + 1 * SYNTH_PERIOD, &rss, (uint64_t[]){ 100 }, 1);
	synth_metric_tick(&s, SYNTH_T0 + 3 * SYNTH_PERIOD, (uint32_t[]){ user, rss },
			  (uint64_t[]){ 364, 200 }, 2);
	synth_metric_tick(&s, SYNTH_T0 + 4 * SYNTH_PERIOD, (uint32_t[]){ user, rss },
			  (uint64_t[]){ 100, 300 }, 2);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_METRICS);
	synth_free(&s);
}

/* An average is drawn over its interval: stamped at its start, the tick before. */
static void test_metric_intervals(void)
{
	struct model m;
	size_t len;
	char *json;

	make_metrics_model(&m);
	json = export_text(&m, EXPORT_CHROME, NULL, 0, UINT64_MAX, &len);
	CHECK(export_count(json, len, "\"ts\":1000.000,\"args\":{\"%\":36.4}") == 1);
	CHECK(export_count(json, len, "\"ts\":3000.000,\"args\":{\"%\":10.0}") == 1);
	CHECK(export_count(json, len, "\"ts\":1000.000,\"args\":{\"KiB\":100}") == 1);
	CHECK(export_count(json, len, "\"ts\":3000.000,\"args\":{\"KiB\":200}") == 1);
	CHECK(export_count(json, len, "\"ts\":4000.000,\"args\":{\"KiB\":300}") == 1);
	free(json);
	/* From 2 ms: the share over 1..3 ms held from the window's start. */
	json = export_text(&m, EXPORT_CHROME, NULL, 2 * SYNTH_PERIOD, UINT64_MAX, &len);
	CHECK(export_count(json, len, "\"ts\":2000.000,\"args\":{\"%\":36.4}") == 1);
	CHECK(export_count(json, len, "\"KiB\":100") == 0);
	free(json);
	model_free(&m);
}

/* Protocol Buffers' varint of v after the len bytes at buf, and a NUL. */
static void put_varint(char *buf, size_t len, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		buf[len++] = (char)(v | 0x80);
	buf[len++] = (char)v;
	buf[len] = 0;
}

/* When ts 0 was, in both formats; Perfetto's tracks in the order made, as Chrome's sort indexes. */
static void test_clocks_and_order(void)
{
	struct model m;
	char clock[32] = "\x08\x01\x10";	/* Clock: REALTIME, timestamp ... */
	size_t len;
	char *out;

	make_metrics_model(&m);
	out = export_text(&m, EXPORT_CHROME, NULL, 0, UINT64_MAX, &len);
	CHECK(export_count(out, len, "\"realtime-ns-at-ts-0\":\"1700000000000000000\"") == 1);
	CHECK(export_count(out, len, "\"realtime-at-ts-0\":\"2023-11-14T22:13:20.000000000Z\"") == 1);
	/* The recording 1, the process 2, its thread 3. */
	CHECK(export_count(out, len, "\"pid\":0,\"tid\":0,\"args\":{\"sort_index\":1}") == 1);
	CHECK(export_count(out, len, "\"pid\":10,\"tid\":0,\"args\":{\"sort_index\":2}") == 1);
	CHECK(export_count(out, len, "\"pid\":10,\"tid\":10,\"args\":{\"sort_index\":3}") == 1);
	free(out);

	out = export_text(&m, EXPORT_PERFETTO, NULL, 0, UINT64_MAX, &len);
	/* The first packet a clock snapshot: ts 0 on BOOTTIME, MONOTONIC and REALTIME. */
	CHECK(len > 4 && (uint8_t)out[0] == 0x0a && (uint8_t)out[2] == 0x32);
	CHECK(export_count(out, len, "\x0a\x04\x08\x06\x10") == 1);	/* BOOTTIME 0 */
	put_varint(clock, 3, REALTIME_T0);
	CHECK(export_count(out, len, clock) == 1);
	/* uuid, sibling_order_rank the same; the tracks that hold others order them explicitly. */
	CHECK(export_count(out, len, "\x08\x01\x60\x01\x58\x03") == 1);	/* the recording */
	CHECK(export_count(out, len, "\x08\x02\x60\x02\x58\x03\x1a") == 1);	/* the process */
	CHECK(export_count(out, len, "\x08\x03\x60\x03\x58\x03\x22") == 1);	/* its thread */
	CHECK(export_count(out, len, "\x08\x04\x60\x04\x12") == 1);		/* a counter */
	free(out);
	model_free(&m);
}

/*
 * Launches from the main thread: cudaLaunchKernel holds cuLaunchKernel;
 * k1 queued inside both, k2 after cuLaunchKernel returned, k3 in no call;
 * k4 by a call 90 ms after the last sample, whose origin does not link.
 */
static void make_launch_model(struct model *m)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t main_loc = synth_loc(&s, dso, 0x1000, "main");
	uint32_t api, stream;

	synth_comm(&s, PID, PID, "app");
	synth_samples(&s, PID, PID, synth_stack(&s, &main_loc, 1), 10);
	api = synth_lane_kind(&s, PID, CUDA_API_LANE_KIND, "CUDA API");
	synth_span_from(&s, api, "cudaLaunchKernel", SYNTH_T0 + 10 * US, 50 * US, PID,
			SYNTH_T0 + 10 * US);
	synth_span_from(&s, api, "cuLaunchKernel", SYNTH_T0 + 12 * US, 5 * US, PID,
			SYNTH_T0 + 12 * US);
	stream = synth_lane(&s, PID, "GPU0 stream 7");
	synth_span_from(&s, stream, "k1", SYNTH_T0 + 100 * US, 10 * US, PID, SYNTH_T0 + 14 * US);
	synth_span_from(&s, stream, "k2", SYNTH_T0 + 200 * US, 10 * US, PID, SYNTH_T0 + 40 * US);
	synth_span_from(&s, stream, "k3", SYNTH_T0 + 400 * US, 10 * US, PID, SYNTH_T0 + 300 * US);
	synth_span_from(&s, api, "cuLaunchKernel", SYNTH_T0 + 100000 * US, 5 * US, PID,
			SYNTH_T0 + 100000 * US);
	synth_span_from(&s, stream, "k4", SYNTH_T0 + 100100 * US, 10 * US, PID,
			SYNTH_T0 + 100002 * US);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
	synth_free(&s);
}

static void test_launch_flows(void)
{
	struct model m;
	size_t len;
	char *json, *pb;

	make_launch_model(&m);
	json = export_text(&m, EXPORT_CHROME, NULL, 0, UINT64_MAX, &len);
	/*
	 * k1's flow starts in cuLaunchKernel, the innermost call; k2's in
	 * cudaLaunchKernel; both on the calls' row under the main thread.
	 */
	CHECK(export_count(json, len, "\"name\":\"cuLaunchKernel\",\"pid\":10,\"tid\":4293918722,"
			       "\"cat\":\"cuda-api\",\"ts\":12.000,\"dur\":5.000,") == 1);
	CHECK(export_count(json, len, "{\"ph\":\"s\",\"name\":\"origin\",\"cat\":\"flow\",\"id\":3,"
			       "\"pid\":10,\"tid\":4293918722,\"ts\":14.000}") == 1);
	CHECK(export_count(json, len, "{\"ph\":\"s\",\"name\":\"origin\",\"cat\":\"flow\",\"id\":4,"
			       "\"pid\":10,\"tid\":4293918722,\"ts\":40.000}") == 1);
	/* k3 from an instant on the thread, as no call holds its origin. */
	CHECK(export_count(json, len, "\"name\":\"k3\",\"pid\":10,\"tid\":10,\"cat\":\"origin\"") == 1);
	CHECK(export_count(json, len, "\"cat\":\"origin\"") == 3);	/* k3's, and the two calls' */
	/* Each kernel's queue delay: its start minus its origin. */
	CHECK(export_count(json, len, "\"origin\":\"linked\",\"queue.delay.ns\":86000}") == 1);
	CHECK(export_count(json, len, "\"origin\":\"linked\",\"queue.delay.ns\":160000}") == 1);
	CHECK(export_count(json, len, "\"origin\":\"linked\",\"queue.delay.ns\":100000}") == 1);
	/* k4's from its call too, no sample near its origin or not. */
	CHECK(export_count(json, len, "{\"ph\":\"s\",\"name\":\"origin\",\"cat\":\"flow\",\"id\":7,"
			       "\"pid\":10,\"tid\":4293918722,\"ts\":100002.000}") == 1);
	CHECK(export_count(json, len, "\"origin\":\"too_far\",\"queue.delay.ns\":98000}") == 1);
	CHECK(export_count(json, len, "queue.delay.ns") == 4);	/* not on the API calls */
	free(json);
	/* Perfetto: the flow ids on the calls' slices, none on an instant but k3's and theirs. */
	pb = export_text(&m, EXPORT_PERFETTO, NULL, 0, UINT64_MAX, &len);
	CHECK(export_count(pb, len, "queue.delay.ns") == 1);	/* interned once */
	free(pb);
	model_free(&m);
}

/*
 * Two GPUs: GPU 0's two streams run overlapping kernels (k1, k3), one
 * that starts as another ends (k4), and two alone (k2, k5); GPU 1's one.
 */
static void make_busy_model(struct model *m)
{
	struct synth s = {0};
	uint32_t loc = synth_loc(&s, synth_dso(&s, "/usr/bin/app"), 0x1000, "main");
	uint32_t s1, s2, s3;

	synth_comm(&s, PID, PID, "app");
	synth_samples(&s, PID, PID, synth_stack(&s, &loc, 1), 1);
	s1 = synth_lane(&s, PID, "GPU0 stream 1");
	s2 = synth_lane(&s, PID, "GPU0 stream 2");
	s3 = synth_lane(&s, PID, "GPU1 stream 3");
	synth_span(&s, s1, "k1", SYNTH_T0, 100 * US);
	synth_span(&s, s1, "k2", SYNTH_T0 + 300 * US, 100 * US);
	synth_span(&s, s2, "k3", SYNTH_T0 + 50 * US, 100 * US);
	synth_span(&s, s2, "k4", SYNTH_T0 + 150 * US, 50 * US);
	synth_span(&s, s1, "k5", SYNTH_T0 + 500 * US, 100 * US);
	synth_span(&s, s3, "k6", SYNTH_T0, 10 * US);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
	synth_free(&s);
}

/* A GPU busy slice on tid TID from TS for DUR (us), joining SPANS spans. */
#define BUSY(tid, ts, dur, spans)                                                        \
	"\"name\":\"busy\",\"pid\":10,\"tid\":" tid ",\"cat\":\"busy\",\"ts\":" ts \
	",\"dur\":" dur ",\"args\":{\"spans\":" spans "}}"

static void test_gpu_busy(void)
{
	struct model m;
	size_t len;
	char *json, *pb;

	make_busy_model(&m);
	json = export_text(&m, EXPORT_CHROME, NULL, 0, UINT64_MAX, &len);
	/* Each GPU's busy row first among its rows: a tid past the lanes', sorted before them. */
	CHECK(export_count(json, len, "\"tid\":4293918723,\"args\":{\"name\":\"GPU 0 busy\"}") == 1);
	CHECK(export_count(json, len, "\"tid\":4293918723,\"args\":{\"sort_index\":5}") == 1);
	CHECK(export_count(json, len, "\"tid\":4293918720,\"args\":{\"sort_index\":6}") == 1);
	CHECK(export_count(json, len, "\"tid\":4293918724,\"args\":{\"name\":\"GPU 1 busy\"}") == 1);
	/* k1, k3 and k4 overlap or touch: one slice; then k2, k5 alone. */
	CHECK(export_count(json, len, BUSY("4293918723", "0.000", "200.000", "3")) == 1);
	CHECK(export_count(json, len, BUSY("4293918723", "300.000", "100.000", "1")) == 1);
	CHECK(export_count(json, len, BUSY("4293918723", "500.000", "100.000", "1")) == 1);
	CHECK(export_count(json, len, BUSY("4293918724", "0.000", "10.000", "1")) == 1);
	CHECK(export_count(json, len, "\"cat\":\"busy\"") == 4);
	free(json);
	/* Up to 120 us: of the spans that meet it, k1 and k3 (whole), and k6. */
	json = export_text(&m, EXPORT_CHROME, NULL, 0, 120 * US, &len);
	CHECK(export_count(json, len, BUSY("4293918723", "0.000", "150.000", "2")) == 1);
	CHECK(export_count(json, len, "\"cat\":\"busy\"") == 2);
	free(json);
	/* Past every span: no busy row. */
	json = export_text(&m, EXPORT_CHROME, NULL, 700 * US, UINT64_MAX, &len);
	CHECK(export_count(json, len, "busy") == 0);
	free(json);
	pb = export_text(&m, EXPORT_PERFETTO, NULL, 0, UINT64_MAX, &len);
	CHECK(export_count(pb, len, "GPU 0 busy") == 1);
	CHECK(export_count(pb, len, "GPU 1 busy") == 1);
	free(pb);
	model_free(&m);
}

int main(void)
{
	RUN(test_chrome);
	RUN(test_window_and_filter);
	RUN(test_idle_entries);
	RUN(test_perfetto);
	RUN(test_launch_flows);
	RUN(test_gpu_busy);
	RUN(test_metric_intervals);
	RUN(test_clocks_and_order);
	return test_summary();
}
