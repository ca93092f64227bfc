/* SPDX-License-Identifier: MIT */
/* gtrace threads: the threads of a recording with their time, then its lanes. */
#include <getopt.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/log.h"

static void usage(void)
{
	printf("usage: gtrace threads [options]\n\n"
	       "Lists the threads of a recording by samples: on-CPU and off-CPU time,\n"
	       "first and last event (seconds since the recording started).\n"
	       "On-CPU time is the time between the first and last event less the\n"
	       "off-CPU time when context switches were recorded, else samples times\n"
	       "the sampling period. Lanes of GPU or queued work follow, always, with\n"
	       "their kind (\"cuda\" for a GPU stream), their spans and the sum of the\n"
	       "spans' durations: GPU time for a stream.\n\n"
	       "  -i, --input FILE   the recording (default " DEFAULT_INPUT ")\n"
	       "  -n, --limit N      list at most N threads (lanes are always listed)\n"
	       "  -h, --help         show this help\n");
}

int cmd_threads(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "limit", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *path = DEFAULT_INPUT;
	size_t limit = 0;
	struct model m;
	int c, status = 0;

	opterr = 0;
	while (!status && (c = getopt_long(argc, argv, ":i:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			path = optarg;
			break;
		case 'n':
			if (offline_parse_count(optarg, &limit)) {
				pr_err("invalid thread count '%s'", optarg);
				status = EXIT_USAGE;
			}
			break;
		case 'h':
			usage();
			return 0;
		default:
			status = offline_bad_option("threads", argv, c);
		}
	}
	if (!status && optind < argc)
		status = offline_extra_arg("threads", argv[optind]);
	if (!status)
		status = offline_load(&m, path);
	if (status)
		return status;
	threads_print(stdout, &m, limit);
	model_free(&m);
	return 0;
}
