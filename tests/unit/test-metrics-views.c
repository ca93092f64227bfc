/* SPDX-License-Identifier: MIT */
/*
 * The views of the metrics on a synthetic recording whose figures are
 * worked out by hand: statistics, sparklines and units (report
 * --metrics), each process's peak RSS and CPU (threads), the reading's
 * health (diagnose), counter tracks (export) and the means compared
 * (diff).
 */
#include <math.h>

#include "analysis/encoders/export.h"
#include "analysis/passes/passes.h"
#include "analysis/views/diagnose.h"
#include "analysis/views/diff.h"
#include "analysis/views/metrics.h"
#include "analysis/views/threads.h"
#include "exports.h"
#include "synth.h"
#include "test.h"
#include "views.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)
#define TICKS 20
#define TICK_NS 100000000ull	/* 100 ms */
#define APP 100
#define HELPER 200

/* The series of the recording, by id. */
enum {
	CPU_USER = 1, MEM_USED, APP_RSS, APP_USER, APP_SYSTEM, HELPER_RSS, HELPER_USER, GPU_POWER,
	GPU_THROTTLE, SERIES
};

/*
 * 20 ticks 100 ms apart from SYNTH_T0: the machine's CPU rising from 0 to
 * 95% by 5% a tick, its memory at 2 GiB; app (pid 100) at 150% user and
 * 25% system CPU from the second tick (a rate has no first value), its RSS
 * 10 MiB and 1 MiB more a tick, times rss_scale; helper (pid 200) only
 * from tick 10, 5000 KiB and 10% user; GPU0 at 45 W, idle for ten ticks,
 * then held by its software power cap for five.
 */
static void build(struct model *m, uint64_t rss_scale)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t main_loc = synth_loc(&s, dso, 0x1000, "main");

	synth_meta(&s, "start-ns", "1000000000");
	synth_meta(&s, "metrics-interval", "100000000");
	synth_meta(&s, "metrics-nvml", "on: 1 GPU");
	synth_comm(&s, APP, APP, "app");
	synth_comm(&s, APP, APP + 1, "worker");
	synth_comm(&s, HELPER, HELPER, "helper");
	synth_samples(&s, APP, APP, synth_stack(&s, &main_loc, 1), 10);
	synth_metric(&s, "sys.cpu.user", "%", 0, 0, 1);
	synth_metric(&s, "sys.mem.used", "KiB", 0, 0, 0);
	synth_metric(&s, "proc.rss", "KiB", APP, 0, 0);
	synth_metric(&s, "proc.cpu.user", "%", APP, 0, 1);
	synth_metric(&s, "proc.cpu.system", "%", APP, 0, 1);
	synth_metric(&s, "proc.rss", "KiB", HELPER, 0, 0);
	synth_metric(&s, "proc.cpu.user", "%", HELPER, 0, 1);
	synth_metric(&s, "gpu.power", "W", 0, 1, 3);
	synth_metric(&s, "gpu.throttle", "mask", 0, 1, 0);
	for (uint64_t i = 0; i < TICKS; i++) {
		uint32_t ids[SERIES];
		uint64_t v[SERIES];
		size_t n = 0;

		ids[n] = CPU_USER, v[n++] = i * 50;
		ids[n] = MEM_USED, v[n++] = 2097152;
		ids[n] = APP_RSS, v[n++] = (10240 + 1024 * i) * rss_scale;
		if (i) {
			ids[n] = APP_USER, v[n++] = 1500;
			ids[n] = APP_SYSTEM, v[n++] = 250;
		}
		if (i >= 10) {
			ids[n] = HELPER_RSS, v[n++] = 5000;
			if (i > 10)
				ids[n] = HELPER_USER, v[n++] = 100;
		}
		ids[n] = GPU_POWER, v[n++] = 45000;
		ids[n] = GPU_THROTTLE, v[n++] = i < 10 ? 0x1 : i < 15 ? 0x4 : 0;
		synth_metric_tick(&s, SYNTH_T0 + i * TICK_NS, ids, v, n);
	}
	synth_counter(&s, "metrics.ticks", TICKS);
	synth_counter(&s, "metrics.missed", 1);
	synth_counter(&s, "metrics.processes", 2);
	synth_counter(&s, "metrics.read-failed", 0);
	synth_counter(&s, "metrics.cpu-ns", 2000000);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_METRICS);
	synth_free(&s);
}

