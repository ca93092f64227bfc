/* SPDX-License-Identifier: MIT */
/*
 * Origin linking and the views of lane work, on a synthetic recording
 * where every link outcome happens on purpose at a known distance.
 */
#include <stdlib.h>

#include "analysis/encoders/flamesvg.h"
#include "analysis/passes/passes.h"
#include "analysis/views/diagnose.h"
#include "analysis/views/report.h"
#include "test.h"
#include "synth.h"
#include "views.h"

#define MS 1000000ull
#define US 1000ull
#define PID 200
#define MAIN_TID 200
#define WORKER_TID 201
#define IDLE_TID 202	/* sampled once, without a stack */
#define QUEUE0_TID TR_SYNTHETIC_TID_BASE
#define QUEUE1_TID (TR_SYNTHETIC_TID_BASE + 1)

/* What each span of the shape must become with the default 4 ms window. */
static const struct {
	const char *name;
	uint64_t dur;
	uint32_t origin_tid;
	uint64_t origin_ts;
	enum origin_outcome outcome;
	uint64_t linked_ts;	/* of the sample it links to */
} spans[] = {
	{ "job-a", 1 * US, 0, 0, ORIGIN_NONE, 0 },
	{ "job-a", 2 * US, 0, SYNTH_T0, ORIGIN_BAD_TID, 0 },
	{ "job-a", 3 * US, TR_SYNTHETIC_TID_BASE + 1, SYNTH_T0, ORIGIN_BAD_TID, 0 },
	{ "job-b", 4 * US, 999, SYNTH_T0, ORIGIN_NO_THREAD, 0 },
	{ "job-b", 5 * US, IDLE_TID, SYNTH_T0, ORIGIN_NO_STACK, 0 },
	/* 300 us after the sample at 2 ms: dispatch */
	{ "job-c", 10 * US, WORKER_TID, SYNTH_T0 + 2 * MS + 300 * US, ORIGIN_LINKED,
	  SYNTH_T0 + 2 * MS },
	/* 400 us before the sample at 8 ms: other */
	{ "job-c", 20 * US, WORKER_TID, SYNTH_T0 + 7 * MS + 600 * US, ORIGIN_LINKED,
	  SYNTH_T0 + 8 * MS },
	/* Halfway between 3 and 4 ms: the earlier sample wins */
	{ "job-d", 30 * US, WORKER_TID, SYNTH_T0 + 3 * MS + 500 * US, ORIGIN_LINKED,
	  SYNTH_T0 + 3 * MS },
	/* 5 ms after the last sample with a stack (9 ms); the stackless one at 10 ms does not count */
	{ "job-d", 40 * US, WORKER_TID, SYNTH_T0 + 14 * MS, ORIGIN_TOO_FAR, 0 },
	/* Long before the recording */
	{ "job-d", 50 * US, WORKER_TID, 1, ORIGIN_TOO_FAR, 0 },
	/* Exactly the window after the sample at 9 ms: other */
	{ "job-e", 60 * US, WORKER_TID, SYNTH_T0 + 13 * MS, ORIGIN_LINKED, SYNTH_T0 + 9 * MS },
};

#define NSPANS (sizeof(spans) / sizeof(spans[0]))

/*
 * Process 200 at 1000 Hz: "worker" (201) samples main > loop > dispatch at
 * 0..4 ms and main > loop > other at 5..9 ms (written in the opposite
 * order), then one sample without a stack at 10 ms; "idle" (202) only has
 * one stackless sample; "lanes" (200) samples main > idle_loop at 20 and
 * 21 ms. Lane "queue 0" has the spans above; lane "queue 1" one "copy" of
 * 1 ms queued from "lanes" at 20 ms.
 */
