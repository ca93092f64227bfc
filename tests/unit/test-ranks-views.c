/* SPDX-License-Identifier: MIT */
/*
 * The views of several recordings merged into one model (model_merge):
 * the rank key and --rank in report, the Rank column of threads, a
 * "rank N" frame per rank in flame, a process and a metrics pseudo process
 * per rank in export, the ranks in diagnose, report --gpu's rows per rank,
 * and which recording each metric series is of.
 */
#include <errno.h>
#include <stdlib.h>

#include "analysis/encoders/export.h"
#include "analysis/passes/passes.h"
#include "analysis/views/diagnose.h"
#include "analysis/views/gpu.h"
#include "analysis/views/report.h"
#include "analysis/views/threads.h"
#include "contract/lanes.h"
#include "exports.h"
#include "synth.h"
#include "test.h"
#include "views.h"

/* The recordings merged, in this order: their ranks, pids, hot functions, samples. */
static const struct {
	int rank;
	uint32_t pid;
	const char *func;
	unsigned samples;
} recs[] = {
	{ 4, 100, "hot", 10 },
	{ 7, 100, "cold", 20 },	/* pid 100 again: renumbered */
	{ 2, 300, "warm", 5 },
};
#define RECS (sizeof(recs) / sizeof(recs[0]))

/*
 * One rank's recording: its thread's samples in one function, a GPU
 * stream with one kernel, and metrics of its machine, process and GPU
 * (the process followed from the second reading on, as the recorder
 * does), on a machine whose CLOCK_MONOTONIC is its index in seconds behind.
 */
static void rank_model(struct model *m, size_t i)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/bin/app");
	uint32_t loc[1] = { synth_loc(&s, dso, 0x1000, recs[i].func) };
	int64_t offset = (int64_t)i * 1000000000;
	uint32_t ids[3];
	uint64_t values[3] = { 1, 2, 3 };
	char buf[64];

	snprintf(buf, sizeof(buf), "%d", recs[i].rank);
	synth_meta(&s, "rank", buf);
	synth_meta(&s, "hostname", i ? "beta" : "alpha");
	snprintf(buf, sizeof(buf), "%lld %lld", (long long)SYNTH_T0 + offset, (long long)SYNTH_T0);
	synth_meta(&s, "clock-start", buf);
	snprintf(buf, sizeof(buf), "%lld %lld", (long long)SYNTH_T0 + offset + (i ? 300 : 0),
		 (long long)SYNTH_T0 + 100000000);
	synth_meta(&s, "clock-end", buf);
	synth_comm(&s, recs[i].pid, recs[i].pid, "app");
	synth_samples(&s, recs[i].pid, recs[i].pid, synth_stack(&s, loc, 1), recs[i].samples);
	synth_span(&s, synth_lane(&s, recs[i].pid, "GPU0 stream 7"), "kernel", SYNTH_T0, 1000);
	synth_counter(&s, "samples", recs[i].samples);
	ids[0] = synth_metric(&s, "sys.load1", "", 0, 0, 2);
	synth_metric_tick(&s, SYNTH_T0, ids, values, 1);
	ids[1] = synth_metric(&s, "proc.rss", "KiB", recs[i].pid, 0, 0);
	ids[2] = synth_metric(&s, "gpu.power", "W", 0, 1, 1);
	synth_metric_tick(&s, SYNTH_T0 + SYNTH_PERIOD, ids, values, 3);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES | TR_FEAT_METRICS);
	synth_free(&s);
	free(m->ranks.v[0].path);
	snprintf(buf, sizeof(buf), "job/r.%d.data", recs[i].rank);
	m->ranks.v[0].path = xstrdup(buf);
}

static void make_job(struct model *m)
{
	rank_model(m, 0);
	for (size_t i = 1; i < RECS; i++) {
		struct model other;

		rank_model(&other, i);
		model_merge(m, &other);
	}
	model_merge_end(m);
}

/* The pid recording i's process has in the merged model. */
static uint32_t pid_of(const struct model *m, size_t i)
{
	for (size_t t = 0; t < m->real_threads; t++)
		if (model_rank_of(m, m->threads.v[t].pid) == i)
			return m->threads.v[t].pid;
	return 0;
}

