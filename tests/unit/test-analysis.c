/* SPDX-License-Identifier: MIT */
/* Aggregations and views over synthetic recordings with known answers. */
#include <errno.h>
#include <stdlib.h>

#include "analysis/encoders/flamesvg.h"
#include "analysis/passes/passes.h"
#include "analysis/views/diagnose.h"
#include "analysis/views/report.h"
#include "analysis/views/threads.h"
#include "test.h"
#include "synth.h"
#include "views.h"

/*
 * Ten samples. Process 100 "app": thread 100 "app" and thread 101
 * "worker". Outermost first:
 *	5  app:    main > foo > bar (bar's location has "helper" inlined)
 *	2  app:    main > foo
 *	1  app:    main > baz > memcpy (libc)
 *	1  app:    main > [app]+0x999 (unresolved)
 *	1  worker: rec > rec > rec (recursion, three locations of one function)
 */
static void build_shape(struct model *m)
{
	static const char *const bar_chain[] = { "helper", "bar" };
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/usr/bin/app");
	uint32_t libc = synth_dso(&s, "/lib/x86_64-linux-gnu/libc.so.6");
	uint32_t main_ = synth_loc(&s, app, 0x1000, "main");
	uint32_t foo = synth_loc(&s, app, 0x2000, "foo");
	uint32_t bar = synth_loc_chain(&s, app, 0x3000, bar_chain, 2);
	uint32_t baz = synth_loc(&s, app, 0x4000, "baz");
	uint32_t memcpy_ = synth_loc(&s, libc, 0x5000, "memcpy");
	uint32_t unknown = synth_loc(&s, app, 0x999, NULL);
	uint32_t rec1 = synth_loc(&s, app, 0x6000, "rec");
	uint32_t rec2 = synth_loc(&s, app, 0x6010, "rec");
	uint32_t rec3 = synth_loc(&s, app, 0x6020, "rec");
	uint32_t s1[] = { main_, foo, bar }, s2[] = { main_, foo };
	uint32_t s3[] = { main_, baz, memcpy_ }, s4[] = { main_, unknown };
	uint32_t s5[] = { rec1, rec2, rec3 };
	uint32_t lane;

	synth_task(&s, TR_TASK_NEW, 100, 100, 0, SYNTH_T0 - 1000000);
	synth_comm(&s, 100, 100, "sh");
	synth_comm(&s, 100, 100, "app");	/* the latest name wins */
	synth_comm(&s, 100, 101, "worker");
	synth_samples(&s, 100, 100, synth_stack(&s, s1, 3), 5);
	synth_samples(&s, 100, 100, synth_stack(&s, s2, 2), 2);
	synth_samples(&s, 100, 100, synth_stack(&s, s3, 3), 1);
	synth_samples(&s, 100, 101, synth_stack(&s, s5, 3), 1);
	synth_samples(&s, 100, 100, synth_stack(&s, s4, 2), 1);
	synth_offcpu(&s, 100, SYNTH_T0 + 1000000, SYNTH_T0 + 2000000);
	synth_offcpu(&s, 100, SYNTH_T0 + 3000000, SYNTH_T0 + 5000000);

	lane = synth_lane(&s, 100, "GPU0 stream 7");
	synth_span(&s, lane, "kernel_a", SYNTH_T0, 3000000);
	synth_span(&s, lane, "kernel_b", SYNTH_T0 + 4000000, 2000000);
	lane = synth_lane(&s, 100, "GPU0 stream 8");
	synth_span(&s, lane, "kernel_c", SYNTH_T0 + 1000000, 300000);

	synth_meta(&s, "event", "cpu-clock");
	synth_meta(&s, "frequency", "1000");
	synth_meta(&s, "command", "./app --fast");
	synth_counter(&s, "unwind.complete", 5);
	synth_counter(&s, "lost", 3);
	synth_counter(&s, "unwind.complete", 9);	/* cumulative: the last wins */
	synth_counter(&s, "unwind.failed.no-map", 1);
	synth_counter(&s, "symbols.resolved", 8);
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_OFFCPU | TR_FEAT_SYMBOLS);
}

/* The report of keys, with funcs named by funcs_flags. */
static void build_report_flags(struct report *r, struct funcs *f, const struct model *m,
			       struct report_opts *o, const char *keys, unsigned funcs_flags)
{
	CHECK(report_parse_keys(o, keys) == 0);
	funcs_init(f, m, funcs_flags);
	report_build(r, f, o);
}

