/* SPDX-License-Identifier: MIT */
/*
 * gtrace analyze on a synthetic recording of known shape: one device whose
 * every idle interval has a cause built in, and the figures man
 * gtrace-analyze(1) defines computed by hand.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/passes/passes.h"
#include "analysis/views/analyze.h"
#include "contract/lanes.h"
#include "synth.h"
#include "test.h"
#include "views.h"

#define PID 100
#define TID 100
#define US 1000ull

/* A launch call of thread TID at at_us (4 us long), and the work it queued. */
static void launched(struct synth *s, uint32_t api, uint32_t stream, const char *name,
		     uint64_t at_us, uint64_t start_us, uint64_t dur_ns)
{
	synth_span_from(s, api, "cuLaunchKernel", SYNTH_T0 + at_us * US, 4 * US, TID,
			SYNTH_T0 + at_us * US);
	synth_span_from(s, stream, name, SYNTH_T0 + start_us * US, dur_ns, TID,
			SYNTH_T0 + at_us * US + 1);
}

/*
 * Device 0 of process 100, in us after SYNTH_T0 (launch calls 4 us long):
 *   step        launched at 0, runs 10 .. 1010 on stream 7
 *   copy        100 .. 600 on stream 8, no origin: memory, overlapping step
 *   step        launched at 3000 after host_prepare: idle 1010 .. 3010 is
 *               host to 3000 (the sample at 2000 ms covers it), launch after
 *   ncclKernel  3500 .. 3600 on stream 8, within step: communication
 *   wait        4005 .. 4012: the device drains under it at 4010
 *   step        launched at 6000: idle 4010 .. 6010 is synchronization
 *               to 6000, launch after
 *   after_event launched at 6500 on stream 8, runs 8000 .. 8500: idle
 *               7010 .. 8000 is dependency (queued, on another stream)
 *   tiny        launched at 9000 and 9008, 1 us each at 9006 and 9014:
 *               8500 .. 9000 host (no sample in it: unsampled), then
 *               launch; 9007 .. 9014 launch (back to back)
 *   orphan      no origin, 9100 .. 9200: idle 9015 .. 9100 unknown
 * Samples of thread 100 every ms from 0 to 10: in launch_loop, but the one
 * at 2 ms in host_prepare, called from line 42 of Python's train_step.
 * Thread 100 blocked in launch_loop 6100 .. 6400.
 */
static void idle_model(struct model *m)
{
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/usr/bin/app");
	uint32_t loop[] = { synth_loc(&s, app, 0x1000, "main"),
			    synth_loc(&s, app, 0x2000, "launch_loop") };
	uint32_t py = synth_python_file(&s, "/src/train.py");
	uint32_t host[] = { loop[0], synth_python_loc(&s, py, "train_step", 42),
			    synth_loc(&s, app, 0x3000, "host_prepare") };
	uint32_t a, b, api, wait;

	synth_comm(&s, PID, TID, "app");
	synth_samples(&s, PID, TID, synth_stack(&s, loop, 2), 2);
	synth_samples(&s, PID, TID, synth_stack(&s, host, 3), 1);
	synth_samples(&s, PID, TID, synth_stack(&s, loop, 2), 8);
	synth_offcpu(&s, TID, SYNTH_T0 + 6100 * US, SYNTH_T0 + 6400 * US);
	s.t.offcpu.v[0].reason = TR_OFFCPU_BLOCKED;
	s.t.offcpu.v[0].node = synth_stack(&s, loop, 2);
	a = synth_lane(&s, PID, "GPU0 stream 7");
	b = synth_lane(&s, PID, "GPU0 stream 8");
	api = synth_lane_kind(&s, PID, CUDA_API_LANE_KIND, "CUDA API");
	wait = synth_lane_kind(&s, PID, CUDA_WAIT_LANE_KIND, "CPU wait");
	launched(&s, api, a, "step", 0, 10, 1000 * US);
	synth_span(&s, b, "[CUDA memcpy HtoD]", SYNTH_T0 + 100 * US, 500 * US);
	launched(&s, api, a, "step", 3000, 3010, 1000 * US);
	synth_span(&s, b, "ncclKernel", SYNTH_T0 + 3500 * US, 100 * US);
	synth_span_from(&s, wait, "cuCtxSynchronize", SYNTH_T0 + 4005 * US, 7 * US, TID,
			SYNTH_T0 + 4005 * US);
	launched(&s, api, a, "step", 6000, 6010, 1000 * US);
	launched(&s, api, b, "after_event", 6500, 8000, 500 * US);
	launched(&s, api, a, "tiny", 9000, 9006, 1 * US);
	launched(&s, api, a, "tiny", 9008, 9014, 1 * US);
	synth_span(&s, a, "orphan", SYNTH_T0 + 9100 * US, 100 * US);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
	synth_free(&s);
}

