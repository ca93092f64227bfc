/* SPDX-License-Identifier: MIT */
/*
 * The views of GPU PC samples on synthetic recordings shaped like the CUDA
 * agent's output: buckets joined to their kernel's launch and, through its
 * origin, to the launching stack; continuous mode; the filters; report
 * --gpu-pc and --sass; flame --gpu-pc; the stall reasons' names and
 * explanations; diagnose's section. Source lines come from the cubins of
 * tests/cuda/pc-app.cu where the build made them ($BUILD/tests/cuda).
 */
#include <limits.h>
#include <stdlib.h>

#include "analysis/passes/passes.h"
#include "analysis/views/diagnose.h"
#include "analysis/views/gpu-explain.h"
#include "analysis/views/gpupc.h"
#include "contract/lanes.h"
#include "symbols/cubin.h"
#include "symbols/demangle.h"
#include "pcapp.h"
#include "test.h"
#include "synth.h"
#include "views.h"

#define MS 1000000ull
#define US 1000ull
#define PID 300
#define MAIN_TID 300
#define LOADER_TID 301
#define STREAM_TID TR_SYNTHETIC_TID_BASE

#define KERNEL "_Z6kernelPfi"
#define KERNEL_PLAIN "kernel(float*, int)"
#define STALL(name) "smsp__pcsamp_warps_issue_stalled_" name

#define SOURCE PCAPP_SOURCE
#define INSN PCAPP_INSN

static void kernel_span(struct synth *s, uint32_t lane, const char *name, uint64_t start,
			uint32_t tid, uint64_t origin_ts, uint64_t correlation)
{
	synth_span_from(s, lane, name, start, 10 * US, tid, origin_ts);
	synth_span_attr(s, "correlation", correlation);
}

static void bucket(struct synth *s, uint32_t pid, uint32_t correlation, uint32_t cubin,
		   const char *function, uint64_t pc, const char *stall, uint32_t count)
{
	struct tr_pc_sample *b = VEC_PUSH(&s->t.pc_samples);

	b->pid = pid;
	b->correlation = correlation;
	b->cubin = cubin;
	b->function = synth_str(s, function);
	b->pc = pc;
	b->stall = synth_str(s, stall);
	b->count = count;
}

/* A code image; the table owns the copy. */
static uint32_t add_cubin(struct synth *s, uint64_t crc, const void *bytes, size_t len)
{
	struct tr_cubin *c = VEC_PUSH(&s->t.cubins);

	c->crc = crc;
	c->image.data = xmalloc(len ? len : 1);
	memcpy(c->image.data, bytes, len);
	c->image.len = len;
	return (uint32_t)s->t.cubins.len;
}

static void pc_meta(struct synth *s)
{
	synth_meta(s, "cuda.status", "active");
	synth_meta(s, "cuda.pc.status", "on: kernel-serialized, a sample every 2^20 cycles");
	synth_meta(s, "cuda.pc.mode", "kernel-serialized");
	synth_meta(s, "cuda.pc.period", "20");
	synth_meta(s, "cuda.pc.rate", "100");
}

/*
 * Process 300 at 1000 Hz: "train" (300) samples main > launch at 0..5 ms,
 * "loader" (301) main > load at 6..8 ms. On GPU0 stream 7: KERNEL launched
 * by train at 1 ms (correlation 11), pc_cold by loader at 7 ms (12), and a
 * graph launched by train at 2 ms (13) whose two kernels, KERNEL and
 * pc_cold, share its correlation. The buckets, without cubins:
 *	11 KERNEL 0x10: long_scoreboard 60 (45 of them not issued), selected 20,
 *	  barrier 5
 *	11 KERNEL 0x20: wait 10, math_pipe_throttle 3, mio_throttle 2
 *	12 pc_cold 0x0: short_scoreboard 30
 *	13 pc_cold 0x0: short_scoreboard 4 (the graph's pc_cold)
 *	0 (continuous) orphan 0x40: no_instructions 6 (no launch to join)
 * 140 samples in 10 buckets.
 */
