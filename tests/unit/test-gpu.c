/* SPDX-License-Identifier: MIT */
/*
 * The CUDA views on synthetic recordings shaped like the CUDA agent's
 * output: report --gpu's tables, NVTX ranges as a report key and as flame
 * frames, GPU lane work under the stacks that queued it, threads, and
 * diagnose's CUDA section for each way GPU collection can end.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "analysis/passes/passes.h"
#include "analysis/views/diagnose.h"
#include "analysis/views/gpu-explain.h"
#include "analysis/views/gpu.h"
#include "analysis/views/report.h"
#include "analysis/views/threads.h"
#include "contract/lanes.h"
#include "symbols/demangle.h"
#include "test.h"
#include "synth.h"
#include "views.h"

#define MS 1000000ull
#define US 1000ull
#define PID 300
#define MAIN_TID 300
#define LOADER_TID 301
#define STREAM7_TID TR_SYNTHETIC_TID_BASE
#define STREAM8_TID (TR_SYNTHETIC_TID_BASE + 1)

#define KERNEL "_Z6kernelPfi"
#define KERNEL_PLAIN "kernel(float*, int)"

struct config {
	uint64_t grid, block, regs, occupancy, limiter;
};

static const struct config config_a = { 128, 256, 32, 1000, 1 };
static const struct config config_b = { 64, 256, 32, 1000, 1 };
static const struct config config_reduce = { 1, 1024, 64, 500, 2 };

static void kernel(struct synth *s, uint32_t lane, const char *name, uint64_t start,
		   uint64_t dur, uint32_t tid, uint64_t origin_ts, const struct config *c)
{
	synth_span_from(s, lane, name, start, dur, tid, origin_ts);
	synth_span_attr(s, "grid.x", c->grid);
	synth_span_attr(s, "grid.y", 1);
	synth_span_attr(s, "grid.z", 1);
	synth_span_attr(s, "block.x", c->block);
	synth_span_attr(s, "block.y", 1);
	synth_span_attr(s, "block.z", 1);
	synth_span_attr(s, "regs", c->regs);
	synth_span_attr(s, "occupancy.permille", c->occupancy);
	synth_span_attr(s, "occupancy.limiter", c->limiter);
}

static void copy(struct synth *s, uint32_t lane, const char *name, uint64_t dur, uint64_t bytes)
{
	synth_span_from(s, lane, name, SYNTH_T0 + 3 * MS, dur, MAIN_TID, SYNTH_T0 + 3 * MS);
	synth_span_attr(s, "bytes", bytes);
}

static void range(struct synth *s, uint32_t lane, const char *name, uint64_t start,
		  uint64_t dur, uint64_t depth)
{
	synth_span_from(s, lane, name, start, dur, MAIN_TID, start);
	synth_span_attr(s, "nvtx.depth", depth);
	synth_span_attr(s, "nvtx.kind", 1);
}

#define INJECTION "/usr/lib/gtrace/libgtrace-cuda.so"
#define DRIVER_LINE "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06"

/* What the recorder and the agent say of a run on a GPU, and some facts new to diagnose. */
static void add_agent_facts(struct synth *s)
{
	synth_meta(s, "cuda.injection", INJECTION);
	synth_meta(s, "cuda.driver", DRIVER_LINE);
	synth_meta(s, "cuda.status", "active");
	synth_meta(s, "cuda.cupti-version", "130001");
	synth_meta(s, "cuda.device.0", "NVIDIA H100 80GB HBM3, sm 9.0, 132 SMs, 81559 MiB");
	synth_meta(s, "cuda.flush", "clean");
	synth_meta(s, "cuda.future-fact", "42");
	synth_meta(s, "build.host", "ci-7");
	synth_counter(s, "cuda.records.kernel", 5);
	synth_counter(s, "cuda.records.memcpy", 3);
	synth_counter(s, "cuda.dropped", 2);
	synth_counter(s, "cuda.no-timestamp", 0);
	synth_counter(s, "cuda.causality", 1);
	synth_counter(s, "cuda.buffers", 4);
	synth_counter(s, "cuda.new-count", 9);
	synth_counter(s, "other.count", 6);
}

/*
 * Process 300 at 1000 Hz. "train" (300) samples main > launch at 0..5 ms
 * and main > sync at 6..11 ms; "loader" (301) main > work at 12..14 ms.
 * NVTX: "epoch" over 0..10 ms holds "step" over 2..5 and 6..8 ms.
 *	GPU0 stream 7: kernel x3 (1, 2, 3 us) queued at 1 ms, reduce (4 us)
 *	  at 2 ms, copies at 3 ms: HtoD 1 MB in 100 us and 3 MB in 100 us,
 *	  PtoP 2 MB in 50 us, memset 1 kB in 1 us
 *	GPU0 stream 8: kernel (10 us, another configuration) from loader at 13 ms
 *	CUDA API: cudaLaunchKernel x4 (5 us), cudaMemcpy (110, 130 us),
 *	  cuLaunchKernel (3 us), all at 4 ms
 *	CPU wait: cudaStreamSynchronize 30 us at 7 ms and 50 us at 9 ms,
 *	  cudaDeviceSynchronize 20 us at 10 ms
 * With agent_facts, the meta and counters of add_agent_facts too.
 */
