/* SPDX-License-Identifier: MIT */
/* gtrace report: where the samples fell, one row per symbol; lanes by span name. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/views/gpu-explain.h"
#include "analysis/views/gpu.h"
#include "analysis/views/gpupc.h"
#include "analysis/views/metrics.h"
#include "analysis/views/offcpu.h"
#include "analysis/views/ranks.h"
#include "analysis/views/report.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/text.h"
#include "util/log.h"

#define DEFAULT_SORT "comm,dso,symbol"
#define DEFAULT_SORT_RANKS "rank," DEFAULT_SORT	/* with several ranks loaded */

enum {
	OPT_NO_CHILDREN = OPT_COMMAND,
	OPT_INLINE,
	OPT_GPU,
	OPT_GPU_PC,
	OPT_SASS,
	OPT_METRICS,
	OPT_RANKS,
	OPT_PERCENT_LIMIT,
	OPT_TIME_BUCKETS,
	OPT_OFF_CPU,
};

static void usage(void)
{
	printf("usage: gtrace report [options]\n\n"
	       "Shows the samples of a recording by symbol, like perf report, then the\n"
	       "lane work queued from those stacks, by span name and the functions that\n"
	       "queued it, and the selected lanes' spans by name, in target time of\n"
	       "their own (select a lane by its tid from gtrace threads).\n\n"
	       INPUT_USAGE
	       TIME_USAGE
	       "      --no-children        only self samples; sort by Self\n"
	       "  -s, --sort KEYS          row keys: comm, dso, symbol, pid, tid, nvtx (the\n"
	       "                           innermost NVTX range), pyline (the innermost\n"
	       "                           Python frame's file.py:line), rank, srcline\n"
	       "                           (the frame's file:line, [no line] without one)\n"
	       "                           (default " DEFAULT_SORT ", with several\n"
	       "                           ranks " DEFAULT_SORT_RANKS ")\n"
	       "  -g, --call-graph[=ORDER] draw each row's call graph under it: ORDER\n"
	       "                           caller (default: the row's callees, or with\n"
	       "                           --no-children the paths to it) or callee (its\n"
	       "                           callers)\n"
	       "      --percent-limit PCT  leave out rows under PCT%% of the samples, and\n"
	       "                           graph branches under it (else under 0.5%%)\n"
	       "      --time-buckets N     each row's samples in N equal parts of the run\n"
	       "                           (up to 40), a bar each: how the row moves\n"
	       "      --gpu                summarise the CUDA work instead: kernels, copies,\n"
	       "                           API calls and CPU waits, and kernel regions\n"
	       "      --gpu-pc             show the GPU PC samples instead: per kernel, its\n"
	       "                           hottest source lines with their stall reasons\n"
	       "      --sass               with --gpu-pc: per SASS offset, with its line\n"
	       "      --metrics            show the metrics instead: each series of the\n"
	       "                           machine, the processes and the GPUs over time\n"
	       "      --ranks              show one row per rank instead: its wall, CPU,\n"
	       "                           GPU, collective and GPU wait time, and the\n"
	       "                           straggler, the rank the others waited for\n"
	       "      --off-cpu            show the time threads were off the CPU instead:\n"
	       "                           by thread name, the stack each last ran in and\n"
	       "                           why (blocked, preempted), with kernel frames\n"
	       "                           the kind of wait (futex, sleep, io...)\n"
	       FILTER_USAGE
	       "  -n, --limit N            print at most N rows (default all); with\n"
	       "                           --gpu-pc, N kernels and N lines of each\n"
	       "      --inline             show inlined functions as their own frames\n"
	       FRAME_USAGE
	       NAMES_USAGE
	       LINK_WINDOW_USAGE
	       FORMAT_USAGE
	       "  -h, --help               show this help\n");
}

/*
 * The samples' report and the lane work queued from their stacks, unless
 * --tid names only lanes; then the selected lanes' spans by name.
 */
/* The same as one JSON document. */
static void print_reports_json(struct funcs *f, const struct report_opts *o,
			       const struct origin_links *links, const char *path)
{
	struct report samples, lane_work;
	struct lane_report lanes;

	report_build(&samples, f, o);
	report_build_lane_work(&lane_work, f, o, links);
	lane_report_build(&lanes, f, o->filter);
	report_print_json(stdout, &samples, &lane_work, &lanes, f, o, path);
	report_free(&samples);
	report_free(&lane_work);
	lane_report_free(&lanes);
}

static void print_reports(struct funcs *f, const struct report_opts *o,
			  const struct origin_links *links, const char *path)
{
	bool cpu = !offline_only_lanes(o->filter);
	struct lane_report lanes;
	struct report r;

	if (cpu) {
		report_build(&r, f, o);
		report_print(stdout, &r, f, o, path);
		report_free(&r);
		report_build_lane_work(&r, f, o, links);
		if (r.total)
			report_print_lane_work(stdout, &r, f, o);
		report_free(&r);
	}
	lane_report_build(&lanes, f, o->filter);
	if (lanes.lanes || !cpu)
		lane_report_print(stdout, &lanes, f->m, cpu ? NULL : path, o->limit);
	lane_report_free(&lanes);
}