static void build_pc(struct model *m)
{
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/usr/bin/train");
	uint32_t main_ = synth_loc(&s, app, 0x1000, "main");
	uint32_t launch = synth_loc(&s, app, 0x2000, "launch");
	uint32_t load = synth_loc(&s, app, 0x3000, "load");
	uint32_t s1[] = { main_, launch }, s2[] = { main_, load };
	uint32_t stream, pc_lane;

	synth_comm(&s, PID, MAIN_TID, "train");
	synth_comm(&s, PID, LOADER_TID, "loader");
	synth_samples(&s, PID, MAIN_TID, synth_stack(&s, s1, 2), 6);
	synth_samples(&s, PID, LOADER_TID, synth_stack(&s, s2, 2), 3);
	stream = synth_lane(&s, PID, "GPU0 stream 7");
	kernel_span(&s, stream, KERNEL, SYNTH_T0 + 2 * MS, MAIN_TID, SYNTH_T0 + 1 * MS, 11);
	kernel_span(&s, stream, "pc_cold", SYNTH_T0 + 8 * MS, LOADER_TID, SYNTH_T0 + 7 * MS, 12);
	kernel_span(&s, stream, KERNEL, SYNTH_T0 + 3 * MS, MAIN_TID, SYNTH_T0 + 2 * MS, 13);
	kernel_span(&s, stream, "pc_cold", SYNTH_T0 + 3 * MS, MAIN_TID, SYNTH_T0 + 2 * MS, 13);
	pc_lane = synth_lane_kind(&s, PID, CUDA_PC_LANE_KIND, "GPU0 PC sampling");
	synth_span(&s, pc_lane, "PC sampling", SYNTH_T0, 9 * MS);
	synth_span_attr(&s, "pairs", 10);
	synth_span_attr(&s, "samples", 140);
	synth_span_attr(&s, "device", 0);

	bucket(&s, PID, 11, 0, KERNEL, 0x10, STALL("long_scoreboard"), 60);
	bucket(&s, PID, 11, 0, KERNEL, 0x10, STALL("long_scoreboard_not_issued"), 45);
	bucket(&s, PID, 11, 0, KERNEL, 0x10, STALL("selected"), 20);
	bucket(&s, PID, 11, 0, KERNEL, 0x10, STALL("barrier"), 5);
	bucket(&s, PID, 11, 0, KERNEL, 0x20, STALL("wait"), 10);
	bucket(&s, PID, 11, 0, KERNEL, 0x20, STALL("math_pipe_throttle"), 3);
	bucket(&s, PID, 11, 0, KERNEL, 0x20, STALL("mio_throttle"), 2);
	bucket(&s, PID, 12, 0, "pc_cold", 0x0, STALL("short_scoreboard"), 30);
	bucket(&s, PID, 13, 0, "pc_cold", 0x0, STALL("short_scoreboard"), 4);
	bucket(&s, PID, 0, 0, "orphan", 0x40, STALL("no_instructions"), 6);

	synth_meta(&s, "frequency", "1000");
	pc_meta(&s);
	synth_counter(&s, "cuda.pc.pairs", 10);
	synth_counter(&s, "cuda.pc.samples", 140);
	synth_counter(&s, "cuda.pc.dropped", 7);
	synth_counter(&s, "cuda.pc.buffer-full", 1);
	synth_counter(&s, "cuda.pc.unsent", 0);
	synth_counter(&s, "cuda.pc.windows", 3);
	synth_counter(&s, "cuda.pc.windows-failed", 1);
	synth_counter(&s, "cuda.pc.refused", 0);
	synth_counter(&s, "cuda.pc.getdata-calls", 4);
	synth_counter(&s, "cuda.pc.getdata-ns", 50000);
	synth_counter(&s, "cuda.pc.cubins", 0);
	synth_counter(&s, "cuda.pc.cubins-over-cap", 2);
	synth_counter(&s, "cuda.pc.cubins-unsent", 0);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES |
			   TR_FEAT_GPU_PC);
}

/* The kernel's name as the views print it: demangled when the machine can. */
static const char *kernel_name(void)
{
	struct demangler d = {0};
	bool ok = demangler_available(&d);

	demangler_free(&d);
	return ok ? KERNEL_PLAIN : KERNEL;
}

static void test_stall_names(void)
{
	CHECK_STREQ(pc_stall_short(STALL("long_scoreboard")), "long_scoreboard");
	CHECK_STREQ(pc_stall_short(STALL("wait_not_issued")), "wait_not_issued");
	CHECK_STREQ(pc_stall_short("smsp__pcsamp_warp_stall_barrier"), "barrier");
	CHECK_STREQ(pc_stall_short("smsp__pcsamp_sample_count"), "smsp__pcsamp_sample_count");
	CHECK_STREQ(pc_stall_short(STALL("")), STALL(""));
	CHECK_STREQ(pc_stall_explain("long_scoreboard"),
		    "waiting for a global or local memory (L1TEX) result");
	CHECK_STREQ(pc_stall_explain("selected"), "issuing an instruction: not a stall");
	CHECK_STREQ(pc_stall_explain("imc_miss"), "waiting on a constant cache miss");
	CHECK_STREQ(pc_stall_explain("barrier"),
		    "waiting at __syncthreads() for the other warps of its block");
	CHECK(pc_stall_explain("barrier_not_issued") == NULL);
	CHECK(pc_stall_explain("long") == NULL);
	CHECK(pc_stall_explain("frobnicate") == NULL);
	CHECK(pc_stall_not_issued(STALL("wait_not_issued")));
	CHECK(pc_stall_not_issued("wait_not_issued"));
	CHECK(!pc_stall_not_issued("wait"));
	CHECK(!pc_stall_not_issued("_not_issued"));
}

