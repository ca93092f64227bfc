/* SPDX-License-Identifier: MIT */
#include "cmd/cmds.h"

#include <stddef.h>
#include <string.h>

const struct command commands[] = {
	{ "record", cmd_record, "run a command and record its profile" },
	{ "report", cmd_report, "show where the samples fell, by symbol" },
	{ "flame", cmd_flame, "show the call tree, or write folded stacks or an SVG" },
	{ "annotate", cmd_annotate, "show a function's source lines with their samples" },
	{ "script", cmd_script, "print the samples as perf script does, for its tools" },
	{ "threads", cmd_threads, "list threads and lanes with their time" },
	{ "diagnose", cmd_diagnose, "show the recording's health and what was lost" },
	{ "analyze", cmd_analyze, "say why the GPU waited, and the CPU stacks that made it wait" },
	{ "export", cmd_export, "write a timeline for Perfetto or Chrome's trace viewer" },
	{ "diff", cmd_diff, "compare two recordings, with significance, for CI" },
	{ NULL, NULL, NULL },
};

const struct command *command_find(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}
