/* SPDX-License-Identifier: MIT */
/*
 * gtrace diff's statistics against values worked by hand, and its rows on
 * two synthetic recordings: one kernel 10% slower, the rest unchanged,
 * one kernel added and one removed.
 */
#include <errno.h>
#include <math.h>

#include "analysis/encoders/flamesvg.h"
#include "analysis/passes/passes.h"
#include "analysis/views/diff.h"
#include "analysis/views/flamediff.h"
#include "synth.h"
#include "test.h"

#define NEAR(a, b, eps) (fabs((a) - (b)) < (eps))

static void test_statistics(void)
{
	static const uint64_t low[] = { 1, 2, 3, 4, 5 }, high[] = { 6, 7, 8, 9, 10 };
	static const uint64_t same[] = { 1, 1, 1 };

	CHECK(NEAR(diff_normal_p(1.959964), 0.05, 1e-5));
	CHECK(NEAR(diff_normal_p(-1.959964), 0.05, 1e-5));
	CHECK(NEAR(diff_normal_z(0.01), 2.575829, 1e-5));
	CHECK(NEAR(diff_normal_z(0.05), 1.959964, 1e-5));
	/* 30 of 100 against 50 of 100: pooled 0.4, z = 0.2 / sqrt(0.24 * 0.02). */
	CHECK(NEAR(diff_proportion_test(30, 100, 50, 100), 0.003892, 1e-5));
	CHECK(NEAR(diff_proportion_test(50, 100, 50, 100), 1, 1e-12));
	CHECK(NEAR(diff_proportion_test(5, 0, 50, 100), 1, 1e-12));
	/* 100 against 144 counts: z = 44 / sqrt(244). */
	CHECK(NEAR(diff_count_test(100, 144), 0.004851, 1e-5));
	CHECK(NEAR(diff_count_test(0, 0), 1, 1e-12));
	/* Fully apart, 5 and 5: U = 0, mean 12.5, variance 275 / 12, corrected by 0.5. */
	CHECK(NEAR(diff_rank_test(low, 5, high, 5), 0.012186, 1e-5));
	CHECK(NEAR(diff_rank_test(high, 5, low, 5), 0.012186, 1e-5));
	/* All tied: no information. */
	CHECK(NEAR(diff_rank_test(same, 3, same, 3), 1, 1e-12));
	CHECK(NEAR(diff_rank_test(low, 1, high, 5), 1, 1e-12));
}

static void test_kinds(void)
{
	unsigned kinds;

	CHECK(!diff_parse_kinds("gpu", &kinds));
	CHECK_EQ_U64(kinds, 1u << DIFF_KERNEL | 1u << DIFF_COPY | 1u << DIFF_API | 1u << DIFF_WAIT);
	CHECK(!diff_parse_kinds("cpu,lanes,nvtx,threads", &kinds));
	CHECK_EQ_U64(kinds, 1u << DIFF_CPU | 1u << DIFF_LANE | 1u << DIFF_NVTX | 1u << DIFF_THREAD);
	CHECK(!diff_parse_kinds("kernel", &kinds));
	CHECK_EQ_U64(kinds, 1u << DIFF_KERNEL);
	CHECK(diff_parse_kinds("kernels", &kinds) == -EINVAL);
	CHECK(diff_parse_kinds("cpu,", &kinds) == 0);
	CHECK(diff_parse_kinds("", &kinds) == -EINVAL);
	for (int k = 0; k < DIFF_KINDS; k++)
		CHECK(!diff_parse_kinds(diff_kind_name((enum diff_kind)k), &kinds) &&
		      kinds == 1u << k);
}

/*
 * One recording: 1000 samples of app, 600 in "hot" and 400 in "cold"; on
 * stream lanes 200 runs of "_Z6steadyv" of 10 us and 200 of "slow" of
 * slow_ns, each give or take up to 1 us; 50 HtoD copies of 20 us; one
 * kernel only this recording has.
 */