static void build_lanes_shape(struct model *m, const char *frequency)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/lanes");
	uint32_t main_ = synth_loc(&s, dso, 0x100, "main");
	uint32_t loop = synth_loc(&s, dso, 0x200, "loop");
	uint32_t dispatch = synth_loc(&s, dso, 0x300, "dispatch");
	uint32_t other = synth_loc(&s, dso, 0x400, "other");
	uint32_t idle = synth_loc(&s, dso, 0x500, "idle_loop");
	uint32_t a[] = { main_, loop, dispatch }, b[] = { main_, loop, other };
	uint32_t c[] = { main_, idle };
	uint32_t queue0, queue1;

	synth_comm(&s, PID, MAIN_TID, "lanes");
	synth_comm(&s, PID, WORKER_TID, "worker");
	synth_comm(&s, PID, IDLE_TID, "idle");
	s.ts = SYNTH_T0 + 5 * MS;
	synth_samples(&s, PID, WORKER_TID, synth_stack(&s, b, 3), 5);
	s.ts = SYNTH_T0;
	synth_samples(&s, PID, WORKER_TID, synth_stack(&s, a, 3), 5);
	s.ts = SYNTH_T0 + 10 * MS;
	synth_samples(&s, PID, WORKER_TID, 0, 1);
	synth_samples(&s, PID, IDLE_TID, 0, 1);
	s.ts = SYNTH_T0 + 20 * MS;
	synth_samples(&s, PID, MAIN_TID, synth_stack(&s, c, 2), 2);

	queue0 = synth_lane(&s, PID, "queue 0");
	for (size_t i = 0; i < NSPANS; i++)
		synth_span_from(&s, queue0, spans[i].name, SYNTH_T0 + i * MS, spans[i].dur,
				spans[i].origin_tid, spans[i].origin_ts);
	queue1 = synth_lane(&s, PID, "queue 1");
	synth_span_from(&s, queue1, "copy", SYNTH_T0 + 20 * MS, 1 * MS, MAIN_TID,
			SYNTH_T0 + 20 * MS);

	if (frequency)
		synth_meta(&s, "frequency", frequency);
	synth_meta(&s, "event", "cpu-clock");
	synth_counter(&s, "target.batches", 4);
	synth_counter(&s, "target.spans", 12);
	synth_counter(&s, "target.dropped.queue-full", 7);
	synth_counter(&s, "target.dropped.no-run", 1);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
}

static void test_default_window(void)
{
	struct model m;

	build_lanes_shape(&m, "1000");
	CHECK_EQ_U64(origins_default_window(&m), 4 * MS);
	model_free(&m);
	build_lanes_shape(&m, "250");
	CHECK_EQ_U64(origins_default_window(&m), 16 * MS);
	model_free(&m);
	build_lanes_shape(&m, NULL);
	CHECK_EQ_U64(origins_default_window(&m), 4 * MS);
	model_free(&m);
}

static void test_every_outcome(void)
{
	uint64_t want[ORIGIN_OUTCOMES] = {0};
	struct origin_links l;
	struct model m;

	build_lanes_shape(&m, "1000");
	origins_link(&l, &m, origins_default_window(&m));
	CHECK_EQ_U64(l.window_ns, 4 * MS);
	for (size_t i = 0; i < NSPANS; i++) {
		CHECK_EQ_U64(l.outcome[i], spans[i].outcome);
		if (spans[i].outcome == ORIGIN_LINKED) {
			CHECK(l.sample[i] != 0);
			if (l.sample[i]) {
				const struct tr_sample *s = &m.t.samples.v[l.sample[i] - 1];

				CHECK_EQ_U64(s->ts, spans[i].linked_ts);
				CHECK_EQ_U64(s->tid, WORKER_TID);
			}
		} else {
			CHECK_EQ_U64(l.sample[i], 0);
		}
		want[spans[i].outcome]++;
	}
	want[ORIGIN_LINKED]++;	/* the copy on queue 1 */
	CHECK_EQ_U64(l.outcome[NSPANS], ORIGIN_LINKED);
	for (int o = 0; o < ORIGIN_OUTCOMES; o++)
		CHECK_EQ_U64(l.counts[o], want[o]);
	CHECK_EQ_U64(l.counts[ORIGIN_NONE], 1);
	CHECK_EQ_U64(l.counts[ORIGIN_BAD_TID], 2);
	CHECK_EQ_U64(l.counts[ORIGIN_NO_THREAD], 1);
	CHECK_EQ_U64(l.counts[ORIGIN_NO_STACK], 1);
	CHECK_EQ_U64(l.counts[ORIGIN_LINKED], 5);
	CHECK_EQ_U64(l.counts[ORIGIN_TOO_FAR], 2);

	/* 300 us, 400 us, 500 us, 4 ms, and 0 for the copy. */
	CHECK_EQ_U64(l.linked.count, 5);
	CHECK_EQ_U64(l.linked.min, 0);
	CHECK_EQ_U64(l.linked.max, 4 * MS);
	CHECK_EQ_U64(l.linked.sum, 5200 * US);
	/* 5 ms, and from 1 ns to the sample at 0 ms. */
	CHECK_EQ_U64(l.too_far.count, 2);
	CHECK_EQ_U64(l.too_far.min, 5 * MS);
	CHECK_EQ_U64(l.too_far.max, SYNTH_T0 - 1);
	CHECK_EQ_U64(l.too_far.sum, 5 * MS + SYNTH_T0 - 1);
	origins_free(&l);
	model_free(&m);
}