/* The names of the model built, which the findings name their stacks with. */
static struct funcs names;

static void build(struct analyze *an, const struct model *m, struct origin_links *links,
		  const struct sample_filter *flt, bool device_set, uint32_t device)
{
	origins_link(links, m, origins_default_window(m));
	funcs_init(&names, m, FUNCS_PYTHON_LINES);
	analyze_build(an, m, &(struct analyze_opts){ .filter = flt, .device_set = device_set,
						     .device = device, .short_ns = 10 * US,
						     .links = links, .funcs = &names,
						     .critical_path = true });
}

static void unbuild(struct analyze *an, struct origin_links *links)
{
	analyze_free(an);
	origins_free(links);
	funcs_free(&names);
}

static void test_breakdown(void)
{
	struct sample_filter flt = {0};
	struct origin_links links;
	struct analyze an;
	struct model m;
	const struct analyze_device *d;

	idle_model(&m);
	build(&an, &m, &links, &flt, false, 0);
	CHECK_EQ_U64(an.devices.len, 1);
	d = &an.devices.v[0];
	CHECK_EQ_U64(d->device, 0);
	CHECK_EQ_U64(d->pid, PID);
	CHECK_EQ_U64(d->wall_ns, 9190 * US);
	CHECK_EQ_U64(d->compute_ns, 3602 * US);
	CHECK_EQ_U64(d->memory_ns, 500 * US);
	CHECK_EQ_U64(d->comm_ns, 100 * US);
	CHECK_EQ_U64(d->overlap_ns, 600 * US);
	CHECK_EQ_U64(d->busy_ns, 3602 * US);
	CHECK_EQ_U64(d->idle_ns, 5588 * US);
	CHECK_EQ_U64(d->gaps, 6);
	CHECK_EQ_U64(d->idle_causes[IDLE_HOST], (1990 + 500) * US);
	CHECK_EQ_U64(d->idle_causes[IDLE_SYNC], 1990 * US);
	CHECK_EQ_U64(d->idle_causes[IDLE_DEPENDENCY], 990 * US);
	CHECK_EQ_U64(d->idle_causes[IDLE_LAUNCH], (10 + 10 + 6 + 7) * US);
	CHECK_EQ_U64(d->idle_causes[IDLE_UNKNOWN], 85 * US);
	/* The host idle with a sample in it is host_prepare's; the rest had none. */
	CHECK_EQ_U64(d->host_unsampled_ns, 500 * US);
	CHECK_EQ_U64(d->host_stacks.len, 1);
	if (d->host_stacks.len)
		CHECK_EQ_U64(d->host_stacks.v[0].ns, 1990 * US);
	/* The synchronizing call's origin links to the sample at 4 ms: launch_loop. */
	CHECK_EQ_U64(d->sync_unlinked_ns, 0);
	CHECK_EQ_U64(d->sync_stacks.len, 1);
	if (d->sync_stacks.len)
		CHECK_EQ_U64(d->sync_stacks.v[0].ns, 1990 * US);
	unbuild(&an, &links);
	model_free(&m);
}