static void build(struct model *m, uint64_t slow_ns, const char *only)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t main_ = synth_loc(&s, dso, 0x100, "main");
	uint32_t hot = synth_loc(&s, dso, 0x200, "hot");
	uint32_t cold = synth_loc(&s, dso, 0x300, "cold");
	uint32_t a[] = { main_, hot }, b[] = { main_, cold };
	uint32_t stream, other;

	synth_comm(&s, 10, 10, "app");
	synth_samples(&s, 10, 10, synth_stack(&s, a, 2), 600);
	synth_samples(&s, 10, 10, synth_stack(&s, b, 2), 400);
	stream = synth_lane(&s, 10, "GPU0 stream 7");
	other = synth_lane(&s, 10, "GPU0 stream 13");
	for (uint64_t i = 0; i < 200; i++) {
		uint64_t jitter = i * 7919 % 1000;

		synth_span(&s, stream, "_Z6steadyv", SYNTH_T0 + i * 1000000, 10000 + jitter);
		synth_span(&s, other, "slow", SYNTH_T0 + i * 1000000, slow_ns + jitter);
	}
	for (uint64_t i = 0; i < 50; i++)
		synth_span(&s, stream, "[CUDA memcpy HtoD]", SYNTH_T0 + i * 100000, 20000);
	synth_span(&s, stream, only, SYNTH_T0, 5000);
	synth_meta(&s, "frequency", "1000");
	synth_meta(&s, "command", "app");
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
}

static const struct diff_row *find_row(const struct diff *d, enum diff_kind kind,
				       const char *name)
{
	for (size_t i = 0; i < d->rows.len; i++)
		if (d->rows.v[i].kind == kind && !strcmp(d->rows.v[i].name, name))
			return &d->rows.v[i];
	return NULL;
}

static void check_status(const struct diff *d, enum diff_kind kind, const char *name,
			 enum diff_status want)
{
	const struct diff_row *row = find_row(d, kind, name);

	CHECK(row != NULL);
	if (row && row->status != want) {
		printf("  %s: %s, expected %s (change %+.3f, p %g)\n", name,
		       diff_status_name(row->status), diff_status_name(want), row->change, row->p);
		test_current_failed = 1;
	}
}

/* The whole output of diff_print in one string. Free it. */
static char *printed(const struct diff *d, const struct diff_opts *o, enum diff_format format)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	diff_print(out, d, o, format, "base.data", "new.data", 0);
	fclose(out);
	return text;
}

static void test_rows(void)
{
	struct diff_opts o = { .confidence = 0.99, .threshold = 0.05, .normalize_total = true,
			       .kinds = ~0u };
	struct sample_filter flt = {0};
	struct model base, new;
	struct funcs fb, fn;
	struct diff d;
	char *text;

	o.filter = &flt;
	build(&base, 20000, "gone");
	build(&new, 22000, "_Z5freshv");
	funcs_init(&fb, &base, 0);
	funcs_init(&fn, &new, 0);
	diff_build(&d, &fb, &fn, &o);

	check_status(&d, DIFF_KERNEL, "slow", DIFF_REGRESSION);
	check_status(&d, DIFF_KERNEL, "steady()", DIFF_SAME);
	check_status(&d, DIFF_KERNEL, "fresh()", DIFF_ADDED);
	check_status(&d, DIFF_KERNEL, "gone", DIFF_REMOVED);
	check_status(&d, DIFF_COPY, "[CUDA memcpy HtoD]", DIFF_SAME);
	check_status(&d, DIFF_CPU, "hot", DIFF_SAME);
	check_status(&d, DIFF_CPU, "cold", DIFF_SAME);
	check_status(&d, DIFF_THREAD, "app", DIFF_SAME);
	CHECK(!find_row(&d, DIFF_THREAD, "app")->tested);
	CHECK(NEAR(find_row(&d, DIFF_THREAD, "app")->new.ms, 1000, 1e-9));	/* 1000 x 1 ms */
	CHECK(find_row(&d, DIFF_CPU, "main") == NULL);	/* no self samples */
	/* analyze's: GPU 0 idle most of its time in both, before work of no launch call. */
	check_status(&d, DIFF_RULE, "gpu-idle", DIFF_SAME);
	check_status(&d, DIFF_IDLE, "unknown idle", DIFF_SAME);
	CHECK(!strcmp(find_row(&d, DIFF_RULE, "gpu-idle")->where, "GPU 0"));
	CHECK_EQ_U64(d.rows.len, 10);
	/* The slow kernel changed most time: 200 x 2 us. */
	CHECK(!strcmp(d.rows.v[0].name, "slow") && NEAR(d.rows.v[0].impact_ms, 0.4, 1e-6));
	CHECK(NEAR(find_row(&d, DIFF_KERNEL, "slow")->change, 0.1 - 0.0, 0.01));
	CHECK(NEAR(find_row(&d, DIFF_CPU, "hot")->new.share, 60, 1e-9));
	CHECK_EQ_U64(d.by_status[DIFF_REGRESSION], 1);
	CHECK_EQ_U64(diff_regressions(&d, ~0u), 1);
	CHECK_EQ_U64(diff_regressions(&d, 1u << DIFF_CPU), 0);

	text = printed(&d, &o, DIFF_JSON);
	for (const char *const *key = (const char *const[]){ "\"version\": 1", "\"base\": {\"path\"",
	     "\"regressions\": 1", "\"kind\": \"kernel\", \"name\": \"slow\"",
	     "\"status\": \"regression\"", "\"median_ns\"", "\"share\"", NULL }; *key; key++)
		CHECK(strstr(text, *key) != NULL);
	free(text);
	text = printed(&d, &o, DIFF_MARKDOWN);
	CHECK(strstr(text, "| **regression** | kernel | slow |") != NULL);
	free(text);
	text = printed(&d, &o, DIFF_TEXT);
	CHECK(strstr(text, "10 rows, 5 tested: 1 regression, 0 improvements, 1 added, 1 removed") != NULL);
	free(text);
	diff_free(&d);

	/* --by cpu: the CPU rows alone; a threshold above the change: no regression. */
	o.kinds = 1u << DIFF_CPU;
	diff_build(&d, &fb, &fn, &o);
	CHECK_EQ_U64(d.rows.len, 2);
	diff_free(&d);
	o.kinds = ~0u;
	o.threshold = 0.2;
	diff_build(&d, &fb, &fn, &o);
	check_status(&d, DIFF_KERNEL, "slow", DIFF_SAME);
	CHECK(find_row(&d, DIFF_KERNEL, "slow")->significant);
	diff_free(&d);

	funcs_free(&fb);
	funcs_free(&fn);
	model_free(&base);
	model_free(&new);
}