static void test_window(void)
{
	struct origin_links l;
	struct model m;

	build_lanes_shape(&m, "1000");
	origins_link(&l, &m, 5 * MS);	/* takes in the one 5 ms away */
	CHECK_EQ_U64(l.counts[ORIGIN_LINKED], 6);
	CHECK_EQ_U64(l.counts[ORIGIN_TOO_FAR], 1);
	CHECK_EQ_U64(l.linked.max, 5 * MS);
	origins_free(&l);

	origins_link(&l, &m, 4 * MS - 1);	/* loses the one exactly 4 ms away */
	CHECK_EQ_U64(l.counts[ORIGIN_LINKED], 4);
	CHECK_EQ_U64(l.counts[ORIGIN_TOO_FAR], 3);
	CHECK_EQ_U64(l.too_far.min, 4 * MS);
	origins_free(&l);

	origins_link(&l, &m, 0);	/* only the copy is exactly on a sample */
	CHECK_EQ_U64(l.counts[ORIGIN_LINKED], 1);
	CHECK_EQ_U64(l.counts[ORIGIN_TOO_FAR], 6);
	CHECK_EQ_U64(l.too_far.min, 300 * US);
	origins_free(&l);
	model_free(&m);
}

/*
 * A span that began at its origin ran on that thread (a CUDA call): the
 * first sample inside it is its own, though a sample just before it is
 * nearer. One that began later (GPU work), or that no sample falls inside,
 * links to the nearest.
 */
static void test_span_on_its_thread(void)
{
	static const struct {
		uint64_t start, dur;	/* after SYNTH_T0; the origin is at 4.2 ms */
		uint64_t linked_ts;	/* after SYNTH_T0 */
	} cases[] = {
		{ 4 * MS + 200 * US, 2 * MS, 5 * MS },		/* a call with a sample inside */
		{ 4 * MS + 200 * US, 500 * US, 4 * MS },	/* a call too short for one */
		{ 4 * MS + 300 * US, 2 * MS, 4 * MS },		/* work that began later */
	};
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t main_ = synth_loc(&s, dso, 0x100, "main");
	uint32_t before = synth_loc(&s, dso, 0x200, "wake_up");
	uint32_t call = synth_loc(&s, dso, 0x300, "sync");
	uint32_t a[] = { main_, before }, b[] = { main_, call };
	struct origin_links l;
	struct model m;
	uint32_t lane;

	synth_comm(&s, PID, MAIN_TID, "app");
	s.ts = SYNTH_T0;
	synth_samples(&s, PID, MAIN_TID, synth_stack(&s, a, 2), 5);
	synth_samples(&s, PID, MAIN_TID, synth_stack(&s, b, 2), 5);
	lane = synth_lane(&s, PID, "CUDA API");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		synth_span_from(&s, lane, "cuStreamSynchronize", SYNTH_T0 + cases[i].start,
				cases[i].dur, MAIN_TID, SYNTH_T0 + 4 * MS + 200 * US);
	synth_meta(&s, "frequency", "1000");
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
	origins_link(&l, &m, origins_default_window(&m));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_EQ_U64(l.outcome[i], ORIGIN_LINKED);
		if (l.sample[i])
			CHECK_EQ_U64(m.t.samples.v[l.sample[i] - 1].ts,
				     SYNTH_T0 + cases[i].linked_ts);
	}
	origins_free(&l);
	model_free(&m);
}