static void test_stats_and_units(void)
{
	struct metric_stats st;
	struct model m;
	char buf[64];

	build(&m, 1);
	metric_stats(&st, &m, CPU_USER);
	CHECK_EQ_U64(st.values, TICKS);
	CHECK(!st.mask);
	/* 0, 5, .. 95%: p95 is the 19th of 20 by nearest rank. */
	CHECK(NEAR(st.min, 0) && NEAR(st.mean, 47.5) && NEAR(st.p95, 90) && NEAR(st.max, 95));
	metric_stats(&st, &m, APP_USER);
	CHECK_EQ_U64(st.values, TICKS - 1);
	CHECK(NEAR(st.min, 150) && NEAR(st.max, 150));
	metric_stats(&st, &m, GPU_THROTTLE);
	CHECK(st.mask);
	CHECK_EQ_U64(st.flagged, 5);
	CHECK_EQ_U64(st.reasons, 0x5);
	CHECK(NEAR(metric_flagged_percent(&st), 25));
	CHECK_STREQ(metric_reason_names(buf, sizeof(buf), st.reasons), "gpu idle, sw power cap");
	CHECK_STREQ(metric_reason_names(buf, sizeof(buf), 0x1000), "bit 0x1000");
	CHECK_STREQ(metric_reason_names(buf, sizeof(buf), 0), "none");

	CHECK_STREQ(metric_format(buf, sizeof(buf), "%", 1, 47.5), "47.5%");
	CHECK_STREQ(metric_format(buf, sizeof(buf), "KiB", 0, 512), "512 KiB");
	CHECK_STREQ(metric_format(buf, sizeof(buf), "KiB", 0, 29696), "29.0 MiB");
	CHECK_STREQ(metric_format(buf, sizeof(buf), "KiB", 0, 2097152), "2.0 GiB");
	CHECK_STREQ(metric_format(buf, sizeof(buf), "KiB/s", 0, 1536), "1.5 MiB/s");
	CHECK_STREQ(metric_format(buf, sizeof(buf), "W", 3, 45), "45.0 W");
	CHECK_STREQ(metric_format(buf, sizeof(buf), "/s", 0, 12.3), "12.3/s");
	CHECK_STREQ(metric_format(buf, sizeof(buf), "MHz", 0, 1410), "1410 MHz");
	CHECK_STREQ(metric_format(buf, sizeof(buf), "", 2, 1.5), "1.50");
	CHECK_STREQ(metric_subject_label(buf, sizeof(buf), &m, &m.t.metrics.v[APP_RSS - 1]),
		    "pid 100 (app)");
	CHECK_STREQ(metric_subject_label(buf, sizeof(buf), &m, &m.t.metrics.v[GPU_POWER - 1]),
		    "GPU0");
	CHECK_STREQ(metric_subject_label(buf, sizeof(buf), &m, &m.t.metrics.v[MEM_USED - 1]),
		    "machine");
	model_free(&m);
}