/* app > main > hot and app > main > cold, hot samples of 1000. */
static void build_shares(struct model *m, unsigned hot)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t main_ = synth_loc(&s, dso, 0x100, "main");
	uint32_t a[] = { main_, synth_loc(&s, dso, 0x200, "hot") };
	uint32_t b[] = { main_, synth_loc(&s, dso, 0x300, "cold") };

	synth_comm(&s, 10, 10, "app");
	synth_samples(&s, 10, 10, synth_stack(&s, a, 2), hot);
	synth_samples(&s, 10, 10, synth_stack(&s, b, 2), 1000 - hot);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS);
}

/* app > main > hot, and main_self samples in main itself, of 1000 + main_self. */
static void build_caller(struct model *m, unsigned main_self)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t main_ = synth_loc(&s, dso, 0x100, "main");
	uint32_t a[] = { main_, synth_loc(&s, dso, 0x200, "hot") };

	synth_comm(&s, 10, 10, "app");
	synth_samples(&s, 10, 10, synth_stack(&s, a, 2), 1000);
	if (main_self)
		synth_samples(&s, 10, 10, synth_stack(&s, a, 1), main_self);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS);
}

/*
 * A function with no self samples in base and some in new changed "from 0",
 * not by +0.0%, and past any threshold: significant, it is a regression.
 * Rows not tested (the thread) print no p-value, in text and Markdown.
 */
static void test_untested_and_from_zero(void)
{
	struct diff_opts o = { .confidence = 0.99, .threshold = 0.05, .normalize_total = true,
			       .kinds = ~0u };
	struct sample_filter flt = {0};
	struct model m[2];
	struct funcs f[2];
	struct diff d;
	char *text;

	o.filter = &flt;
	for (int s = 0; s < 2; s++) {
		build_caller(&m[s], s ? 100 : 0);
		funcs_init(&f[s], &m[s], 0);
	}
	diff_build(&d, &f[0], &f[1], &o);
	CHECK(find_row(&d, DIFF_CPU, "main") != NULL && find_row(&d, DIFF_CPU, "main")->from_zero);
	check_status(&d, DIFF_CPU, "main", DIFF_REGRESSION);
	text = printed(&d, &o, DIFF_TEXT);
	CHECK(strstr(text, "       -        9.09%    from 0 ") != NULL);
	CHECK(strstr(text, "  -  same         app\n") != NULL);
	CHECK(strstr(text, " 1  same") == NULL);
	free(text);
	text = printed(&d, &o, DIFF_MARKDOWN);
	CHECK(strstr(text, "| from 0 |") != NULL);
	CHECK(strstr(text, " | - |\n") != NULL);
	CHECK(strstr(text, " | 1 |\n") == NULL);
	free(text);
	diff_free(&d);
	for (int s = 0; s < 2; s++) {
		funcs_free(&f[s]);
		model_free(&m[s]);
	}
}