static const struct lane_row *find_lane_row(const struct lane_report *r, const struct model *m,
					    const char *name)
{
	for (size_t i = 0; i < r->rows.len; i++)
		if (!strcmp(model_str(m, r->rows.v[i].name), name))
			return &r->rows.v[i];
	return NULL;
}

static void test_lane_report(void)
{
	struct sample_filter flt = {0};
	const struct lane_row *row;
	struct lane_report r;
	struct capture cap;
	struct model m;
	struct funcs f;
	const char *text;

	build_lanes_shape(&m, "1000");
	funcs_init(&f, &m, 0);
	CHECK(filter_add(&flt, FILTER_TID, "0xfff00000") == 0);
	lane_report_build(&r, &f, &flt);
	CHECK_EQ_U64(r.lanes, 1);
	CHECK_EQ_U64(r.spans, NSPANS);
	CHECK_EQ_U64(r.target_ns, 225 * US);
	CHECK_EQ_U64(r.rows.len, 5);
	row = find_lane_row(&r, &m, "job-d");
	CHECK(row != NULL);
	if (row) {
		CHECK_EQ_U64(row->spans, 3);
		CHECK_EQ_U64(row->target_ns, 120 * US);
		CHECK_EQ_U64(row->min_ns, 30 * US);
		CHECK_EQ_U64(row->max_ns, 50 * US);
	}
	CHECK(find_lane_row(&r, &m, "copy") == NULL);	/* on the other lane */
	lane_report_print(capture_start(&cap), &r, &m, "l.data", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "# Lane spans: 11 in 1 lane, 0.225 ms of target time"));
	CHECK(has_line(text, "# File: l.data"));
	CHECK(has_line(text, "# Target ms  Of lane    Spans     Avg us     Min us     Max us  Lane     Span"));
	CHECK(has_line(text, "      0.120   53.33%        3     40.000     30.000     50.000  queue 0  job-d"));
	CHECK(has_line(text, "      0.006    2.67%        3      2.000      1.000      3.000  queue 0  job-a"));
	/* By target time: job-d, job-e, job-c, job-b, job-a. */
	CHECK(strstr(text, "job-d") < strstr(text, "job-e"));
	CHECK(strstr(text, "job-c") < strstr(text, "job-b"));
	CHECK(strstr(text, "job-b") < strstr(text, "job-a"));
	CHECK(!strstr(text, "Samples"));	/* never in sample percentages */
	free(cap.text);
	lane_report_free(&r);
	filter_free(&flt);

	/* No filter: both lanes; a dso filter: none, lanes have no dso. */
	lane_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.lanes, 2);
	CHECK_EQ_U64(r.spans, NSPANS + 1);
	CHECK_STREQ(model_str(&m, r.rows.v[0].name), "copy");
	lane_report_free(&r);
	CHECK(filter_add(&flt, FILTER_DSO, "lanes") == 0);
	lane_report_build(&r, &f, &flt);
	CHECK_EQ_U64(r.lanes, 0);
	CHECK_EQ_U64(r.rows.len, 0);
	lane_report_free(&r);
	filter_free(&flt);
	funcs_free(&f);
	model_free(&m);
}

#define CHECK_WORK(r, f, sym, spans_, ns_self, ns_children)                    \
	do {                                                                   \
		const struct report_row *row_ = find_symbol_row(r, f, sym);    \
		CHECK(row_ != NULL);                                           \
		if (row_) {                                                    \
			CHECK_EQ_U64(row_->children, spans_);                  \
			CHECK_EQ_U64(row_->target_self, ns_self);              \
			CHECK_EQ_U64(row_->target_children, ns_children);      \
		}                                                              \
	} while (0)

