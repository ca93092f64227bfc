/* SPDX-License-Identifier: MIT */
/* gtrace annotate: one function's samples by its source lines, like perf annotate. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "analysis/passes/passes.h"
#include "analysis/views/annotate.h"
#include "analysis/views/disasm.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/log.h"
#include "util/text.h"

enum {
	OPT_SOURCE_DIR = OPT_COMMAND,
	OPT_ASM,
};

static void usage(void)
{
	printf("usage: gtrace annotate [options] [SYMBOL]\n\n"
	       "Shows the source lines of a function with each line's share of the\n"
	       "function's self samples, like perf annotate: SYMBOL as report names it\n"
	       "(a Python function as report --no-python-lines does), or the function\n"
	       "with the most self samples, report --no-children's first. Lines come\n"
	       "from the line tables the recording holds; their text where the source\n"
	       "file is readable, else line numbers only. Code inlined into the\n"
	       "function counts at the function's line that called it.\n\n"
	       INPUT_USAGE
	       TIME_USAGE
	       "      --source-dir DIR     look for the source files under DIR first (the\n"
	       "                           recorded path, then its basename), then at\n"
	       "                           their recorded paths\n"
	       "      --asm                the function's instructions too, each with its\n"
	       "                           share, from the code the recording kept\n"
	       FILTER_USAGE
	       "  -n, --limit N            show only the N hottest lines (default all)\n"
	       NAMES_USAGE
	       FORMAT_USAGE
	       "  -h, --help               show this help\n");
}

int cmd_annotate(int argc, char **argv)
{
	static const struct option longopts[] = {
		INPUT_LONG_OPTIONS,
		TIME_LONG_OPTION,
		{ "source-dir", required_argument, NULL, OPT_SOURCE_DIR },
		{ "asm", no_argument, NULL, OPT_ASM },
		{ "limit", required_argument, NULL, 'n' },
		NAMES_LONG_OPTIONS,
		FORMAT_LONG_OPTION,
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONG_OPTIONS,
		{ 0 }
	};
	struct offline_args a;
	struct annotate_opts o = { .filter = &a.filter };
	struct annotate an;
	struct model m;
	struct funcs f;
	int c, status = 0;

	offline_args_init(&a, "annotate", usage, argc, argv);
	a.fold_samples = true;
	a.clip_window = true;
	a.operands.max = 1;
	while ((c = offline_next_option(&a, OFFLINE_SHORT_OPTIONS "n:" FILTER_SHORT_OPTIONS,
					longopts)) != -1) {
		if (c == OPT_SOURCE_DIR) {
			o.source_dir = optarg;
		} else if (c == OPT_ASM) {
			o.asm_code = true;
		} else if (c == 'n' && offline_parse_count(optarg, &o.limit)) {
			pr_err("invalid line count '%s'", optarg);
			a.status = EXIT_USAGE;
		}
	}
	if (!a.status && offline_only_lanes(&a.filter)) {
		pr_err("--tid names lanes only, which have no samples to annotate");
		a.status = EXIT_USAGE;
	}
	if (!a.status && o.asm_code && !disasm_available()) {
		pr_err("--asm not built in: install libcapstone-dev and reconfigure");
		a.status = EXIT_USAGE;
	}
	o.symbol = a.operands.n ? a.operands.v[0] : NULL;
	if (!offline_load_input(&a, &m))
		return a.status;
	/* A Python function is one function, whatever line its samples are on. */
	funcs_init(&f, &m, a.funcs_flags & ~(unsigned)FUNCS_PYTHON_LINES);
	if (annotate_build(&an, &f, &o)) {
		if (o.symbol)
			pr_err("no samples in function '%s' in '%s'", text_escape(o.symbol),
			       text_escape(a.input));
		else
			pr_err("no samples to annotate in '%s'", text_escape(a.input));
		status = EXIT_FAIL;
	} else if (a.json) {
		annotate_print_json(stdout, &an, &f, &o, a.input);
	} else {
		annotate_print(stdout, &an, &f, &o, a.input);
	}
	annotate_free(&an);
	funcs_free(&f);
	model_free(&m);
	offline_args_free(&a);
	return status;
}