/* The GPU recording, with the agent's facts, then n more meta keys and values. */
static void build_gpu_meta(struct model *m, bool agent_facts, const char *const *meta, size_t n)
{
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/usr/bin/train");
	uint32_t main_ = synth_loc(&s, app, 0x1000, "main");
	uint32_t launch = synth_loc(&s, app, 0x2000, "launch");
	uint32_t sync = synth_loc(&s, app, 0x3000, "sync");
	uint32_t work = synth_loc(&s, app, 0x4000, "work");
	uint32_t s1[] = { main_, launch }, s2[] = { main_, sync }, s3[] = { main_, work };
	uint32_t stream7, stream8, api, wait, nvtx;

	synth_comm(&s, PID, MAIN_TID, "train");
	synth_comm(&s, PID, LOADER_TID, "loader");
	synth_samples(&s, PID, MAIN_TID, synth_stack(&s, s1, 2), 6);
	synth_samples(&s, PID, MAIN_TID, synth_stack(&s, s2, 2), 6);
	synth_samples(&s, PID, LOADER_TID, synth_stack(&s, s3, 2), 3);

	stream7 = synth_lane(&s, PID, "GPU0 stream 7");
	stream8 = synth_lane(&s, PID, "GPU0 stream 8");
	api = synth_lane_kind(&s, PID, CUDA_API_LANE_KIND, "CUDA API");
	wait = synth_lane_kind(&s, PID, CUDA_WAIT_LANE_KIND, "CPU wait");
	nvtx = synth_lane_kind(&s, PID, NVTX_LANE_KIND, "NVTX");

	for (uint64_t i = 1; i <= 3; i++)
		kernel(&s, stream7, KERNEL, SYNTH_T0 + 2 * MS, i * US, MAIN_TID, SYNTH_T0 + 1 * MS,
		       &config_a);
	kernel(&s, stream7, "reduce", SYNTH_T0 + 3 * MS, 4 * US, MAIN_TID, SYNTH_T0 + 2 * MS,
	       &config_reduce);
	copy(&s, stream7, "[CUDA memcpy HtoD]", 100 * US, 1000000);
	copy(&s, stream7, "[CUDA memcpy HtoD]", 100 * US, 3000000);
	copy(&s, stream7, "[CUDA memcpy PtoP]", 50 * US, 2000000);
	copy(&s, stream7, "[CUDA memset]", 1 * US, 1000);
	kernel(&s, stream8, KERNEL, SYNTH_T0 + 13 * MS, 10 * US, LOADER_TID, SYNTH_T0 + 13 * MS,
	       &config_b);

	for (int i = 0; i < 4; i++)
		synth_span_from(&s, api, "cudaLaunchKernel", SYNTH_T0 + 4 * MS, 5 * US, MAIN_TID,
				SYNTH_T0 + 4 * MS);
	synth_span_from(&s, api, "cudaMemcpy", SYNTH_T0 + 4 * MS, 110 * US, MAIN_TID,
			SYNTH_T0 + 4 * MS);
	synth_span_from(&s, api, "cudaMemcpy", SYNTH_T0 + 4 * MS, 130 * US, MAIN_TID,
			SYNTH_T0 + 4 * MS);
	synth_span_from(&s, api, "cuLaunchKernel", SYNTH_T0 + 4 * MS, 3 * US, MAIN_TID,
			SYNTH_T0 + 4 * MS);
	synth_span_from(&s, wait, "cudaStreamSynchronize", SYNTH_T0 + 7 * MS, 30 * US, MAIN_TID,
			SYNTH_T0 + 7 * MS);
	synth_span_from(&s, wait, "cudaStreamSynchronize", SYNTH_T0 + 9 * MS, 50 * US, MAIN_TID,
			SYNTH_T0 + 9 * MS);
	synth_span_from(&s, wait, "cudaDeviceSynchronize", SYNTH_T0 + 10 * MS, 20 * US, MAIN_TID,
			SYNTH_T0 + 10 * MS);

	/* Inner ranges first, as the agent writes them when they close. */
	range(&s, nvtx, "step", SYNTH_T0 + 2 * MS, 3 * MS, 1);
	range(&s, nvtx, "step", SYNTH_T0 + 6 * MS, 2 * MS, 1);
	range(&s, nvtx, "epoch", SYNTH_T0, 10 * MS, 0);

	synth_meta(&s, "event", "cpu-clock");
	synth_meta(&s, "frequency", "1000");
	if (agent_facts)
		add_agent_facts(&s);
	for (size_t i = 0; i + 1 < n; i += 2)
		synth_meta(&s, meta[i], meta[i + 1]);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
}

static void build_gpu_agent(struct model *m, bool agent_facts)
{
	build_gpu_meta(m, agent_facts, NULL, 0);
}

static void build_gpu(struct model *m)
{
	build_gpu_agent(m, false);
}

static const struct gpu_row *find_row(const struct gpu_table *t, const struct model *m,
				      const char *name)
{
	for (size_t i = 0; i < t->rows.len; i++)
		if (!strcmp(model_str(m, t->rows.v[i].name), name))
			return &t->rows.v[i];
	printf("  no row \"%s\"\n", name);
	return NULL;
}

/* The kernel's name as the report prints it: demangled when the machine can. */
static const char *kernel_name(void)
{
	struct demangler d = {0};
	bool ok = demangler_available(&d);

	demangler_free(&d);
	return ok ? KERNEL_PLAIN : KERNEL;
}