/* The entries of a view whose kernel is named name, summed. */
static uint64_t kernel_samples(const struct pc_view *v, const struct funcs *f, const char *name)
{
	for (size_t k = 0; k < v->kernels.len; k++)
		if (!strcmp(funcs_name(f, v->kernels.v[k].name), name))
			return v->kernels.v[k].samples;
	return 0;
}

/* The innermost function of the stack that launched an entry's kernel. */
static const char *launcher(const struct pc_entry *e, const struct funcs *f)
{
	uint32_t n;
	const uint32_t *fn;

	if (!e->origin)
		return "-";
	fn = funcs_of_node(f, f->m->t.samples.v[e->origin - 1].node, &n);
	return funcs_name(f, f->v.v[fn[0]].name);
}

static void test_join(void)
{
	struct origin_links l;
	struct pc_view v;
	struct model m;
	struct funcs f;

	build_pc(&m);
	funcs_init(&f, &m, 0);
	origins_link(&l, &m, origins_default_window(&m));
	pc_view_build(&v, &f, NULL, &l);
	CHECK_EQ_U64(v.entries.len, 10);
	CHECK_EQ_U64(v.samples, 140);	/* the not-issued part counted once */
	CHECK_EQ_U64(v.joined, 134);
	CHECK_EQ_U64(v.kernels.len, 3);
	CHECK_EQ_U64(kernel_samples(&v, &f, kernel_name()), 100);
	CHECK_EQ_U64(kernel_samples(&v, &f, "pc_cold"), 34);
	CHECK_EQ_U64(kernel_samples(&v, &f, "orphan"), 6);
	CHECK_EQ_U64(v.by_outcome[PC_LINE_NO_IMAGE], 140);
	if (v.entries.len == 10) {
		CHECK_EQ_U64(v.entries.v[0].span, 1);
		CHECK_STREQ(launcher(&v.entries.v[0], &f), "launch");
		CHECK_STREQ(funcs_name(&f, v.entries.v[0].stall), "long_scoreboard");
		CHECK(!v.entries.v[0].not_issued);
		CHECK_STREQ(funcs_name(&f, v.entries.v[1].stall), "long_scoreboard");
		CHECK(v.entries.v[1].not_issued);
		CHECK_STREQ(funcs_name(&f, v.entries.v[3].stall), "barrier");
		CHECK_EQ_U64(v.entries.v[7].span, 2);
		CHECK_STREQ(launcher(&v.entries.v[7], &f), "load");
		/* The graph's launch: the span of the bucket's function, not the first. */
		CHECK_EQ_U64(v.entries.v[8].span, 4);
		CHECK_STREQ(launcher(&v.entries.v[8], &f), "launch");
		/* Continuous mode: no launch, no stack. */
		CHECK_EQ_U64(v.entries.v[9].span, 0);
		CHECK_EQ_U64(v.entries.v[9].origin, 0);
		/* One site per instruction, its place function+offset without a cubin. */
		CHECK(v.entries.v[0].site == v.entries.v[2].site);
		CHECK(v.entries.v[0].site != v.entries.v[4].site);
		CHECK(v.entries.v[7].site == v.entries.v[8].site);
		CHECK_EQ_U64(v.lines.sites.len, 4);
		CHECK_STREQ(funcs_name(&f, v.places.v[v.entries.v[7].site]), "pc_cold+0x0");
		CHECK_STREQ(funcs_name(&f, v.places.v[v.entries.v[9].site]), "orphan+0x40");
	}
	pc_view_free(&v);

	/* Without links: joined to launches, with no stack. */
	pc_view_build(&v, &f, NULL, NULL);
	CHECK_EQ_U64(v.joined, 134);
	for (size_t i = 0; i < v.entries.len; i++)
		CHECK_EQ_U64(v.entries.v[i].origin, 0);
	pc_view_free(&v);
	origins_free(&l);
	funcs_free(&f);
	model_free(&m);
}

static uint64_t selected(struct funcs *f, enum filter_field field, const char *list)
{
	struct sample_filter flt = {0};
	struct pc_view v;
	uint64_t n;

	CHECK(filter_add(&flt, field, list) == 0);
	pc_view_build(&v, f, &flt, NULL);
	n = v.samples;
	pc_view_free(&v);
	filter_free(&flt);
	return n;
}

