/* SPDX-License-Identifier: MIT */
/* gtrace diff: two recordings compared, with significance, for CI. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/views/diff.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "contract/meta.h"
#include "util/text.h"
#include "util/log.h"

/* The exit status of --fail when a regression was found. */
#define EXIT_REGRESSION 3

enum {
	OPT_BY = OPT_COMMAND,
	OPT_NORMALIZE,
	OPT_CONFIDENCE,
	OPT_THRESHOLD,
	OPT_FAIL,
	OPT_FAIL_ON,
	OPT_FORMAT,
};

static void usage(void)
{
	printf("usage: gtrace diff [options] BASE NEW\n\n"
	       "Compares two recordings, each a file or a directory of the recordings\n"
	       "of one job (read as one, as other commands read -i DIR), row by row:\n"
	       "CPU functions by their self samples, and kernels, copies and memsets,\n"
	       "CUDA calls, CPU waits, NVTX ranges and other lane work by the durations\n"
	       "of their spans, threads by their time on the CPU, metric series by\n"
	       "their mean, and analyze's findings and idle causes by their time\n"
	       "(shown, not tested: one figure a run; a new finding, or an idle\n"
	       "cause grown past the threshold and 1 ms, is a regression). A change is\n"
	       "significant at the confidence over all the rows compared (Holm's\n"
	       "correction), and a regression when it is also more than the threshold\n"
	       "worse. Rows are sorted by how much time changed.\n\n"
	       "      --by KINDS           sections: cpu, gpu (kernel, copy, api, wait),\n"
	       "                           nvtx, lanes, threads, metrics, findings (rule,\n"
	       "                           idle), or single kinds (lane, thread, metric,\n"
	       "                           rule...; default: all)\n"
	       "      --normalize MODE     total: compare shares of each recording\n"
	       "                           (default); none: absolute time\n"
	       "      --confidence PCT     of the significance tests (default 99)\n"
	       "      --threshold PCT      the least change that counts (default 5)\n"
	       "      --fail               exit with status 3 when there is a regression\n"
	       "      --fail-on KINDS      only regressions of these kinds fail (default all);\n"
	       "                           implies --fail\n"
	       "      --format FORMAT      text (default), json or markdown\n"
	       "  -n, --limit N            print at most N rows (text, markdown)\n"
	       "  -c, --comm NAME[,NAME..] only CPU samples of threads with these names\n"
	       "  -d, --dso NAME[,NAME..]  only CPU samples whose leaf is in these dsos\n"
	       FRAME_USAGE
	       NAMES_USAGE
	       "  -h, --help               show this help\n\n"
	       "Exit status: 0, or 3 with --fail and a regression; 1 when a recording\n"
	       "cannot be read; 2 for bad options.\n");
}

/* A percentage in (0, 100) as a fraction; -1 when it is not one. */
static double parse_percent(const char *s, bool below_hundred)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v > 0) || (below_hundred ? !(v < 100) : !(v < 1e6)))
		return -1;
	return v / 100;
}

struct diff_args {
	struct diff_opts o;
	unsigned fail_on;
	bool fail;
	enum diff_format format;
	size_t limit;
};