static void test_filter(void)
{
	struct sample_filter flt = {0};
	struct model m;

	make_job(&m);
	CHECK(filter_add(&flt, FILTER_RANK, "7,2") == 0);
	CHECK(filter_add(&flt, FILTER_RANK, "seven") == -EINVAL);
	CHECK(filter_add(&flt, FILTER_RANK, "1,") == -EINVAL);
	CHECK_EQ_U64(pid_rank(&m, pid_of(&m, 1)), 7);
	CHECK(!filter_process(&flt, &m, pid_of(&m, 0)));
	CHECK(filter_process(&flt, &m, pid_of(&m, 1)));
	CHECK(filter_process(&flt, &m, pid_of(&m, 2)));
	CHECK(filter_process(NULL, &m, pid_of(&m, 0)));
	CHECK(filter_rank(&flt, 2) && !filter_rank(&flt, 4));
	filter_free(&flt);
	model_free(&m);
}

static void test_report(void)
{
	struct sample_filter flt = {0};
	struct report_opts o = { .children = false, .filter = &flt };
	struct capture cap;
	struct report r;
	struct funcs f;
	struct model m;
	const char *text;

	make_job(&m);
	funcs_init(&f, &m, 0);
	CHECK(report_parse_keys(&o, "rank,comm,dso,symbol") == 0);
	report_build(&r, &f, &o);
	CHECK_EQ_U64(r.rows.len, 3);
	CHECK_EQ_U64(r.total, 35);
	report_print(capture_start(&cap), &r, &f, &o, "job");
	text = capture_end(&cap);
	CHECK(has_line(text, "#      Self  Samples  Rank  Command  DSO  Symbol"));
	CHECK(has_line(text, "     57.14%       20  7     app      app  cold"));
	CHECK(has_line(text, "     28.57%       10  4     app      app  hot"));
	CHECK(has_line(text, "     14.29%        5  2     app      app  warm"));
	free(cap.text);
	report_free(&r);

	/* The ranks of one function apart, and --rank. */
	CHECK(filter_add(&flt, FILTER_RANK, "2,4") == 0);
	CHECK(report_parse_keys(&o, "rank,dso") == 0);
	report_build(&r, &f, &o);
	CHECK_EQ_U64(r.rows.len, 2);
	CHECK_EQ_U64(r.total, 15);
	report_print_json(capture_start(&cap), &r, &r, &(struct lane_report){0}, &f, &o, "job");
	text = capture_end(&cap);
	CHECK(strstr(text, "\"self\": 10, \"children\": 0, \"self_percent\": 66.6667, "
		      "\"children_percent\": 0.0000, \"rank\": 4, \"dso\": \"app\"}"));
	free(cap.text);
	report_free(&r);

	filter_free(&flt);
	funcs_free(&f);
	model_free(&m);
}

/*
 * Two recordings without a rank of their own (ranks 0 and 1), each with
 * kernel "k" on a stream and cudaLaunchKernel calls: rank 0 runs k twice
 * for 1 and 2 us, rank 1 three times for 10 us, so that rank comes before
 * time.
 */
static void gpu_rank_model(struct model *m, size_t i)
{
	struct synth s = {0};
	uint32_t stream, api;

	synth_comm(&s, 100, 100, "app");
	stream = synth_lane(&s, 100, "GPU0 stream 7");
	api = synth_lane_kind(&s, 100, CUDA_API_LANE_KIND, "CUDA API");
	for (uint64_t k = 1; k <= 2 + i; k++) {
		synth_span(&s, stream, "k", SYNTH_T0 + k * 100000, i ? 10000 : k * 1000);
		synth_span(&s, api, "cudaLaunchKernel", SYNTH_T0 + k * 100000, 5000);
	}
	synth_model(&s, m, TR_FEAT_LANES);
	synth_free(&s);
}