/* Through the launching thread or the kernel's lane; --pid alone takes the unjoined. */
static void test_filters(void)
{
	struct model m;
	struct funcs f;

	build_pc(&m);
	funcs_init(&f, &m, 0);
	CHECK_EQ_U64(selected(&f, FILTER_TID, "300"), 100 + 4);
	CHECK_EQ_U64(selected(&f, FILTER_TID, "301"), 30);
	CHECK_EQ_U64(selected(&f, FILTER_COMM, "loader"), 30);
	CHECK_EQ_U64(selected(&f, FILTER_TID, "0xfff00000"), 134);	/* the stream */
	CHECK_EQ_U64(selected(&f, FILTER_TID, "0xfff00001"), 0);	/* the windows */
	CHECK_EQ_U64(selected(&f, FILTER_PID, "300"), 140);
	CHECK_EQ_U64(selected(&f, FILTER_PID, "999"), 0);
	funcs_free(&f);
	model_free(&m);
}

static void test_report(void)
{
	struct capture cap;
	struct pc_report r;
	struct pc_view v;
	struct model m;
	struct funcs f;
	const char *text;
	char line[256];

	build_pc(&m);
	funcs_init(&f, &m, 0);
	pc_view_build(&v, &f, NULL, NULL);
	pc_report_build(&r, &v, &f, false);
	CHECK_EQ_U64(r.kernels.len, 3);
	CHECK_EQ_U64(r.rows.len, 4);
	pc_report_print(capture_start(&cap), &r, &v, &f, "pc.data", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "# File: pc.data"));
	CHECK(has_line(text, "# GPU PC samples: 140 in 3 kernels, kernel-serialized, "
			     "a sample every 2^20 cycles"));
	CHECK(has_line(text, "# 0 of 140 samples (0.00%) at a source line; "
			     "140 whose cubin was not kept"));
	/* The widest place, KERNEL+0x10, sets the column. */
	snprintf(line, sizeof(line), "#  Samples    Share  %-*s  Stall reasons",
		 (int)strlen(kernel_name()) + 7, "Kernel, source line");
	CHECK(has_line(text, line));
	snprintf(line, sizeof(line), "       100   71.43%%  %s", kernel_name());
	CHECK(has_line(text, line));
	snprintf(line, sizeof(line), "        85   85.00%%    %s+0x10  long_scoreboard 70.6%% "
		 "(not issued 52.9%%), selected 23.5%%, barrier 5.9%%", kernel_name());
	CHECK(has_line(text, line));
	CHECK(strstr(text, "+0x20") && strstr(text, "wait 66.7%, math_pipe_throttle 20.0%, "
					     "mio_throttle 13.3%\n"));
	CHECK(strstr(text, "        34   24.29%  pc_cold\n") != NULL);
	CHECK(strstr(text, "        34  100.00%    pc_cold+0x0") != NULL);
	CHECK(strstr(text, "         6    4.29%  orphan\n") != NULL);
	CHECK(has_line(text, "# Stall reasons:"));
	CHECK(has_line(text, "#   long_scoreboard     waiting for a global or local memory "
			     "(L1TEX) result"));
	CHECK(has_line(text, "#   selected            issuing an instruction: not a stall"));
	CHECK(has_line(text, "#   barrier             waiting at __syncthreads() for the other "
			     "warps of its block"));
	CHECK(has_line(text, "#   (not issued)        the part of a reason's samples taken on "
			     "a cycle when no instruction was issued"));
	CHECK(strstr(text, "#   no_instructions ") != NULL);
	CHECK_EQ_U64(count_of(text, "#   long_scoreboard"), 1);
	CHECK_EQ_U64(count_of(text, "#   barrier"), 1);
	free(cap.text);
	pc_report_free(&r);

	/* -n 1: the hottest kernel, its hottest line. */
	pc_report_build(&r, &v, &f, false);
	pc_report_print(capture_start(&cap), &r, &v, &f, "pc.data", 1);
	text = capture_end(&cap);
	CHECK(!strstr(text, "pc_cold"));
	CHECK(!strstr(text, "+0x20"));
	CHECK(strstr(text, "+0x10") != NULL);
	CHECK(!strstr(text, "#   wait"));	/* explained only when shown */
	free(cap.text);
	pc_report_free(&r);

	/* --sass: by offset; without lines, the offset alone. */
	pc_report_build(&r, &v, &f, true);
	pc_report_print(capture_start(&cap), &r, &v, &f, "pc.data", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "#  Samples    Share  Kernel, SASS offset and line  Stall reasons"));
	CHECK(has_line(text, "        85   85.00%    0x0010                      long_scoreboard "
			     "70.6% (not issued 52.9%), selected 23.5%, barrier 5.9%"));
	CHECK(has_line(text, "         6  100.00%    0x0040                      "
			     "no_instructions 100.0%"));
	free(cap.text);
	pc_report_free(&r);
	pc_view_free(&v);
	funcs_free(&f);
	model_free(&m);
}

