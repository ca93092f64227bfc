/* SPDX-License-Identifier: MIT */
/* gtrace diagnose: the recording's health and what was lost on the way. */
#include <getopt.h>
#include <stdio.h>

#include "analysis/views/diagnose.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/log.h"

static void usage(void)
{
	printf("usage: gtrace diagnose [options]\n\n"
	       "Shows how a recording went: the file and whether it ended cleanly, the\n"
	       "recording settings, lost and throttled records, unwinding outcomes,\n"
	       "symbol resolution, the lanes: spans received and dropped, and how\n"
	       "their origins linked to CPU samples, and for CUDA programs what became of\n"
	       "GPU collection: why it did not run, or the CUPTI records it counted, and\n"
	       "of GPU PC sampling: settings, windows, samples kept and dropped, cubins\n"
	       "and the share of samples at a source line; then how the metrics were\n"
	       "read: the interval asked for and kept, readings missed and failed, their\n"
	       "CPU cost, and what became of GPU metrics.\n\n"
	       INPUT_USAGE
	       LINK_WINDOW_USAGE
	       FORMAT_USAGE
	       "  -h, --help               show this help\n");
}

int cmd_diagnose(int argc, char **argv)
{
	static const struct option longopts[] = {
		INPUT_LONG_OPTIONS,
		LINK_WINDOW_LONG_OPTION,
		FORMAT_LONG_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct offline_args a;
	struct origin_links links;
	struct model m;

	offline_args_init(&a, "diagnose", usage, argc, argv);
	/* Every option is a shared one. */
	offline_next_option(&a, OFFLINE_SHORT_OPTIONS, longopts);
	if (!offline_load_input(&a, &m))
		return a.status;
	offline_link_origins(&links, &m, a.window);
	if (a.json)
		diagnose_print_json(stdout, &m, a.input, &links);
	else
		diagnose_print(stdout, &m, a.input, &links);
	origins_free(&links);
	model_free(&m);
	offline_args_free(&a);
	return 0;
}