static void test_launches(void)
{
	struct sample_filter flt = {0};
	struct origin_links links;
	struct analyze an;
	struct model m;

	idle_model(&m);
	build(&an, &m, &links, &flt, false, 0);
	/* By count, then by name's string id: step, tiny, then the ones of 1 in id order. */
	CHECK_EQ_U64(an.kernels.len, 5);
	if (an.kernels.len == 5) {
		const struct analyze_kernel *step = &an.kernels.v[0], *tiny = &an.kernels.v[1];

		CHECK(!strcmp(model_str(&m, step->name), "step"));
		CHECK_EQ_U64(step->count, 3);
		CHECK_EQ_U64(step->queued, 3);
		CHECK_EQ_U64(step->median_queue_ns, 10 * US);
		CHECK_EQ_U64(step->short_count, 0);
		CHECK(!strcmp(model_str(&m, tiny->name), "tiny"));
		CHECK_EQ_U64(tiny->count, 2);
		CHECK_EQ_U64(tiny->median_queue_ns, 6 * US);
		CHECK_EQ_U64(tiny->short_count, 2);
		CHECK(tiny->short_node != 0);
		for (size_t i = 2; i < 5; i++) {
			const struct analyze_kernel *k = &an.kernels.v[i];

			CHECK_EQ_U64(k->count, 1);
			if (!strcmp(model_str(&m, k->name), "orphan"))
				CHECK_EQ_U64(k->queued, 0);
			if (!strcmp(model_str(&m, k->name), "after_event"))
				CHECK_EQ_U64(k->median_queue_ns, 1500 * US);
		}
	}
	unbuild(&an, &links);
	model_free(&m);
}

/*
 * Short kernels launched from launch_loop near samples of three stacks
 * (the leaf differs: the launch calls at 0, 2 and 4 ms, and again at 2.1),
 * and three near one sample that did not unwind past a PLT stub (at 6 ms):
 * the stack most launches linked to is the stub's, but the launcher is
 * launch_loop, and its stack the one of 2 ms, which two launches linked to.
 */
static void test_launch_site(void)
{
	struct sample_filter flt = {0};
	struct origin_links links;
	struct analyze an;
	struct model m;
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/usr/bin/app");
	uint32_t cuda = synth_dso(&s, "/usr/lib/libcuda.so.1");
	uint32_t main_loc = synth_loc(&s, app, 0x1000, "main");
	uint32_t loop = synth_loc(&s, app, 0x2000, "launch_loop");
	uint32_t stub[] = { synth_loc(&s, app, 0x4020, NULL) };
	uint32_t api, lane, nodes[3];

	synth_comm(&s, PID, TID, "app");
	for (uint64_t leaf = 0; leaf < 3; leaf++) {
		uint32_t stack[] = { main_loc, loop,
				     synth_loc(&s, cuda, 0x5000 + leaf, "cuLaunchKernel") };

		nodes[leaf] = synth_stack(&s, stack, 3);
		synth_samples(&s, PID, TID, nodes[leaf], 2);
	}
	synth_samples(&s, PID, TID, synth_stack(&s, stub, 1), 2);
	api = synth_lane_kind(&s, PID, CUDA_API_LANE_KIND, "CUDA API");
	lane = synth_lane(&s, PID, "GPU0 stream 7");
	for (uint64_t at = 0; at < 6000; at += 2000)
		launched(&s, api, lane, "tiny", at, at + 10, 1 * US);
	launched(&s, api, lane, "tiny", 2100, 2110, 1 * US);
	launched(&s, api, lane, "tiny", 6000, 6010, 1 * US);
	launched(&s, api, lane, "tiny", 6020, 6030, 1 * US);
	launched(&s, api, lane, "tiny", 6040, 6050, 1 * US);
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
	synth_free(&s);
	build(&an, &m, &links, &flt, false, 0);
	CHECK_EQ_U64(an.kernels.len, 1);
	if (an.kernels.len == 1) {
		const struct analyze_kernel *k = &an.kernels.v[0];

		CHECK_EQ_U64(k->short_count, 7);
		CHECK_EQ_U64(k->short_node, nodes[1]);
	}
	unbuild(&an, &links);
	model_free(&m);
}