/* report --gpu-pc (--sass: by SASS offset), or why the recording has no PC samples. */
static int print_gpu_pc(struct funcs *f, const struct sample_filter *flt, size_t limit,
			bool sass, const char *path, bool json)
{
	struct pc_view v;
	struct pc_report r;

	if (!offline_has_pc_samples(f->m, path))
		return EXIT_FAIL;
	pc_view_build(&v, f, flt, NULL);
	pc_report_build(&r, &v, f, sass);
	if (json)
		pc_report_print_json(stdout, &r, &v, f, path, limit);
	else
		pc_report_print(stdout, &r, &v, f, path, limit);
	pc_report_free(&r);
	pc_view_free(&v);
	return 0;
}

/* report --metrics, or why the recording has none. */
static void print_metrics(struct funcs *f, const struct sample_filter *flt, size_t limit,
			  const char *path, bool json)
{
	struct metrics_report r;
	char why[256];

	metrics_report_build(&r, f, flt);
	if (json)
		metrics_report_print_json(stdout, &r, f->m, path, limit);
	else if (!metrics_explain(f->m, why, sizeof(why)))
		metrics_report_print(stdout, &r, f->m, path, limit);
	else
		pr_info("no metrics in '%s': %s", path, why);
	metrics_report_free(&r);
}

/* report --ranks: a row per rank of the recordings loaded, and the straggler. */
static void print_ranks(struct funcs *f, const struct sample_filter *flt, size_t limit,
			const char *path, bool json)
{
	struct rank_report r;

	rank_report_build(&r, f, flt);
	if (json)
		rank_report_print_json(stdout, &r, f->m, path, limit);
	else
		rank_report_print(stdout, &r, f->m, path, limit);
	rank_report_free(&r);
}

/* report --off-cpu, or why the recording has no off-CPU time. */
static int print_off_cpu(struct funcs *f, const struct sample_filter *flt, size_t limit,
			 const char *path, bool json)
{
	struct offcpu_report r;

	if (!(f->m->header.features & TR_FEAT_OFFCPU)) {
		pr_err("no off-CPU intervals in '%s': it was recorded without context switches",
		       text_escape(path));
		return EXIT_FAIL;
	}
	offcpu_report_build(&r, f, flt);
	if (json)
		offcpu_report_print_json(stdout, &r, f, path, limit);
	else
		offcpu_report_print(stdout, &r, f, path, limit);
	offcpu_report_free(&r);
	return 0;
}

