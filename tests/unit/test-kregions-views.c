/* SPDX-License-Identifier: MIT */
/*
 * The offline views of kernel regions on a synthetic recording shaped like
 * what gtrace_kr_submit reports: report --gpu's kernel-regions table (two
 * collects combined, share of the kernel, imbalance), the regions under
 * "[kernel] NAME" in the call tree, and diagnose's section.
 */
#include <stdlib.h>

#include "analysis/passes/passes.h"
#include "analysis/views/diagnose.h"
#include "analysis/views/gpu.h"
#include "contract/lanes.h"
#include "symbols/demangle.h"
#include "test.h"
#include "synth.h"
#include "views.h"

#define US 1000ull
#define PID 300
#define MAIN_TID 300

/* One collect's summary of a region, with the attributes gtrace_kr_submit gives it. */
struct summary {
	const char *region;
	uint64_t instances, sum, min, max, median, lanes, blocks, block_median, block_max;
	uint64_t clock_error;
};

static void summary(struct synth *s, uint32_t lane, uint64_t start, const struct summary *r)
{
	synth_span(s, lane, r->region, start, r->max);
	synth_span_attr(s, "instances", r->instances);
	synth_span_attr(s, "sum_ns", r->sum);
	synth_span_attr(s, "min_ns", r->min);
	synth_span_attr(s, "max_ns", r->max);
	synth_span_attr(s, "median_ns", r->median);
	synth_span_attr(s, "lanes", r->lanes);
	synth_span_attr(s, "blocks", r->blocks);
	synth_span_attr(s, "block_median_ns", r->block_median);
	synth_span_attr(s, "block_max_ns", r->block_max);
	synth_span_attr(s, "clock_error_ns", r->clock_error);
}

/*
 * Process 300 ("app", 3 samples). GPU0 stream 7 runs attn_fwd twice,
 * 100 us each. attn_fwd was collected twice (load and compute, on 4 lanes
 * of 2 blocks each time), gemm once (main, no kernel span of that name).
 * Region lanes: attn_fwd b0 g0 and b0 g1, gemm b0 g0. With counters, the
 * kr.* counters of the three collects.
 */
static void build(struct model *m, bool counters)
{
	static const struct summary attn1[] = {
		{ "load", 4, 40 * US, 5 * US, 15 * US, 10 * US, 4, 2, 20 * US, 25 * US, 300 },
		{ "compute", 4, 200 * US, 40 * US, 60 * US, 50 * US, 4, 2, 100 * US, 110 * US, 300 },
	};
	static const struct summary attn2[] = {
		{ "load", 4, 48 * US, 6 * US, 18 * US, 12 * US, 4, 2, 22 * US, 30 * US, 800 },
		{ "compute", 4, 160 * US, 30 * US, 50 * US, 40 * US, 4, 2, 80 * US, 90 * US, 800 },
	};
	static const struct summary gemm = {
		"main", 2, 30 * US, 10 * US, 20 * US, 15 * US, 2, 1, 30 * US, 30 * US, 500,
	};
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/usr/bin/app");
	uint32_t main_ = synth_loc(&s, app, 0x1000, "main");
	uint32_t stream, attn_stats, gemm_stats, b0g0, b0g1, gemm_b0g0;
	uint64_t t1 = SYNTH_T0, t2 = SYNTH_T0 + 1000 * US;

	synth_comm(&s, PID, MAIN_TID, "app");
	synth_samples(&s, PID, MAIN_TID, synth_stack(&s, &main_, 1), 3);
	stream = synth_lane(&s, PID, "GPU0 stream 7");
	attn_stats = synth_lane_kind(&s, PID, KREGIONS_STATS_LANE_KIND, "attn_fwd regions");
	gemm_stats = synth_lane_kind(&s, PID, KREGIONS_STATS_LANE_KIND, "gemm regions");
	b0g0 = synth_lane_kind(&s, PID, KREGIONS_LANE_KIND, "attn_fwd b0 g0");
	b0g1 = synth_lane_kind(&s, PID, KREGIONS_LANE_KIND, "attn_fwd b0 g1");
	gemm_b0g0 = synth_lane_kind(&s, PID, KREGIONS_LANE_KIND, "gemm b0 g0");
	synth_span_from(&s, stream, "attn_fwd", t1, 100 * US, MAIN_TID, t1);
	synth_span_from(&s, stream, "attn_fwd", t2, 100 * US, MAIN_TID, t2);
	synth_span(&s, b0g0, "load", t1, 5 * US);
	synth_span(&s, b0g0, "compute", t1 + 5 * US, 50 * US);
	synth_span(&s, b0g1, "load", t1, 6 * US);
	synth_span(&s, b0g1, "compute", t1 + 6 * US, 40 * US);
	synth_span(&s, gemm_b0g0, "main", t2 + 200 * US, 10 * US);
	for (size_t i = 0; i < 2; i++)
		summary(&s, attn_stats, t1, &attn1[i]);
	summary(&s, gemm_stats, t2 + 200 * US, &gemm);
	for (size_t i = 0; i < 2; i++)
		summary(&s, attn_stats, t2, &attn2[i]);
	if (counters) {
		synth_counter(&s, "kr.buffers", 3);
		synth_counter(&s, "kr.events", 26);
		synth_counter(&s, "kr.overflowed", 1);
		synth_counter(&s, "kr.events-lost", 12);
		synth_counter(&s, "kr.unmatched", 2);
		synth_counter(&s, "kr.collisions", 0);
		synth_counter(&s, "kr.lanes-capped", 5);
		synth_counter(&s, "kr.bad-events", 1);
		synth_counter(&s, "kr.bad-buffers", 0);
	}
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_LANES);
}