static void test_print(void)
{
	struct sample_filter flt = {0};
	struct origin_links links;
	struct capture cap;
	struct analyze an;
	struct model m;
	const char *text;

	idle_model(&m);
	build(&an, &m, &links, &flt, false, 0);
	analyze_print(capture_start(&cap), &an, &names);
	text = capture_end(&cap);
	CHECK(has_line(text, "GPU 0 of pid 100: 9.190 ms from its first work to its last"));
	CHECK(has_line(text, "  host                    2.490 ms   44.6%"));
	CHECK(has_line(text, "         1.990        1.990  host_prepare"));
	CHECK(has_line(text, "         0.000        1.990  train_step (train.py:42)"));
	/* The one finding: the GPU idle 61% of its time, host first, host_prepare's. */
	CHECK(has_line(text, "  1. gpu-idle: 5.588 ms"));
	CHECK(has_line(text, "     GPU 0 of pid 100 was idle 60.8% of its time (5.588 ms), most of it "
			     "host (2.490 ms) while the launching thread ran host_prepare"));
	CHECK(has_line(text, "     stack        1.990 ms  host_prepare < train_step (train.py:42) "
			     "< main"));
	free(cap.text);
	analyze_print_json(capture_start(&cap), &an, &names, "x.data");
	text = capture_end(&cap);
	CHECK(strstr(text, "\"idle_causes\": {\"host\": 2490000, \"synchronization\": 1990000, "
			   "\"dependency\": 990000, \"launch\": 33000, \"unknown\": 85000}"));
	CHECK(strstr(text, "\"host_stacks\": [\n        {\"frames\": [\"main\", "
			   "\"train_step (train.py:42)\", \"host_prepare\"], \"ns\": 1990000}"));
	CHECK(strstr(text, "\"sync_stacks\": [\n        {\"frames\": [\"main\", \"launch_loop\"], "
			   "\"ns\": 1990000}"));
	CHECK(strstr(text, "\"name\": \"tiny\", \"count\": 2, \"queued\": 2, "
			   "\"median_queue_ns\": 6000, \"short\": 2, "
			   "\"short_frames\": [\"main\", \"launch_loop\"]"));
	CHECK(strstr(text, "\"findings\": [\n    {\n      \"rule\": \"gpu-idle\",\n"));
	CHECK(strstr(text, "\"ns\": 5588000,\n      \"stacks\": [\n        {\"frames\": [\"main\", "
			   "\"train_step (train.py:42)\", \"host_prepare\"], \"ns\": 1990000}"));
	free(cap.text);
	unbuild(&an, &links);
	model_free(&m);
}

/*
 * Process 100, thread 100 sampled every ms for 400 ms in main > work_loop,
 * on device 0: 5 synchronous copies (2 ms calls at 10, 20 .. 50 ms, each
 * copy 1.9 ms), 3 asynchronous ones of pageable memory (0.5 ms each), 12
 * cuCtxSynchronize of 3 ms from 100 ms on, the short kernels kb (120), then
 * ka (150), of 1 us each launched by 4 us calls from 200 ms on, and wide,
 * 1 ms at 12.5% occupancy limited by registers.
 */
static void rules_model(struct model *m)
{
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/usr/bin/app");
	uint32_t loop[] = { synth_loc(&s, app, 0x1000, "main"),
			    synth_loc(&s, app, 0x2000, "work_loop") };
	uint32_t stream, api, wait;

	synth_comm(&s, PID, TID, "app");
	synth_samples(&s, PID, TID, synth_stack(&s, loop, 2), 400);
	stream = synth_lane(&s, PID, "GPU0 stream 7");
	api = synth_lane_kind(&s, PID, CUDA_API_LANE_KIND, "CUDA API");
	wait = synth_lane_kind(&s, PID, CUDA_WAIT_LANE_KIND, "CPU wait");
	for (uint64_t i = 1; i <= 8; i++) {
		uint64_t at = SYNTH_T0 + i * 10000 * US;

		synth_span_from(&s, api, i <= 5 ? "cuMemcpyHtoD_v2" : "cuMemcpyHtoDAsync_v2", at,
				i <= 5 ? 2000 * US : 4 * US, TID, at);
		synth_span_from(&s, stream, "[CUDA memcpy HtoD]", at + 1 * US,
				i <= 5 ? 1900 * US : 500 * US, TID, at + 1);
		synth_span_attr(&s, "bytes", 1 << 20);
		synth_span_attr(&s, "copy.src", i <= 5 ? 2 : 1);	/* pinned, pageable */
	}
	for (uint64_t i = 0; i < 12; i++)
		synth_span_from(&s, wait, "cuCtxSynchronize", SYNTH_T0 + (100 + 5 * i) * 1000 * US,
				3000 * US, TID, SYNTH_T0 + (100 + 5 * i) * 1000 * US);
	for (uint64_t i = 0; i < 270; i++)
		launched(&s, api, stream, i < 120 ? "kb" : "ka", 200000 + 100 * i,
			 200000 + 100 * i + 10, 1 * US);
	launched(&s, api, stream, "wide", 300000, 300010, 1000 * US);
	synth_span_attr(&s, "occupancy.permille", 125);
	synth_span_attr(&s, "occupancy.limiter", 2);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
	synth_free(&s);
}