static void test_kernels(void)
{
	struct gpu_report r;
	struct capture cap;
	struct model m;
	struct funcs f;
	const struct gpu_row *k, *red;
	const char *text;
	char line[256];

	build_gpu(&m);
	funcs_init(&f, &m, 0);
	gpu_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.lanes, 4);	/* streams 7 and 8, CUDA API, CPU wait */
	CHECK_EQ_U64(r.kernels.count, 5);
	CHECK_EQ_U64(r.kernels.total_ns, 20 * US);
	CHECK_EQ_U64(r.kernels.rows.len, 2);
	k = find_row(&r.kernels, &m, KERNEL);
	red = find_row(&r.kernels, &m, "reduce");
	CHECK(k == &r.kernels.rows.v[0]);	/* by total time */
	if (k) {
		CHECK_EQ_U64(k->st.count, 4);
		CHECK_EQ_U64(k->st.total_ns, 16 * US);
		CHECK_EQ_U64(k->st.min_ns, 1 * US);
		CHECK_EQ_U64(k->st.max_ns, 10 * US);
		CHECK(k->st.median_ns == 2500.0);	/* (2 + 3) / 2 us */
		/* deviations -3, -2, -1, 6 us: sqrt(50 / 3) us */
		CHECK(k->st.stddev_ns > 4082.48 && k->st.stddev_ns < 4082.49);
		CHECK_EQ_U64(k->configs, 2);
		CHECK_EQ_U64(k->config.grid[0], 128);	/* three of the four */
		CHECK_EQ_U64(k->config.block[0], 256);
		CHECK_EQ_U64(k->config.regs, 32);
		CHECK_EQ_U64(k->config.occupancy, 1000);
	}
	if (red) {
		CHECK_EQ_U64(red->st.count, 1);
		CHECK(red->st.median_ns == 4000.0);
		CHECK(red->st.stddev_ns == 0.0);
		CHECK_EQ_U64(red->configs, 1);
		CHECK_EQ_U64(red->config.limiter, 2);
	}

	gpu_report_print(capture_start(&cap), &r, &m, "g.data", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "# File: g.data"));
	CHECK(has_line(text, "# CUDA kernels: 5 instances of 2 kernels, 0.020 ms of GPU time"));
	CHECK(has_line(text, "# Time(%)   Total ms Instances     Avg us     Med us     Min us"
			     "     Max us  StdDev us  GridXYZ   BlockXYZ  Regs  Occupancy"
			     "        Name"));
	snprintf(line, sizeof(line), "   80.00%%      0.016         4      4.000      2.500"
		 "      1.000     10.000      4.082  128x1x1*  256x1x1     32  100.0%% warps"
		 "     %s", kernel_name());
	CHECK(has_line(text, line));
	CHECK(has_line(text, "   20.00%      0.004         1      4.000      4.000      4.000"
			     "      4.000      0.000  1x1x1     1024x1x1    64  50.0% registers"
			     "  reduce"));
	CHECK(has_line(text, "# * launched in several configurations; the most frequent is shown"));
	free(cap.text);
	gpu_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

static void test_copies_and_calls(void)
{
	struct gpu_report r;
	struct capture cap;
	struct model m;
	struct funcs f;
	const struct gpu_row *htod, *api;
	const char *text;

	build_gpu(&m);
	funcs_init(&f, &m, 0);
	gpu_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.copies.count, 4);
	CHECK_EQ_U64(r.copies.bytes, 6001000);
	htod = find_row(&r.copies, &m, "[CUDA memcpy HtoD]");
	if (htod) {
		CHECK_EQ_U64(htod->bytes, 4000000);
		CHECK(htod->min_gbps == 10.0);
		CHECK(htod->max_gbps == 30.0);
	}
	api = find_row(&r.api, &m, "cudaMemcpy");
	CHECK(api == &r.api.rows.v[0]);
	CHECK_EQ_U64(r.api.total_ns, 263 * US);
	CHECK_EQ_U64(r.waits.total_ns, 100 * US);

	gpu_report_print(capture_start(&cap), &r, &m, "g.data", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "# CUDA copies: 4 copies and memsets, 6.001 MB, "
			     "0.251 ms of GPU time"));
	CHECK(has_line(text, "# Time(%)   Total ms     Count        Bytes     Avg us       GB/s"
			     "   Min GB/s   Max GB/s  Kind"));
	CHECK(has_line(text, "   79.68%      0.200         2     4.000 MB    100.000     20.000"
			     "     10.000     30.000  HtoD"));
	CHECK(has_line(text, "   19.92%      0.050         1     2.000 MB     50.000     40.000"
			     "     40.000     40.000  PtoP"));
	CHECK(has_line(text, "    0.40%      0.001         1     1.000 kB      1.000      1.000"
			     "      1.000      1.000  memset"));
	CHECK(has_line(text, "# CUDA API: 7 calls, 0.263 ms"));
	CHECK(has_line(text, "# Time(%)   Total ms     Calls     Avg us     Med us     Min us"
			     "     Max us  StdDev us  Name"));
	CHECK(has_line(text, "   91.25%      0.240         2    120.000    120.000    110.000"
			     "    130.000     14.142  cudaMemcpy"));
	CHECK(has_line(text, "    7.60%      0.020         4      5.000      5.000      5.000"
			     "      5.000      0.000  cudaLaunchKernel"));
	CHECK(has_line(text, "# CPU waiting on the GPU (synchronizing calls): 3 calls, 0.100 ms"));
	CHECK(has_line(text, "   80.00%      0.080         2     40.000     40.000     30.000"
			     "     50.000     14.142  cudaStreamSynchronize"));
	free(cap.text);

	/* -n: rows per table. */
	gpu_report_print(capture_start(&cap), &r, &m, "g.data", 1);
	text = capture_end(&cap);
	CHECK(!strstr(text, " reduce\n"));
	CHECK(!strstr(text, " PtoP\n"));
	CHECK(!strstr(text, " cudaLaunchKernel\n"));
	CHECK(strstr(text, " cudaMemcpy\n") != NULL);
	free(cap.text);
	gpu_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* Kernels selected through their lane, or the thread that launched them. */
