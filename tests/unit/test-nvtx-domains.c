/* SPDX-License-Identifier: MIT */
/*
 * NVTX domains, each on a lane of its own as the CUDA agent records them
 * (contract/lanes.h): ranges of two domains that overlap without nesting
 * nest apart in the chains, flame names a named domain's frames after it,
 * and export puts each domain's ranges on a track of their own under the
 * thread that opened them.
 */
#include <stdlib.h>

#include "analysis/encoders/export.h"
#include "analysis/passes/passes.h"
#include "contract/lanes.h"
#include "exports.h"
#include "synth.h"
#include "test.h"
#include "views.h"

#define PID 20
#define TID 21
#define ALPHA NVTX_DOMAIN_LANE_PREFIX "alpha"
#define ZETA NVTX_DOMAIN_LANE_PREFIX "zeta"

static void test_lane_domain(void)
{
	CHECK_STREQ(nvtx_lane_domain(ALPHA), "alpha");
	CHECK_STREQ(nvtx_lane_domain(NVTX_UNNAMED_DOMAIN_LANE), "[unnamed domain]");
	CHECK(!nvtx_lane_domain(NVTX_LANE_NAME));
	CHECK(!nvtx_lane_domain(NVTX_DOMAIN_LANE_PREFIX));
	CHECK(!nvtx_lane_domain("GPU0 stream 7"));
	CHECK(!nvtx_lane_domain(NULL));
}

/*
 * Thread TID, 10 samples of main from SYNTH_T0 on: the default domain's
 * "app" over samples 3 .. 9, alpha's "lib" over 0 .. 5 (it opened first,
 * and overlaps "app" without nesting) and "inner" in it over 1 .. 2, and
 * zeta's "z" over 0 .. 4, opened before all and on the first lane made.
 */
static void make_model(struct model *m)
{
	struct synth s = {0};
	uint32_t dso = synth_dso(&s, "/usr/bin/app");
	uint32_t loc = synth_loc(&s, dso, 0x1000, "main");
	uint32_t nvtx, alpha, zeta;

	synth_comm(&s, PID, TID, "app");
	synth_samples(&s, PID, TID, synth_stack(&s, &loc, 1), 10);
	zeta = synth_lane_kind(&s, PID, NVTX_LANE_KIND, ZETA);
	synth_span_from(&s, zeta, "z", SYNTH_T0 - 1, 5 * SYNTH_PERIOD, TID, SYNTH_T0 - 1);
	nvtx = synth_lane_kind(&s, PID, NVTX_LANE_KIND, NVTX_LANE_NAME);
	alpha = synth_lane_kind(&s, PID, NVTX_LANE_KIND, ALPHA);
	synth_span_from(&s, alpha, "inner", SYNTH_T0 + SYNTH_PERIOD, 2 * SYNTH_PERIOD, TID,
			SYNTH_T0 + SYNTH_PERIOD);
	synth_span_from(&s, alpha, "lib", SYNTH_T0, 6 * SYNTH_PERIOD, TID, SYNTH_T0);
	synth_span_from(&s, nvtx, "app", SYNTH_T0 + 3 * SYNTH_PERIOD, 7 * SYNTH_PERIOD, TID,
			SYNTH_T0 + 3 * SYNTH_PERIOD);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
	synth_free(&s);
}

/* The default domain's ranges first, then alpha's, then zeta's, each domain's outermost first. */
static void test_chains(void)
{
	struct nvtx_ranges r;
	const struct nvtx_chain *c;
	struct model m;

	make_model(&m);
	nvtx_ranges_build(&r, &m);
#define CHAIN_AT(i) (nvtx_chain_at(&r, TID, SYNTH_T0 + (i) * SYNTH_PERIOD))
	c = &r.chains.v[CHAIN_AT(4) - 1];
	CHECK_STREQ(model_str(&m, c->name), "z");
	CHECK_STREQ(model_str(&m, c->domain), ZETA);
	c = &r.chains.v[c->parent - 1];
	CHECK_STREQ(model_str(&m, c->name), "lib");
	CHECK_STREQ(model_str(&m, c->domain), ALPHA);
	c = &r.chains.v[c->parent - 1];
	CHECK_STREQ(model_str(&m, c->name), "app");
	CHECK_EQ_U64(c->domain, 0);
	CHECK_EQ_U64(c->parent, 0);
	c = &r.chains.v[CHAIN_AT(1) - 1];
	c = &r.chains.v[c->parent - 1];
	CHECK_STREQ(model_str(&m, c->name), "inner");
	CHECK_STREQ(model_str(&m, r.chains.v[c->parent - 1].name), "lib");
	CHECK_EQ_U64(r.chains.v[CHAIN_AT(0) - 1].depth, 1);
	CHECK_EQ_U64(r.chains.v[CHAIN_AT(5) - 1].depth, 1);
	CHECK_EQ_U64(r.chains.v[CHAIN_AT(9) - 1].depth, 0);
#undef CHAIN_AT
	nvtx_ranges_free(&r);
	model_free(&m);
}

static void test_flame(void)
{
	struct calltree t;
	struct capture cap;
	struct model m;
	struct funcs f;
	const char *text;

	make_model(&m);
	funcs_init(&f, &m, 0);
	calltree_build(&t, &f, NULL, NULL);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	text = capture_end(&cap);
	CHECK(has_line(text, "app;[nvtx alpha] lib;[nvtx zeta] z;main 1"));
	CHECK(has_line(text, "app;[nvtx alpha] lib;[nvtx alpha] inner;[nvtx zeta] z;main 2"));
	CHECK(has_line(text, "app;[nvtx] app;[nvtx alpha] lib;[nvtx zeta] z;main 2"));
	CHECK(has_line(text, "app;[nvtx] app;[nvtx alpha] lib;main 1"));
	CHECK(has_line(text, "app;[nvtx] app;main 4"));
	free(cap.text);
	calltree_free(&t);
	funcs_free(&f);
	model_free(&m);
}

/* A track per domain under the thread, named after its lane; none needs a second row. */
static void test_export(void)
{
	struct model m;
	size_t len;
	char *json;

	make_model(&m);
	json = export_text(&m, EXPORT_CHROME, NULL, 0, UINT64_MAX, &len);
	CHECK(export_count(json, len, "\"args\":{\"name\":\"app 21 NVTX\"}") == 1);
	CHECK(export_count(json, len, "\"args\":{\"name\":\"app 21 NVTX alpha\"}") == 1);
	CHECK(export_count(json, len, "\"args\":{\"name\":\"app 21 NVTX zeta\"}") == 1);
	CHECK(export_count(json, len, "#2") == 0);
	free(json);
	json = export_text(&m, EXPORT_PERFETTO, NULL, 0, UINT64_MAX, &len);
	CHECK(export_count(json, len, "NVTX alpha") == 1);
	CHECK(export_count(json, len, "NVTX zeta") == 1);
	CHECK(export_count(json, len, "#2") == 0);
	free(json);
	model_free(&m);
}

int main(void)
{
	RUN(test_lane_domain);
	RUN(test_chains);
	RUN(test_flame);
	RUN(test_export);
	return test_summary();
}