static const struct analyze_finding *finding(const struct analyze *an, const char *rule)
{
	for (size_t i = 0; i < an->findings.len; i++)
		if (!strcmp(an->findings.v[i].rule, rule))
			return &an->findings.v[i];
	return NULL;
}

/* The leaf function of a finding's first stack. */
static const char *top_function(const struct analyze_finding *fd)
{
	uint32_t n;
	const uint32_t *fn;

	if (!fd || !fd->stacks.len || !fd->stacks.v[0].node)
		return "";
	fn = funcs_of_node(&names, fd->stacks.v[0].node, &n);
	return funcs_name(&names, names.v.v[fn[0]].name);
}

static void test_findings(void)
{
	struct sample_filter flt = {0};
	struct origin_links links;
	const struct analyze_finding *fd;
	struct analyze an;
	struct model m;

	rules_model(&m);
	build(&an, &m, &links, &flt, false, 0);
	fd = finding(&an, "sync-copy");
	CHECK(fd && fd->ns == 5 * 2000 * US && !strcmp(top_function(fd), "work_loop"));
	fd = finding(&an, "pageable-copy");
	CHECK(fd && fd->ns == 3 * 500 * US && !strcmp(top_function(fd), "work_loop"));
	fd = finding(&an, "sync-in-loop");
	CHECK(fd && fd->ns == 12 * 3000 * US && !strcmp(top_function(fd), "work_loop"));
	/* Each kernel with its own short launches' calls: ka's 150, kb's 120, 4 us each. */
	fd = finding(&an, "short-kernels");
	CHECK(fd && fd->ns == 270 * 4 * US && fd->kernels.len == 2);
	if (fd && fd->kernels.len == 2) {
		CHECK(!strcmp(model_str(&m, fd->kernels.v[0].name), "ka"));
		CHECK(fd->kernels.v[0].count == 150 && fd->kernels.v[0].ns == 150 * 4 * US);
		CHECK(fd->kernels.v[1].count == 120 && fd->kernels.v[1].ns == 120 * 4 * US);
	}
	fd = finding(&an, "low-occupancy");
	CHECK(fd && fd->ns == 1000 * US && fd->kernels.len == 1);
	if (fd && fd->kernels.len == 1)
		CHECK(fd->kernels.v[0].occupancy_permille == 125 && fd->kernels.v[0].limiter == 2);
	CHECK(finding(&an, "gpu-idle") != NULL);
	/* Nothing here for the other rules; ranked by the time at stake. */
	CHECK(!finding(&an, "alloc-in-loop") && !finding(&an, "tiny-copies") &&
	      !finding(&an, "straggler-rank"));
	for (size_t i = 1; i < an.findings.len; i++)
		CHECK(an.findings.v[i - 1].ns >= an.findings.v[i].ns);
	unbuild(&an, &links);
	model_free(&m);
}

/*
 * Calls no sample was taken in, in ms after SYNTH_T0: prepare sampled at
 * 0 .. 9, a synchronizing call at 9.5 .. 14.5, then sync_loop sampled at
 * 16 .. 75 with 9 more calls of 3 ms at 20, 25, ... The first call is
 * nearer prepare's last sample than sync_loop's first, and goes where the
 * other 9 were seen: 10 from sync_loop. A synchronous copy at 200 .. 210,
 * no sample within the window of it (a preempted call): its origin does
 * not link, and the copy is still its call's.
 */