static void test_gpu_filters(void)
{
	struct sample_filter flt = {0};
	struct gpu_report r;
	struct model m;
	struct funcs f;

	build_gpu(&m);
	funcs_init(&f, &m, 0);

	CHECK(filter_add(&flt, FILTER_TID, "301") == 0);
	gpu_report_build(&r, &f, &flt);
	CHECK_EQ_U64(r.kernels.count, 1);
	CHECK_EQ_U64(r.kernels.total_ns, 10 * US);
	CHECK_EQ_U64(r.copies.count, 0);
	CHECK_EQ_U64(r.api.count, 0);
	gpu_report_free(&r);
	filter_free(&flt);

	CHECK(filter_add(&flt, FILTER_TID, "0xfff00001") == 0);	/* stream 8 */
	gpu_report_build(&r, &f, &flt);
	CHECK_EQ_U64(r.kernels.count, 1);
	CHECK_EQ_U64(r.kernels.total_ns, 10 * US);
	gpu_report_free(&r);
	filter_free(&flt);

	CHECK(filter_add(&flt, FILTER_TID, "300") == 0);
	gpu_report_build(&r, &f, &flt);
	CHECK_EQ_U64(r.kernels.count, 4);
	CHECK_EQ_U64(r.copies.count, 4);
	CHECK_EQ_U64(r.api.count, 7);
	CHECK_EQ_U64(r.waits.count, 3);
	gpu_report_free(&r);
	filter_free(&flt);

	CHECK(filter_add(&flt, FILTER_PID, "999") == 0);
	gpu_report_build(&r, &f, &flt);
	CHECK_EQ_U64(r.lanes, 4);
	CHECK_EQ_U64(r.kernels.count + r.copies.count + r.api.count + r.waits.count, 0);
	gpu_report_free(&r);
	filter_free(&flt);

	funcs_free(&f);
	model_free(&m);
}

/* A lane's spans by name, as report --tid LANE shows them: kernels demangled. */
static void test_lane_report(void)
{
	struct sample_filter flt = {0};
	struct lane_report lr;
	struct capture cap;
	struct model m;
	struct funcs f;
	char line[256];

	build_gpu(&m);
	funcs_init(&f, &m, 0);
	CHECK(filter_add(&flt, FILTER_TID, "0xfff00001") == 0);
	lane_report_build(&lr, &f, &flt);
	lane_report_print(capture_start(&cap), &lr, &m, "g.data", 0);
	capture_end(&cap);
	snprintf(line, sizeof(line), "      0.010  100.00%%        1     10.000     10.000"
		 "     10.000  GPU0 stream 8  %s", kernel_name());
	CHECK(has_line(cap.text, line));
	free(cap.text);
	lane_report_free(&lr);
	filter_free(&flt);
	funcs_free(&f);
	model_free(&m);
}

/* The attributes of spans written in two chunks find their spans again. */
static void test_attrs_in_file(void)
{
	char path[] = "/tmp/gtrace-test-gpu.XXXXXX";
	struct tr_writer *w;
	struct synth s = {0};
	struct gpu_report r;
	struct model m;
	struct funcs f;
	uint32_t lane;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	CHECK(tr_writer_open(&w, path, TR_FEAT_LANES) == 0);
	lane = synth_lane(&s, 1, "GPU0 stream 1");
	kernel(&s, lane, "early", SYNTH_T0, 1 * US, 0, 0, &config_a);
	CHECK(synth_put_chunk(&s, w) == 0);
	kernel(&s, lane, "late", SYNTH_T0 + 1 * MS, 2 * US, 0, 0, &config_reduce);
	CHECK(synth_put_chunk(&s, w) == 0);
	CHECK(synth_put_end(w) == 0);
	CHECK(tr_writer_close(w) == 0);
	synth_free(&s);

	CHECK(model_load(&m, path) == 0);
	funcs_init(&f, &m, 0);
	gpu_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.kernels.rows.len, 2);
	for (size_t i = 0; i < r.kernels.rows.len; i++) {
		const struct gpu_row *row = &r.kernels.rows.v[i];
		bool late = !strcmp(model_str(&m, row->name), "late");

		CHECK_EQ_U64(row->config.grid[0], late ? config_reduce.grid : config_a.grid);
		CHECK_EQ_U64(row->config.regs, late ? config_reduce.regs : config_a.regs);
	}
	gpu_report_free(&r);
	funcs_free(&f);
	model_free(&m);
	unlink(path);
}

/* The row of a report whose keys print as text (the key columns, two spaces apart). */
static const struct report_row *nvtx_row(const struct report *r, const struct funcs *f,
					 const char *range, const char *symbol)
{
	for (size_t i = 0; i < r->rows.len; i++) {
		const struct report_row *row = &r->rows.v[i];
		const char *name = row->nvtx ? model_str(f->m, row->nvtx) : "[no range]";

		if (strcmp(name, range))
			continue;
		if (!symbol || !strcmp(funcs_name(f, f->v.v[row->func].name), symbol))
			return row;
	}
	printf("  no row %s / %s\n", range, symbol ? symbol : "-");
	return NULL;
}

#define CHECK_SELF(r, f, range_, sym, n)                                       \
	do {                                                                   \
		const struct report_row *row_ = nvtx_row(r, f, range_, sym);   \
		CHECK(row_ != NULL);                                           \
		if (row_)                                                      \
			CHECK_EQ_U64(row_->self, n);                           \
	} while (0)