/* More than three stall reasons: the rest summed. */
static void test_stall_others(void)
{
	static const char *const stalls[] = { "wait", "misc", "drain", "sleeping", "membar" };
	struct synth s = {0};
	struct capture cap;
	struct pc_report r;
	struct pc_view v;
	struct model m;
	struct funcs f;

	for (size_t i = 0; i < 5; i++) {
		char name[64];

		snprintf(name, sizeof(name), STALL("%s"), stalls[i]);
		bucket(&s, 1, 0, 0, "k", 0x30, name, 50 - 10 * (uint32_t)i);
	}
	synth_model(&s, &m, TR_FEAT_GPU_PC);
	funcs_init(&f, &m, 0);
	pc_view_build(&v, &f, NULL, NULL);
	pc_report_build(&r, &v, &f, false);
	pc_report_print(capture_start(&cap), &r, &v, &f, "o.data", 0);
	capture_end(&cap);
	CHECK(has_line(cap.text, "       150  100.00%    k+0x30             wait 33.3%, "
				 "misc 26.7%, drain 20.0%, 2 others 20.0%"));
	CHECK(!strstr(cap.text, "#   sleeping"));
	free(cap.text);
	pc_report_free(&r);
	pc_view_free(&v);
	funcs_free(&f);
	model_free(&m);
}

static void test_flame(void)
{
	struct origin_links l;
	struct capture cap;
	struct calltree t;
	struct pc_view v;
	struct model m;
	struct funcs f;
	const char *text;
	char line[512];
	const char *k = kernel_name();

	build_pc(&m);
	funcs_init(&f, &m, 0);
	origins_link(&l, &m, origins_default_window(&m));
	pc_view_build(&v, &f, NULL, &l);
	calltree_build_pc(&t, &f, NULL, &v, true);
	CHECK_EQ_U64(t.nodes.v[0].total, 140);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	text = capture_end(&cap);
	snprintf(line, sizeof(line), "train;main;launch;[kernel] %s;%s+0x10;long_scoreboard 60",
		 k, k);
	CHECK(has_line(text, line));
	snprintf(line, sizeof(line), "train;main;launch;[kernel] %s;%s+0x20;wait 10", k, k);
	CHECK(has_line(text, line));
	CHECK(has_line(text, "loader;main;load;[kernel] pc_cold;pc_cold+0x0;short_scoreboard 30"));
	CHECK(has_line(text, "train;main;launch;[kernel] pc_cold;pc_cold+0x0;short_scoreboard 4"));
	/* No launch to link: the kernel at the root. */
	CHECK(has_line(text, "[kernel] orphan;orphan+0x40;no_instructions 6"));
	/* CPU samples, lane work, and the not-issued part again, are not in this tree. */
	CHECK(!strstr(text, "[lane]"));
	CHECK(!strstr(text, "not_issued"));
	CHECK(!strstr(text, "train;main;launch 6"));
	free(cap.text);
	calltree_free(&t);
	pc_view_free(&v);

	/* --tid 301: the loader's kernel only; the lane's work hangs at the root. */
	{
		struct sample_filter flt = {0};

		CHECK(filter_add(&flt, FILTER_TID, "301,0xfff00000") == 0);
		pc_view_build(&v, &f, &flt, &l);
		calltree_build_pc(&t, &f, &flt, &v, true);
		calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
		text = capture_end(&cap);
		CHECK(has_line(text, "loader;main;load;[kernel] pc_cold;pc_cold+0x0;"
				     "short_scoreboard 30"));
		snprintf(line, sizeof(line), "[kernel] %s;%s+0x10;long_scoreboard 60", k, k);
		CHECK(has_line(text, line));
		CHECK(!strstr(text, "train;"));
		CHECK(!strstr(text, "orphan"));
		free(cap.text);
		calltree_free(&t);
		pc_view_free(&v);
		filter_free(&flt);
	}
	origins_free(&l);
	funcs_free(&f);
	model_free(&m);
}

