/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_CMD_OFFLINE_H
#define GTRACE_CMD_OFFLINE_H

/* What the commands that read a recording (report, flame, ...) share. */

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/passes/passes.h"
#include "model/model.h"
#include "util/outfile.h"
#include "util/vec.h"

#define DEFAULT_INPUT "gtrace.data"

/* The environment variable that sets each recording's read limit (struct tr_budget). */
#define READ_LIMIT_ENV "GTRACE_READ_LIMIT"

/* The options every offline command takes: -i and -h lead each one's list. */
#define OFFLINE_SHORT_OPTIONS ":i:h"

/* Long-only option values: the shared ones, then each command's from OPT_COMMAND. */
enum {
	OPT_LINK_WINDOW = 256, OPT_PYTHON, OPT_NO_PYTHON_LINES, OPT_NO_KERNEL, OPT_JSON_FORMAT,
	OPT_SYMFS, OPT_VERBOSE, OPT_RANK, OPT_ALIGN, OPT_START, OPT_END, OPT_TIME, OPT_COMMAND
};

/* -i: what every offline command that reads recordings says of it. */
#define INPUT_USAGE                                                            \
	"  -i, --input PATH         a recording (default " DEFAULT_INPUT "), or a\n" \
	"                           directory: all the recordings in it; repeat -i\n" \
	"                           to read several (the ranks of a job) as one\n" \
	"      --align MODE         several recordings on one clock by: clocks, the\n" \
	"                           clock pairs each recorded (default); collectives,\n" \
	"                           then the ends of their collective kernels\n"
/* -i's long forms: --input, and --align for several. */
#define INPUT_LONG_OPTIONS                                                     \
	{ "input", required_argument, NULL, 'i' },                             \
	{ "align", required_argument, NULL, OPT_ALIGN }

/* --rank, for the commands that select threads. */
#define RANK_LONG_OPTION                                                       \
	{ "rank", required_argument, NULL, OPT_RANK }
#define RANK_USAGE                                                             \
	"      --rank N[,N..]       only the processes of these ranks\n"

/* --symfs and --verbose, for the commands that name functions. */
#define NAMES_LONG_OPTIONS                                                     \
	{ "symfs", required_argument, NULL, OPT_SYMFS },                       \
	{ "verbose", no_argument, NULL, OPT_VERBOSE }
#define NAMES_USAGE                                                            \
	"      --symfs DIR          for a recording without its names (its recorder\n" \
	"                           was killed): look its files up under DIR\n"   \
	"      --verbose            Rust functions with their hashes: a legacy\n" \
	"                           name's ::h<hash>, a v0 crate's [hash]\n"

/* --format text|json, which threads and diagnose share. */
#define FORMAT_LONG_OPTION                                                     \
	{ "format", required_argument, NULL, OPT_JSON_FORMAT }
#define FORMAT_USAGE                                                           \
	"      --format FORMAT      text (default) or json, one document whose keys\n" \
	"                           the command's man page lists\n"

/* The --link-window option report, flame and diagnose share. */
#define LINK_WINDOW_LONG_OPTION                                                \
	{ "link-window", required_argument, NULL, OPT_LINK_WINDOW }
#define LINK_WINDOW_USAGE                                                      \
	"      --link-window TIME   join a span's origin to a sample of its thread\n" \
	"                           at most TIME away: 5ms, 200us, 1s or ns\n"   \
	"                           (default 4 sampling periods)\n"

/*
 * Which frames the stacks show: --python, --no-python-lines and
 * --no-kernel, which the commands that show stacks share.
 */
#define FRAME_LONG_OPTIONS                                                     \
	{ "python", required_argument, NULL, OPT_PYTHON },                     \
	{ "no-python-lines", no_argument, NULL, OPT_NO_PYTHON_LINES },         \
	{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL }
#define FRAME_USAGE                                                            \
	"      --python MODE        on: each Python frame in place of the\n"      \
	"                           interpreter's C frame that runs it (default);\n" \
	"                           off: native frames only; both: all frames\n"   \
	"      --no-python-lines    one frame per Python function, not per line\n" \
	"      --no-kernel          without the kernel's frames ([kernel.kallsyms]):\n" \
	"                           each stack from where it entered the kernel\n"

/*
 * --start and --end, for export and script: a window of time after the
 * recording's start (model_time_zero); each command says in its usage what it
 * leaves out.
 */
#define WINDOW_LONG_OPTIONS                                                    \
	{ "start", required_argument, NULL, OPT_START },                       \
	{ "end", required_argument, NULL, OPT_END },                           \
	TIME_LONG_OPTION

/*
 * --time START,END as perf has it, for the views too: the same window in
 * seconds, or a slice of the recording in percent. report, flame and
 * threads see the model cut to it (offline_args.clip_window).
 */
#define TIME_LONG_OPTION                                                       \
	{ "time", required_argument, NULL, OPT_TIME }
/* In a usage's printf format: its percent signs doubled. */
#define TIME_USAGE                                                             \
	"      --time START,END     only from START to END after the start: 2.5 (s),\n" \
	"                           300ms, 20us; either may be left out; or PCT%%/N,\n" \
	"                           the Nth slice of PCT%% of the recording; or\n"   \
	"                           A%%-B%%, from A%% to B%% of it\n"

/* A --link-window not given: origins_default_window. */
#define LINK_WINDOW_DEFAULT UINT64_MAX

/* The --pid/--tid/--comm/--dso/--rank options report, flame and export share. */
#define FILTER_LONG_OPTIONS                                                    \
	{ "pid", required_argument, NULL, 'p' },                               \
	{ "tid", required_argument, NULL, 't' },                               \
	{ "comm", required_argument, NULL, 'c' },                              \
	{ "dso", required_argument, NULL, 'd' },                               \
	RANK_LONG_OPTION