static void test_findings_unsampled(void)
{
	struct sample_filter flt = {0};
	struct origin_links links;
	const struct analyze_finding *fd;
	struct synth s = {0};
	struct analyze an;
	struct model m;
	uint32_t app, prepare[2], loop[2], stream, api, wait;

	app = synth_dso(&s, "/usr/bin/app");
	prepare[0] = loop[0] = synth_loc(&s, app, 0x1000, "main");
	prepare[1] = synth_loc(&s, app, 0x2000, "prepare");
	loop[1] = synth_loc(&s, app, 0x3000, "sync_loop");
	synth_comm(&s, PID, TID, "app");
	synth_samples(&s, PID, TID, synth_stack(&s, prepare, 2), 10);
	s.ts = SYNTH_T0 + 16 * SYNTH_PERIOD;
	synth_samples(&s, PID, TID, synth_stack(&s, loop, 2), 60);
	stream = synth_lane(&s, PID, "GPU0 stream 7");
	api = synth_lane_kind(&s, PID, CUDA_API_LANE_KIND, "CUDA API");
	wait = synth_lane_kind(&s, PID, CUDA_WAIT_LANE_KIND, "CPU wait");
	synth_span_from(&s, wait, "cuCtxSynchronize", SYNTH_T0 + 9500 * US, 5000 * US, TID,
			SYNTH_T0 + 9500 * US);
	for (uint64_t i = 0; i < 9; i++)
		synth_span_from(&s, wait, "cuCtxSynchronize", SYNTH_T0 + (20 + 5 * i) * 1000 * US,
				3000 * US, TID, SYNTH_T0 + (20 + 5 * i) * 1000 * US);
	synth_span_from(&s, api, "cuMemcpyHtoD_v2", SYNTH_T0 + 200000 * US, 10000 * US, TID,
			SYNTH_T0 + 200000 * US);
	synth_span_from(&s, stream, "[CUDA memcpy HtoD]", SYNTH_T0 + 200001 * US, 9000 * US, TID,
			SYNTH_T0 + 200000 * US + 1);
	synth_span_attr(&s, "bytes", 1 << 20);
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
	synth_free(&s);
	build(&an, &m, &links, &flt, false, 0);
	fd = finding(&an, "sync-in-loop");
	CHECK(fd && fd->ns == (5000 + 9 * 3000) * US && !strcmp(top_function(fd), "sync_loop"));
	fd = finding(&an, "sync-copy");
	CHECK(fd && fd->ns == 10000 * US && fd->stacks.len == 1 && !fd->stacks.v[0].node);
	unbuild(&an, &links);
	model_free(&m);
}

/* The time on the path of the item of kind whose name (or a wait's enum) is id. */
static uint64_t path_ns(const struct model *m, const struct analyze_critpath *cp, uint32_t kind,
			const char *name, uint32_t wait)
{
	uint64_t ns = 0;

	for (size_t i = 0; i < cp->items.len; i++) {
		const struct critpath_item *it = &cp->items.v[i];

		if (it->kind == kind && (kind == CRITPATH_WAIT ? it->id == wait :
					 !strcmp(model_str(m, it->id), name)))
			ns += it->ns;
	}
	return ns;
}

/*
 * Back from orphan's end at 9200: orphan, queued behind tiny (9015 ..
 * 9100), launched at 9008 (9012 .. 9014 launch); thread 100 back to the
 * synchronizing call's end at 4012: its launch calls, 4 us each, and its
 * work between them; the call waited for step (4010 .. 4012), launched at
 * 3000 (3004 .. 3010); thread 100 back to 0, where the first event was.
 * step at 10 and the work of stream 8 did not hold anything up. The
 * thread's work: [4, 3000) holds the samples at 1 and 2 ms (launch_loop,
 * host_prepare), [4012, 6000) the one at 5, [6504, 9000) those at 7 and 8,
 * [6004, 6500) none, blocked 6100 .. 6400, [9004, 9008) none.
 */