static void build_report(struct report *r, struct funcs *f, const struct model *m,
			 struct report_opts *o, const char *keys)
{
	build_report_flags(r, f, m, o, keys, FUNCS_PYTHON_LINES);
}

#define CHECK_ROW(r, f, sym, self_, children_)                                 \
	do {                                                                   \
		const struct report_row *row_ = find_symbol_row(r, f, sym);    \
		CHECK(row_ != NULL);                                           \
		if (row_) {                                                    \
			CHECK_EQ_U64(row_->self, self_);                       \
			CHECK_EQ_U64(row_->children, children_);               \
		}                                                              \
	} while (0)

static void test_report_children(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true };
	struct capture cap;
	const char *text;

	build_shape(&m);
	build_report(&r, &f, &m, &o, "comm,dso,symbol");
	CHECK_EQ_U64(r.total, 10);
	CHECK_EQ_U64(r.rows.len, 7);
	CHECK_ROW(&r, &f, "main", 0, 9);
	CHECK_ROW(&r, &f, "foo", 2, 7);
	CHECK_ROW(&r, &f, "bar", 5, 5);		/* helper is inlined into it */
	CHECK_ROW(&r, &f, "baz", 0, 1);
	CHECK_ROW(&r, &f, "memcpy", 1, 1);
	CHECK_ROW(&r, &f, "[app]+0x999", 1, 1);
	CHECK_ROW(&r, &f, "rec", 1, 1);		/* recursion counted once */
	CHECK(find_symbol_row(&r, &f, "helper") == NULL);

	report_print(capture_start(&cap), &r, &f, &o, "t.data");
	text = capture_end(&cap);
	CHECK(has_line(text, "# Samples: 10 of event 'cpu-clock'"));
	CHECK(has_line(text, "# File: t.data"));
	CHECK(has_line(text, "#  Children       Self  Samples  Command  DSO        Symbol"));
	CHECK(has_line(text, "     90.00%      0.00%        9  app      app        main"));
	CHECK(has_line(text, "     10.00%     10.00%        1  app      libc.so.6  memcpy"));
	CHECK(has_line(text, "     10.00%     10.00%        1  worker   app        rec"));
	/* Sorted by children, then self, then name. */
	CHECK(strstr(text, "main") < strstr(text, "foo"));
	CHECK(strstr(text, "foo\n") < strstr(text, "bar\n"));
	CHECK(strstr(text, "memcpy") < strstr(text, "baz"));
	free(cap.text);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

static void test_report_no_children_and_limit(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = false, .limit = 2 };
	struct capture cap;
	const char *text;

	build_shape(&m);
	build_report(&r, &f, &m, &o, "comm,dso,symbol");
	CHECK_STREQ(funcs_name(&f, f.v.v[r.rows.v[0].func].name), "bar");
	CHECK_STREQ(funcs_name(&f, f.v.v[r.rows.v[1].func].name), "foo");
	report_print(capture_start(&cap), &r, &f, &o, "t.data");
	text = capture_end(&cap);
	CHECK(!strstr(text, "Children"));
	CHECK(has_line(text, "#      Self  Samples  Command  DSO  Symbol"));
	CHECK(has_line(text, "     50.00%        5  app      app  bar"));
	CHECK(has_line(text, "     20.00%        2  app      app  foo"));
	CHECK(!strstr(text, "main"));	/* past the limit */
	free(cap.text);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

static void test_report_sort_keys(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true };
	const struct model_thread *th;

	build_shape(&m);
	build_report(&r, &f, &m, &o, "dso");
	CHECK_EQ_U64(r.rows.len, 2);
	CHECK_STREQ(funcs_name(&f, f.v.v[r.rows.v[0].func].dso), "app");
	CHECK_EQ_U64(r.rows.v[0].children, 10);
	CHECK_EQ_U64(r.rows.v[0].self, 9);
	CHECK_EQ_U64(r.rows.v[1].children, 1);
	CHECK_EQ_U64(r.rows.v[1].self, 1);
	report_free(&r);
	funcs_free(&f);

	build_report(&r, &f, &m, &o, "tid");
	CHECK_EQ_U64(r.rows.len, 2);
	th = &m.threads.v[r.rows.v[0].thread];
	CHECK_EQ_U64(th->tid, 100);
	CHECK_EQ_U64(r.rows.v[0].self, 9);
	CHECK_EQ_U64(r.rows.v[0].children, 9);
	CHECK_EQ_U64(m.threads.v[r.rows.v[1].thread].tid, 101);
	report_free(&r);
	funcs_free(&f);

	CHECK(report_parse_keys(&o, "symbol,bogus") == -EINVAL);
	CHECK(report_parse_keys(&o, "dso,dso") == -EINVAL);
	CHECK(report_parse_keys(&o, "") == -EINVAL);
	model_free(&m);
}