static void test_nvtx_sort(void)
{
	struct report_opts o = { .children = false };
	struct capture cap;
	struct report r;
	struct model m;
	struct funcs f;
	const char *text;

	build_gpu(&m);
	funcs_init(&f, &m, 0);
	CHECK(report_parse_keys(&o, "nvtx") == 0);
	report_build(&r, &f, &o);
	CHECK_EQ_U64(r.total, 15);
	CHECK_EQ_U64(r.rows.len, 3);
	/* train: epoch at 0, 1, 5, 8, 9 ms; step at 2..4, 6, 7; none at 10, 11; loader none */
	CHECK_SELF(&r, &f, "epoch", NULL, 5);
	CHECK_SELF(&r, &f, "step", NULL, 5);
	CHECK_SELF(&r, &f, "[no range]", NULL, 5);
	report_print(capture_start(&cap), &r, &f, &o, "g.data");
	text = capture_end(&cap);
	CHECK(has_line(text, "#      Self  Samples  NVTX range"));
	CHECK(has_line(text, "     33.33%        5  epoch"));
	CHECK(has_line(text, "     33.33%        5  [no range]"));
	free(cap.text);
	report_free(&r);

	CHECK(report_parse_keys(&o, "nvtx,symbol") == 0);
	report_build(&r, &f, &o);
	CHECK_SELF(&r, &f, "epoch", "launch", 3);
	CHECK_SELF(&r, &f, "epoch", "sync", 2);
	CHECK_SELF(&r, &f, "step", "launch", 3);
	CHECK_SELF(&r, &f, "step", "sync", 2);
	CHECK_SELF(&r, &f, "[no range]", "sync", 2);
	CHECK_SELF(&r, &f, "[no range]", "work", 3);
	CHECK_EQ_U64(r.rows.len, 6);
	report_free(&r);

	CHECK(report_parse_keys(&o, "comm,nvtx") == 0);
	report_build(&r, &f, &o);
	CHECK_EQ_U64(r.rows.len, 4);	/* train: 3 ranges; loader: none */
	report_print(capture_start(&cap), &r, &f, &o, "g.data");
	text = capture_end(&cap);
	CHECK(has_line(text, "     20.00%        3  loader   [no range]"));
	CHECK(has_line(text, "     13.33%        2  train    [no range]"));
	free(cap.text);
	report_free(&r);
	CHECK(report_parse_keys(&o, "nvtx,nvtx") == -EINVAL);
	funcs_free(&f);
	model_free(&m);
}

/* Lane work keyed by the range open at the sample its origin linked to. */
static void test_nvtx_lane_work(void)
{
	struct report_opts o = { .children = false };
	struct origin_links l;
	struct report r;
	struct model m;
	struct funcs f;

	build_gpu(&m);
	funcs_init(&f, &m, 0);
	origins_link(&l, &m, origins_default_window(&m));
	CHECK(report_parse_keys(&o, "nvtx") == 0);
	report_build_lane_work(&r, &f, &o, &l);
	/* Everything but the three NVTX ranges: 9 GPU, 7 API, 3 wait spans. */
	CHECK_EQ_U64(r.total, 19);
	{
		const struct report_row *epoch = nvtx_row(&r, &f, "epoch", NULL);
		const struct report_row *none = nvtx_row(&r, &f, "[no range]", NULL);

		/* kernel x3 at 1 ms, cudaStreamSynchronize at 9 ms */
		if (epoch)
			CHECK_EQ_U64(epoch->target_self, 6 * US + 50 * US);
		/* cudaDeviceSynchronize at 10 ms; loader's kernel */
		if (none)
			CHECK_EQ_U64(none->target_self, 20 * US + 10 * US);
	}
	report_free(&r);
	origins_free(&l);
	funcs_free(&f);
	model_free(&m);
}

static void test_flame_nvtx(void)
{
	struct origin_links l;
	struct calltree t;
	struct capture cap;
	struct model m;
	struct funcs f;
	const char *text;
	char line[256];

	build_gpu(&m);
	funcs_init(&f, &m, 0);
	calltree_build(&t, &f, NULL, NULL);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	text = capture_end(&cap);
	CHECK(has_line(text, "train;[nvtx] epoch;main;launch 3"));
	CHECK(has_line(text, "train;[nvtx] epoch;[nvtx] step;main;launch 3"));
	CHECK(has_line(text, "train;[nvtx] epoch;main;sync 2"));
	CHECK(has_line(text, "train;[nvtx] epoch;[nvtx] step;main;sync 2"));
	CHECK(has_line(text, "train;main;sync 2"));
	CHECK(has_line(text, "loader;main;work 3"));
	free(cap.text);
	calltree_free(&t);

	calltree_build_ranges(&t, &f, NULL, NULL, false);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	text = capture_end(&cap);
	CHECK(has_line(text, "train;main;launch 6"));
	CHECK(has_line(text, "train;main;sync 6"));
	CHECK(!strstr(text, "[nvtx]"));
	free(cap.text);
	calltree_free(&t);

	/* GPU work and waits under the stacks and ranges that queued them. */
	origins_link(&l, &m, origins_default_window(&m));
	calltree_build(&t, &f, NULL, &l);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_TARGET);
	text = capture_end(&cap);
	snprintf(line, sizeof(line), "train;[nvtx] epoch;main;launch;[lane] GPU0 stream 7;%s 6000",
		 kernel_name());
	CHECK(has_line(text, line));
	snprintf(line, sizeof(line), "loader;main;work;[lane] GPU0 stream 8;%s 10000",
		 kernel_name());
	CHECK(has_line(text, line));
	CHECK(has_line(text, "train;[nvtx] epoch;[nvtx] step;main;launch;[lane] GPU0 stream 7;"
			     "[CUDA memcpy HtoD] 200000"));
	CHECK(has_line(text, "train;[nvtx] epoch;[nvtx] step;main;launch;[lane] CUDA API;"
			     "cudaMemcpy 240000"));
	CHECK(has_line(text, "train;[nvtx] epoch;[nvtx] step;main;sync;[lane] CPU wait;"
			     "cudaStreamSynchronize 30000"));
	CHECK(has_line(text, "train;main;sync;[lane] CPU wait;cudaDeviceSynchronize 20000"));
	/* The ranges are a lane of their own, never lane work under a stack. */
	CHECK(has_line(text, "[lane] NVTX;epoch 10000000"));
	CHECK(!strstr(text, ";[lane] NVTX"));
	free(cap.text);
	calltree_free(&t);
	origins_free(&l);
	funcs_free(&f);
	model_free(&m);
}