static void test_explain(void)
{
	static const struct {
		const char *status;
		uint64_t features;
		const char *expect;
	} cases[] = {
		{ NULL, 0, "GPU PC sampling was not requested: record with "
			   "'gtrace record --gpu-pc-sampling'" },
		{ NULL, TR_FEAT_GPU_PC, "GPU PC sampling was requested, but the CUDA agent never "
					"started: the recording holds no CUDA information" },
		{ "refused: cuptiPCSamplingEnable: insufficient privileges: GPU performance "
		  "counters are restricted to administrators; run as root", TR_FEAT_GPU_PC,
		  "the driver refused GPU PC sampling: cuptiPCSamplingEnable: insufficient "
		  "privileges: GPU performance counters are restricted to administrators; "
		  "run as root" },
		{ "off: unknown key 'x'", TR_FEAT_GPU_PC,
		  "GPU PC sampling was off: unknown key 'x'" },
		{ "on: waiting for a CUDA context", TR_FEAT_GPU_PC,
		  "GPU PC sampling was on (waiting for a CUDA context) but kept no sample; "
		  "see gtrace diagnose" },
	};
	char buf[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct synth s = {0};
		struct model m;

		if (cases[i].status)
			synth_meta(&s, "cuda.pc.status", cases[i].status);
		synth_model(&s, &m, cases[i].features);
		CHECK_STREQ(pc_explain(&m, buf, sizeof(buf)), cases[i].expect);
		model_free(&m);
	}
}

static void test_diagnose(void)
{
	struct origin_links l;
	struct capture cap;
	struct model m;
	const char *text;

	build_pc(&m);
	origins_link(&l, &m, origins_default_window(&m));
	diagnose_print(capture_start(&cap), &m, "pc.data", &l);
	text = capture_end(&cap);
	CHECK(has_line(text, "GPU PC sampling:      on: kernel-serialized, a sample every "
			     "2^20 cycles"));
	CHECK(has_line(text, "PC mode:              kernel-serialized"));
	CHECK(has_line(text, "PC period:            a sample every 2^20 cycles"));
	CHECK(has_line(text, "PC rate:              about 100 pairs a second, in sampling "
			     "windows"));
	CHECK(has_line(text, "PC windows:           3 completed, 1 failed to open, 0 contexts "
			     "refused"));
	CHECK(has_line(text, "PC kept:              10 pairs, 140 samples (the agent sent 10 "
			     "pairs, 140 samples)"));
	/* 10 pairs in the 9 ms from the first event to the last (the PC window). */
	CHECK(has_line(text, "PC pairs/s:           1111.1 kept per second of recording"));
	CHECK(has_line(text, "PC drops:             7 samples dropped, 1 buffer-full events, "
			     "0 pairs unsent"));
	CHECK(has_line(text, "PC GetData:           4 calls, 12.500 us each"));
	CHECK(has_line(text, "PC cubins:            0 sent, 2 over the cap, 0 unsent, 0 cut short; "
			     "0 kept, 0 bytes"));
	CHECK(has_line(text, "PC source lines:      0 of 140 samples (0.00%) at a source line; "
			     "140 whose cubin was not kept"));
	/* Said once, in the section, not again among the CUDA facts and counters. */
	CHECK_EQ_U64(count_of(text, "cuda.pc."), 0);
	free(cap.text);
	origins_free(&l);
	model_free(&m);
}

/* A CUDA recording without PC sampling: one line; a CPU one: none. */
static void test_diagnose_not_requested(void)
{
	struct capture cap;
	struct synth s = {0};
	struct model m;

	synth_meta(&s, "cuda.status", "active");
	synth_model(&s, &m, TR_FEAT_LANES);
	diagnose_print(capture_start(&cap), &m, "c.data", NULL);
	capture_end(&cap);
	CHECK(has_line(cap.text, "GPU PC sampling:      not requested "
				 "(gtrace record --gpu-pc-sampling)"));
	CHECK(!strstr(cap.text, "PC mode:"));
	free(cap.text);
	model_free(&m);

	memset(&s, 0, sizeof(s));
	synth_meta(&s, "command", "./app");
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES);
	diagnose_print(capture_start(&cap), &m, "c.data", NULL);
	capture_end(&cap);
	CHECK(!strstr(cap.text, "GPU PC sampling"));
	free(cap.text);
	model_free(&m);

	/* Refused: the agent's sentence, the rest n/a where nothing was counted. */
	memset(&s, 0, sizeof(s));
	synth_meta(&s, "cuda.pc.status", "refused: cuptiPCSamplingEnable: this GPU or driver "
		   "does not support PC sampling (compute capability 7.0 or later is needed)");
	synth_counter(&s, "cuda.pc.refused", 1);
	synth_model(&s, &m, TR_FEAT_GPU_PC);
	diagnose_print(capture_start(&cap), &m, "r.data", NULL);
	capture_end(&cap);
	CHECK(has_line(cap.text, "GPU PC sampling:      refused: cuptiPCSamplingEnable: this GPU "
				 "or driver does not support PC sampling (compute capability 7.0 "
				 "or later is needed)"));
	CHECK(has_line(cap.text, "PC mode:              n/a"));
	CHECK(has_line(cap.text, "PC windows:           0 completed, 0 failed to open, "
				 "1 contexts refused"));
	CHECK(has_line(cap.text, "PC GetData:           0 calls"));
	CHECK(has_line(cap.text, "PC source lines:      0 of 0 samples (0.00%) at a source line"));
	free(cap.text);
	model_free(&m);

	/* Requested, but no agent said anything: why, and n/a for what it would count. */
	memset(&s, 0, sizeof(s));
	synth_meta(&s, "cuda.injection", "/usr/lib/gtrace/libgtrace-cuda.so");
	synth_model(&s, &m, TR_FEAT_GPU_PC);
	diagnose_print(capture_start(&cap), &m, "n.data", NULL);
	capture_end(&cap);
	CHECK(has_line(cap.text, "GPU PC sampling:      GPU PC sampling was requested, but the "
				 "CUDA agent never started: no process initialized CUDA; CPU "
				 "samples only"));
	CHECK(has_line(cap.text, "PC windows:           n/a completed, n/a failed to open, "
				 "n/a contexts refused"));
	CHECK(has_line(cap.text, "PC GetData:           n/a"));
	free(cap.text);
	model_free(&m);
}