static void test_report_filters(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct sample_filter flt = {0};
	struct report_opts o = { .children = true, .filter = &flt };

	build_shape(&m);
	CHECK(filter_add(&flt, FILTER_TID, "101") == 0);
	build_report(&r, &f, &m, &o, "comm,dso,symbol");
	CHECK_EQ_U64(r.total, 1);
	CHECK_EQ_U64(r.rows.len, 1);
	CHECK_ROW(&r, &f, "rec", 1, 1);
	report_free(&r);
	funcs_free(&f);
	filter_free(&flt);

	CHECK(filter_add(&flt, FILTER_COMM, "nobody,app") == 0);
	build_report(&r, &f, &m, &o, "comm,dso,symbol");
	CHECK_EQ_U64(r.total, 9);
	CHECK(find_symbol_row(&r, &f, "rec") == NULL);
	report_free(&r);
	funcs_free(&f);
	filter_free(&flt);

	CHECK(filter_add(&flt, FILTER_DSO, "libc.so.6") == 0);
	build_report(&r, &f, &m, &o, "comm,dso,symbol");
	CHECK_EQ_U64(r.total, 1);
	CHECK_ROW(&r, &f, "memcpy", 1, 1);
	CHECK_ROW(&r, &f, "main", 0, 1);
	report_free(&r);
	funcs_free(&f);
	filter_free(&flt);

	CHECK(filter_add(&flt, FILTER_PID, "100") == 0);
	build_report(&r, &f, &m, &o, "comm,dso,symbol");
	CHECK_EQ_U64(r.total, 10);
	report_free(&r);
	funcs_free(&f);
	filter_free(&flt);

	CHECK(filter_add(&flt, FILTER_PID, "12x") == -EINVAL);
	CHECK(filter_add(&flt, FILTER_TID, "1,,2") == -EINVAL);
	CHECK(filter_add(&flt, FILTER_PID, "-1") == -EINVAL);
	CHECK(filter_add(&flt, FILTER_TID, "0x") == -EINVAL);
	CHECK(filter_add(&flt, FILTER_TID, "0x-1") == -EINVAL);
	CHECK(filter_add(&flt, FILTER_TID, "0x1g") == -EINVAL);
	CHECK(filter_add(&flt, FILTER_TID, "0x100000000") == -EINVAL);
	filter_free(&flt);
	CHECK(filter_add(&flt, FILTER_TID, "0xFFF00001,0x65,17") == 0);
	CHECK_EQ_U64(flt.tids.len, 3);
	CHECK_EQ_U64(flt.tids.v[0], 0xfff00001);
	CHECK_EQ_U64(flt.tids.v[1], 101);
	CHECK_EQ_U64(flt.tids.v[2], 17);
	filter_free(&flt);
	model_free(&m);
}

static void test_report_inline(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true };

	build_shape(&m);
	build_report_flags(&r, &f, &m, &o, "symbol", FUNCS_INLINE);
	CHECK_ROW(&r, &f, "helper", 5, 5);
	CHECK_ROW(&r, &f, "bar", 0, 5);
	CHECK_ROW(&r, &f, "foo", 2, 7);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* The graph under a row: its callees with children, its callers in callee order. */