/*
 * Ranges that overlap without nesting (start/end ranges), touch, and
 * share a start: the innermost is the one that started last, or, at the
 * same start, the deeper or shorter one.
 */
static void test_nvtx_overlap(void)
{
	struct nvtx_ranges r;
	struct synth s = {0};
	struct model m;
	uint32_t lane, c;

	lane = synth_lane_kind(&s, 1, NVTX_LANE_KIND, "NVTX");
	synth_span_from(&s, lane, "a", 100, 100, 7, 100);	/* 100..200 */
	synth_span_from(&s, lane, "b", 150, 100, 7, 150);	/* 150..250 */
	synth_span_from(&s, lane, "c", 250, 50, 7, 250);	/* 250..300, touches b */
	synth_span_from(&s, lane, "inner", 400, 10, 7, 400);	/* same start as outer */
	synth_span_attr(&s, "nvtx.depth", 1);
	synth_span_from(&s, lane, "outer", 400, 10, 7, 400);
	synth_span_attr(&s, "nvtx.depth", 0);
	synth_span_from(&s, lane, "empty", 500, 0, 7, 500);	/* holds no time */
	synth_span_from(&s, lane, "other", 100, 1000, 8, 100);
	synth_span_from(&s, lane, "orphan", 100, 1000, 0, 0);	/* no thread */
	synth_model(&s, &m, TR_FEAT_LANES);
	nvtx_ranges_build(&r, &m);

#define NAME_AT(tid, ts)                                                       \
	((c = nvtx_chain_at(&r, tid, ts)) ? model_str(&m, r.chains.v[c - 1].name) : "-")
	CHECK_STREQ(NAME_AT(7, 99), "-");
	CHECK_STREQ(NAME_AT(7, 100), "a");
	CHECK_STREQ(NAME_AT(7, 150), "b");
	CHECK_EQ_U64(r.chains.v[c - 1].depth, 1);
	CHECK_STREQ(NAME_AT(7, 199), "b");
	CHECK_STREQ(NAME_AT(7, 200), "b");
	CHECK_EQ_U64(r.chains.v[c - 1].depth, 0);
	CHECK_STREQ(NAME_AT(7, 250), "c");
	CHECK_STREQ(NAME_AT(7, 300), "-");
	CHECK_STREQ(NAME_AT(7, 405), "inner");
	CHECK_STREQ(model_str(&m, r.chains.v[r.chains.v[c - 1].parent - 1].name), "outer");
	CHECK_STREQ(NAME_AT(7, 500), "-");
	CHECK_STREQ(NAME_AT(8, 5000), "-");
	CHECK_STREQ(NAME_AT(8, 1099), "other");
	CHECK_STREQ(NAME_AT(0, 200), "-");
	CHECK_STREQ(NAME_AT(9, 200), "-");
#undef NAME_AT
	nvtx_ranges_free(&r);
	model_free(&m);
}

static void test_threads_gpu(void)
{
	struct capture cap;
	struct model m;
	const char *text;

	build_gpu(&m);
	threads_print(capture_start(&cap), &m, NULL, 1, false);
	text = capture_end(&cap);
	CHECK(has_line(text, "     PID        TID  Kind       Name              Spans   Target ms"
			     "    First s     Last s"));
	CHECK(has_line(text, "     300 0xfff00000  cuda       GPU0 stream 7         8         0.3"
			     "      0.002      0.003"));
	CHECK(has_line(text, "     300 0xfff00002  cuda-api   CUDA API              7         0.3"
			     "      0.004      0.004"));
	CHECK(has_line(text, "     300 0xfff00003  cuda-wait  CPU wait              3         0.1"
			     "      0.007      0.010"));
	CHECK(strstr(text, "loader") == NULL);	/* -n 1 limits threads, never lanes */
	free(cap.text);
	model_free(&m);
}

/* A recording with only the meta and counters of GPU collection. */
static void build_meta(struct model *m, const char *const *meta, size_t n)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/bin/app");
	uint32_t loc = synth_loc(&s, dso, 0x10, "main");

	synth_samples(&s, 1, 1, synth_stack(&s, &loc, 1), 1);
	for (size_t i = 0; i + 1 < n; i += 2)
		synth_meta(&s, meta[i], meta[i + 1]);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES);
}