/* The first offset of function on line, and the first past its end. */
static bool find_offsets(const unsigned char *bytes, size_t len, const char *function,
			 unsigned line, uint64_t *on_line, uint64_t *past_end)
{
	struct cubin *c;
	struct cubin_line at;
	bool found = false;
	uint64_t off;

	if (cubin_open(&c, bytes, len, &(uint64_t){ UINT64_MAX }))
		return false;
	for (off = 0; !cubin_lookup(c, function, off, &at); off += INSN) {
		if (!found && at.line == line) {
			*on_line = off;
			found = true;
		}
	}
	*past_end = off;
	cubin_close(c);
	return found;
}

/*
 * Real cubins: a bucket on pc_hot's marked line shows as pc-app.cu:LINE; one
 * in the cubin without lines, one past the function's end, one of an image
 * that is not a cubin and one of a cubin not kept as function+0xOFF, each
 * counted under its reason.
 */
static void test_cubin_lines(void)
{
	const char *build = getenv("BUILD");
	char path[PATH_MAX], nolines_path[PATH_MAX], place[64], line[256];
	struct blob image = { 0 }, nolines = { 0 };
	unsigned hot = marked_line("/* PC-HOT-LINE */");
	uint64_t hot_pc = 0, end_pc = 0;
	uint32_t with, without, garbage;
	struct synth s = {0};
	struct capture cap;
	struct pc_report r;
	struct pc_view v;
	struct model m;
	struct funcs f;
	const char *text;

	snprintf(path, sizeof(path), "%s/tests/cuda/pc-app.sm_90.cubin", build ? build : "build");
	snprintf(nolines_path, sizeof(nolines_path), "%s/tests/cuda/pc-app.nolines.sm_90.cubin",
		 build ? build : "build");
	if (!read_blob(path, &image) || !read_blob(nolines_path, &nolines)) {
		printf("  no cubins in %s/tests/cuda (built where nvcc exists): "
		       "source lines not tested\n", build ? build : "build");
		free(image.bytes);
		free(nolines.bytes);
		return;
	}
	CHECK(hot > 0);
	CHECK(find_offsets(image.bytes, image.len, "pc_hot", hot, &hot_pc, &end_pc));
	with = add_cubin(&s, 1, image.bytes, image.len);
	without = add_cubin(&s, 2, nolines.bytes, nolines.len);
	garbage = add_cubin(&s, 3, "not a cubin", 11);
	bucket(&s, 1, 0, with, "pc_hot", hot_pc, STALL("long_scoreboard"), 50);
	bucket(&s, 1, 0, with, "pc_hot", hot_pc, STALL("selected"), 10);
	bucket(&s, 1, 0, with, "pc_hot", end_pc, STALL("misc"), 1);
	bucket(&s, 1, 0, without, "pc_hot", hot_pc, STALL("wait"), 2);
	bucket(&s, 1, 0, garbage, "pc_hot", hot_pc, STALL("wait"), 3);
	bucket(&s, 1, 0, 0, "pc_hot", hot_pc, STALL("wait"), 4);
	bucket(&s, 1, 0, 9, "pc_hot", hot_pc, STALL("wait"), 5);	/* no such id */
	synth_model(&s, &m, TR_FEAT_GPU_PC);
	free(image.bytes);
	free(nolines.bytes);

	funcs_init(&f, &m, 0);
	pc_view_build(&v, &f, NULL, NULL);
	CHECK_EQ_U64(v.by_outcome[PC_LINE_KNOWN], 60);
	CHECK_EQ_U64(v.by_outcome[PC_LINE_UNKNOWN], 1);
	CHECK_EQ_U64(v.by_outcome[PC_LINE_NO_LINEINFO], 2);
	CHECK_EQ_U64(v.by_outcome[PC_LINE_BAD_IMAGE], 3);
	CHECK_EQ_U64(v.by_outcome[PC_LINE_NO_IMAGE], 9);
	pc_report_build(&r, &v, &f, false);
	pc_report_print(capture_start(&cap), &r, &v, &f, "l.data", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "# 60 of 75 samples (80.00%) at a source line; 9 whose cubin was "
			     "not kept, "
			     "3 whose cubin gtrace cannot read, 2 whose cubin has no line "
			     "table (nvcc -lineinfo), 1 at an offset without a line"));
	snprintf(place, sizeof(place), "pc-app.cu:%u", hot);
	snprintf(line, sizeof(line), "        60   80.00%%    %-*s  long_scoreboard 83.3%%, "
		 "selected 16.7%%", (int)strlen("Kernel, source line") - 2, place);
	CHECK(has_line(text, line));
	snprintf(line, sizeof(line), "        14   18.67%%    pc_hot+0x%" PRIx64, hot_pc);
	CHECK(strstr(text, line) != NULL);
	free(cap.text);
	pc_report_free(&r);

	pc_report_build(&r, &v, &f, true);
	pc_report_print(capture_start(&cap), &r, &v, &f, "l.data", 0);
	text = capture_end(&cap);
	snprintf(line, sizeof(line), "0x%04" PRIx64 "  %s ", hot_pc, place);
	CHECK(strstr(text, line) != NULL);
	free(cap.text);
	pc_report_free(&r);
	pc_view_free(&v);

	/* What the tables left of the read limit is too little to parse the cubins in. */
	m.budget = (struct tr_budget){ .limit = 1000, .used = 999 };
	pc_view_build(&v, &f, NULL, NULL);
	CHECK_EQ_U64(v.by_outcome[PC_LINE_OVER_LIMIT], 63);
	CHECK_EQ_U64(v.by_outcome[PC_LINE_BAD_IMAGE], 3);
	CHECK_EQ_U64(v.by_outcome[PC_LINE_KNOWN], 0);
	pc_report_build(&r, &v, &f, false);
	pc_report_print(capture_start(&cap), &r, &v, &f, "l.data", 0);
	text = capture_end(&cap);
	CHECK(strstr(text, "63 whose cubin would pass the read limit") != NULL);
	free(cap.text);
	pc_report_free(&r);
	pc_view_free(&v);
	funcs_free(&f);
	model_free(&m);
}

