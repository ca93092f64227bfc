/* SPDX-License-Identifier: MIT */
/* Python frames in the views: the --python views of the stacks, frame names, the pyline key. */
#include <stdlib.h>

#include "analysis/passes/passes.h"
#include "analysis/views/report.h"
#include "synth.h"
#include "test.h"
#include "views.h"

#define PID 100
#define US 1000ull

/*
 * A CPython process, one thread "python". Outermost first, [py] marking
 * the Python frames of pywork.py (inner's line unknown) and eval the
 * interpreter's _PyEval_EvalFrameDefault:
 *	4  main > Py_RunMain > eval > [py]<module>:40 > [py]compress_work:21 > call > deflate
 *	2  main > Py_RunMain > eval > [py]<module>:40 > [py]compress_work:22
 *	1  main > Py_RunMain > eval > [py]<module>:40 > [py]compress_work:21 > call > eval > [py]inner
 *	1  main > Py_RunMain > eval > call > deflate	(its Python stack not matched)
 *	1  main > Py_RunMain > eval
 * and a kernel queued at the first sample. Without python, pywork.py is
 * an ordinary file: no frame is a Python one.
 */
static void build_python_kernel(struct model *m, bool python, bool kernel)
{
	struct synth s = {0};
	uint32_t exe = synth_dso(&s, "/usr/bin/python3.12");
	uint32_t vmlinux = synth_dso(&s, "[kernel.kallsyms]");
	uint32_t sched = synth_loc(&s, vmlinux, 0xffffffff81000000, "schedule");
	uint32_t libz = synth_dso(&s, "/lib/x86_64-linux-gnu/libz.so.1");
	uint32_t py = synth_python_file(&s, "/work/tests/workloads/pywork.py");
	uint32_t main_ = synth_loc(&s, exe, 0x1000, "main");
	uint32_t run = synth_loc(&s, exe, 0x2000, "Py_RunMain");
	uint32_t eval = synth_loc(&s, exe, 0x3000, "_PyEval_EvalFrameDefault");
	uint32_t call = synth_loc(&s, exe, 0x4000, "cfunction_vectorcall_O");
	uint32_t deflate = synth_loc(&s, libz, 0x5000, "deflate");
	uint32_t module = synth_python_loc(&s, py, "<module>", 40);
	uint32_t work21 = synth_python_loc(&s, py, "compress_work", 21);
	uint32_t work22 = synth_python_loc(&s, py, "compress_work", 22);
	uint32_t inner = synth_python_loc(&s, py, "inner", 0);
	/* Each with room for a kernel frame over its leaf. */
	uint32_t a[] = { main_, run, eval, module, work21, call, deflate, sched };
	uint32_t b[] = { main_, run, eval, module, work22, sched };
	uint32_t nested[] = { main_, run, eval, module, work21, call, eval, inner, sched };
	uint32_t native[] = { main_, run, eval, call, deflate, sched };
	uint32_t top[] = { main_, run, eval, sched };
	uint32_t lane;

	s.t.dsos.v[vmlinux - 1].flags = TR_DSO_KERNEL;
	synth_comm(&s, PID, PID, "python");
	synth_samples(&s, PID, PID, synth_stack(&s, a, 7 + kernel), 4);
	synth_samples(&s, PID, PID, synth_stack(&s, b, 5 + kernel), 2);
	synth_samples(&s, PID, PID, synth_stack(&s, nested, 8 + kernel), 1);
	synth_samples(&s, PID, PID, synth_stack(&s, native, 5 + kernel), 1);
	synth_samples(&s, PID, PID, synth_stack(&s, top, 3 + kernel), 1);
	lane = synth_lane(&s, PID, "GPU0 stream 7");
	synth_span_from(&s, lane, "kernel", SYNTH_T0 + 1000 * US, 100 * US, PID, SYNTH_T0);
	if (!python)
		s.t.dsos.v[py - 1].flags = 0;
	synth_meta(&s, "frequency", "1000");
	synth_model(&s, m, TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_LANES);
}

