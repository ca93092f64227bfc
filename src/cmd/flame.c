/* SPDX-License-Identifier: MIT */
/* gtrace flame: the call tree as text, folded stacks, or an SVG flame graph. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/encoders/flamesvg.h"
#include "analysis/views/analyze.h"
#include "analysis/views/flamediff.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/log.h"
#include "util/text.h"

#define DEFAULT_MIN_PERCENT 0.5

enum {
	OPT_FOLDED = OPT_COMMAND,
	OPT_SVG,
	OPT_MIN_PERCENT,
	OPT_INLINE,
	OPT_TITLE,
	OPT_WEIGHT,
	OPT_NO_NVTX,
	OPT_GPU_PC,
	OPT_DIFF,
	OPT_DEVICE,
};

static void usage(void)
{
	printf("usage: gtrace flame [options]\n"
	       "   or: gtrace flame --diff (--svg FILE | --folded) [options] BASE NEW\n\n"
	       "Shows the merged call tree of a recording: as an indented tree (default),\n"
	       "as folded stacks for flamegraph tools, or as an SVG flame graph. Lanes and\n"
	       "the lane work queued from each stack hang in the tree as \"[lane] NAME\"\n"
	       "nodes with their span names as leaves, shown in target ms and spans\n"
	       "instead of percent and samples. Kernel regions hang by region name under\n"
	       "\"[kernel] NAME\" at the root. With --diff, the graph of NEW with each\n"
	       "frame coloured by how its own share changed from BASE: red grew, blue\n"
	       "shrank; --folded prints each stack's count in BASE, then in NEW.\n"
	       "The NVTX ranges open at a sample are frames \"[nvtx] NAME\" between the\n"
	       "thread and its outermost function, a named domain's \"[nvtx DOMAIN] NAME\"\n"
	       "after the default domain's. With several ranks read, each rank is\n"
	       "a frame \"rank N\" at the root, with all its work under it.\n\n"
	       INPUT_USAGE
	       TIME_USAGE
	       "      --folded             print collapsed stacks: \"thread;outer;...;leaf count\"\n"
	       "      --svg FILE           write an interactive SVG flame graph ('-': stdout)\n"
	       "      --title TEXT         the SVG's title (default: the input file)\n"
	       "      --min-percent P      tree: hide nodes under P%% of samples and of target\n"
	       "                           time (default %.1f)\n"
	       "      --weight UNIT        what --folded and --svg weigh: samples, or target\n"
	       "                           (ns of lane work); default samples, target when\n"
	       "                           the selection has lane work but no samples;\n"
	       "                           gpu-idle: all views weigh the launching threads'\n"
	       "                           samples by the host-caused GPU idle they cover\n"
	       "                           (gtrace analyze's host idle), in ns\n"
	       "      --device N           --weight gpu-idle: only the idle of GPU N\n"
	       FILTER_USAGE
	       "      --inline             show inlined functions as their own frames\n"
	       "      --no-nvtx            leave out the NVTX range frames\n"
	       "      --diff               compare two recordings, BASE and NEW (no -i)\n"
	       "      --gpu-pc             weigh the GPU PC samples instead, each under the\n"
	       "                           stack that launched its kernel: \"[kernel] NAME\",\n"
	       "                           then its source line, then its stall reason\n"
	       FRAME_USAGE
	       NAMES_USAGE
	       LINK_WINDOW_USAGE
	       "  -h, --help               show this help\n", DEFAULT_MIN_PERCENT);
}

static int parse_weight(const char *s, enum calltree_weight *w, bool *given)
{
	*given = true;
	if (!strcmp(s, "samples"))
		*w = WEIGHT_SAMPLES;
	else if (!strcmp(s, "target"))
		*w = WEIGHT_TARGET;
	else if (!strcmp(s, "gpu-idle"))
		*w = WEIGHT_GPU_IDLE;
	else
		return -EINVAL;
	return 0;
}

static int write_svg(const struct calltree *t, const struct funcs *f, const char *file,
		     const char *title, enum calltree_weight w, const struct flame_diff *diff)
{
	struct offline_output out;

	if (!offline_output_open(&out, file))
		return EXIT_FAIL;
	calltree_write_svg(out.out, t, f, title, w, diff);
	return offline_output_close(&out, false);
}

/* The tree of the PC samples, each under the stack that launched its kernel. */
static void build_pc_tree(struct calltree *t, struct funcs *f, const struct sample_filter *flt,
			  const struct origin_links *links, bool nvtx)
{
	struct pc_view v;

	pc_view_build(&v, f, flt, links);
	calltree_build_pc(t, f, flt, &v, nvtx);
	pc_view_free(&v);
}

/*
 * The tree of the launching threads' samples, each weighed by the host
 * idle analyze charges it with (device: its --device), with what it needs
 * kept in f and links; false, after saying why and leaving t empty, when
 * no selected device has work.
 */