static const struct kregion_row *find_region(const struct gpu_report *r, const struct model *m,
					     const char *lane, const char *region)
{
	for (size_t i = 0; i < r->regions.len; i++)
		if (!strcmp(model_str(m, r->regions.v[i].lane_name), lane) &&
		    !strcmp(model_str(m, r->regions.v[i].region), region))
			return &r->regions.v[i];
	printf("  no region row %s / %s\n", lane, region);
	return NULL;
}

/*
 * attn_fwd load: 4 + 4 instances, 40 + 48 us; min 5, max 18 us; medians
 * 10 and 12 us give 11 us. Per lane 40 / 4 + 48 / 4 = 22 us of 200 us of
 * attn_fwd: 11%. Slowest block 30 us over the median of 20 and 22 us: 1.43.
 * compute: 360 us over 8; medians 50 and 40 give 45 us; per lane
 * 50 + 40 = 90 us: 45%; 110 us over the median of 100 and 80 us: 1.22.
 * gemm main: one collect; no kernel span of that name.
 */
static void test_table(void)
{
	const struct kregion_row *load, *compute, *gemm;
	struct gpu_report r;
	struct capture cap;
	struct model m;
	struct funcs f;
	const char *text;

	build(&m, false);
	funcs_init(&f, &m, 0);
	gpu_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.lanes, 1);	/* the stream: the summaries' lanes are no CUDA lanes */
	CHECK_EQ_U64(r.kernels.total_ns, 200 * US);
	CHECK_EQ_U64(r.regions.len, 3);
	CHECK_EQ_U64(r.region_kernels, 2);
	CHECK_EQ_U64(r.region_collects, 3);
	load = find_region(&r, &m, "attn_fwd regions", "load");
	compute = find_region(&r, &m, "attn_fwd regions", "compute");
	gemm = find_region(&r, &m, "gemm regions", "main");
	CHECK(load == &r.regions.v[0] && compute == &r.regions.v[1] && gemm == &r.regions.v[2]);
	if (load) {
		CHECK_EQ_U64(load->collects, 2);
		CHECK_EQ_U64(load->instances, 8);
		CHECK_EQ_U64(load->sum_ns, 88 * US);
		CHECK_EQ_U64(load->min_ns, 5 * US);
		CHECK_EQ_U64(load->max_ns, 18 * US);
		CHECK(load->median_ns == 11000.0);
		CHECK(load->block_median_ns == 21000.0);
		CHECK_EQ_U64(load->block_max_ns, 30 * US);
		CHECK(load->lane_ns == 22000.0);
		CHECK_EQ_U64(load->kernel_ns, 200 * US);
	}
	if (compute) {
		CHECK(compute->median_ns == 45000.0);
		CHECK(compute->block_median_ns == 90000.0);
		CHECK_EQ_U64(compute->block_max_ns, 110 * US);
	}
	if (gemm) {
		CHECK_EQ_U64(gemm->collects, 1);
		CHECK_EQ_U64(gemm->kernel_ns, 0);
	}

	gpu_report_print(capture_start(&cap), &r, &m, "k.data", 0);
	text = capture_end(&cap);
	CHECK(has_line(text, "# Kernel regions: 3 regions of 2 kernels, 3 collects"));
	CHECK(has_line(text, "# Kernel%: the region's time per (block, group) lane over its "
			     "kernel's GPU time; Imbalance: its slowest block over its median block"));
	CHECK(has_line(text, "# Instances     Avg us     Med us     Min us     Max us  Kernel%"
			     " Imbalance  Kernel    Region"));
	CHECK(has_line(text, "          8     11.000     11.000      5.000     18.000   11.00%"
			     "     1.43x  attn_fwd  load"));
	CHECK(has_line(text, "          8     45.000     45.000     30.000     60.000   45.00%"
			     "     1.22x  attn_fwd  compute"));
	CHECK(has_line(text, "          2     15.000     15.000     10.000     20.000        -"
			     "     1.00x  gemm      main"));
	/* After the kernels table, before the copies. */
	CHECK(strstr(text, "# CUDA kernels") < strstr(text, "# Kernel regions") &&
	      strstr(text, "# Kernel regions") < strstr(text, "# CUDA copies"));
	free(cap.text);

	/* limit cuts the rows. */
	gpu_report_print(capture_start(&cap), &r, &m, "k.data", 1);
	text = capture_end(&cap);
	CHECK_EQ_U64(count_of(text, "attn_fwd  "), 1);
	free(cap.text);
	gpu_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* The kernel time of the region row of lane name lane; UINT64_MAX for none. */
