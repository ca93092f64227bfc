/* SPDX-License-Identifier: MIT */
/* gtrace script: the samples as perf script prints them, for the tools that read it. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/passes/passes.h"
#include "analysis/views/script.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/log.h"

enum {
	OPT_INLINE = OPT_COMMAND,
};

static void usage(void)
{
	printf("usage: gtrace script [options]\n\n"
	       "Prints the CPU samples in perf script's default text layout, for the\n"
	       "tools that read it: FlameGraph's stackcollapse-perf.pl, the Firefox\n"
	       "Profiler, speedscope. A sample is a line \"COMM PID/TID [CPU] TIME:\n"
	       "PERIOD EVENT:\", then its frames, innermost first, one a line\n"
	       "\"ADDRESS SYMBOL (DSO)\", then an empty line. Lane work and NVTX ranges\n"
	       "are not samples: they are left out.\n\n"
	       INPUT_USAGE
	       "  -o, --output FILE        where to write ('-': stdout, the default)\n"
	       "      --start TIME         only samples taken TIME or later after the start:\n"
	       "                           2.5s, 300ms, 20us or ns\n"
	       "      --end TIME           only samples taken before TIME\n"
	       TIME_USAGE
	       FILTER_USAGE
	       "      --inline             show inlined functions as frames of their own\n"
	       FRAME_USAGE
	       NAMES_USAGE
	       "  -h, --help               show this help\n");
}

int cmd_script(int argc, char **argv)
{
	static const struct option longopts[] = {
		INPUT_LONG_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "inline", no_argument, NULL, OPT_INLINE },
		FRAME_LONG_OPTIONS,
		NAMES_LONG_OPTIONS,
		WINDOW_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONG_OPTIONS,
		{ 0 }
	};
	struct offline_args a;
	struct offline_output out;
	const char *output = "-";
	struct model m;
	struct funcs f;
	int c, status = EXIT_FAIL;

	offline_args_init(&a, "script", usage, argc, argv);
	while ((c = offline_next_option(&a, OFFLINE_SHORT_OPTIONS "o:" FILTER_SHORT_OPTIONS,
					longopts)) != -1) {
		if (c == 'o')
			output = optarg;
		else if (c == OPT_INLINE)
			a.funcs_flags |= FUNCS_INLINE;
	}
	/* Lanes have spans, not samples: the text would be empty, and say nothing of why. */
	if (!a.status && offline_only_lanes(&a.filter)) {
		pr_err("--tid names lanes only, which have no samples; 'gtrace export' writes "
		       "their spans");
		a.status = EXIT_USAGE;
	}
	if (!offline_load_input(&a, &m))
		return a.status;
	if (!offline_window_has_events(&a, &m))
		return EXIT_FAIL;
	funcs_init(&f, &m, a.funcs_flags);
	if (offline_output_open(&out, output))
		status = offline_output_close(&out, script_write(out.out, &f, &(struct script_opts){
			&a.filter, a.start_ns, a.end_ns }) != 0);
	funcs_free(&f);
	model_free(&m);
	offline_args_free(&a);
	return status;
}