static bool build_idle_tree(struct calltree *t, struct funcs *f, struct origin_links *links,
			    const struct model *m, const struct offline_args *a,
			    const struct analyze_opts *device, bool nvtx)
{
	struct analyze an;
	bool any;

	funcs_init(f, m, a->funcs_flags);
	offline_link_origins(links, m, a->window);
	analyze_build(&an, m, &(struct analyze_opts){ .filter = &a->filter, .links = links,
						      .device_set = device->device_set,
						      .device = device->device,
						      .short_ns = ANALYZE_DEFAULT_SHORT_NS,
						      .by_sample = true });
	any = an.devices.len;
	if (any) {
		calltree_build_idle(t, f, &a->filter, an.sample_host_ns, nvtx);
	} else {
		if (device->device_set)
			pr_err("--weight gpu-idle: no work of GPU %" PRIu32 " in '%s'",
			       device->device, text_escape(a->input));
		else
			pr_err("--weight gpu-idle: no GPU work in '%s'", text_escape(a->input));
		*t = (struct calltree){0};
	}
	analyze_free(&an);
	return any;
}

/* What the trees of flame and flame --diff are built from. */
struct tree_opts {
	const struct sample_filter *filter;
	uint64_t window;
	unsigned funcs_flags;
	bool nvtx, gpu_pc;
};

/* The tree of m, with what it needs kept in f and links. */
static void build_tree(struct calltree *t, struct funcs *f, struct origin_links *links,
		       const struct model *m, const struct tree_opts *o)
{
	funcs_init(f, m, o->funcs_flags);
	offline_link_origins(links, m, o->window);
	if (o->gpu_pc)
		build_pc_tree(t, f, o->filter, links, o->nvtx);
	else
		calltree_build_ranges(t, f, o->filter, links, o->nvtx);
}

static void free_tree(struct calltree *t, struct funcs *f, struct origin_links *links,
		      struct model *m)
{
	calltree_free(t);
	origins_free(links);
	funcs_free(f);
	model_free(m);
}

/* flame --diff: the two recordings' trees joined, as folded stacks or an SVG. */
static int flame_diff(struct offline_args *a, const struct tree_opts *o, const char *svg,
		      const char *title, enum calltree_weight weight)
{
	struct origin_links links[2];
	struct flame_diff d;
	struct calltree t[2];
	struct funcs f[2];
	struct model m[2];
	char deftitle[1024];
	int status = 0;

	if (!offline_load_pair(a, m))
		return a->status;
	for (int s = 0; s < 2; s++)
		build_tree(&t[s], &f[s], &links[s], &m[s], o);
	flame_diff_build(&d, &t[0], &f[0], &t[1], &f[1], weight);
	snprintf(deftitle, sizeof(deftitle), "%s -> %s", a->operands.v[0], a->operands.v[1]);
	if (svg)
		status = write_svg(&t[1], &f[1], svg, title ? title : deftitle, weight, &d);
	else
		flame_diff_print_folded(stdout, &d);
	flame_diff_free(&d);
	for (int s = 0; s < 2; s++)
		free_tree(&t[s], &f[s], &links[s], &m[s]);
	offline_args_free(a);
	return status;
}

