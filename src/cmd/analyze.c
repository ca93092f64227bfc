/* SPDX-License-Identifier: MIT */
/* gtrace analyze: why each GPU waited, and the CPU stacks that made it wait. */
#include <getopt.h>
#include <stdio.h>

#include "analysis/passes/passes.h"
#include "analysis/views/analyze.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/duration.h"
#include "util/log.h"

enum {
	OPT_DEVICE = OPT_COMMAND,
	OPT_SHORT,
};

static void usage(void)
{
	printf("usage: gtrace analyze [options]\n\n"
	       "Says where each GPU's time went from its first work to its last:\n"
	       "compute (kernels), memory (copies, memsets), communication (nccl\n"
	       "kernels), their overlap and idle; why it was idle, each idle interval\n"
	       "classified as host, synchronization, dependency, launch or unknown;\n"
	       "the functions the launching threads ran during host idle, weighted by\n"
	       "the idle time they cover; per kernel its launches' median queue\n"
	       "delay and short instances, with the function that launched them;\n"
	       "each GPU's critical path from its process's first event: the\n"
	       "functions, CUDA calls, kernels and waits whose time the run waited\n"
	       "on, each with the share of the wall time it would save at most; and\n"
	       "findings, ranked by the time at stake, with the code behind each:\n"
	       "synchronous and pageable copies, synchronizing calls and allocations\n"
	       "in a loop, tiny copies, short kernels, low occupancy, GPU idle and\n"
	       "the straggler rank.\n\n"
	       INPUT_USAGE
	       TIME_USAGE
	       "      --device N           only GPU N of each process\n"
	       RANK_USAGE
	       "      --short TIME         a kernel shorter than TIME is short: 5us, 1ms\n"
	       "                           or ns (default 10us)\n"
	       LINK_WINDOW_USAGE
	       FRAME_USAGE
	       FORMAT_USAGE
	       NAMES_USAGE
	       "  -h, --help               show this help\n");
}

int cmd_analyze(int argc, char **argv)
{
	static const struct option longopts[] = {
		INPUT_LONG_OPTIONS,
		TIME_LONG_OPTION,
		{ "device", required_argument, NULL, OPT_DEVICE },
		RANK_LONG_OPTION,
		{ "short", required_argument, NULL, OPT_SHORT },
		LINK_WINDOW_LONG_OPTION,
		FRAME_LONG_OPTIONS,
		FORMAT_LONG_OPTION,
		NAMES_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct analyze_opts o = { .short_ns = ANALYZE_DEFAULT_SHORT_NS, .critical_path = true };
	struct offline_args a;
	struct origin_links links;
	struct analyze an;
	struct funcs f;
	struct model m;
	int c;

	offline_args_init(&a, "analyze", usage, argc, argv);
	a.clip_window = true;
	while ((c = offline_next_option(&a, OFFLINE_SHORT_OPTIONS, longopts)) != -1) {
		size_t n;

		if (c == OPT_DEVICE) {
			if (offline_parse_count(optarg, &n) || n > UINT32_MAX) {
				pr_err("invalid device '%s'", optarg);
				a.status = EXIT_USAGE;
			}
			o.device_set = true;
			o.device = (uint32_t)n;
		} else if (c == OPT_SHORT && duration_parse(optarg, 1, &o.short_ns)) {
			pr_err("invalid time '%s' for --short", optarg);
			a.status = EXIT_USAGE;
		}
	}
	if (!offline_load_input(&a, &m))
		return a.status;
	offline_link_origins(&links, &m, a.window);
	funcs_init(&f, &m, a.funcs_flags);
	o.filter = &a.filter;
	o.links = &links;
	o.funcs = &f;
	analyze_build(&an, &m, &o);
	if (a.json)
		analyze_print_json(stdout, &an, &f, a.input);
	else
		analyze_print(stdout, &an, &f);
	analyze_free(&an);
	funcs_free(&f);
	origins_free(&links);
	model_free(&m);
	offline_args_free(&a);
	return 0;
}
