/* SPDX-License-Identifier: MIT */
/*
 * gtrace export: the recording as a timeline for Perfetto or Chrome's trace
 * viewer, as a profile for pprof, or as an SQLite database.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis/encoders/export.h"
#include "analysis/views/analyze.h"
#include "cmd/cmds.h"
#include "cmd/offline.h"
#include "util/log.h"
#include "util/outfile.h"

enum {
	OPT_FORMAT = OPT_COMMAND,
};

static const struct {
	const char *name;
	enum export_format format;
	const char *default_output;
	const char *viewers;	/* where to open it */
} formats[] = {
	{ "perfetto", EXPORT_PERFETTO, "gtrace.pftrace", "https://ui.perfetto.dev" }, /* the default */
	{ "chrome", EXPORT_CHROME, "gtrace.json", "chrome://tracing or https://ui.perfetto.dev" },
	{ "pprof", EXPORT_PPROF, "gtrace.pb.gz", "go tool pprof, Parca, Pyroscope or Grafana" },
	{ "sqlite", EXPORT_SQLITE, "gtrace.sqlite", "sqlite3 or any SQL tool" },
};

static void usage(void)
{
	printf("usage: gtrace export [options]\n\n"
	       "Writes the recording as a timeline: a track per process and thread with\n"
	       "its CPU samples (symbolized stacks) and off-CPU intervals, a track per\n"
	       "lane with its spans as slices and their attributes (GPU streams grouped\n"
	       "by GPU), a flow from the thread that queued a span to the span for each\n"
	       "origin that linked, each metric series as a counter track (of its\n"
	       "process, the machine or its GPU), the counters and the recording's\n"
	       "metadata. Times are from the recording's start. Or, with --format pprof,\n"
	       "as a profile: the samples' stacks by CPU time, the GPU time each stack\n"
	       "launched and each thread's off-CPU time. Or, with --format sqlite, as an\n"
	       "SQLite database of typed tables (gtrace-export(1) lists them).\n\n"
	       INPUT_USAGE
	       "  -o, --output FILE        where to write ('-': stdout; default gtrace.pftrace,\n"
	       "                           gtrace.json for chrome, gtrace.pb.gz for pprof,\n"
	       "                           gtrace.sqlite for sqlite, which needs a file)\n"
	       "      --format FORMAT      perfetto (default): Perfetto's protobuf trace, for\n"
	       "                           ui.perfetto.dev; chrome: the Chrome Trace Event\n"
	       "                           Format (JSON), for chrome://tracing and Perfetto;\n"
	       "                           pprof: pprof's profile (gzipped protobuf), for go\n"
	       "                           tool pprof, Parca, Pyroscope and Grafana; sqlite:\n"
	       "                           an SQLite database, for sqlite3 and SQL tools\n"
	       "      --start TIME         leave out what ended before TIME after the start:\n"
	       "                           2.5s, 300ms, 20us or ns\n"
	       "      --end TIME           leave out what began at or after TIME\n"
	       TIME_USAGE
	       "  -p, --pid PID[,PID..]    only these processes\n"
	       "  -t, --tid TID[,TID..]    only these threads, or lanes (0xfff00000..), and\n"
	       "                           the lane work these threads queued\n"
	       "  -c, --comm NAME[,NAME..] only threads with these names\n"
	       "  -d, --dso NAME[,NAME..]  only samples whose leaf is in these dsos (basenames)\n"
	       RANK_USAGE
	       FRAME_USAGE
	       NAMES_USAGE
	       LINK_WINDOW_USAGE
	       "  -h, --help               show this help\n");
}

