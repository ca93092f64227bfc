/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CMD_CMDS_H
#define GTRACE_CMD_CMDS_H

/*
 * Every subcommand: argv[0] is the command's name, options follow. Each
 * returns the process exit status. Exit codes shared by all commands:
 */
enum {
	EXIT_USAGE = 2,		/* bad options */
	EXIT_FAIL = 1,		/* the work failed (file unreadable, ...) */
};

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_threads(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* The command table: every command, in the order --help lists them. */
struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

extern const struct command commands[];	/* ends with a NULL name */

/* The command called name, or NULL. */
const struct command *command_find(const char *name);

#endif