static void test_gpu(void)
{
	struct gpu_report r;
	struct capture cap;
	struct model m, other;
	struct funcs f;
	const char *text;

	gpu_rank_model(&m, 0);
	gpu_rank_model(&other, 1);
	model_merge(&m, &other);
	model_merge_end(&m);
	funcs_init(&f, &m, 0);
	gpu_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.kernels.rows.len, 2);
	CHECK_EQ_U64(r.kernels.count, 5);
	if (r.kernels.rows.len == 2) {
		CHECK_EQ_U64(r.kernels.rows.v[0].rank, 0);
		CHECK_EQ_U64(r.kernels.rows.v[0].st.count, 2);
		CHECK_EQ_U64(r.kernels.rows.v[0].st.total_ns, 3000);
		CHECK_EQ_U64(r.kernels.rows.v[1].rank, 1);
		CHECK_EQ_U64(r.kernels.rows.v[1].st.count, 3);
		CHECK_EQ_U64(r.kernels.rows.v[1].st.total_ns, 30000);
	}
	CHECK_EQ_U64(r.api.rows.len, 2);

	gpu_report_print(capture_start(&cap), &r, &m, "job", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "# Rank  Time(%)   Total ms Instances     Avg us     Med us"
			     "     Min us     Max us  StdDev us  GridXYZ  BlockXYZ  Regs"
			     "  Occupancy  Name"));
	CHECK(has_line(text, "     0    9.09%      0.003         2      1.500      1.500"
			     "      1.000      2.000      0.707  -        -            -"
			     "  -          k"));
	CHECK(has_line(text, "     1   90.91%      0.030         3     10.000     10.000"
			     "     10.000     10.000      0.000  -        -            -"
			     "  -          k"));
	CHECK(has_line(text, "     0   40.00%      0.010         2      5.000      5.000"
			     "      5.000      5.000      0.000  cudaLaunchKernel"));
	free(cap.text);

	gpu_report_print_json(capture_start(&cap), &r, &m, "job", 0);
	text = capture_end(&cap);
	CHECK(strstr(text, "{\"rank\": 0, \"name\": \"k\", \"count\": 2, "));
	CHECK(strstr(text, "{\"rank\": 1, \"name\": \"k\", \"count\": 3, "));
	CHECK(strstr(text, "{\"rank\": 1, \"name\": \"cudaLaunchKernel\", \"count\": 3, "));
	free(cap.text);
	gpu_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

static void test_threads(void)
{
	struct sample_filter flt = {0};
	struct capture cap;
	struct model m;
	const char *text;
	char line[256];

	make_job(&m);
	threads_print(capture_start(&cap), &m, NULL, 0, false);
	text = capture_end(&cap);
	CHECK(has_line(text, " Rank      PID        TID  Name   Samples   On-CPU ms  Off-CPU ms"
			     "    First s     Last s"));
	snprintf(line, sizeof(line), "    7  %7u    %7u  app         20", pid_of(&m, 1),
		 pid_of(&m, 1));
	CHECK(!strncmp(strstr(text, "\n    7 ") + 1, line, strlen(line)));
	CHECK_EQ_U64(count_of(text, "\n    4      100 "), 3);	/* its thread, process and lane */
	free(cap.text);

	CHECK(filter_add(&flt, FILTER_RANK, "2") == 0);
	threads_print_json(capture_start(&cap), &m, &flt, "job", 0, false);
	text = capture_end(&cap);
	CHECK(strstr(text, "{\"rank\": 2, \"pid\": 300, \"tid\": 300, \"name\": \"app\", "
			   "\"samples\": 5"));
	CHECK(strstr(text, "{\"rank\": 2, \"pid\": 300, \"tid\": 4293918722, \"kind\": \"cuda\""));
	CHECK(strstr(text, "{\"rank\": 2, \"pid\": 300, \"name\": \"app\", \"peak_rss_kib\""));
	CHECK_EQ_U64(count_of(text, "\"rank\": "), 3);
	free(cap.text);
	filter_free(&flt);
	model_free(&m);
}