static void test_report_graph(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true, .graph = GRAPH_CALLER, .percent_limit = -1 };
	struct capture cap;
	const char *text;

	build_shape(&m);
	build_report(&r, &f, &m, &o, "symbol");
	CHECK_EQ_U64(r.ngraphs, r.rows.len);
	report_print(capture_start(&cap), &r, &f, &o, "t.data");
	text = capture_end(&cap);
	CHECK(has_line(text, "     90.00%      0.00%        9  main"));
	CHECK(has_line(text, "              90.00%         9  main"));
	CHECK(has_line(text, "              70.00%         7    foo"));
	CHECK(has_line(text, "              50.00%         5      bar"));
	CHECK(has_line(text, "              10.00%         1    [app]+0x999"));
	/* A recursive function's graph from its outermost call. */
	CHECK(has_line(text, "              10.00%         1    rec"));
	CHECK(has_line(text, "              10.00%         1      rec"));
	/* Largest branch first; one blank line after each graph. */
	CHECK(strstr(text, "    foo\n") < strstr(text, "    baz\n"));
	CHECK(strstr(text, "    [app]+0x999\n") < strstr(text, "    baz\n"));	/* ties by name */
	CHECK(strlen(text) > 8 && !strcmp(text + strlen(text) - 8, "memcpy\n\n"));
	free(cap.text);
	report_free(&r);
	funcs_free(&f);

	/* The callers of each leaf; --percent-limit leaves out rows and branches. */
	o = (struct report_opts){ .graph = GRAPH_CALLEE, .percent_limit = 20 };
	build_report(&r, &f, &m, &o, "symbol");
	CHECK_EQ_U64(r.rows.len, 2);	/* bar 5, foo 2 */
	report_print(capture_start(&cap), &r, &f, &o, "t.data");
	text = capture_end(&cap);
	CHECK(has_line(text, "              50.00%         5  bar"));
	CHECK(has_line(text, "              50.00%         5    foo"));
	CHECK(has_line(text, "              50.00%         5      main"));
	CHECK(has_line(text, "              20.00%         2  foo"));
	CHECK(strstr(text, "memcpy") == NULL);
	free(cap.text);
	report_free(&r);
	funcs_free(&f);

	/* Caller order without children: the paths in to the leaf; 0.5% by default. */
	o = (struct report_opts){ .graph = GRAPH_CALLER, .percent_limit = -1, .limit = 1 };
	build_report(&r, &f, &m, &o, "symbol");
	CHECK_EQ_U64(r.ngraphs, 1);
	report_print(capture_start(&cap), &r, &f, &o, "t.data");
	text = capture_end(&cap);
	CHECK(has_line(text, "              50.00%         5  main"));
	CHECK(has_line(text, "              50.00%         5      bar"));
	free(cap.text);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/*
 * A stack of a function at each level makes each row's graph as deep as
 * the stack: the graphs stop at their bound, and the report says so.
 */
static void test_report_graph_bounded(void)
{
	enum { DEPTH = 300 };
	struct synth s = {0};
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true, .graph = GRAPH_CALLER, .percent_limit = -1,
				 .graph_frames = 1000 };
	struct capture cap;
	uint32_t locs[DEPTH], app = synth_dso(&s, "/usr/bin/app");
	char name[16];

	for (size_t i = 0; i < DEPTH; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		locs[i] = synth_loc(&s, app, 0x1000 + i, name);
	}
	synth_samples(&s, 1, 1, synth_stack(&s, locs, DEPTH), 1);
	synth_model(&s, &m, 0);
	build_report(&r, &f, &m, &o, "symbol");
	CHECK_EQ_U64(r.rows.len, DEPTH);
	CHECK_EQ_U64(r.graphs_cut, 1000);
	report_print(capture_start(&cap), &r, &f, &o, "t.data");
	CHECK(has_line(capture_end(&cap), "# Call graphs cut short: they may walk 1000 frames "
		       "and make 1048576 nodes, all rows together; fewer rows (-n, --percent-limit) "
		       "make them whole"));
	free(cap.text);
	report_free(&r);
	funcs_free(&f);

	/* Within the bound, each row's graph from it down the whole stack. */
	o.graph_frames = 0;
	build_report(&r, &f, &m, &o, "symbol");
	CHECK_EQ_U64(r.graphs_cut, 0);
	/* f0's graph: its root and the stack down from f0, to GRAPH_MAX_DEPTH. */
	CHECK_EQ_U64(r.graphs[find_symbol_row(&r, &f, "f0") - r.rows.v].nodes.len,
		     GRAPH_MAX_DEPTH + 1);
	CHECK_EQ_U64(r.graphs[find_symbol_row(&r, &f, "f200") - r.rows.v].nodes.len,
		     DEPTH - 200 + 1);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/*
 * -s srcline: main > work, work's location with "mix" inlined at
 * mix.h:7, called from work.c:20; main calls from main.c:5; a location
 * without a line.
 */