static void test_lane_work_report(void)
{
	struct sample_filter flt = {0};
	struct report_opts o = { .children = true, .filter = &flt };
	struct origin_links l;
	struct capture cap;
	struct report r;
	struct model m;
	struct funcs f;
	const char *text;

	build_lanes_shape(&m, "1000");
	origins_link(&l, &m, origins_default_window(&m));
	funcs_init(&f, &m, 0);
	CHECK(report_parse_keys(&o, "comm,dso,symbol") == 0);
	CHECK(filter_add(&flt, FILTER_TID, "201") == 0);

	/* The CPU report is samples only. */
	report_build(&r, &f, &o);
	CHECK_EQ_U64(r.total, 11);
	CHECK_EQ_U64(r.target_ns, 0);
	report_free(&r);

	/*
	 * job-c 10 us and job-d 30 us from dispatch; job-c 20 us and job-e
	 * 60 us from other: the span names are the leaves, the functions
	 * their callers.
	 */
	report_build_lane_work(&r, &f, &o, &l);
	CHECK_EQ_U64(r.total, 4);
	CHECK_EQ_U64(r.target_ns, 120 * US);
	CHECK(r.queued_from);
	CHECK_EQ_U64(r.rows.len, 8);
	CHECK_WORK(&r, &f, "main", 4, 0, 120 * US);
	CHECK_WORK(&r, &f, "loop", 4, 0, 120 * US);
	CHECK_WORK(&r, &f, "other", 2, 0, 80 * US);
	CHECK_WORK(&r, &f, "dispatch", 2, 0, 40 * US);
	CHECK_WORK(&r, &f, "job-e", 1, 60 * US, 60 * US);
	CHECK_WORK(&r, &f, "job-d", 1, 30 * US, 30 * US);
	/* job-c from other, the larger, comes first; its twin from dispatch next. */
	CHECK_WORK(&r, &f, "job-c", 1, 20 * US, 20 * US);
	CHECK_STREQ(funcs_name(&f, f.v.v[r.rows.v[6].from].name), "other");
	CHECK_STREQ(funcs_name(&f, f.v.v[r.rows.v[7].func].name), "job-c");
	CHECK_STREQ(funcs_name(&f, f.v.v[r.rows.v[7].func].dso), "[lane] queue 0");
	CHECK_STREQ(funcs_name(&f, f.v.v[r.rows.v[7].from].name), "dispatch");
	CHECK_EQ_U64(r.rows.v[7].target_self, 10 * US);
	CHECK(find_symbol_row(&r, &f, "idle_loop") == NULL);	/* the copy came from thread 200 */
	CHECK(find_symbol_row(&r, &f, "copy") == NULL);
	report_print_lane_work(capture_start(&cap), &r, &f, &o);
	text = capture_end(&cap);
	CHECK(has_line(text, "# Lane work queued from these threads: 4 spans, 0.120 ms of target time, not in the percentages above"));
	CHECK(has_line(text, "#Children ms    Self ms    Spans  Command  DSO             Symbol    Queued from"));
	CHECK(has_line(text, "       0.120      0.000        4  worker   lanes           main"));
	CHECK(has_line(text, "       0.080      0.000        2  worker   lanes           other"));
	CHECK(has_line(text, "       0.060      0.060        1  worker   [lane] queue 0  job-e     other"));
	CHECK(has_line(text, "       0.040      0.000        2  worker   lanes           dispatch"));
	CHECK(has_line(text, "       0.010      0.010        1  worker   [lane] queue 0  job-c     dispatch"));
	CHECK(strstr(text, "other\n") < strstr(text, "job-e"));
	CHECK(strstr(text, "job-e") < strstr(text, "dispatch\n"));
	free(cap.text);
	report_free(&r);

	/* By self: the span names, the only leaves. */
	o.children = false;
	report_build_lane_work(&r, &f, &o, &l);
	CHECK_STREQ(funcs_name(&f, f.v.v[r.rows.v[0].func].name), "job-e");
	report_print_lane_work(capture_start(&cap), &r, &f, &o);
	text = capture_end(&cap);
	CHECK(has_line(text, "#   Self ms    Spans  Command  DSO             Symbol  Queued from"));
	CHECK(has_line(text, "      0.060        1  worker   [lane] queue 0  job-e   other"));
	CHECK(!strstr(text, "main"));
	free(cap.text);
	report_free(&r);

	/* The dso key alone: the lane is a span's dso; no column to split by. */
	o.children = true;
	CHECK(report_parse_keys(&o, "dso") == 0);
	report_build_lane_work(&r, &f, &o, &l);
	CHECK(!r.queued_from);
	CHECK_EQ_U64(r.rows.len, 2);
	report_print_lane_work(capture_start(&cap), &r, &f, &o);
	text = capture_end(&cap);
	CHECK(has_line(text, "#Children ms    Self ms    Spans  DSO"));
	CHECK(has_line(text, "       0.120      0.000        4  lanes"));
	CHECK(has_line(text, "       0.120      0.120        4  [lane] queue 0"));
	free(cap.text);
	report_free(&r);

	/* Keys that cannot tell a span name from a function: one row, as before. */
	CHECK(report_parse_keys(&o, "comm") == 0);
	report_build_lane_work(&r, &f, &o, &l);
	CHECK_EQ_U64(r.rows.len, 1);
	CHECK_EQ_U64(r.rows.v[0].self, 4);
	CHECK_EQ_U64(r.rows.v[0].children, 4);
	CHECK_EQ_U64(r.rows.v[0].target_self, 120 * US);
	CHECK_EQ_U64(r.rows.v[0].target_children, 120 * US);
	report_free(&r);

	funcs_free(&f);
	filter_free(&flt);
	origins_free(&l);
	model_free(&m);
}