static void test_critical_path(void)
{
	struct sample_filter flt = {0};
	struct origin_links links;
	const struct analyze_critpath *cp;
	struct capture cap;
	struct analyze an;
	struct model m;
	const char *text;
	uint64_t sum = 0;

	idle_model(&m);
	build(&an, &m, &links, &flt, false, 0);
	cp = &an.devices.v[0].critpath;
	CHECK_EQ_U64(cp->first, SYNTH_T0);
	CHECK_EQ_U64(cp->last, SYNTH_T0 + 9200 * US);
	for (size_t i = 0; i < cp->items.len; i++)
		sum += cp->items.v[i].ns;
	CHECK_EQ_U64(sum, 9200 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_KERNEL, "orphan", 0), 100 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_KERNEL, "tiny", 0), 1 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_KERNEL, "step", 0), 1000 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_KERNEL, "after_event", 0), 0);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_API, "cuLaunchKernel", 0), 6 * 4 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_WAIT, NULL, CRITWAIT_QUEUE), 85 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_WAIT, NULL, CRITWAIT_LAUNCH), (2 + 6) * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_WAIT, NULL, CRITWAIT_SYNC), 2 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_WAIT, NULL, CRITWAIT_DEPENDENCY), 0);
	analyze_print(capture_start(&cap), &an, &names);
	text = capture_end(&cap);
	CHECK(has_line(text, "critical path: 9.200 ms from the process's first event to the GPU's "
			     "last work"));
	CHECK(has_line(text, "         5.982   65.0%  cpu     launch_loop"));
	CHECK(has_line(text, "         1.498   16.3%  cpu     host_prepare"));
	CHECK(has_line(text, "         1.000   10.9%  kernel  step"));
	CHECK(has_line(text, "         0.300    3.3%  off-cpu launch_loop"));
	CHECK(has_line(text, "         0.200    2.2%  cpu     [unsampled]"));
	CHECK(has_line(text, "         0.024    0.3%  api     cuLaunchKernel"));
	free(cap.text);
	analyze_print_json(capture_start(&cap), &an, &names, "x.data");
	text = capture_end(&cap);
	CHECK(strstr(text, "\"critical_path\": {\n        \"wall_ns\": 9200000,\n        \"items\": [\n"
			   "          {\"kind\": \"cpu\", \"name\": \"launch_loop\", \"ns\": 5982000},"));
	free(cap.text);
	unbuild(&an, &links);
	model_free(&m);
}

/*
 * Stream 8's kernel, launched at 5 (call 5 .. 9), starts at 1015, 5 us
 * after stream 7's kernel, launched at 0, ended: it waited for it, an
 * event. Back from 1115: after (100), the dependency (1010 .. 1015),
 * before (1000), its launch (4 .. 10), its call (0 .. 4), where the first
 * event was; the other call is off the path.
 */
static void test_critical_path_dependency(void)
{
	struct sample_filter flt = {0};
	struct origin_links links;
	const struct analyze_critpath *cp;
	struct analyze an;
	struct synth s = {0};
	struct model m;
	uint32_t a, b, api, main_loc = synth_loc(&s, synth_dso(&s, "/usr/bin/app"), 0x1000, "main");

	/* Samples of the launching thread: the launches link to their calls through them. */
	synth_samples(&s, PID, TID, synth_stack(&s, &main_loc, 1), 2);
	a = synth_lane(&s, PID, "GPU0 stream 7");
	b = synth_lane(&s, PID, "GPU0 stream 8");
	api = synth_lane_kind(&s, PID, CUDA_API_LANE_KIND, "CUDA API");
	launched(&s, api, a, "before", 0, 10, 1000 * US);
	launched(&s, api, b, "after", 5, 1015, 100 * US);
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
	synth_free(&s);
	build(&an, &m, &links, &flt, false, 0);
	CHECK_EQ_U64(an.devices.len, 1);
	cp = &an.devices.v[0].critpath;
	CHECK_EQ_U64(cp->last - cp->first, 1115 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_KERNEL, "after", 0), 100 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_WAIT, NULL, CRITWAIT_DEPENDENCY), 5 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_KERNEL, "before", 0), 1000 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_WAIT, NULL, CRITWAIT_LAUNCH), 6 * US);
	CHECK_EQ_U64(path_ns(&m, cp, CRITPATH_API, "cuLaunchKernel", 0), 4 * US);
	CHECK_EQ_U64(cp->items.len, 5);
	unbuild(&an, &links);
	model_free(&m);
}

/* --device and --pid select devices: none here. */
static void test_select(void)
{
	struct sample_filter flt = {0};
	struct origin_links links;
	struct analyze an;
	struct model m;

	idle_model(&m);
	build(&an, &m, &links, &flt, true, 1);
	CHECK_EQ_U64(an.devices.len, 0);
	CHECK_EQ_U64(an.kernels.len, 0);
	unbuild(&an, &links);
	CHECK(filter_add(&flt, FILTER_PID, "101") == 0);
	build(&an, &m, &links, &flt, false, 0);
	CHECK_EQ_U64(an.devices.len, 0);
	unbuild(&an, &links);
	filter_free(&flt);
	model_free(&m);
}

int main(void)
{
	RUN(test_breakdown);
	RUN(test_launches);
	RUN(test_launch_site);
	RUN(test_print);
	RUN(test_critical_path);
	RUN(test_critical_path_dependency);
	RUN(test_select);
	RUN(test_findings);
	RUN(test_findings_unsampled);
	return test_summary();
}