static uint64_t kernel_ns_of(const struct gpu_report *r, const struct model *m, const char *lane)
{
	for (size_t i = 0; i < r->regions.len; i++)
		if (!strcmp(model_str(m, r->regions.v[i].lane_name), lane))
			return r->regions.v[i].kernel_ns;
	printf("  no region row of %s\n", lane);
	return UINT64_MAX;
}

/*
 * A region's kernel is each kernel it names: mangled or not, demangled,
 * or demangled less its parameters, whose '(' may follow others; each
 * kernel counted once however many of its names match.
 */
static void test_kernel_names(void)
{
	static const struct {
		const char *lane;
		uint64_t us, demangled_us;	/* without a demangler, with one */
	} want[] = {
		{ "_Z8attn_fwdPfi regions", 1, 1 },
		{ "attn_fwd(float*, int) regions", 0, 1 },
		{ "attn_fwd regions", 10, 11 },
		{ "void k<void (*)(int)>(void (*)(int)) regions", 0, 100 },
		{ "void k<void (*)(int)> regions", 0, 100 },
		{ "void k<void  regions", 0, 100 },
		{ "foo regions", 0, 1000 },
		{ "foo() regions", 0, 1000 },
		{ "fo regions", 0, 0 },
	};
	static const struct summary one = { "main", 1, 1 * US, 1 * US, 1 * US, 1 * US, 1, 1,
					    1 * US, 1 * US, 0 };
	struct demangler d = {0};
	bool demangles = demangler_available(&d);
	struct synth s = {0};
	struct gpu_report r;
	struct model m;
	struct funcs f;
	uint32_t stream = synth_lane(&s, PID, "GPU0 stream 7");

	demangler_free(&d);
	synth_span(&s, stream, "_Z8attn_fwdPfi", SYNTH_T0, 1 * US);
	synth_span(&s, stream, "attn_fwd", SYNTH_T0, 10 * US);
	synth_span(&s, stream, "_Z1kIPFviEEvT_", SYNTH_T0, 100 * US);
	synth_span(&s, stream, "_Z3foov", SYNTH_T0, 1000 * US);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		summary(&s, synth_lane_kind(&s, PID, KREGIONS_STATS_LANE_KIND, want[i].lane),
			SYNTH_T0, &one);
	synth_model(&s, &m, TR_FEAT_LANES);
	funcs_init(&f, &m, 0);
	gpu_report_build(&r, &f, NULL);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ_U64(kernel_ns_of(&r, &m, want[i].lane),
			     (demangles ? want[i].demangled_us : want[i].us) * US);
	gpu_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* A recording without regions has no table. */
static void test_no_table(void)
{
	struct synth s = {0};
	struct gpu_report r;
	struct capture cap;
	struct model m;
	struct funcs f;
	uint32_t stream = synth_lane(&s, PID, "GPU0 stream 7");

	synth_span(&s, stream, "attn_fwd", SYNTH_T0, 100 * US);
	synth_model(&s, &m, TR_FEAT_LANES);
	funcs_init(&f, &m, 0);
	gpu_report_build(&r, &f, NULL);
	CHECK_EQ_U64(r.regions.len, 0);
	gpu_report_print(capture_start(&cap), &r, &m, "k.data", 0);
	CHECK(!strstr(capture_end(&cap), "Kernel regions"));
	free(cap.text);
	gpu_report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* The child of parent named name, or 0. */
static uint32_t child(const struct calltree *t, const struct funcs *f, uint32_t parent,
		      const char *name)
{
	for (uint32_t k = t->kid_start[parent]; k < t->kid_start[parent + 1]; k++)
		if (!strcmp(funcs_name(f, t->nodes.v[t->kids[k]].name), name))
			return t->kids[k];
	printf("  no node \"%s\" under \"%s\"\n", name, funcs_name(f, t->nodes.v[parent].name));
	return 0;
}

/* Regions under "[kernel] NAME" at the root, all blocks and groups together; no summaries. */
static void test_flame(void)
{
	struct origin_links l;
	struct calltree t;
	struct model m;
	struct funcs f;
	uint32_t attn, load, compute, gemm;

	build(&m, false);
	funcs_init(&f, &m, 0);
	origins_link(&l, &m, origins_default_window(&m));
	calltree_build(&t, &f, NULL, &l);
	attn = child(&t, &f, 0, KERNEL_FRAME_PREFIX "attn_fwd");
	gemm = child(&t, &f, 0, KERNEL_FRAME_PREFIX "gemm");
	CHECK(attn && t.nodes.v[attn].lane);
	CHECK_EQ_U64(t.nodes.v[attn].target_total, 101 * US);
	CHECK_EQ_U64(t.nodes.v[attn].spans_total, 4);
	CHECK_EQ_U64(t.kid_start[attn + 1] - t.kid_start[attn], 2);
	load = child(&t, &f, attn, "load");
	compute = child(&t, &f, attn, "compute");
	CHECK_EQ_U64(t.nodes.v[load].target_self, 11 * US);
	CHECK_EQ_U64(t.nodes.v[load].spans_self, 2);
	CHECK_EQ_U64(t.nodes.v[compute].target_self, 90 * US);
	CHECK(gemm && child(&t, &f, gemm, "main"));
	/* The kernels' lane stays as it was; the summaries are left out. */
	CHECK(child(&t, &f, 0, LANE_FRAME_PREFIX "GPU0 stream 7"));
	for (size_t i = 0; i < t.nodes.len; i++)
		CHECK(!strstr(funcs_name(&f, t.nodes.v[i].name), "regions"));
	calltree_free(&t);
	origins_free(&l);
	funcs_free(&f);
	model_free(&m);
}

static const char *diagnose_text(struct capture *cap, const struct model *m)
{
	struct origin_links l;

	origins_link(&l, m, origins_default_window(m));
	diagnose_print(capture_start(cap), m, "k.data", &l);
	origins_free(&l);
	return capture_end(cap);
}

static void test_diagnose(void)
{
	struct capture cap;
	struct model m;
	struct synth s = {0};
	const char *text;

	build(&m, true);
	text = diagnose_text(&cap, &m);
	CHECK(has_line(text, "Kernel regions:       3 buffers collected, 26 events decoded, "
			     "5 lanes capped; 3 region lanes, 2 summary lanes"));
	CHECK(has_line(text, "KR overflows:         1 buffers overflowed, 12 events lost"));
	CHECK(has_line(text, "KR mismatches:        2 unmatched begins or ends, 0 collisions"));
	CHECK(has_line(text, "KR undecodable:       1 events, 0 buffers"));
	CHECK(has_line(text, "KR clock error:       at most 800 ns"));
	CHECK(!strstr(text, "other counters"));	/* kr.* said above */
	free(cap.text);
	model_free(&m);

	/* Region lanes without counters: counts unknown. */
	build(&m, false);
	text = diagnose_text(&cap, &m);
	CHECK(has_line(text, "Kernel regions:       n/a buffers collected, n/a events decoded, "
			     "n/a lanes capped; 3 region lanes, 2 summary lanes"));
	free(cap.text);
	model_free(&m);

	/* CUDA without regions: one line; no CUDA: none. */
	synth_meta(&s, "cuda.status", "active");
	synth_model(&s, &m, 0);
	text = diagnose_text(&cap, &m);
	CHECK(has_line(text, "Kernel regions:       none collected "
			     "(gtrace_kr_collect, gtrace-kernel-regions(3))"));
	CHECK(!strstr(text, "KR "));
	free(cap.text);
	model_free(&m);
	synth_model(&s, &m, 0);
	text = diagnose_text(&cap, &m);
	CHECK(!strstr(text, "Kernel regions"));
	free(cap.text);
	model_free(&m);
}

int main(void)
{
	RUN(test_table);
	RUN(test_kernel_names);
	RUN(test_no_table);
	RUN(test_flame);
	RUN(test_diagnose);
	return test_summary();
}