/*
 * A span is queued from the innermost frame of the program itself: past
 * the frames of gtrace's agent, CUDA's libraries and the C library that a
 * sample near the origin finds; with none of the program's, past gtrace's
 * and CUDA's only.
 */
static void test_queued_from_program(void)
{
	static const struct {
		const char *span;
		const char *from;
	} want[] = {
		{ "cuMemcpyHtoD_v2", "copy_blocks" },
		{ "write", "write_blocks" },
		{ "cuInit", "__clone3" },
	};
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/usr/bin/app");
	uint32_t libc = synth_dso(&s, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	uint32_t cuda = synth_dso(&s, "/usr/lib/libcuda.so.1");
	uint32_t agent = synth_dso(&s, "/usr/lib/gtrace/libgtrace-cuda.so");
	uint32_t cupti = synth_dso(&s, "/usr/local/cuda/lib64/libcupti.so.12");
	uint32_t main_ = synth_loc(&s, app, 0x100, "main");
	uint32_t copy = synth_loc(&s, app, 0x200, "copy_blocks");
	uint32_t write_blocks = synth_loc(&s, app, 0x300, "write_blocks");
	uint32_t api = synth_loc(&s, cuda, 0x100, "cuMemcpyHtoD_v2");
	uint32_t ring = synth_loc(&s, agent, 0x100, "tgt_ring_new");
	uint32_t memset_ = synth_loc(&s, libc, 0x100, "__memset_avx512_unaligned_erms");
	uint32_t write_ = synth_loc(&s, libc, 0x200, "__libc_write");
	uint32_t clone = synth_loc(&s, libc, 0x300, "__clone3");
	uint32_t cb = synth_loc(&s, cupti, 0x100, "cupti_callback");
	uint32_t a[] = { main_, copy, api, ring, memset_ }, b[] = { main_, write_blocks, write_ };
	uint32_t c[] = { clone, cb };
	struct sample_filter flt = {0};
	struct report_opts o = { .filter = &flt };
	struct origin_links l;
	struct report r;
	struct model m;
	struct funcs f;
	uint32_t lane;

	synth_comm(&s, PID, WORKER_TID, "worker");
	s.ts = SYNTH_T0;
	synth_samples(&s, PID, WORKER_TID, synth_stack(&s, a, 5), 1);
	synth_samples(&s, PID, WORKER_TID, synth_stack(&s, b, 3), 1);
	synth_samples(&s, PID, WORKER_TID, synth_stack(&s, c, 2), 1);
	lane = synth_lane(&s, PID, "queue 0");
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++)
		synth_span_from(&s, lane, want[i].span, SYNTH_T0 + i * MS, 1 * US, WORKER_TID,
				SYNTH_T0 + i * SYNTH_PERIOD);
	synth_meta(&s, "frequency", "1000");
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);

	origins_link(&l, &m, origins_default_window(&m));
	funcs_init(&f, &m, 0);
	CHECK(report_parse_keys(&o, "comm,dso,symbol") == 0);
	report_build_lane_work(&r, &f, &o, &l);
	CHECK(r.queued_from);
	CHECK_EQ_U64(r.rows.len, sizeof(want) / sizeof(*want));
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		const struct report_row *row = find_symbol_row(&r, &f, want[i].span);

		CHECK(row != NULL);
		if (row)
			CHECK_STREQ(funcs_name(&f, f.v.v[row->from].name), want[i].from);
	}
	report_free(&r);
	funcs_free(&f);
	origins_free(&l);
	model_free(&m);
}