int cmd_flame(int argc, char **argv)
{
	static const struct option longopts[] = {
		INPUT_LONG_OPTIONS,
		TIME_LONG_OPTION,
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "svg", required_argument, NULL, OPT_SVG },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "min-percent", required_argument, NULL, OPT_MIN_PERCENT },
		{ "inline", no_argument, NULL, OPT_INLINE },
		FRAME_LONG_OPTIONS,
		NAMES_LONG_OPTIONS,
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		LINK_WINDOW_LONG_OPTION,
		{ "no-nvtx", no_argument, NULL, OPT_NO_NVTX },
		{ "gpu-pc", no_argument, NULL, OPT_GPU_PC },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONG_OPTIONS,
		{ 0 }
	};
	struct offline_args a;
	const char *svg = NULL, *title = NULL;
	double min_percent = DEFAULT_MIN_PERCENT;
	bool folded = false, weight_given = false, nvtx = true, gpu_pc = false, diff = false;
	enum calltree_weight weight = WEIGHT_SAMPLES;
	struct analyze_opts device = {0};
	struct origin_links links;
	struct model m;
	struct funcs f;
	struct calltree t;
	int c, status = 0;
	size_t n;

	offline_args_init(&a, "flame", usage, argc, argv);
	a.fold_samples = true;
	a.clip_window = true;
	a.operands.max = 2;
	while ((c = offline_next_option(&a, OFFLINE_SHORT_OPTIONS FILTER_SHORT_OPTIONS,
					longopts)) != -1) {
		switch (c) {
		case OPT_FOLDED:
			folded = true;
			break;
		case OPT_SVG:
			svg = optarg;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_MIN_PERCENT:
			if (offline_parse_percent(optarg, &min_percent)) {
				pr_err("invalid --min-percent '%s'; use 0 to 100", optarg);
				a.status = EXIT_USAGE;
			}
			break;
		case OPT_INLINE:
			a.funcs_flags |= FUNCS_INLINE;
			break;
		case OPT_WEIGHT:
			if (parse_weight(optarg, &weight, &weight_given)) {
				pr_err("invalid --weight '%s'; use samples or target", optarg);
				a.status = EXIT_USAGE;
			}
			break;
		case OPT_NO_NVTX:
			nvtx = false;
			break;
		case OPT_GPU_PC:
			gpu_pc = true;
			break;
		case OPT_DIFF:
			diff = true;
			break;
		case OPT_DEVICE:
			if (offline_parse_count(optarg, &n) || n > UINT32_MAX) {
				pr_err("invalid device '%s'", optarg);
				a.status = EXIT_USAGE;
			}
			device.device_set = true;
			device.device = (uint32_t)n;
			break;
		}
	}
	if (!a.status && !diff && a.operands.n) {
		pr_err("unexpected argument '%s'; see 'gtrace flame --help'", a.operands.v[0]);
		a.status = EXIT_USAGE;
	}
	if (!a.status && diff && (a.operands.n != 2 || (!folded && !svg) || gpu_pc)) {
		pr_err("--diff takes two recordings, BASE and NEW, and --svg or --folded%s",
		       gpu_pc ? ", without --gpu-pc" : "");
		a.status = EXIT_USAGE;
	}
	/* PC samples weigh only themselves, and have no stack of their own to find a dso in. */
	if (!a.status && gpu_pc && weight_given && weight != WEIGHT_SAMPLES) {
		pr_err("--gpu-pc weighs PC samples: --weight %s cannot be used with it",
		       weight == WEIGHT_TARGET ? "target" : "gpu-idle");
		a.status = EXIT_USAGE;
	}
	if (!a.status && diff && weight == WEIGHT_GPU_IDLE) {
		pr_err("--weight gpu-idle cannot be used with --diff");
		a.status = EXIT_USAGE;
	}
	if (!a.status && device.device_set && weight != WEIGHT_GPU_IDLE) {
		pr_err("--device selects the GPU of --weight gpu-idle; it needs it");
		a.status = EXIT_USAGE;
	}
	/* Each sample's time says which idle it covers: the samples are kept, not folded. */
	if (weight == WEIGHT_GPU_IDLE)
		a.fold_samples = false;
	if (!a.status && gpu_pc && a.filter.dsos.len) {
		pr_err("--dso cannot be used with --gpu-pc");
		a.status = EXIT_USAGE;
	}
	if (!a.status && folded && svg) {
		pr_err("--folded and --svg cannot be used together");
		a.status = EXIT_USAGE;
	}
	if (diff && !a.status) {
		struct tree_opts o = { &a.filter, a.window, a.funcs_flags, nvtx, false };

		return flame_diff(&a, &o, svg, title, weight);
	}
	if (!offline_load_input(&a, &m))
		return a.status;

	if (gpu_pc && !offline_has_pc_samples(&m, a.input)) {
		model_free(&m);
		offline_args_free(&a);
		return EXIT_FAIL;
	}
	if (weight == WEIGHT_GPU_IDLE) {
		if (!build_idle_tree(&t, &f, &links, &m, &a, &device, nvtx)) {
			free_tree(&t, &f, &links, &m);
			offline_args_free(&a);
			return EXIT_FAIL;
		}
		/* A GPU that never waited on its host: the graph is rightly empty. */
		if (!t.nodes.v[0].target_total)
			pr_info("no host-caused GPU idle covered by samples of the selected threads "
				"in '%s'", text_escape(a.input));
	} else {
		build_tree(&t, &f, &links, &m,
			   &(struct tree_opts){ &a.filter, a.window, a.funcs_flags, nvtx, gpu_pc });
	}
	if (!weight_given && !t.nodes.v[0].total && t.nodes.v[0].target_total)
		weight = WEIGHT_TARGET;
	/* One weight per graph: what it leaves out is said, never mixed in. */
	if ((folded || svg) && weight == WEIGHT_SAMPLES && t.nodes.v[0].spans_total)
		pr_info("lane work not weighed: %" PRIu64 " spans, %.3f ms of target time; "
			"'--weight target' weighs it", t.nodes.v[0].spans_total,
			(double)t.nodes.v[0].target_total / 1e6);
	/* An empty graph, written without a word, would read as a broken viewer. */
	if ((folded || svg) && weight == WEIGHT_TARGET && !t.nodes.v[0].target_total) {
		pr_err("--weight target: no lane work (spans) to weigh in '%s'; "
		       "'--weight samples' weighs its CPU samples", text_escape(a.input));
		status = EXIT_FAIL;
	} else if (svg) {
		status = write_svg(&t, &f, svg, title ? title : a.input, weight, NULL);
	} else if (folded) {
		calltree_print_folded(stdout, &t, &f, weight);
	} else {
		calltree_print(stdout, &t, &f, min_percent);
	}
	free_tree(&t, &f, &links, &m);
	offline_args_free(&a);
	return status;
}