static void test_flame(void)
{
	struct sample_filter flt = {0};
	struct capture cap;
	struct calltree t;
	struct funcs f;
	struct model m;
	const char *text;

	make_job(&m);
	funcs_init(&f, &m, 0);
	calltree_build(&t, &f, NULL, NULL);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	text = capture_end(&cap);
	CHECK(has_line(text, "rank 7;app;cold 20"));
	CHECK(has_line(text, "rank 4;app;hot 10"));
	CHECK(has_line(text, "rank 2;app;warm 5"));
	free(cap.text);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_TARGET);
	text = capture_end(&cap);
	CHECK(has_line(text, "rank 4;[lane] GPU0 stream 7;kernel 1000"));
	CHECK_EQ_U64(count_of(text, ";[lane] GPU0 stream 7;kernel 1000"), 3);
	free(cap.text);
	calltree_free(&t);

	CHECK(filter_add(&flt, FILTER_RANK, "4") == 0);
	calltree_build(&t, &f, &flt, NULL);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	CHECK_STREQ(capture_end(&cap), "rank 4;app;hot 10\n");
	free(cap.text);
	calltree_free(&t);
	filter_free(&flt);
	funcs_free(&f);
	model_free(&m);
}

/* Each recording's machine and GPU series are its own, though their pid is 0. */
static void test_metric_ranks(void)
{
	struct model m;

	make_job(&m);
	CHECK_EQ_U64(m.t.metrics.len, 3 * RECS);
	for (uint32_t id = 1; id <= m.t.metrics.len; id++)
		CHECK_EQ_U64(model_metric_rank(&m, id), (id - 1) / 3);
	model_free(&m);
}

static void test_export(void)
{
	struct sample_filter flt = {0};
	struct model m;
	size_t len;
	char *text, *two, *four, *machine;

	make_job(&m);
	text = export_text(&m, EXPORT_CHROME, NULL, 0, UINT64_MAX, &len);
	two = strstr(text, "\"args\":{\"name\":\"rank 2: app\"}");
	four = strstr(text, "\"args\":{\"name\":\"rank 4: app\"}");
	CHECK(two && four && two < four);	/* made, hence sorted, by rank */
	CHECK(strstr(text, "\"args\":{\"name\":\"rank 7: app\"}"));
	machine = strstr(text, "\"pid\":4292870400,\"tid\":0,\"args\":{\"name\":\"rank 7: machine\"}");
	CHECK(machine);
	CHECK(strstr(text, "\"pid\":4292870401,\"tid\":0,\"args\":{\"name\":\"rank 7: GPU0\"}"));
	CHECK(strstr(text, "\"pid\":4292870144,\"tid\":0,\"args\":{\"name\":\"rank 4: machine\"}"));
	free(text);

	CHECK(filter_add(&flt, FILTER_RANK, "7") == 0);
	text = export_text(&m, EXPORT_CHROME, &flt, 0, UINT64_MAX, &len);
	CHECK(strstr(text, "rank 7: machine"));
	CHECK(!strstr(text, "rank 4:") && !strstr(text, "rank 2:"));
	free(text);
	filter_free(&flt);
	model_free(&m);
}

static void test_diagnose(void)
{
	struct origin_links links;
	struct capture cap;
	struct model m;
	const char *text;

	make_job(&m);
	origins_link(&links, &m, 4 * SYNTH_PERIOD);
	diagnose_print(capture_start(&cap), &m, "job", &links);
	text = capture_end(&cap);
	CHECK(strstr(text, "\nranks:                3 recordings, on the clock of the first"));
	CHECK(has_line(text, "       4  alpha      clock base               -  job/r.4.data"));
	CHECK(has_line(text, "       7  beta         +1.000 s         +300 ns  job/r.7.data"));
	CHECK(has_line(text, "       2  beta         +2.000 s         +300 ns  job/r.2.data"));
	free(cap.text);
	diagnose_print_json(capture_start(&cap), &m, "job", &links);
	text = capture_end(&cap);
	CHECK(strstr(text, "{\"rank\": 7, \"has_rank\": true, \"host\": \"beta\", "
			   "\"path\": \"job/r.7.data\", \"clock_pairs\": true, "
			   "\"shift_ns\": 1000000000, \"drift_ns\": 300, \"aligned_by\": 0, "
			   "\"residual_ns\": null}"));
	free(cap.text);
	origins_free(&links);
	model_free(&m);
}

int main(void)
{
	RUN(test_filter);
	RUN(test_report);
	RUN(test_gpu);
	RUN(test_threads);
	RUN(test_flame);
	RUN(test_metric_ranks);
	RUN(test_export);
	RUN(test_diagnose);
	return test_summary();
}
