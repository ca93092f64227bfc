/* SPDX-License-Identifier: MIT */
/* gtrace diagnose: the recording's health and what was lost on the way. */
#include <getopt.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/log.h"

enum { OPT_LINK_WINDOW = 256 };

static void usage(void)
{
	printf("usage: gtrace diagnose [options]\n\n"
	       "Shows how a recording went: the file and whether it ended cleanly, the\n"
	       "recording settings, lost and throttled records, unwinding outcomes,\n"
	       "symbol resolution, the lanes: spans received and dropped, and how\n"
	       "their origins linked to CPU samples, and for CUDA programs what became of\n"
	       "GPU collection: why it did not run, or the CUPTI records it counted.\n\n"
	       "  -i, --input FILE         the recording (default " DEFAULT_INPUT ")\n"
	       LINK_WINDOW_USAGE
	       "  -h, --help               show this help\n");
}

int cmd_diagnose(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ LINK_WINDOW_OPTION, required_argument, NULL, OPT_LINK_WINDOW },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *path = DEFAULT_INPUT;
	uint64_t window = LINK_WINDOW_DEFAULT;
	struct origin_links links;
	struct model m;
	int c, status = 0;

	opterr = 0;
	while (!status && (c = getopt_long(argc, argv, ":i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			path = optarg;
			break;
		case OPT_LINK_WINDOW:
			status = offline_link_window_option(optarg, &window);
			break;
		case 'h':
			usage();
			return 0;
		default:
			status = offline_bad_option("diagnose", argv, c);
		}
	}
	if (!status && optind < argc)
		status = offline_extra_arg("diagnose", argv[optind]);
	if (!status)
		status = offline_load(&m, path);
	if (status)
		return status;
	offline_link_origins(&links, &m, window);
	diagnose_print(stdout, &m, path, &links);
	origins_free(&links);
	model_free(&m);
	return 0;
}