static void build_python(struct model *m, bool python)
{
	build_python_kernel(m, python, false);
}

/* The folded stacks of m, its funcs named with flags. Free it. */
static char *folded(const struct model *m, unsigned flags)
{
	struct funcs f;
	struct calltree t;
	struct capture cap;

	funcs_init(&f, m, flags);
	calltree_build(&t, &f, NULL, NULL);
	calltree_print_folded(capture_start(&cap), &t, &f, WEIGHT_SAMPLES);
	capture_end(&cap);
	calltree_free(&t);
	funcs_free(&f);
	return cap.text;
}

/* Whether every node's parent comes before it. */
static bool parents_first(const struct model *m)
{
	for (uint32_t node = 1; node <= m->t.nodes.len; node++)
		if (m->t.nodes.v[node - 1].parent >= node)
			return false;
	return true;
}

#define STACK "python;main;Py_RunMain;"

static void test_view_on(void)
{
	struct model m;
	char *text;

	build_python(&m, true);
	model_view_stacks(&m, MODEL_PYTHON_ON, false);
	CHECK(parents_first(&m));
	text = folded(&m, FUNCS_PYTHON_LINES);
	/* The eval frame gives way to the Python frames it runs, and stays where it runs none. */
	CHECK(has_line(text, STACK "<module> (pywork.py:40);compress_work (pywork.py:21);"
			     "cfunction_vectorcall_O;deflate 4"));
	CHECK(has_line(text, STACK "<module> (pywork.py:40);compress_work (pywork.py:22) 2"));
	CHECK(has_line(text, STACK "<module> (pywork.py:40);compress_work (pywork.py:21);"
			     "cfunction_vectorcall_O;inner (pywork.py) 1"));
	CHECK(has_line(text, STACK "_PyEval_EvalFrameDefault;cfunction_vectorcall_O;deflate 1"));
	CHECK(has_line(text, STACK "_PyEval_EvalFrameDefault 1"));
	CHECK_EQ_U64(count_of(text, "\n"), 5);
	free(text);
	model_free(&m);
}

/*
 * Kernel frames over every leaf: --no-kernel drops them in the same pass
 * as the Python view, which is then as it is without them. Two passes hid
 * the native frame over the eval loop too, and with --python both the
 * eval loop itself.
 */
static void test_view_no_kernel(void)
{
	static const enum model_python_view views[] = {
		MODEL_PYTHON_ON, MODEL_PYTHON_OFF, MODEL_PYTHON_BOTH,
	};

	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		struct model plain, kernel;
		char *want, *got;

		build_python(&plain, true);
		model_view_stacks(&plain, views[i], false);
		want = folded(&plain, FUNCS_PYTHON_LINES);
		build_python_kernel(&kernel, true, true);
		model_view_stacks(&kernel, views[i], true);
		CHECK(parents_first(&kernel));
		got = folded(&kernel, FUNCS_PYTHON_LINES);
		CHECK_STREQ(got, want);
		free(want);
		free(got);
		model_free(&plain);
		model_free(&kernel);
	}
}

static void test_view_off(void)
{
	struct model m;
	char *text;

	build_python(&m, true);
	model_view_stacks(&m, MODEL_PYTHON_OFF, false);
	/* main, Py_RunMain, eval, call, deflate, and the nested eval: stacks merged. */
	CHECK_EQ_U64(m.t.nodes.len, 6);
	CHECK(parents_first(&m));
	CHECK_EQ_U64(m.t.samples.v[0].node, m.t.samples.v[7].node);
	text = folded(&m, FUNCS_PYTHON_LINES);
	CHECK_STREQ(text, STACK "_PyEval_EvalFrameDefault 3\n"
			  STACK "_PyEval_EvalFrameDefault;cfunction_vectorcall_O;deflate 5\n"
			  STACK "_PyEval_EvalFrameDefault;cfunction_vectorcall_O;"
				"_PyEval_EvalFrameDefault 1\n");
	free(text);
	model_free(&m);
}