static void test_report_srcline(void)
{
	static const char *const work_chain[] = { "mix", "work" };
	struct synth s = {0};
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = false };
	struct capture cap;
	const char *text;
	uint32_t app = synth_dso(&s, "/usr/bin/app");
	uint32_t main_ = synth_loc(&s, app, 0x1000, "main");
	uint32_t work = synth_loc_chain(&s, app, 0x2000, work_chain, 2);
	uint32_t bare = synth_loc(&s, app, 0x3000, "bare");
	uint32_t s1[] = { main_, work }, s2[] = { main_, bare };
	struct tr_symbol *sym = s.t.symbols.v;

	sym[0].file = synth_str(&s, "/src/main.c");
	sym[0].line = 5;
	sym[1].file = synth_str(&s, "/src/inc/mix.h");
	sym[1].line = 7;
	sym[2].file = synth_str(&s, "/src/work.c");
	sym[2].line = 20;
	synth_samples(&s, 1, 1, synth_stack(&s, s1, 2), 3);
	synth_samples(&s, 1, 1, synth_stack(&s, s2, 2), 1);
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS);

	/* Without --inline, the instruction's line, in the inlined mix. */
	build_report_flags(&r, &f, &m, &o, "symbol,srcline", FUNCS_SRCLINES);
	report_print(capture_start(&cap), &r, &f, &o, "t.data");
	text = capture_end(&cap);
	CHECK(has_line(text, "#      Self  Samples  Symbol  Source line"));
	CHECK(has_line(text, "     75.00%        3  work    mix.h:7"));
	CHECK(has_line(text, "     25.00%        1  bare    [no line]"));
	free(cap.text);
	report_free(&r);
	funcs_free(&f);

	/* With it, each frame its own line: work's is the call of mix. */
	o.children = true;
	build_report_flags(&r, &f, &m, &o, "srcline", FUNCS_SRCLINES | FUNCS_INLINE);
	report_print(capture_start(&cap), &r, &f, &o, "t.data");
	text = capture_end(&cap);
	CHECK(has_line(text, "    100.00%      0.00%        4  main.c:5"));
	CHECK(has_line(text, "     75.00%     75.00%        3  mix.h:7"));
	CHECK(has_line(text, "     75.00%      0.00%        3  work.c:20"));
	CHECK(has_line(text, "     25.00%     25.00%        1  [no line]"));
	free(cap.text);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

static void test_flame_tree_and_folded(void)
{
	struct model m;
	struct funcs f;
	struct calltree t;
	struct capture cap;
	const char *text;

	build_shape(&m);
	funcs_init(&f, &m, 0);
	calltree_build(&t, &f, NULL, NULL);
	CHECK_EQ_U64(t.nodes.v[0].total, 10);

	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	text = capture_end(&cap);
	/* Depth first, a node's own samples before its children's. */
	CHECK_STREQ(text, "app;main;foo 2\n"
			  "app;main;foo;bar 5\n"
			  "app;main;[app]+0x999 1\n"
			  "app;main;baz;memcpy 1\n"
			  "worker;rec;rec;rec 1\n");
	free(cap.text);

	calltree_print(capture_start(&cap), &t, &f, 15.0);
	text = capture_end(&cap);
	/* Lanes follow the threads, in target time: GPU0 stream 8 is under 15% of it. */
	CHECK_STREQ(text, " 100.00%        10  all\n"
			  "  90.00%         9    app\n"
			  "  90.00%         9      main\n"
			  "  70.00%         7        foo\n"
			  "  50.00%         5          bar\n"
			  "  5.000ms        2    [lane] GPU0 stream 7\n"
			  "  3.000ms        1      kernel_a\n"
			  "  2.000ms        1      kernel_b\n");
	free(cap.text);
	calltree_free(&t);
	funcs_free(&f);

	funcs_init(&f, &m, FUNCS_INLINE);
	calltree_build(&t, &f, NULL, NULL);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	text = capture_end(&cap);
	CHECK(has_line(text, "app;main;foo;bar;helper 5"));
	free(cap.text);
	calltree_free(&t);
	funcs_free(&f);
	model_free(&m);
}