/*
 * A damaged file: function and stall reason ids past the strings, or 0,
 * are unknown names, never read; every view still counts their samples.
 */
static void test_string_ids_out_of_range(void)
{
	uint64_t lines[PC_LINE_OUTCOMES], all = 0;
	struct origin_links l;
	struct capture cap;
	struct calltree t;
	struct pc_report r;
	struct pc_view v;
	struct model m;
	struct funcs f;
	uint32_t past;

	build_pc(&m);
	past = (uint32_t)m.t.strings.len + 1;
	m.t.pc_samples.v[0].function = past;
	m.t.pc_samples.v[1].stall = past;	/* the not-issued one: now a reason of its own */
	m.t.pc_samples.v[2].function = UINT32_MAX;
	m.t.pc_samples.v[3].stall = UINT32_MAX;
	m.t.pc_samples.v[4].function = 0;
	m.t.pc_samples.v[5].stall = 0;
	funcs_init(&f, &m, 0);
	origins_link(&l, &m, origins_default_window(&m));
	pc_view_build(&v, &f, NULL, &l);
	CHECK_EQ_U64(v.samples, 140 + 45);
	pc_report_build(&r, &v, &f, true);
	pc_report_print(capture_start(&cap), &r, &v, &f, "bad.data", 0);
	capture_end(&cap);
	free(cap.text);
	pc_report_free(&r);
	calltree_build_pc(&t, &f, NULL, &v, true);
	CHECK_EQ_U64(t.nodes.v[0].total, 140 + 45);
	calltree_free(&t);
	pc_view_free(&v);
	pc_lines_count(&m, lines);
	for (int o = 0; o < PC_LINE_OUTCOMES; o++)
		all += lines[o];
	CHECK_EQ_U64(all, 140 + 45);
	diagnose_print(capture_start(&cap), &m, "bad.data", &l);
	capture_end(&cap);
	free(cap.text);
	origins_free(&l);
	funcs_free(&f);
	model_free(&m);
}

int main(void)
{
	RUN(test_stall_names);
	RUN(test_join);
	RUN(test_filters);
	RUN(test_report);
	RUN(test_stall_others);
	RUN(test_flame);
	RUN(test_explain);
	RUN(test_diagnose);
	RUN(test_diagnose_not_requested);
	RUN(test_cubin_lines);
	RUN(test_string_ids_out_of_range);
	return test_summary();
}