static void test_flame_lane_work(void)
{
	struct sample_filter flt = {0};
	struct origin_links l;
	struct calltree t;
	struct capture cap;
	struct model m;
	struct funcs f;

	build_lanes_shape(&m, "1000");
	origins_link(&l, &m, origins_default_window(&m));
	funcs_init(&f, &m, 0);
	CHECK(filter_add(&flt, FILTER_TID, "201") == 0);
	calltree_build(&t, &f, &flt, &l);
	CHECK_EQ_U64(t.nodes.v[0].total, 11);
	CHECK_EQ_U64(t.nodes.v[0].target_total, 120 * US);
	CHECK_EQ_U64(t.nodes.v[0].spans_total, 4);

	/* The lane work under the frames that queued it, in ms and spans. */
	calltree_print(capture_start(&cap), &t, &f, 0.5);
	CHECK_STREQ(capture_end(&cap),
		    " 100.00%        11  all\n"
		    " 100.00%        11    worker\n"
		    "  90.91%        10      main\n"
		    "  90.91%        10        loop\n"
		    "  45.45%         5          other\n"
		    "  0.080ms        2            [lane] queue 0\n"
		    "  0.060ms        1              job-e\n"
		    "  0.020ms        1              job-c\n"
		    "  45.45%         5          dispatch\n"
		    "  0.040ms        2            [lane] queue 0\n"
		    "  0.030ms        1              job-d\n"
		    "  0.010ms        1              job-c\n"
		    "   9.09%         1      [unknown]\n");
	free(cap.text);

	/* Folded stacks hold one unit: samples, or ns of lane work. */
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	CHECK_STREQ(capture_end(&cap),
		    "worker;main;loop;other 5\n"
		    "worker;main;loop;dispatch 5\n"
		    "worker;[unknown] 1\n");
	free(cap.text);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_TARGET);
	CHECK_STREQ(capture_end(&cap),
		    "worker;main;loop;other;[lane] queue 0;job-e 60000\n"
		    "worker;main;loop;other;[lane] queue 0;job-c 20000\n"
		    "worker;main;loop;dispatch;[lane] queue 0;job-d 30000\n"
		    "worker;main;loop;dispatch;[lane] queue 0;job-c 10000\n");
	free(cap.text);
	calltree_free(&t);
	filter_free(&flt);

	/* A lane alone: (all) -> lane -> span names, in target time only. */
	CHECK(filter_add(&flt, FILTER_TID, "0xfff00000") == 0);
	calltree_build(&t, &f, &flt, &l);
	CHECK_EQ_U64(t.nodes.v[0].total, 0);
	calltree_print(capture_start(&cap), &t, &f, 5.0);
	CHECK_STREQ(capture_end(&cap),
		    "  0.225ms       11  all\n"
		    "  0.225ms       11    [lane] queue 0\n"
		    "  0.120ms        3      job-d\n"
		    "  0.060ms        1      job-e\n"
		    "  0.030ms        2      job-c\n");
	free(cap.text);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_TARGET);
	CHECK_STREQ(capture_end(&cap),
		    "[lane] queue 0;job-d 120000\n"
		    "[lane] queue 0;job-e 60000\n"
		    "[lane] queue 0;job-c 30000\n"
		    "[lane] queue 0;job-b 9000\n"
		    "[lane] queue 0;job-a 6000\n");
	free(cap.text);
	calltree_write_svg(capture_start(&cap), &t, &f, "lane", WEIGHT_TARGET, NULL);
	capture_end(&cap);
	CHECK(strstr(cap.text, "<title>job-d (0.120 ms, 3 spans, 53.33%)</title>") != NULL);
	CHECK(strstr(cap.text, "<title>[lane] queue 0 (0.225 ms, 11 spans, 100.00%)</title>") != NULL);
	CHECK(strstr(cap.text, "data-w=\"120000\"") != NULL);
	free(cap.text);
	calltree_free(&t);
	filter_free(&flt);

	/* Without links, no lane work under the stacks. */
	CHECK(filter_add(&flt, FILTER_TID, "201") == 0);
	calltree_build(&t, &f, &flt, NULL);
	CHECK_EQ_U64(t.nodes.v[0].target_total, 0);
	calltree_free(&t);
	funcs_free(&f);
	filter_free(&flt);
	origins_free(&l);
	model_free(&m);
}