/* Lane work's frames: "[lane] NAME" and the span name, "-" for what has no name. */
static void test_span_frames(void)
{
	struct synth s = {0};
	struct demangler d = {0};
	uint32_t named, unnamed, span, again;
	struct model m;
	struct funcs f;

	named = synth_lane(&s, 1, "GPU0 stream 7");
	unnamed = synth_lane(&s, 1, "");
	synth_span(&s, named, "_Z6kernelPf", SYNTH_T0, 10);
	synth_span(&s, unnamed, "", SYNTH_T0, 10);
	synth_model(&s, &m, TR_FEAT_LANES);
	funcs_init(&f, &m, 0);
	CHECK_STREQ(funcs_name(&f, funcs_lane_frame(&f, named)), "[lane] GPU0 stream 7");
	CHECK_STREQ(funcs_name(&f, funcs_lane_frame(&f, unnamed)), "[lane] -");
	CHECK_STREQ(funcs_name(&f, funcs_lane_frame(&f, 99)), "[lane] -");
	CHECK_STREQ(funcs_name(&f, funcs_span_frame(&f, m.t.spans.v[1].name)), "-");
	CHECK_STREQ(funcs_name(&f, funcs_span_frame(&f, UINT32_MAX)), "-");
	span = funcs_span(&f, named, m.t.spans.v[0].name);
	again = funcs_span(&f, named, m.t.spans.v[0].name);
	CHECK_EQ_U64(span, again);
	CHECK(span != funcs_span(&f, unnamed, m.t.spans.v[0].name));
	CHECK_STREQ(funcs_name(&f, f.v.v[span].dso), "[lane] GPU0 stream 7");
	CHECK_STREQ(funcs_name(&f, f.v.v[span].name),
		    demangler_available(&d) ? "kernel(float*)" : "_Z6kernelPf");
	demangler_free(&d);
	funcs_free(&f);
	model_free(&m);
}

/*
 * Rust names, stored mangled, as every view reads them once the pass ran:
 * demangled without hashes (or with), C++ and C as they were, and a span
 * that shares a function's text keeps it.
 */
static void test_rust_names(void)
{
	static const char legacy[] = "_ZN1m4work17h6ec0dbff1282c6a0E";
	struct synth s = {0};
	uint32_t app, lane;
	struct model m;

	for (int hashes = 0; hashes < 2; hashes++) {
		app = synth_dso(&s, "/usr/bin/app");
		synth_loc(&s, app, 0x1000, legacy);
		synth_loc(&s, app, 0x2000, "_RINvCskK7mfDs1mzF_1m4workmEB2_");
		synth_loc(&s, app, 0x3000, "foo::bar()");
		synth_loc(&s, app, 0x4000, legacy);
		lane = synth_lane(&s, 1, "queue");
		synth_span(&s, lane, legacy, SYNTH_T0, 10);
		synth_model(&s, &m, TR_FEAT_SYMBOLS | TR_FEAT_LANES);
		rustnames_demangle(&m, hashes);
		CHECK_STREQ(model_str(&m, m.t.symbols.v[0].func),
			    hashes ? "m::work::h6ec0dbff1282c6a0" : "m::work");
		CHECK_STREQ(model_str(&m, m.t.symbols.v[1].func),
			    hashes ? "m[f19dcfa532266295]::work::<u32>" : "m::work::<u32>");
		CHECK_STREQ(model_str(&m, m.t.symbols.v[2].func), "foo::bar()");
		CHECK_EQ_U64(m.t.symbols.v[3].func, m.t.symbols.v[0].func);
		CHECK_STREQ(model_str(&m, m.t.spans.v[0].name), legacy);
		model_free(&m);
	}
}

static void test_flame_filter(void)
{
	struct model m;
	struct funcs f;
	struct calltree t;
	struct sample_filter flt = {0};
	struct capture cap;

	build_shape(&m);
	funcs_init(&f, &m, 0);
	CHECK(filter_add(&flt, FILTER_COMM, "worker") == 0);
	calltree_build(&t, &f, &flt, NULL);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	CHECK_STREQ(capture_end(&cap), "worker;rec;rec;rec 1\n");
	free(cap.text);
	calltree_free(&t);
	funcs_free(&f);
	filter_free(&flt);
	model_free(&m);
}

static void test_flame_svg(void)
{
	struct model m;
	struct funcs f;
	struct calltree t;
	struct capture cap;
	const char *text;

	build_shape(&m);
	funcs_init(&f, &m, 0);
	calltree_build(&t, &f, NULL, NULL);
	calltree_write_svg(capture_start(&cap), &t, &f, "a <title> & more", WEIGHT_SAMPLES, NULL);
	text = capture_end(&cap);
	CHECK(!strncmp(text, "<?xml", 5));
	CHECK(strstr(text, "<svg ") != NULL);
	CHECK(strstr(text, "<script") != NULL);
	CHECK(strstr(text, "</svg>\n") != NULL);
	CHECK(strstr(text, "a &lt;title&gt; &amp; more") != NULL);
	CHECK(strstr(text, "<title>memcpy (1 samples, 10.00%)</title>") != NULL);
	CHECK(strstr(text, "<title>main (9 samples, 90.00%)</title>") != NULL);
	CHECK(strstr(text, "<title>[app]+0x999 (1 samples, 10.00%)</title>") != NULL);
	/* Every node with samples is wide enough to be drawn; lanes weigh nothing. */
	CHECK_EQ_U64(count_of(text, "<g class=\"f\""), t.nodes.len - 5);
	CHECK(!strstr(text, "[lane]"));
	CHECK_EQ_U64(count_of(text, "<g "), count_of(text, "</g>"));
	CHECK(!strstr(text, "http://") || count_of(text, "http://") == 1);	/* xmlns only */
	free(cap.text);
	calltree_free(&t);
	funcs_free(&f);
	model_free(&m);
}

