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

static void usage(FILE *out)
{
	fprintf(out, "usage: gtrace [-v] [--version] [--help] <command> [<args>]\n\n"
		     "commands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\nsee 'gtrace <command> --help' or 'man gtrace-<command>'\n");
}

static void version(void)
{
	printf("gtrace %s\n", GTRACE_VERSION);
	printf("unwinder: %s\n", HAVE_LIBUNWIND ? "dwarf (libunwind for the frames it needs), frame pointers"
						: "dwarf (no libunwind: signal frames end stacks), frame pointers");
	printf("symbols: libdw %s\n", LIBDW_VERSION);
	printf("compression: zstd %s\n", ZSTD_VERSION_STRING_CONFIG);
	printf("cuda collector: %s\n", HAVE_CUPTI ? "yes (CUPTI " CUPTI_VERSION_CONFIG ")" : "no");
	printf("sqlite export: %s\n", HAVE_SQLITE ? "yes (libsqlite3 " SQLITE_VERSION_CONFIG ")" : "no");
	printf("annotate --asm: %s\n", HAVE_CAPSTONE ? "yes (libcapstone " CAPSTONE_VERSION_CONFIG ")"
						     : "no");
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
	const struct command *cmd;
	int i;

	/* A reader that goes away (gtrace report | head) is not an error. */
	signal(SIGPIPE, SIG_IGN);
	/* Past ulimit -f, a write fails (EFBIG) and is reported like a full disk. */
	signal(SIGXFSZ, SIG_IGN);

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
	cmd = command_find(argv[i]);
	if (cmd)
		return finish_stdout(cmd->fn(argc - i, argv + i));
	pr_err("'%s' is not a gtrace command; see 'gtrace --help'", argv[i]);
	return EXIT_USAGE;
}