#define FILTER_SHORT_OPTIONS "p:t:c:d:"
#define FILTER_USAGE                                                           \
	"  -p, --pid PID[,PID..]    only these processes\n"                     \
	"  -t, --tid TID[,TID..]    only these threads, or lanes (0xfff00000..)\n" \
	"  -c, --comm NAME[,NAME..] only threads with these names\n"            \
	"  -d, --dso NAME[,NAME..]  only samples whose leaf is in these dsos (basenames)\n" \
	RANK_USAGE

/* a->status after --help: the command ends there, with exit status 0. */
#define OFFLINE_HELP (-1)

/* The options offline commands share, and how reading them went. */
struct offline_args {
	const char *cmd;		/* "report", for messages */
	void (*usage)(void);		/* prints the command's --help */
	int argc;
	char **argv;
	VEC(const char *) inputs;	/* each -i, in the order given */
	const char *input;		/* what messages name: DEFAULT_INPUT, the -i,
					   or once loaded, the -i joined by ", " */
	char *inputs_label;		/* the joined -i */
	uint64_t window;		/* --link-window, or LINK_WINDOW_DEFAULT */
	enum model_python_view python;	/* --python: MODEL_PYTHON_ON unless given */
	bool no_kernel;			/* --no-kernel */
	unsigned funcs_flags;		/* for funcs_init: FUNCS_PYTHON_LINES unless
					   --no-python-lines; commands add theirs */
	struct sample_filter filter;	/* --pid, --tid, --comm, --dso, --rank */
	bool align_collectives;		/* --align collectives */
	bool json;			/* --format json */
	const char *symfs;		/* --symfs */
	bool rust_hashes;		/* --verbose: rustnames_demangle's hashes */
	uint64_t start_ns, end_ns;	/* --start, --end: 0 and UINT64_MAX unless given */
	const char *start_arg, *end_arg; /* as given, for messages; NULL when not */
	const char *time_arg;		/* --time as given, NULL when not */
	/* --time in percent: [from, to) of the recording's length, set once loaded. */
	bool time_percent;
	double time_from_percent, time_to_percent;
	bool clip_window;		/* the command shows the model cut to the window */
	uint64_t read_limit;		/* READ_LIMIT_ENV, 0 when not set */
	bool fold_samples;		/* the command only counts samples: load
					   one recording folded (model_load_folded) */
	struct {
		const char *v[2];
		size_t n, max;		/* max: how many the command takes, 0 by default */
	} operands;
	int status;			/* 0, EXIT_USAGE or OFFLINE_HELP */
};

void offline_args_init(struct offline_args *a, const char *cmd, void (*usage)(void),
		       int argc, char **argv);

/*
 * The next option for the command to handle itself, or -1 when there is
 * none: at the end, after --help, or on an error, printed with a->status
 * set. Handles -i, -h, --link-window, --python, --no-python-lines, --no-kernel,
 * --format text|json, --start and --end (an empty window an error), the
 * filter options, getopt's errors and operands (up to operands.max kept,
 * the rest an error). shortopts starts with OFFLINE_SHORT_OPTIONS, or
 * with ":h" for a command that takes its recordings as operands.
 */
int offline_next_option(struct offline_args *a, const char *shortopts,
			const struct option *longopts);

/*
 * Once the options are read: loads the inputs into m, its stacks in the
 * --python view (and without kernel frames with --no-kernel), and returns true, or frees a and returns false with the
 * command's exit status in a->status. A truncated or damaged file only
 * gets a warning. Several recordings (-i repeated, or a directory's, by
 * name in natural order: rank9 before rank10) are merged into one model
 * in that order, one rank each; a --rank that none of them has fails.
 */
bool offline_load_input(struct offline_args *a, struct model *m);
/*
 * The same for the two operands, BASE into m[0] and NEW into m[1], each a
 * recording or a directory of them.
 */
bool offline_load_pair(struct offline_args *a, struct model m[2]);

void offline_args_free(struct offline_args *a);

/*
 * Whether m has an event in the --start and --end window; if not, says so
 * and frees m and a: the command fails, with nothing to show.
 */
bool offline_window_has_events(struct offline_args *a, struct model *m);

/* Parses a count for -n; -EINVAL when it is not a whole number. */
int offline_parse_count(const char *s, size_t *n);
/* Parses a percentage, 0 to 100; -EINVAL for anything else. */
int offline_parse_percent(const char *s, double *p);


/* Links the spans' origins within window_ns (or LINK_WINDOW_DEFAULT). */
void offline_link_origins(struct origin_links *l, const struct model *m, uint64_t window_ns);

/*
 * For report and flame --gpu-pc: whether the recording holds GPU PC
 * samples; if not, says why on stderr, and the command fails: it has
 * nothing to show.
 */
bool offline_has_pc_samples(const struct model *m, const char *path);

/* Whether the --tid list names lanes (synthetic tids) only. */
bool offline_only_lanes(const struct sample_filter *flt);

/*
 * A file export or flame --svg writes: stdout for "-", else a temporary
 * beside path that takes its name once whole (src/util/outfile.h), so that
 * a failed write leaves what was at path as it was.
 */
struct offline_output {
	FILE *out;
	const char *path;
	struct outfile file;
};
/* Opens it: out, or NULL after saying why not. */
FILE *offline_output_open(struct offline_output *o, const char *path);
/*
 * Finishes it: 0, or EXIT_FAIL after saying why when the writing failed
 * (failed: the writer saw its error already) and removing what was written.
 * For stdout, main reports a failure.
 */
int offline_output_close(struct offline_output *o, bool failed);

#endif