static void check_explain(const char *const *meta, size_t n, const char *expect)
{
	struct gpu_report r;
	struct capture cap;
	struct model m;
	struct funcs f;
	char buf[512], line[600];
	const char *why;

	build_meta(&m, meta, n);
	why = cuda_explain(&m, buf, sizeof(buf));
	if (expect) {
		CHECK_STREQ(why, expect);
		diagnose_print(capture_start(&cap), &m, "c.data", NULL);
		capture_end(&cap);
		snprintf(line, sizeof(line), "CUDA:                 %s", expect);
		CHECK(has_line(cap.text, line));
		/* Counters come once something happened: with a status, none did. */
		CHECK(has_line(cap.text, model_meta(&m, "cuda.status")
			       ? "GPU record problems:  none" : "GPU record problems:  n/a"));
		free(cap.text);
	} else {
		CHECK(why == NULL);
	}
	funcs_init(&f, &m, 0);
	gpu_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.lanes, 0);	/* report --gpu says "no CUDA activity" */
	gpu_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

static void test_explanations(void)
{
	static const char *const no_driver[] = {
		"cuda.injection", INJECTION,
		"cuda.driver", "none: no NVIDIA kernel driver loaded",
	};
	static const char *const no_init[] = {
		"cuda.injection", INJECTION, "cuda.driver", DRIVER_LINE,
	};
	static const char *const conflict[] = {
		"cuda.injection", INJECTION, "cuda.driver", DRIVER_LINE,
		"cuda.status",
		"subscriber-conflict: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED",
	};
	static const char *const named[] = {
		"cuda.status", "subscriber-conflict: 'Nsight Systems' holds the CUPTI subscription",
	};
	static const char *const too_old[] = {
		"cuda.injection", INJECTION, "cuda.driver", DRIVER_LINE,
		"cuda.status", "cupti-too-old: 120000 < 130001",
	};
	static const char *const unavailable[] = {
		"cuda.status", "cupti-unavailable: libcupti.so.13: cannot open shared object file",
	};
	static const char *const error[] = {
		"cuda.status", "cupti-error: cuptiActivityEnable: CUPTI_ERROR_UNKNOWN",
	};
	static const char *const off[] = {
		"cuda.injection", "off: gtrace was built without CUPTI",
	};
	static const char *const active[] = { "cuda.status", "active" };
	static const char *const ga[] = { "cuda.status", "active", "cuda.cupti-version", "130000" };
	static const char *const no_libcuda[] = {
		"cuda.injection", INJECTION, "cuda.driver", DRIVER_LINE,
		"cuda.libcuda", "missing: libcuda.so.1: cannot open shared object file",
	};
	static const char *const warned[] = {
		"cuda.status", "active",
		"cuda.warnings", "cuptiActivityEnable(MEMSET): CUPTI_ERROR_NOT_SUPPORTED",
	};
	static const char *const taken[] = {
		"cuda.status", "taken-over: another CUPTI client took the activity buffers; 2 "
		"launches, copies and memsets queued after 0.031 s from cuInit were not recorded",
	};
	static const char *const none[] = { "command", "./app" };

	check_explain(no_driver, 4, "no GPU was available: no NVIDIA driver is loaded on the "
		      "recording machine; CPU samples only");
	check_explain(no_init, 4, "no process initialized CUDA; CPU samples only");
	check_explain(conflict, 6, "another CUPTI client held the subscription "
		      "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED); GPU activity was not "
		      "recorded, CPU samples were");
	check_explain(named, 2, "'Nsight Systems' held the CUPTI subscription; GPU activity was "
		      "not recorded, CPU samples were");
	check_explain(too_old, 6, "the CUPTI library is too old (120000 < 130001); GPU activity "
		      "was not recorded, CPU samples were");
	check_explain(unavailable, 2, "CUPTI could not be loaded (libcupti.so.13: cannot open "
		      "shared object file); GPU activity was not recorded, CPU samples were");
	check_explain(error, 2, "CUPTI failed (cuptiActivityEnable: CUPTI_ERROR_UNKNOWN); GPU "
		      "activity was not recorded, CPU samples were");
	check_explain(off, 2, "GPU collection was off (gtrace was built without CUPTI); CPU "
		      "samples only");
	check_explain(active, 2, "CUPTI was active but the GPU ran no kernel, copy or memset");
	check_explain(ga, 4, "CUPTI was active but the GPU ran no kernel, copy or memset; CUPTI "
		      "130000 is CUDA 13.0 before Update 1, which fixed a crash in flushing records "
		      "and a deadlock in disabling them: if the program hangs or crashes under "
		      "gtrace, update CUDA");
	check_explain(no_libcuda, 6, "the NVIDIA driver is loaded but libcuda.so.1 cannot be "
		      "found, as in a container started without the driver libraries "
		      "(nvidia-container-toolkit, docker --gpus); CPU samples only");
	check_explain(warned, 4, "CUPTI was active but the GPU ran no kernel, copy or memset; "
		      "some CUPTI calls failed (cuda.warnings)");
	check_explain(taken, 2, "another CUPTI client took the activity buffers: GPU activity "
		      "before that was recorded, 2 launches, copies and memsets queued after "
		      "0.031 s from cuInit were not recorded; CPU samples were");
	check_explain(none, 2, NULL);
}