static int parse_format(const char *s, size_t *format)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (!strcmp(s, formats[i].name)) {
			*format = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int write_export(struct funcs *f, const struct export_opts *o, const char *file,
			const char *viewers)
{
	struct offline_output out;
	int status;

	if (!offline_output_open(&out, file))
		return EXIT_FAIL;
	status = offline_output_close(&out, export_write(out.out, f, o) != 0);
	if (!status && strcmp(file, "-"))
		pr_info("wrote '%s'; open it in %s", file, viewers);
	return status;
}

/*
 * The database: SQLite writes a file by its path, the temporary beside
 * file (util/outfile.h), which takes file's name once whole and synced.
 */
static int write_sqlite(struct funcs *f, const struct export_opts *o, const char *file,
			const char *viewers)
{
	struct outfile out;
	char temp[PATH_MAX];
	int err = outfile_create(&out, file, 0666, false);

	if (err) {
		pr_err("cannot create '%s': %s", file, outfile_strerror(err));
		outfile_close(&out);
		return EXIT_FAIL;
	}
	if (snprintf(temp, sizeof(temp), "%s/%s", out.dir, out.temp) >= (int)sizeof(temp))
		err = -ENAMETOOLONG;
	if (!err)
		err = export_sqlite(temp, f, o);
	if (!err && fsync(out.fd))
		err = -errno;
	if (!err)
		err = outfile_place(&out);
	if (err) {
		pr_err("cannot write '%s': %s", file, outfile_strerror(err));
		outfile_discard(&out);
	}
	outfile_close(&out);
	if (err)
		return EXIT_FAIL;
	pr_info("wrote '%s'; open it in %s", file, viewers);
	return 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		INPUT_LONG_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		WINDOW_LONG_OPTIONS,
		FRAME_LONG_OPTIONS,
		NAMES_LONG_OPTIONS,
		LINK_WINDOW_LONG_OPTION,
		{ "help", no_argument, NULL, 'h' },
		FILTER_LONG_OPTIONS,
		{ 0 }
	};
	struct offline_args a;
	const char *output = NULL;
	struct export_opts o;
	size_t format = 0;
	struct origin_links links;
	struct analyze an = {0};
	struct model m;
	struct funcs f;
	int c, status;

	offline_args_init(&a, "export", usage, argc, argv);
	while ((c = offline_next_option(&a, OFFLINE_SHORT_OPTIONS "o:" FILTER_SHORT_OPTIONS,
					longopts)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_FORMAT:
			if (parse_format(optarg, &format)) {
				pr_err("unknown format '%s'; use perfetto, chrome, pprof or sqlite",
				       optarg);
				a.status = EXIT_USAGE;
			}
			break;
		}
	}
	if (!a.status && formats[format].format == EXPORT_SQLITE) {
		if (!export_sqlite_available()) {
			pr_err("sqlite export not built in: install libsqlite3-dev and reconfigure");
			a.status = EXIT_FAIL;
		} else if (output && !strcmp(output, "-")) {
			pr_err("cannot write an sqlite database to stdout: give -o FILE");
			a.status = EXIT_USAGE;
		}
	}
	if (!offline_load_input(&a, &m))
		return a.status;
	if (!offline_window_has_events(&a, &m))
		return EXIT_FAIL;

	/* pprof's locations and the database's frames hold their inlined functions. */
	if (formats[format].format == EXPORT_PPROF || formats[format].format == EXPORT_SQLITE)
		a.funcs_flags |= FUNCS_INLINE;
	funcs_init(&f, &m, a.funcs_flags);
	offline_link_origins(&links, &m, a.window);
	o = (struct export_opts){ .start_ns = a.start_ns, .end_ns = a.end_ns };
	o.format = formats[format].format;
	o.filter = &a.filter;
	o.links = &links;
	if (o.format == EXPORT_PERFETTO || o.format == EXPORT_CHROME) {
		analyze_build(&an, &m, &(struct analyze_opts){ .filter = &a.filter, .links = &links,
							       .short_ns = ANALYZE_DEFAULT_SHORT_NS,
							       .funcs = &f });
		o.findings = &an;
	}
	if (o.format == EXPORT_SQLITE)
		status = write_sqlite(&f, &o, output ? output : formats[format].default_output,
				      formats[format].viewers);
	else
		status = write_export(&f, &o, output ? output : formats[format].default_output,
				      formats[format].viewers);
	analyze_free(&an);
	origins_free(&links);
	funcs_free(&f);
	model_free(&m);
	offline_args_free(&a);
	return status;
}