static void test_sparklines(void)
{
	char spark[METRIC_SPARK_SIZE];
	struct metric_stats st;
	uint64_t from, to;
	struct model m;

	build(&m, 1);
	metrics_range(&m, &from, &to);
	CHECK_EQ_U64(from, SYNTH_T0);
	CHECK_EQ_U64(to, SYNTH_T0 + (TICKS - 1) * TICK_NS);
	/* Two ticks a character. */
	CHECK_EQ_U64(metric_spark_width(&m), TICKS / 2);
	/* Rising: each part's mean between the min (lowest bar) and the max (full). */
	metric_stats(&st, &m, CPU_USER);
	CHECK_STREQ(metric_sparkline(spark, &m, &st, from, to, 10),
		    "\u2581\u2582\u2583\u2583\u2584\u2585\u2586\u2586\u2587\u2588");
	metric_stats(&st, &m, MEM_USED);
	CHECK_STREQ(metric_sparkline(spark, &m, &st, from, to, 5),
		    "\u2581\u2581\u2581\u2581\u2581");
	/* helper came halfway through: nothing before. */
	metric_stats(&st, &m, HELPER_RSS);
	CHECK_STREQ(metric_sparkline(spark, &m, &st, from, to, 4), "  \u2581\u2581");
	/* The share throttled: ticks 10 to 14 of 0 .. 19. */
	metric_stats(&st, &m, GPU_THROTTLE);
	CHECK_STREQ(metric_sparkline(spark, &m, &st, from, to, 10),
		    "\u2581\u2581\u2581\u2581\u2581\u2588\u2588\u2585\u2581\u2581");
	/* Never wider than METRIC_SPARK_WIDTH characters: here a value every other one. */
	metric_stats(&st, &m, CPU_USER);
	metric_sparkline(spark, &m, &st, from, to, 1000);
	CHECK_EQ_U64(count_of(spark, "\xe2"), TICKS);
	CHECK_EQ_U64(count_of(spark, " "), METRIC_SPARK_WIDTH - TICKS);
	CHECK_EQ_U64(strlen(spark), 3 * TICKS + METRIC_SPARK_WIDTH - TICKS);
	model_free(&m);
}

static void test_report(void)
{
	struct sample_filter flt = {0};
	struct metrics_report r;
	struct capture cap;
	struct model m;
	struct funcs f;
	const char *text;

	build(&m, 1);
	funcs_init(&f, &m, 0);
	metrics_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.rows.len, SERIES - 1);
	metrics_report_print(capture_start(&cap), &r, &m, "t.data", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "# Metrics: 9 series, read every 100 ms, 20 ticks over 1.900 s"));
	CHECK(has_line(text, "#  Series           Over time          Min        Mean         P95"
			     "         Max"));
	CHECK(has_line(text, "machine"));
	CHECK(has_line(text, "   sys.cpu.user     \u2581\u2582\u2583\u2583\u2584\u2585\u2586\u2586"
			     "\u2587\u2588        0.0%       47.5%       90.0%       95.0%"));
	CHECK(has_line(text, "   sys.mem.used     \u2581\u2581\u2581\u2581\u2581\u2581\u2581\u2581"
			     "\u2581\u2581     2.0 GiB     2.0 GiB     2.0 GiB     2.0 GiB"));
	CHECK(has_line(text, "pid 100 (app)"));
	CHECK(has_line(text, "   proc.rss         \u2581\u2582\u2583\u2583\u2584\u2585\u2586\u2586"
			     "\u2587\u2588    10.0 MiB    19.5 MiB    28.0 MiB    29.0 MiB"));
	CHECK(has_line(text, "pid 200 (helper)"));
	CHECK(has_line(text, "GPU0"));
	CHECK(has_line(text, "   gpu.power        \u2581\u2581\u2581\u2581\u2581\u2581\u2581\u2581"
			     "\u2581\u2581      45.0 W      45.0 W      45.0 W      45.0 W"));
	CHECK(has_line(text, "   gpu.throttle     \u2581\u2581\u2581\u2581\u2581\u2588\u2588\u2585"
			     "\u2581\u2581  throttled in 25.0% of 20 readings; reasons seen: gpu idle,"
			     " sw power cap"));
	/* By subject: the machine, then the processes by pid, then the GPUs. */
	CHECK(strstr(text, "machine\n") < strstr(text, "pid 100") &&
	      strstr(text, "pid 100") < strstr(text, "pid 200") &&
	      strstr(text, "pid 200") < strstr(text, "GPU0\n"));
	free(cap.text);
	/* -n: the first rows. */
	metrics_report_print(capture_start(&cap), &r, &m, "t.data", 3);
	text = capture_end(&cap);
	CHECK(strstr(text, "   proc.rss ") && !strstr(text, "proc.cpu.user") && !strstr(text, "GPU0"));
	free(cap.text);
	metrics_report_free(&r);

	/* --pid selects the process's series; the machine's and the GPU's stay. */
	CHECK(filter_add(&flt, FILTER_PID, "200") == 0);
	metrics_report_build(&r, &f, &flt);
	CHECK_EQ_U64(r.rows.len, 6);
	metrics_report_print(capture_start(&cap), &r, &m, "t.data", 0);
	text = capture_end(&cap);
	CHECK(!strstr(text, "pid 100"));
	CHECK(strstr(text, "pid 200 (helper)\n") && strstr(text, "sys.cpu.user"));
	free(cap.text);
	metrics_report_free(&r);
	filter_free(&flt);
	funcs_free(&f);
	model_free(&m);
}