/* Copies of m's nodes and samples, to compare with after a view. */
struct stacks_copy {
	struct tr_node *nodes;
	size_t nnodes;
	struct tr_sample *samples;
	size_t nsamples;
};

static void copy_stacks(struct stacks_copy *c, const struct model *m)
{
	c->nnodes = m->t.nodes.len;
	c->nodes = xcalloc(c->nnodes, sizeof(*c->nodes));
	memcpy(c->nodes, m->t.nodes.v, c->nnodes * sizeof(*c->nodes));
	c->nsamples = m->t.samples.len;
	c->samples = xcalloc(c->nsamples, sizeof(*c->samples));
	memcpy(c->samples, m->t.samples.v, c->nsamples * sizeof(*c->samples));
}

static bool same_stacks(const struct stacks_copy *c, const struct model *m)
{
	return c->nnodes == m->t.nodes.len && c->nsamples == m->t.samples.len &&
	       !memcmp(c->nodes, m->t.nodes.v, c->nnodes * sizeof(*c->nodes)) &&
	       !memcmp(c->samples, m->t.samples.v, c->nsamples * sizeof(*c->samples));
}

static void free_copy(struct stacks_copy *c)
{
	free(c->nodes);
	free(c->samples);
}

static void test_view_both(void)
{
	struct model m;
	struct stacks_copy before;
	char *text;

	build_python(&m, true);
	copy_stacks(&before, &m);
	model_view_stacks(&m, MODEL_PYTHON_BOTH, false);
	CHECK(same_stacks(&before, &m));
	text = folded(&m, FUNCS_PYTHON_LINES);
	CHECK(has_line(text, STACK "_PyEval_EvalFrameDefault;<module> (pywork.py:40);"
			     "compress_work (pywork.py:21);cfunction_vectorcall_O;"
			     "_PyEval_EvalFrameDefault;inner (pywork.py) 1"));
	free(text);
	free_copy(&before);
	model_free(&m);
}

/* Without Python files, every view is the recording as it is. */
static void test_views_without_python(void)
{
	static const enum model_python_view views[] = {
		MODEL_PYTHON_ON, MODEL_PYTHON_OFF, MODEL_PYTHON_BOTH,
	};

	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		struct model m;
		struct stacks_copy before;

		build_python(&m, false);
		copy_stacks(&before, &m);
		model_view_stacks(&m, views[i], false);
		CHECK(same_stacks(&before, &m));
		free_copy(&before);
		model_free(&m);
	}
}

/* The row of a report keyed by pyline whose value is pyline. */
static const struct report_row *find_pyline_row(const struct report *r, const struct funcs *f,
						const char *pyline)
{
	for (size_t i = 0; i < r->rows.len; i++) {
		uint32_t id = r->rows.v[i].pyline;

		if (!strcmp(id ? funcs_name(f, id) : "[no python]", pyline))
			return &r->rows.v[i];
	}
	return NULL;
}

#define CHECK_COUNTS(row, self_, children_)                                    \
	do {                                                                   \
		const struct report_row *row_ = (row);                         \
		CHECK(row_ != NULL);                                           \
		if (row_) {                                                    \
			CHECK_EQ_U64(row_->self, self_);                       \
			CHECK_EQ_U64(row_->children, children_);               \
		}                                                              \
	} while (0)

static void test_frame_names(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true };

	build_python(&m, true);
	model_view_stacks(&m, MODEL_PYTHON_ON, false);
	CHECK(report_parse_keys(&o, "dso,symbol") == 0);
	funcs_init(&f, &m, FUNCS_PYTHON_LINES);
	report_build(&r, &f, &o);
	CHECK_COUNTS(find_symbol_row(&r, &f, "<module> (pywork.py:40)"), 0, 7);
	CHECK_COUNTS(find_symbol_row(&r, &f, "compress_work (pywork.py:21)"), 0, 5);
	CHECK_COUNTS(find_symbol_row(&r, &f, "compress_work (pywork.py:22)"), 2, 2);
	CHECK_COUNTS(find_symbol_row(&r, &f, "inner (pywork.py)"), 1, 1);
	CHECK(find_symbol_row(&r, &f, "compress_work (pywork.py)") == NULL);
	{
		const struct report_row *row = find_symbol_row(&r, &f, "<module> (pywork.py:40)");

		if (row)
			CHECK_STREQ(funcs_name(&f, f.v.v[row->func].dso), "pywork.py");
	}
	report_free(&r);
	funcs_free(&f);

	/* Without lines, one frame per function. */
	funcs_init(&f, &m, 0);
	report_build(&r, &f, &o);
	CHECK_COUNTS(find_symbol_row(&r, &f, "compress_work (pywork.py)"), 2, 7);
	CHECK_COUNTS(find_symbol_row(&r, &f, "<module> (pywork.py)"), 0, 7);
	CHECK(find_symbol_row(&r, &f, "compress_work (pywork.py:21)") == NULL);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

