/* SPDX-License-Identifier: MIT */
#include "cmd/offline.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "cmd/cmds.h"
#include "util/log.h"

int offline_load(struct model *m, const char *path)
{
	int err = model_load(m, path);

	if (err == -ENODATA) {
		pr_err("cannot read '%s': the file is empty", path);
		return EXIT_FAIL;
	}
	if (err) {
		pr_err("cannot read '%s': %s", path, tr_strerror(err));
		return EXIT_FAIL;
	}
	if (m->damage == -TR_ERR_TRUNCATED)
		pr_warn("'%s' is truncated after chunk %llu (offset %llu); showing what was read",
			path, (unsigned long long)m->chunks,
			(unsigned long long)m->damage_offset);
	else if (m->damage)
		pr_warn("'%s' is damaged after chunk %llu (offset %llu): %s; showing what was read",
			path, (unsigned long long)m->chunks,
			(unsigned long long)m->damage_offset, tr_strerror(m->damage));
	return 0;
}

int offline_bad_option(const char *cmd, char **argv, int c)
{
	const char *opt = argv[optind - 1];

	if (c == ':')
		pr_err("option '%s' needs a value; see 'gtrace %s --help'", opt, cmd);
	else if (optopt)
		pr_err("unknown option '-%c'; see 'gtrace %s --help'", optopt, cmd);
	else
		pr_err("unknown option '%s'; see 'gtrace %s --help'", opt, cmd);
	return EXIT_USAGE;
}

int offline_extra_arg(const char *cmd, const char *arg)
{
	pr_err("unexpected argument '%s'; see 'gtrace %s --help'", arg, cmd);
	return EXIT_USAGE;
}

int offline_parse_count(const char *s, size_t *n)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return -EINVAL;
	*n = (size_t)v;
	return 0;
}

int offline_filter_option(struct sample_filter *flt, int c, const char *arg, int *status)
{
	static const struct {
		int c;
		enum filter_field field;
		const char *name;
	} opts[] = {
		{ 'p', FILTER_PID, "--pid" },
		{ 't', FILTER_TID, "--tid" },
		{ 'c', FILTER_COMM, "--comm" },
		{ 'd', FILTER_DSO, "--dso" },
	};

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (opts[i].c != c)
			continue;
		*status = 0;
		if (filter_add(flt, opts[i].field, arg)) {
			pr_err("invalid %s list '%s'", opts[i].name, arg);
			*status = EXIT_USAGE;
		}
		return 1;
	}
	return 0;
}