static void test_report_json(void)
{
	struct metrics_report r;
	struct capture cap;
	struct model m;
	struct funcs f;
	const char *text;

	build(&m, 1);
	funcs_init(&f, &m, 0);
	metrics_report_build(&r, &f, NULL);
	metrics_report_print_json(capture_start(&cap), &r, &m, "t.data", 0);
	text = capture_end(&cap);
	CHECK(strstr(text, "{\n  \"version\": 1,\n  \"path\": \"t.data\",\n  \"interval_ms\": "
			   "100.000,\n  \"ticks\": 20,\n  \"series\": [\n") == text);
	CHECK(strstr(text, "{\"subject\": \"machine\", \"pid\": null, \"comm\": null, \"gpu\": null, "
			   "\"name\": \"sys.cpu.user\", \"unit\": \"%\", \"values\": 20, \"min\": 0.000, "
			   "\"mean\": 47.500, \"p95\": 90.000, \"max\": 95.000}"));
	CHECK(strstr(text, "{\"subject\": \"process\", \"pid\": 100, \"comm\": \"app\", \"gpu\": null, "
			   "\"name\": \"proc.cpu.user\", \"unit\": \"%\", \"values\": 19,"));
	CHECK(strstr(text, "{\"subject\": \"gpu\", \"pid\": null, \"comm\": null, \"gpu\": 0, "
			   "\"name\": \"gpu.throttle\", \"unit\": \"mask\", \"values\": 20, \"min\": null, "
			   "\"mean\": null, \"p95\": null, \"max\": null, \"throttled_percent\": 25.000, "
			   "\"reasons\": [\"gpu idle\", \"sw power cap\"]}\n  ]\n}\n"));
	CHECK_EQ_U64(count_of(text, "\"subject\""), SERIES - 1);
	free(cap.text);
	metrics_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* Without metrics, or without a value: why, for the one line report --metrics says. */
static void test_explain(void)
{
	struct synth s = {0};
	struct model m;
	char why[256];

	build(&m, 1);
	CHECK(metrics_explain(&m, why, sizeof(why)) == NULL);
	model_free(&m);
	synth_meta(&s, "command", "./app");
	synth_model(&s, &m, 0);
	CHECK_STREQ(metrics_explain(&m, why, sizeof(why)),
		    "it was recorded with --no-metrics, or by a gtrace without them");
	model_free(&m);
	synth_meta(&s, "metrics-interval", "100000000");
	synth_metric(&s, "sys.load1", "", 0, 0, 2);
	synth_model(&s, &m, TR_FEAT_METRICS);
	CHECK_STREQ(metrics_explain(&m, why, sizeof(why)),
		    "the recording ended before the first reading");
	model_free(&m);
	synth_free(&s);
}

static void test_threads(void)
{
	struct capture cap;
	struct model m;
	const char *text;

	build(&m, 1);
	threads_print(capture_start(&cap), &m, NULL, 0, false);
	text = capture_end(&cap);
	/* app: 150% + 25%, its RSS at most 10 MiB + 19 MiB; helper: less CPU, after it. */
	CHECK(has_line(text, "     PID  Name      Peak RSS   Mean CPU"));
	CHECK(has_line(text, "     100  app       29.0 MiB     175.0%"));
	CHECK(has_line(text, "     200  helper     4.9 MiB      10.0%"));
	CHECK(strstr(text, "     100  app ") < strstr(text, "     200  helper "));
	free(cap.text);
	threads_print_json(capture_start(&cap), &m, NULL, "t.data", 0, false);
	text = capture_end(&cap);
	CHECK(strstr(text, "\"processes\": [\n    {\"pid\": 100, \"name\": \"app\", "
			   "\"peak_rss_kib\": 29696, \"cpu_percent\": 175.000},\n"
			   "    {\"pid\": 200, \"name\": \"helper\", \"peak_rss_kib\": 5000, "
			   "\"cpu_percent\": 10.000}\n  ],\n  \"lanes\": []"));
	free(cap.text);
	model_free(&m);
}

/* An RSS of 0 is a reading of a process as it exited: no figure, '-'. */
static void test_threads_rss_read_at_exit(void)
{
	struct capture cap;
	struct model m;
	const char *text;

	build(&m, 0);
	threads_print(capture_start(&cap), &m, NULL, 0, false);
	text = capture_end(&cap);
	CHECK(has_line(text, "     100  app              -     175.0%"));
	CHECK(!strstr(text, " 0 KiB"));
	free(cap.text);
	threads_print_json(capture_start(&cap), &m, NULL, "t.data", 0, false);
	text = capture_end(&cap);
	CHECK(strstr(text, "{\"pid\": 100, \"name\": \"app\", \"peak_rss_kib\": null, "));
	free(cap.text);
	model_free(&m);
}

static void test_diagnose(void)
{
	struct origin_links links;
	struct synth s = {0};
	struct capture cap;
	struct model m;
	const char *text;

	build(&m, 1);
	origins_link(&links, &m, origins_default_window(&m));
	diagnose_print(capture_start(&cap), &m, "t.data", &links);
	text = capture_end(&cap);
	CHECK(has_line(text, "metrics:              every 100.000 ms, 20 ticks 100.000 ms apart "
			     "on average"));
	/* The bytes compressed depend on zstd's version: only their place is checked. */
	CHECK(strstr(text, "\nmetric series:        9: 2 of the machine, 5 of processes, 2 of "
			   "GPUs; 157 values, "));
	CHECK(strstr(text, " bytes each encoded, "));
	CHECK(has_line(text, "metric readings:      20 made, 1 missed, 2 processes read, 0 reads "
			     "failed"));
	CHECK(has_line(text, "metrics CPU:          2.000 ms, 100.000 us per tick"));
	CHECK(has_line(text, "GPU metrics:          on: 1 GPU"));
	/* Said once: not again among the meta keys and counters without a line. */
	CHECK_EQ_U64(count_of(text, "on: 1 GPU"), 1);
	CHECK(!strstr(text, "metrics.missed"));
	CHECK(!strstr(text, "metrics-interval"));
	free(cap.text);
	diagnose_print_json(capture_start(&cap), &m, "t.data", &links);
	text = capture_end(&cap);
	CHECK(strstr(text, "  \"metrics\": {\"recorded\": true, \"interval_ns\": 100000000, "
			   "\"ticks\": 20, \"spacing_ns\": 100000000, \"series\": 9, \"values\": 157, "
			   "\"encoded_bytes\": "));
	CHECK(strstr(text, ", \"nvml\": \"on: 1 GPU\"}\n}\n"));
	free(cap.text);
	origins_free(&links);
	model_free(&m);

	synth_meta(&s, "command", "./app");
	synth_model(&s, &m, 0);
	origins_link(&links, &m, 0);
	diagnose_print(capture_start(&cap), &m, "t.data", &links);
	text = capture_end(&cap);
	CHECK(has_line(text, "metrics:              none (recorded with --no-metrics, or by a "
			     "gtrace without them)"));
	CHECK(!strstr(text, "GPU metrics:"));
	free(cap.text);
	diagnose_print_json(capture_start(&cap), &m, "t.data", &links);
	text = capture_end(&cap);
	CHECK(strstr(text, "\"metrics\": {\"recorded\": false, \"interval_ns\": null, \"ticks\": 0, "
			   "\"spacing_ns\": null, \"series\": 0, \"values\": 0, \"encoded_bytes\": 0, "
			   "\"compressed_bytes\": 0, \"nvml\": null}"));
	free(cap.text);
	origins_free(&links);
	model_free(&m);
}

static void test_export(void)
{
	struct sample_filter flt = {0};
	struct model m;
	size_t len;
	char *text;

	build(&m, 1);
	text = export_text(&m, EXPORT_CHROME, NULL, 0, UINT64_MAX, &len);
	/* Each value under its process, or the pseudo process of the machine or the GPU. */
	CHECK_EQ_U64(count_of(text, "\"ph\":\"C\",\"name\":\"proc.rss\",\"pid\":100,"), TICKS);
	CHECK(strstr(text, "\"ph\":\"C\",\"name\":\"proc.rss\",\"pid\":100,\"tid\":0,"
			   "\"ts\":1900000.000,\"args\":{\"KiB\":29696}}"));
	/* A share of time from the tick before: the 10% read at tick 2, from tick 1. */
	CHECK(strstr(text, "\"ph\":\"C\",\"name\":\"sys.cpu.user\",\"pid\":4292870144,\"tid\":0,"
			   "\"ts\":100000.000,\"args\":{\"%\":10.0}}"));
	CHECK(strstr(text, "\"ph\":\"M\",\"name\":\"process_name\",\"pid\":4292870144,\"tid\":0,"
			   "\"args\":{\"name\":\"machine\"}}"));
	CHECK(strstr(text, "\"ph\":\"M\",\"name\":\"process_name\",\"pid\":4292870145,\"tid\":0,"
			   "\"args\":{\"name\":\"GPU0\"}}"));
	CHECK(strstr(text, "\"name\":\"gpu.power\",\"pid\":4292870145,\"tid\":0,\"ts\":0.000,"
			   "\"args\":{\"W\":45.000}}"));
	CHECK_EQ_U64(count_of(text, "\"name\":\"gpu.throttle\",\"pid\":4292870145"), TICKS);
	/* The recording's own counters keep their key. */
	CHECK(strstr(text, "\"name\":\"metrics.ticks\",\"pid\":0,\"tid\":0,\"ts\":0.000,"
			   "\"args\":{\"value\":20}}"));
	free(text);

	/*
	 * The window leaves out the values before it (the share read at tick
	 * 15 is of the time before); a filter, other processes' series.
	 */
	CHECK(filter_add(&flt, FILTER_PID, "200") == 0);
	text = export_text(&m, EXPORT_CHROME, &flt, 15 * TICK_NS, UINT64_MAX, &len);
	CHECK_EQ_U64(count_of(text, "\"name\":\"sys.cpu.user\""), 4);
	CHECK_EQ_U64(count_of(text, "\"name\":\"proc.rss\",\"pid\":200,"), 5);
	CHECK_EQ_U64(count_of(text, "\"name\":\"proc.rss\",\"pid\":100,"), 0);
	free(text);
	filter_free(&flt);

	text = export_text(&m, EXPORT_PERFETTO, NULL, 0, UINT64_MAX, &len);
	CHECK_EQ_U64(export_count(text, len, "machine"), 1);	/* its track's name */
	CHECK_EQ_U64(export_count(text, len, "GPU0"), 1);
	CHECK_EQ_U64(export_count(text, len, "sys.cpu.user"), 1);
	/* A counter descriptor's unit name, "KiB", for each proc.rss and sys.mem.used. */
	CHECK_EQ_U64(export_count(text, len, "\x32\x03KiB"), 3);
	free(text);
	model_free(&m);
}

static const struct diff_row *find_row(const struct diff *d, const char *where,
				       const char *name)
{
	for (size_t i = 0; i < d->rows.len; i++)
		if (d->rows.v[i].kind == DIFF_METRIC && !strcmp(d->rows.v[i].where, where) &&
		    !strcmp(d->rows.v[i].name, name))
			return &d->rows.v[i];
	return NULL;
}

static void test_diff(void)
{
	struct diff_opts o = { .confidence = 0.99, .threshold = 0.05, .normalize_total = true,
			       .kinds = 1u << DIFF_METRIC };
	const struct diff_row *row;
	struct model m[2];
	struct funcs f[2];
	struct capture cap;
	struct diff d;
	const char *text;

	build(&m[0], 1);
	build(&m[1], 2);
	for (int s = 0; s < 2; s++)
		funcs_init(&f[s], &m[s], 0);
	diff_build(&d, &f[0], &f[1], &o);
	/* app's RSS twice as large; processes by name, so a new pid would match too. */
	row = find_row(&d, "app", "proc.rss");
	CHECK(row != NULL);
	if (row) {
		CHECK_EQ_U64(row->base.count, TICKS);
		CHECK(NEAR(row->base.mean, 19968) && NEAR(row->new.mean, 39936));
		CHECK(NEAR(row->change, 1));
		CHECK(!row->tested && row->status == DIFF_SAME);
		CHECK_STREQ(row->unit, "KiB");
	}
	row = find_row(&d, "GPU0", "gpu.throttle");
	CHECK(row && NEAR(row->base.mean, 25) && !strcmp(row->unit, "%"));
	CHECK(find_row(&d, "machine", "sys.cpu.user") != NULL);
	CHECK_EQ_U64(d.rows.len, SERIES - 1);
	CHECK_EQ_U64(diff_regressions(&d, ~0u), 0);
	diff_print(capture_start(&cap), &d, &o, DIFF_TEXT, "a.data", "b.data", 0);
	text = capture_end(&cap);
	CHECK(strstr(text, "\n  metric         20         20     19.5 MiB     39.0 MiB   +100.0%"
			   "      0.000         -  same         app: proc.rss\n"));
	free(cap.text);
	diff_print(capture_start(&cap), &d, &o, DIFF_JSON, "a.data", "b.data", 0);
	text = capture_end(&cap);
	CHECK(strstr(text, "{\"kind\": \"metric\", \"name\": \"proc.rss\", \"where\": \"app\", "
			   "\"unit\": \"KiB\", \"status\": \"same\", \"change\": 1.000000,"));
	CHECK(strstr(text, "\"base\": {\"count\": 20, \"mean\": 19968.000000}, "
			   "\"new\": {\"count\": 20, \"mean\": 39936.000000}}"));
	free(cap.text);
	diff_free(&d);
	for (int s = 0; s < 2; s++) {
		funcs_free(&f[s]);
		model_free(&m[s]);
	}
}

int main(void)
{
	RUN(test_stats_and_units);
	RUN(test_sparklines);
	RUN(test_report);
	RUN(test_report_json);
	RUN(test_explain);
	RUN(test_threads);
	RUN(test_threads_rss_read_at_exit);
	RUN(test_diagnose);
	RUN(test_export);
	RUN(test_diff);
	return test_summary();
}
