/* SPDX-License-Identifier: MIT */
/* gtrace threads: the threads of a recording with their time, then its lanes. */
#include <getopt.h>
#include <stdio.h>

#include "analysis/views/threads.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/log.h"

enum { OPT_OFF_CPU = OPT_COMMAND };

static void usage(void)
{
	printf("usage: gtrace threads [options]\n\n"
	       "Lists the threads of a recording by samples: on-CPU and off-CPU time,\n"
	       "first and last event (seconds since the recording started).\n"
	       "On-CPU time is the time between the first and last event less the\n"
	       "off-CPU time when context switches were recorded, else samples times\n"
	       "the sampling period. With metrics, each process's peak RSS and mean CPU\n"
	       "(user and system, 100%% a busy CPU) follow. Lanes of GPU or queued work\n"
	       "come last, always, with their kind (\"cuda\" for a GPU stream), their\n"
	       "spans and the sum of the spans' durations: GPU time for a stream.\n"
	       "With several ranks read, each row starts with its rank.\n\n"
	       INPUT_USAGE
	       TIME_USAGE
	       "  -n, --limit N            list at most N threads (lanes are always listed)\n"
	       "      --off-cpu            split the off-CPU time by why the thread was\n"
	       "                           off: Blocked ms (it waited: sleep, lock, I/O,\n"
	       "                           page fault), Preempted ms (still runnable)\n"
	       RANK_USAGE
	       FORMAT_USAGE
	       "  -h, --help               show this help\n");
}

int cmd_threads(int argc, char **argv)
{
	static const struct option longopts[] = {
		INPUT_LONG_OPTIONS,
		TIME_LONG_OPTION,
		{ "limit", required_argument, NULL, 'n' },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		RANK_LONG_OPTION,
		FORMAT_LONG_OPTION,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct offline_args a;
	size_t limit = 0;
	bool off_cpu = false;
	struct model m;
	int c;

	offline_args_init(&a, "threads", usage, argc, argv);
	a.fold_samples = true;
	a.clip_window = true;
	/* -n and --off-cpu are its own; --rank is a shared filter. */
	while ((c = offline_next_option(&a, OFFLINE_SHORT_OPTIONS "n:", longopts)) != -1) {
		if (c == OPT_OFF_CPU) {
			off_cpu = true;
		} else if (offline_parse_count(optarg, &limit)) {
			pr_err("invalid thread count '%s'", optarg);
			a.status = EXIT_USAGE;
		}
	}
	if (!offline_load_input(&a, &m))
		return a.status;
	if (a.json)
		threads_print_json(stdout, &m, &a.filter, a.input, limit, off_cpu);
	else
		threads_print(stdout, &m, &a.filter, limit, off_cpu);
	model_free(&m);
	offline_args_free(&a);
	return 0;
}