/* report --gpu, or why the recording has no CUDA work. */
static void print_gpu(struct funcs *f, const struct sample_filter *flt, size_t limit,
		      const char *path, bool json)
{
	struct gpu_report r;
	char why[512];

	gpu_report_build(&r, f, flt);
	if (json) {
		gpu_report_print_json(stdout, &r, f->m, path, limit);
	} else if (r.lanes || r.regions.len) {
		gpu_report_print(stdout, &r, f->m, path, limit);
	} else {
		pr_info("no CUDA activity in '%s'", text_escape(path));
		pr_info("%s", cuda_explain(f->m, why, sizeof(why)) ? text_escape(why)
			: "the recording holds no CUDA information");
	}
	gpu_report_free(&r);
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		INPUT_LONG_OPTIONS,
		TIME_LONG_OPTION,
		{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
		{ "sort", required_argument, NULL, 's' },
		{ "call-graph", optional_argument, NULL, 'g' },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "time-buckets", required_argument, NULL, OPT_TIME_BUCKETS },
		{ "limit", required_argument, NULL, 'n' },
		{ "inline", no_argument, NULL, OPT_INLINE },
		FRAME_LONG_OPTIONS,
		NAMES_LONG_OPTIONS,
		LINK_WINDOW_LONG_OPTION,
		FORMAT_LONG_OPTION,
		{ "gpu", no_argument, NULL, OPT_GPU },
		{ "gpu-pc", no_argument, NULL, OPT_GPU_PC },
		{ "sass", no_argument, NULL, OPT_SASS },
		{ "metrics", no_argument, NULL, OPT_METRICS },
		{ "ranks", no_argument, NULL, OPT_RANKS },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONG_OPTIONS,
		{ 0 }
	};
	struct offline_args a;
	struct report_opts o = { .children = true, .percent_limit = -1, .filter = &a.filter };
	bool gpu = false, gpu_pc = false, sass = false, metrics = false, ranks = false;
	size_t buckets = 0;
	bool off_cpu = false;
	bool sorted = false;
	struct model m;
	struct funcs f;
	struct origin_links links;
	int c, status = 0;

	offline_args_init(&a, "report", usage, argc, argv);
	a.fold_samples = true;
	a.clip_window = true;
	report_parse_keys(&o, DEFAULT_SORT);
	while ((c = offline_next_option(&a, OFFLINE_SHORT_OPTIONS "s:n:g" FILTER_SHORT_OPTIONS,
					longopts)) != -1) {
		switch (c) {
		case OPT_NO_CHILDREN:
			o.children = false;
			break;
		case 's':
			sorted = true;
			if (report_parse_keys(&o, optarg)) {
				pr_err("invalid --sort keys '%s'; "
				       "use comm, dso, symbol, pid, tid, nvtx, pyline, rank, srcline",
				       optarg);
				a.status = EXIT_USAGE;
			}
			break;
		case 'g':
			/* As perf takes it: "-g callee" as well as "--call-graph=callee". */
			if (!optarg && optind < argc && (!strcmp(argv[optind], "caller") ||
							 !strcmp(argv[optind], "callee")))
				optarg = argv[optind++];
			o.graph = !optarg || !strcmp(optarg, "caller") ? GRAPH_CALLER
				: !strcmp(optarg, "callee") ? GRAPH_CALLEE : GRAPH_NONE;
			if (!o.graph) {
				pr_err("invalid call graph order '%s'; use caller or callee", optarg);
				a.status = EXIT_USAGE;
			}
			break;
		case OPT_PERCENT_LIMIT:
			if (offline_parse_percent(optarg, &o.percent_limit)) {
				pr_err("invalid percentage '%s'", optarg);
				a.status = EXIT_USAGE;
			}
			break;
		case OPT_TIME_BUCKETS:
			if (offline_parse_count(optarg, &buckets) || !buckets ||
			    buckets > REPORT_MAX_BUCKETS) {
				pr_err("invalid --time-buckets '%s'; use 1 to %d", optarg,
				       REPORT_MAX_BUCKETS);
				a.status = EXIT_USAGE;
			}
			/* Parts of the run need each sample's time: not folded. */
			o.time_buckets = (unsigned)buckets;
			a.fold_samples = false;
			break;
		case 'n':
			if (offline_parse_count(optarg, &o.limit)) {
				pr_err("invalid row count '%s'", optarg);
				a.status = EXIT_USAGE;
			}
			break;
		case OPT_INLINE:
			a.funcs_flags |= FUNCS_INLINE;
			break;
		case OPT_GPU:
			gpu = true;
			break;
		case OPT_GPU_PC:
			gpu_pc = true;
			break;
		case OPT_SASS:
			sass = true;
			break;
		case OPT_METRICS:
			metrics = true;
			break;
		case OPT_RANKS:
			ranks = true;
			break;
		case OPT_OFF_CPU:
			off_cpu = true;
			break;
		}
	}
	if (!a.status && gpu + gpu_pc + metrics + ranks + off_cpu > 1) {
		pr_err("only one of --gpu, --gpu-pc, --metrics, --ranks and --off-cpu can be given");
		a.status = EXIT_USAGE;
	}
	if (!a.status && sass && !gpu_pc) {
		pr_err("--sass needs --gpu-pc");
		a.status = EXIT_USAGE;
	}
	/*
	 * GPU work, metrics and ranks' times have no stack of their own to find
	 * a dso in; off-CPU time has no sampled leaf.
	 */
	if (!a.status && (gpu || gpu_pc || metrics || ranks || off_cpu) && a.filter.dsos.len) {
		pr_err("--dso cannot be used with %s", gpu ? "--gpu" : gpu_pc ? "--gpu-pc"
		       : metrics ? "--metrics" : ranks ? "--ranks" : "--off-cpu");
		a.status = EXIT_USAGE;
	}
	/* The JSON document has no call graphs: none to build. */
	if (a.json)
		o.graph = GRAPH_NONE;
	if (!offline_load_input(&a, &m))
		return a.status;
	if (!sorted && m.ranks.len > 1)
		report_parse_keys(&o, DEFAULT_SORT_RANKS);

	if (report_has_key(&o, KEY_SRCLINE))
		a.funcs_flags |= FUNCS_SRCLINES;
	funcs_init(&f, &m, a.funcs_flags);
	if (gpu) {
		print_gpu(&f, &a.filter, o.limit, a.input, a.json);
	} else if (gpu_pc) {
		status = print_gpu_pc(&f, &a.filter, o.limit, sass, a.input, a.json);
	} else if (metrics) {
		print_metrics(&f, &a.filter, o.limit, a.input, a.json);
	} else if (ranks) {
		print_ranks(&f, &a.filter, o.limit, a.input, a.json);
	} else if (off_cpu) {
		status = print_off_cpu(&f, &a.filter, o.limit, a.input, a.json);
	} else {
		offline_link_origins(&links, &m, a.window);
		if (a.json)
			print_reports_json(&f, &o, &links, a.input);
		else
			print_reports(&f, &o, &links, a.input);
		origins_free(&links);
	}
	funcs_free(&f);
	model_free(&m);
	offline_args_free(&a);
	return status;
}