/*
 * analyze's rows: a finding only the new recording has is a regression,
 * one only the base has an improvement, and so is an idle cause grown or
 * shrunk past the threshold and DIFF_IDLE_FLOOR_NS; --by findings keeps
 * them alone.
 */
static void test_findings(void)
{
	struct diff_opts o = { .confidence = 0.99, .threshold = 0.05, .normalize_total = true };
	struct sample_filter flt = {0};
	struct model m[2];
	struct funcs f[2];
	struct diff d;
	char *text;

	o.filter = &flt;
	CHECK(!diff_parse_kinds("findings", &o.kinds));
	CHECK_EQ_U64(o.kinds, 1u << DIFF_RULE | 1u << DIFF_IDLE);
	build_shares(&m[0], 600);
	build(&m[1], 20000, "fresh");
	for (int s = 0; s < 2; s++)
		funcs_init(&f[s], &m[s], 0);
	diff_build(&d, &f[0], &f[1], &o);
	CHECK_EQ_U64(d.rows.len, 2);
	check_status(&d, DIFF_RULE, "gpu-idle", DIFF_REGRESSION);
	check_status(&d, DIFF_IDLE, "unknown idle", DIFF_REGRESSION);
	CHECK_EQ_U64(diff_regressions(&d, 1u << DIFF_RULE), 1);
	text = printed(&d, &o, DIFF_TEXT);
	CHECK(strstr(text, "  rule            0          1            -  ") != NULL);
	CHECK(strstr(text, "regression   GPU 0: gpu-idle\n") != NULL);
	free(text);
	diff_free(&d);
	diff_build(&d, &f[1], &f[0], &o);
	check_status(&d, DIFF_RULE, "gpu-idle", DIFF_IMPROVEMENT);
	check_status(&d, DIFF_IDLE, "unknown idle", DIFF_IMPROVEMENT);
	diff_free(&d);
	for (int s = 0; s < 2; s++) {
		funcs_free(&f[s]);
		model_free(&m[s]);
	}
}

/* flame --diff: both counts per stack, and hot red, cold blue, main white. */
static void test_flame_diff(void)
{
	struct sample_filter flt = {0};
	struct model m[2];
	struct funcs f[2];
	struct calltree t[2];
	struct flame_diff d;
	char *text = NULL;
	size_t size = 0;
	FILE *out;

	for (int s = 0; s < 2; s++) {
		build_shares(&m[s], s ? 700 : 600);
		funcs_init(&f[s], &m[s], 0);
		calltree_build(&t[s], &f[s], &flt, NULL);
	}
	flame_diff_build(&d, &t[0], &f[0], &t[1], &f[1], WEIGHT_SAMPLES);
	out = open_memstream(&text, &size);
	flame_diff_print_folded(out, &d);
	fclose(out);
	CHECK_STREQ(text, "app;main;hot 600 700\napp;main;cold 400 300\n");
	free(text);
	out = open_memstream(&text, &size);
	calltree_write_svg(out, &t[1], &f[1], "diff", WEIGHT_SAMPLES, &d);
	fclose(out);
	CHECK(strstr(text, "<title>hot (700 samples, 70.00%; self 60.00% -> 70.00%)</title>"
			   "<rect") != NULL);
	CHECK(strstr(text, "self 60.00% -> 70.00%)</title><rect x=") != NULL);
	CHECK(strstr(text, "fill=\"rgb(255,55,55)\"") != NULL);	/* hot, the largest growth */
	CHECK(strstr(text, "fill=\"rgb(55,55,255)\"") != NULL);	/* cold, as large a fall */
	CHECK(strstr(text, "<title>main (1000 samples, 100.00%; self 0.00% -> 0.00%)</title>"
			   "<rect") != NULL);
	free(text);
	flame_diff_free(&d);
	for (int s = 0; s < 2; s++) {
		calltree_free(&t[s]);
		funcs_free(&f[s]);
		model_free(&m[s]);
	}
}

int main(void)
{
	RUN(test_statistics);
	RUN(test_kinds);
	RUN(test_rows);
	RUN(test_untested_and_from_zero);
	RUN(test_findings);
	RUN(test_flame_diff);
	return test_summary();
}