/* Handles one of diff's own options; EXIT_USAGE after saying what is wrong. */
static int diff_option(struct diff_args *da, int c, const char *arg)
{
	static const char *const formats[] = {
		[DIFF_TEXT] = "text", [DIFF_JSON] = "json", [DIFF_MARKDOWN] = "markdown",
	};

	switch (c) {
	case OPT_BY:
	case OPT_FAIL_ON:
		if (diff_parse_kinds(arg, c == OPT_BY ? &da->o.kinds : &da->fail_on)) {
			pr_err("invalid %s '%s'; use cpu, gpu, kernel, copy, api, wait, nvtx, lane, "
			       "lanes, thread, threads, metric, metrics, rule, idle, findings",
			       c == OPT_BY ? "--by" : "--fail-on", arg);
			return EXIT_USAGE;
		}
		/* Naming what fails asks for failing: --fail-on implies --fail. */
		da->fail |= c == OPT_FAIL_ON;
		return 0;
	case OPT_NORMALIZE:
		if (strcmp(arg, "total") && strcmp(arg, "none")) {
			pr_err("invalid --normalize '%s'; use total or none", arg);
			return EXIT_USAGE;
		}
		da->o.normalize_total = !strcmp(arg, "total");
		return 0;
	case OPT_CONFIDENCE:
	case OPT_THRESHOLD:
		if (c == OPT_CONFIDENCE && (da->o.confidence = parse_percent(arg, true)) < 0) {
			pr_err("invalid --confidence '%s'; give a percentage such as 99", arg);
			return EXIT_USAGE;
		}
		if (c == OPT_THRESHOLD && (da->o.threshold = parse_percent(arg, false)) < 0) {
			pr_err("invalid --threshold '%s'; give a percentage such as 5", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_FAIL:
		da->fail = true;
		return 0;
	case OPT_FORMAT:
		for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
			if (!strcmp(arg, formats[i])) {
				da->format = (enum diff_format)i;
				return 0;
			}
		}
		pr_err("invalid --format '%s'; use text, json or markdown", arg);
		return EXIT_USAGE;
	case 'n':
		if (offline_parse_count(arg, &da->limit)) {
			pr_err("invalid row count '%s'", arg);
			return EXIT_USAGE;
		}
		return 0;
	}
	return 0;
}

/* Loads both recordings; false after saying why. */
static bool load_both(struct offline_args *a, struct model m[2])
{
	/* Several -i are one job elsewhere; here the two sides are the operands. */
	if (!a->status && a->inputs.len) {
		pr_err("diff takes its recordings as operands, not -i: 'gtrace diff BASE NEW', "
		       "each a recording or a directory of them");
		a->status = EXIT_USAGE;
	}
	if (!a->status && a->operands.n != 2) {
		pr_err("diff compares two recordings: give BASE and NEW; see 'gtrace diff --help'");
		a->status = EXIT_USAGE;
	}
	return offline_load_pair(a, m);
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, OPT_BY },
		{ "normalize", required_argument, NULL, OPT_NORMALIZE },
		{ "confidence", required_argument, NULL, OPT_CONFIDENCE },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "fail", no_argument, NULL, OPT_FAIL },
		{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "limit", required_argument, NULL, 'n' },
		{ "input", required_argument, NULL, 'i' },
		{ "comm", required_argument, NULL, 'c' },
		{ "dso", required_argument, NULL, 'd' },
		FRAME_LONG_OPTIONS,
		NAMES_LONG_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct diff_args da = {
		.o = { .confidence = 0.99, .threshold = 0.05, .normalize_total = true,
		       .kinds = ~0u },
		.fail_on = ~0u,
	};
	struct offline_args a;
	struct funcs f[2];
	struct model m[2];
	struct diff d;
	const char *cmd[2];
	int c, status = 0;

	offline_args_init(&a, "diff", usage, argc, argv);
	a.fold_samples = true;
	a.operands.max = 2;
	while ((c = offline_next_option(&a, ":hi:n:c:d:", longopts)) != -1)
		a.status = diff_option(&da, c, optarg);
	if (!load_both(&a, m))
		return a.status;
	da.o.filter = &a.filter;
	for (int s = 0; s < 2; s++) {
		funcs_init(&f[s], &m[s], a.funcs_flags);
		cmd[s] = model_meta(&m[s], META_COMMAND);
	}
	if (cmd[0] && cmd[1] && strcmp(cmd[0], cmd[1]))
		pr_warn("the recordings ran different commands: '%s' and '%s'", text_escape(cmd[0]),
			text_escape(cmd[1]));
	diff_build(&d, &f[0], &f[1], &da.o);
	diff_print(stdout, &d, &da.o, da.format, a.operands.v[0], a.operands.v[1], da.limit);
	if (da.fail && diff_regressions(&d, da.fail_on))
		status = EXIT_REGRESSION;
	diff_free(&d);
	for (int s = 0; s < 2; s++) {
		funcs_free(&f[s]);
		model_free(&m[s]);
	}
	offline_args_free(&a);
	return status;
}