/* Names that are not UTF-8, or cut to fit, still give a file a browser reads. */
static void test_flame_svg_utf8(void)
{
	struct synth s = {0};
	uint32_t app = synth_dso(&s, "/usr/bin/app");
	uint32_t wide = synth_loc(&s, app, 0x1000, "main");
	uint32_t narrow = synth_loc(&s, app, 0x2000, "\xc3\xa4\xc3\xb6\xc3\xbc\xc3\xa4\xc3\xb6\xc3\xbc\xc3\xa4\xc3\xb6");
	uint32_t s1[] = { wide }, s2[] = { narrow };
	struct model m;
	struct funcs f;
	struct calltree t;
	struct capture cap;
	const char *text;

	synth_comm(&s, 100, 100, "w\xc3\xb6rker_\xc3");	/* the kernel cut it mid-character */
	synth_samples(&s, 100, 100, synth_stack(&s, s1, 1), 90);
	synth_samples(&s, 100, 100, synth_stack(&s, s2, 1), 4);	/* 50 px: 6 characters fit */
	synth_model(&s, &m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS);
	funcs_init(&f, &m, 0);
	calltree_build(&t, &f, NULL, NULL);
	calltree_write_svg(capture_start(&cap), &t, &f, "t", WEIGHT_SAMPLES, NULL);
	text = capture_end(&cap);
	CHECK(strstr(text, ">w\xc3\xb6rker_\xef\xbf\xbd (94 samples") != NULL);
	CHECK(strstr(text, ">\xc3\xa4\xc3\xb6\xc3\xbc\xc3\xa4..</text>") != NULL);
	free(cap.text);
	calltree_free(&t);
	funcs_free(&f);
	model_free(&m);
}

static void test_threads_view(void)
{
	struct model m;
	struct capture cap;
	const char *text;

	build_shape(&m);
	CHECK_EQ_U64(m.real_threads, 2);
	CHECK_EQ_U64(m.threads.len, 4);
	threads_print(capture_start(&cap), &m, NULL, 1, false);
	text = capture_end(&cap);
	/* Seen from 1 ms before the first sample to the last: 10 ms, 3 ms off-CPU. */
	CHECK(has_line(text, "     PID        TID  Name   Samples   On-CPU ms  Off-CPU ms    First s     Last s"));
	CHECK(has_line(text, "     100        100  app          9         7.0         3.0      0.000      0.010"));
	CHECK(!strstr(text, "worker"));		/* past -n 1 */
	/* Lanes are listed past the limit. */
	CHECK(has_line(text, "     PID        TID  Kind  Name              Spans   Target ms    First s     Last s"));
	CHECK(has_line(text, "     100 0xfff00000  cuda  GPU0 stream 7         2         5.0      0.001      0.007"));
	CHECK(has_line(text, "     100 0xfff00001  cuda  GPU0 stream 8         1         0.3      0.002      0.002"));
	free(cap.text);
	model_free(&m);
}

