/* SPDX-License-Identifier: MIT */
/*
 * gtrace: CPU stacks and GPU work on one timeline.
 *
 * main() handles the global options and dispatches through one command
 * table; each command lives in src/cmd/<name>.c with its own options.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cmd/cmds.h"
#include "util/log.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "run a command and record its profile" },
	{ "report", cmd_report, "show where the samples fell, by symbol" },
	{ "flame", cmd_flame, "show the call tree, or write folded stacks or an SVG" },
	{ "threads", cmd_threads, "list threads and lanes with their time" },
	{ "diagnose", cmd_diagnose, "show the recording's health and what was lost" },
	{ "export", cmd_export, "write a timeline for Perfetto or Chrome's trace viewer" },
	{ "diff", cmd_diff, "compare two recordings, with significance, for CI" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: gtrace [-v] [--version] [--help] <command> [<args>]\n\n"
		     "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nsee 'gtrace <command> --help' or 'man gtrace-<command>'\n");
}

static void version(void)
{
	printf("gtrace %s\n", GTRACE_VERSION);
	printf("unwinder: %s\n", HAVE_LIBUNWIND ? "dwarf (libunwind), frame pointers"
						: "frame pointers");
	printf("symbols: libdw %s\n", LIBDW_VERSION);
	printf("compression: zstd %s\n", ZSTD_VERSION_STRING_CONFIG);
	printf("cuda collector: %s\n", HAVE_CUPTI ? "yes (CUPTI " CUPTI_VERSION_CONFIG ")" : "no");
}

/* Results go to stdout: a full disk or a closed pipe must not pass unnoticed. */
static int finish_stdout(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		if (errno == EPIPE)
			return status;
		pr_err("cannot write output: %s", strerror(errno));
		return status ? status : EXIT_FAIL;
	}
	return status;
}

int main(int argc, char **argv)
{
	int i;

	/* A reader that goes away (gtrace report | head) is not an error. */
	signal(SIGPIPE, SIG_IGN);

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *opt = argv[i];

		if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
			usage(stdout);
			return finish_stdout(0);
		} else if (!strcmp(opt, "--version")) {
			version();
			return finish_stdout(0);
		} else if (!strcmp(opt, "-v") || !strcmp(opt, "--verbose")) {
			verbose++;
		} else {
			pr_err("unknown option '%s'", opt);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i == argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
		if (!strcmp(argv[i], commands[c].name))
			return finish_stdout(commands[c].fn(argc - i, argv + i));
	pr_err("'%s' is not a gtrace command; see 'gtrace --help'", argv[i]);
	return EXIT_USAGE;
}