static void test_pyline_key(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true };
	struct capture cap;
	const char *text;

	build_python(&m, true);
	model_view_stacks(&m, MODEL_PYTHON_ON, false);
	CHECK(report_parse_keys(&o, "pyline") == 0);
	funcs_init(&f, &m, 0);		/* names without lines: the key has them still */
	report_build(&r, &f, &o);
	CHECK_EQ_U64(r.rows.len, 4);
	CHECK_COUNTS(find_pyline_row(&r, &f, "pywork.py:21"), 4, 4);
	CHECK_COUNTS(find_pyline_row(&r, &f, "pywork.py:22"), 2, 2);
	CHECK_COUNTS(find_pyline_row(&r, &f, "pywork.py"), 1, 1);	/* inner, line unknown */
	CHECK_COUNTS(find_pyline_row(&r, &f, "[no python]"), 2, 2);
	report_print(capture_start(&cap), &r, &f, &o, "py.data");
	text = capture_end(&cap);
	CHECK(has_line(text, "#  Children       Self  Samples  Python line"));
	CHECK(has_line(text, "     44.44%     44.44%        4  pywork.py:21"));
	CHECK(has_line(text, "     22.22%     22.22%        2  [no python]"));
	free(cap.text);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

/* Lane work is keyed by the innermost Python frame of the stack it was queued from. */
static void test_pyline_lane_work(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true };
	struct origin_links links;
	const struct report_row *row;

	build_python(&m, true);
	model_view_stacks(&m, MODEL_PYTHON_ON, false);
	CHECK(report_parse_keys(&o, "pyline,symbol") == 0);
	funcs_init(&f, &m, FUNCS_PYTHON_LINES);
	origins_link(&links, &m, origins_default_window(&m));
	report_build_lane_work(&r, &f, &o, &links);
	CHECK_EQ_U64(r.total, 1);
	row = find_symbol_row(&r, &f, "kernel");
	CHECK(row && row->span && row->pyline);
	if (row && row->pyline)
		CHECK_STREQ(funcs_name(&f, row->pyline), "pywork.py:21");
	report_free(&r);
	origins_free(&links);
	funcs_free(&f);
	model_free(&m);
}

/* Off leaves no Python frame for the key to find. */
static void test_pyline_off(void)
{
	struct model m;
	struct funcs f;
	struct report r;
	struct report_opts o = { .children = true };

	build_python(&m, true);
	model_view_stacks(&m, MODEL_PYTHON_OFF, false);
	CHECK(report_parse_keys(&o, "pyline") == 0);
	funcs_init(&f, &m, FUNCS_PYTHON_LINES);
	report_build(&r, &f, &o);
	CHECK_EQ_U64(r.rows.len, 1);
	CHECK_COUNTS(find_pyline_row(&r, &f, "[no python]"), 9, 9);
	report_free(&r);
	funcs_free(&f);
	model_free(&m);
}

int main(void)
{
	RUN(test_view_on);
	RUN(test_view_no_kernel);
	RUN(test_view_off);
	RUN(test_view_both);
	RUN(test_views_without_python);
	RUN(test_frame_names);
	RUN(test_pyline_key);
	RUN(test_pyline_lane_work);
	RUN(test_pyline_off);
	return test_summary();
}