static void test_diagnose_view(void)
{
	struct origin_links links;
	struct model m;
	struct capture cap;
	const char *text;

	build_shape(&m);
	origins_link(&links, &m, origins_default_window(&m));
	diagnose_print(capture_start(&cap), &m, "t.data", &links);
	text = capture_end(&cap);
	CHECK(has_line(text, "file:                 t.data"));
	CHECK(has_line(text, "command:              ./app --fast"));
	CHECK(has_line(text, "event:                cpu-clock"));
	CHECK(has_line(text, "kernel:               n/a"));
	CHECK(has_line(text, "samples:              10"));
	CHECK(has_line(text, "threads:              2"));
	CHECK(has_line(text, "processes:            1"));
	CHECK(has_line(text, "lost records:         3"));
	CHECK(has_line(text, "throttled:            n/a"));
	CHECK(has_line(text, "unwinding:            10 stacks"));
	CHECK(has_line(text, "  complete                     9   90.00%"));
	CHECK(has_line(text, "  failed.no-map                1   10.00%"));
	CHECK(has_line(text, "symbols:              8 of 9 locations resolved (88.89%)"));
	CHECK(has_line(text, "leaf resolved:        9 of 10 samples (90.00%)"));
	CHECK(has_line(text, "lanes:                2"));
	CHECK(has_line(text, "spans:                3"));
	CHECK(has_line(text, "  symbols.resolved                       8"));
	/* Spans without origins, and no target counters. */
	CHECK(has_line(text, "target:               3 spans in 2 lanes of 1 process, 5.300 ms of target time"));
	CHECK(has_line(text, "spans dropped:        0 (0.00% of 3 reported)"));
	CHECK(has_line(text, "origin links:         window 4.000 ms"));
	CHECK(has_line(text, "  none                         3  100.00%"));
	CHECK(has_line(text, "  linked                       0    0.00%"));
	CHECK(has_line(text, "       100 0xfff00000          2        5.000    0.00%  GPU0 stream 7"));
	free(cap.text);
	origins_free(&links);
	model_free(&m);
}

/* A file with nothing in it but must not crash any view. */
static void test_empty_model(void)
{
	struct synth s = {0};
	struct model m;
	struct funcs f;
	struct report r;
	struct calltree t;
	struct report_opts o = { .children = true };
	struct origin_links links;
	FILE *null = fopen("/dev/null", "w");

	synth_model(&s, &m, 0);
	build_report(&r, &f, &m, &o, "comm,dso,symbol");
	CHECK_EQ_U64(r.total, 0);
	report_print(null, &r, &f, &o, "e.data");
	calltree_build(&t, &f, NULL, NULL);
	calltree_print(null, &t, &f, 0.5);
	calltree_print_folded(null, &t, &f, WEIGHT_SAMPLES);
	calltree_write_svg(null, &t, &f, "empty", WEIGHT_SAMPLES, NULL);
	threads_print(null, &m, NULL, 0, false);
	origins_link(&links, &m, 0);
	diagnose_print(null, &m, "e.data", &links);
	origins_free(&links);
	fclose(null);
	calltree_free(&t);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* A damaged file's endless stack folds at CALLTREE_MAX_DEPTH instead of overflowing the printers. */
static void test_calltree_depth_bounded(void)
{
	enum { DEPTH = 200000 };
	struct synth s = {0};
	struct model m;
	struct funcs f;
	struct calltree t;
	uint32_t *locs = xmalloc(DEPTH * sizeof(*locs));
	uint32_t loc, deepest = 0;
	FILE *null = fopen("/dev/null", "w");

	loc = synth_loc(&s, synth_dso(&s, "/usr/bin/app"), 0x1000, "rec");
	for (size_t i = 0; i < DEPTH; i++)
		locs[i] = loc;
	synth_samples(&s, 1, 1, synth_stack(&s, locs, DEPTH), 1);
	synth_model(&s, &m, 0);
	funcs_init(&f, &m, 0);
	calltree_build(&t, &f, NULL, NULL);
	for (size_t i = 0; i < t.nodes.len; i++)
		if (t.nodes.v[i].depth > deepest)
			deepest = t.nodes.v[i].depth;
	CHECK_EQ_U64(deepest, CALLTREE_MAX_DEPTH);
	CHECK_EQ_U64(t.nodes.v[0].total, 1);
	CHECK(null != NULL);
	if (null) {
		calltree_print(null, &t, &f, 0.0);
		calltree_print_folded(null, &t, &f, WEIGHT_SAMPLES);
		calltree_write_svg(null, &t, &f, "deep", WEIGHT_SAMPLES, NULL);
		fclose(null);
	}
	calltree_free(&t);
	funcs_free(&f);
	model_free(&m);
	free(locs);
}

int main(void)
{
	RUN(test_report_children);
	RUN(test_report_no_children_and_limit);
	RUN(test_report_sort_keys);
	RUN(test_report_filters);
	RUN(test_report_inline);
	RUN(test_report_graph);
	RUN(test_report_graph_bounded);
	RUN(test_report_srcline);
	RUN(test_flame_tree_and_folded);
	RUN(test_span_frames);
	RUN(test_rust_names);
	RUN(test_flame_filter);
	RUN(test_flame_svg);
	RUN(test_flame_svg_utf8);
	RUN(test_calltree_depth_bounded);
	RUN(test_threads_view);
	RUN(test_diagnose_view);
	RUN(test_empty_model);
	return test_summary();
}