static void test_diagnose_cuda(void)
{
	struct origin_links l;
	struct capture cap;
	struct model m;
	const char *text;

	build_gpu_agent(&m, true);
	origins_link(&l, &m, origins_default_window(&m));
	diagnose_print(capture_start(&cap), &m, "g.data", &l);
	text = capture_end(&cap);
	CHECK(has_line(text, "CUDA:                 CUPTI was active: GPU activity was recorded"));
	CHECK(has_line(text, "cuda.injection:       " INJECTION));
	CHECK(has_line(text, "cuda.driver:          " DRIVER_LINE));
	CHECK(has_line(text, "cuda.status:          active"));
	CHECK(has_line(text, "cuda.cupti-version:   130001"));
	CHECK(has_line(text, "cuda.driver-version:  n/a"));
	CHECK(has_line(text, "cuda.device.0:        NVIDIA H100 80GB HBM3, sm 9.0, 132 SMs, "
			     "81559 MiB"));
	CHECK(has_line(text, "cuda.flush:           clean"));
	CHECK(has_line(text, "cuda.future-fact:     42"));
	CHECK(has_line(text, "build.host:           ci-7"));	/* the generic listing */
	CHECK_EQ_U64(count_of(text, "cuda.flush:"), 1);
	CHECK_EQ_U64(count_of(text, "cuda.future-fact:"), 1);
	CHECK(has_line(text, "GPU lanes:            2 streams, 9 spans, 0.271 ms of GPU time"));
	CHECK(has_line(text, "GPU record problems:  2 dropped by CUPTI, 1 starting before their "
			     "API call"));
	CHECK(has_line(text, "  cuda.records.kernel                    5"));
	CHECK(has_line(text, "  cuda.dropped                           2"));
	CHECK(has_line(text, "  cuda.new-count                         9"));
	CHECK(has_line(text, "other counters:"));
	CHECK(has_line(text, "  other.count                            6"));
	CHECK_EQ_U64(count_of(text, "cuda.new-count"), 1);
	CHECK(has_line(text, "origins by lane:"));
	CHECK(has_line(text, "       PID        TID    linked      none   bad_tid no_thread"
			     "  no_stack   too_far  Name"));
	CHECK(has_line(text, "       300 0xfff00000         8         0         0         0"
			     "         0         0  GPU0 stream 7"));
	CHECK(has_line(text, "       300 0xfff00004         3         0         0         0"
			     "         0         0  NVTX"));
	free(cap.text);
	origins_free(&l);
	model_free(&m);
}

/*
 * A CUPTI call that failed while collection went on (one kind refused) is
 * a warning: the verdict still says the GPU lanes were recorded, and the
 * clock the records came in is listed.
 */
static void test_diagnose_warnings(void)
{
	static const char *const meta[] = {
		"cuda.warnings", "cuptiActivityEnable(MEMSET): CUPTI_ERROR_NOT_SUPPORTED",
		"cuda.clock", ("cupti+offset: cuptiActivityRegisterTimestampCallback: "
			       "CUPTI_ERROR_NOT_SUPPORTED"),
	};
	struct origin_links l;
	struct capture cap;
	struct model m;
	const char *text;

	build_gpu_meta(&m, true, meta, 4);
	origins_link(&l, &m, origins_default_window(&m));
	diagnose_print(capture_start(&cap), &m, "w.data", &l);
	text = capture_end(&cap);
	CHECK(has_line(text, "CUDA:                 CUPTI was active: GPU activity was recorded, "
			     "but some CUPTI calls failed (cuda.warnings)"));
	CHECK(has_line(text, "cuda.status:          active"));
	CHECK(has_line(text, "cuda.warnings:        cuptiActivityEnable(MEMSET): "
			     "CUPTI_ERROR_NOT_SUPPORTED"));
	CHECK(has_line(text, "cuda.clock:           cupti+offset: "
			     "cuptiActivityRegisterTimestampCallback: CUPTI_ERROR_NOT_SUPPORTED"));
	CHECK(!strstr(text, "not recorded"));
	free(cap.text);
	origins_free(&l);
	model_free(&m);
}

/* 100,000 kernels over 500 names: exact sums and medians, every config kept. */
static void test_many_kernels(void)
{
	enum { KERNELS = 100000, NAMES = 500 };
	struct synth s = {0};
	struct gpu_report r;
	struct model m;
	struct funcs f;
	uint64_t total = 0;
	uint32_t lane = synth_lane(&s, 1, "GPU0 stream 1");
	char name[32];

	for (uint32_t i = 0; i < KERNELS; i++) {
		uint64_t dur = 1000 + (i * 7919u) % 5000;

		snprintf(name, sizeof(name), "k%03u", i % NAMES);
		kernel(&s, lane, name, SYNTH_T0 + i, dur, 0, 0, &config_a);
		total += dur;
	}
	synth_model(&s, &m, TR_FEAT_LANES);
	funcs_init(&f, &m, 0);
	gpu_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.kernels.count, KERNELS);
	CHECK_EQ_U64(r.kernels.rows.len, NAMES);
	CHECK_EQ_U64(r.kernels.total_ns, total);
	for (size_t i = 0; i < r.kernels.rows.len; i++) {
		CHECK_EQ_U64(r.kernels.rows.v[i].st.count, KERNELS / NAMES);
		CHECK_EQ_U64(r.kernels.rows.v[i].configs, 1);
		if (i)
			CHECK(r.kernels.rows.v[i].st.total_ns <=
			      r.kernels.rows.v[i - 1].st.total_ns);
	}
	gpu_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

int main(void)
{
	RUN(test_kernels);
	RUN(test_copies_and_calls);
	RUN(test_gpu_filters);
	RUN(test_lane_report);
	RUN(test_attrs_in_file);
	RUN(test_nvtx_sort);
	RUN(test_nvtx_lane_work);
	RUN(test_flame_nvtx);
	RUN(test_nvtx_overlap);
	RUN(test_threads_gpu);
	RUN(test_explanations);
	RUN(test_diagnose_cuda);
	RUN(test_diagnose_warnings);
	RUN(test_many_kernels);
	return test_summary();
}
