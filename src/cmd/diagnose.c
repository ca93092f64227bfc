/* SPDX-License-Identifier: MIT */
/* gtrace diagnose: the recording's health and what was lost on the way. */
#include <getopt.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/log.h"

static void usage(void)
{
	printf("usage: gtrace diagnose [options]\n\n"
	       "Shows how a recording went: the file and whether it ended cleanly, the\n"
	       "recording settings, lost and throttled records, unwinding outcomes and\n"
	       "symbol resolution.\n\n"
	       "  -i, --input FILE   the recording (default " DEFAULT_INPUT ")\n"
	       "  -h, --help         show this help\n");
}

int cmd_diagnose(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *path = DEFAULT_INPUT;
	struct model m;
	int c, status = 0;

	opterr = 0;
	while (!status && (c = getopt_long(argc, argv, ":i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			path = optarg;
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
	diagnose_print(stdout, &m, path);
	model_free(&m);
	return 0;
}