static void test_diagnose_target(void)
{
	struct origin_links l;
	struct capture cap;
	struct model m;
	const char *text;

	build_lanes_shape(&m, "1000");
	origins_link(&l, &m, origins_default_window(&m));
	diagnose_print(capture_start(&cap), &m, "l.data", &l);
	text = capture_end(&cap);
	CHECK(has_line(text, "target:               12 spans in 2 lanes of 1 process, 1.225 ms of target time"));
	CHECK(has_line(text, "  batches                                4"));
	CHECK(has_line(text, "  spans                                 12"));
	CHECK(has_line(text, "  dropped.queue-full                     7"));
	CHECK(has_line(text, "  dropped.no-run                         1"));
	CHECK(has_line(text, "spans dropped:        8 (40.00% of 20 reported)"));
	CHECK(has_line(text, "origin links:         window 4.000 ms"));
	CHECK(has_line(text, "  linked                       5   41.67%  distance min 0 ns, avg 1.040 ms, max 4.000 ms"));
	CHECK(has_line(text, "  bad_tid                      2   16.67%"));
	CHECK(has_line(text, "  no_thread                    1    8.33%"));
	CHECK(has_line(text, "  no_stack                     1    8.33%"));
	CHECK(has_line(text, "  too_far                      2   16.67%  distance min 5.000 ms, avg 502.500 ms, max 1000.000 ms"));
	CHECK(has_line(text, "  none                         1    8.33%"));
	CHECK(has_line(text, "lane spans:"));
	CHECK(has_line(text, "       PID        TID      Spans    Target ms   Linked  Name"));
	CHECK(has_line(text, "       200 0xfff00000         11        0.225   36.36%  queue 0"));
	CHECK(has_line(text, "       200 0xfff00001          1        1.000  100.00%  queue 1"));
	CHECK(!strstr(text, "other counters"));	/* target.* have their own lines */
	free(cap.text);
	origins_free(&l);
	model_free(&m);
}

/* A span naming a lane that does not exist links, but is nobody's lane work. */
static void test_unknown_lane(void)
{
	struct report_opts o = { .children = true };
	struct synth s = {0};
	struct origin_links l;
	struct lane_report lr;
	struct calltree t;
	struct report r;
	struct model m;
	struct funcs f;
	FILE *null = fopen("/dev/null", "w");
	uint32_t dso = synth_dso(&s, "/bin/x");
	uint32_t loc = synth_loc(&s, dso, 0x10, "main");

	synth_samples(&s, 1, 1, synth_stack(&s, &loc, 1), 1);
	synth_span_from(&s, 99, "lost", SYNTH_T0, 10, 1, SYNTH_T0);
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES);
	origins_link(&l, &m, origins_default_window(&m));
	CHECK_EQ_U64(l.counts[ORIGIN_LINKED], 1);
	funcs_init(&f, &m, 0);
	calltree_build(&t, &f, NULL, &l);
	CHECK_EQ_U64(t.nodes.v[0].target_total, 0);
	calltree_free(&t);
	CHECK(report_parse_keys(&o, "symbol") == 0);
	report_build_lane_work(&r, &f, &o, &l);
	CHECK_EQ_U64(r.total, 0);
	report_free(&r);
	lane_report_build(&lr, &f, NULL);
	CHECK_EQ_U64(lr.spans, 0);
	lane_report_free(&lr);
	diagnose_print(null, &m, "x.data", &l);
	fclose(null);
	funcs_free(&f);
	origins_free(&l);
	model_free(&m);
}

int main(void)
{
	RUN(test_default_window);
	RUN(test_every_outcome);
	RUN(test_window);
	RUN(test_span_on_its_thread);
	RUN(test_lane_report);
	RUN(test_lane_work_report);
	RUN(test_queued_from_program);
	RUN(test_flame_lane_work);
	RUN(test_diagnose_target);
	RUN(test_unknown_lane);
	return test_summary();
}
