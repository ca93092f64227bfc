/* SPDX-License-Identifier: MIT */
#include "cmd/offline.h"
#include "cmd/offline-window.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/views/gpu-explain.h"
#include "analysis/views/ranks.h"
#include "cmd/cmds.h"
#include "util/duration.h"
#include "util/text.h"
#include "util/log.h"
#include "util/xalloc.h"

/* A recording to read, and whether a directory -i named holds it. */
struct input {
	char *path;
	bool listed;	/* in a directory: left out, with a warning, when it cannot be read */
	bool by_default;	/* DEFAULT_INPUT, no -i given */
};
typedef VEC(struct input) input_vec;

/* What load returns for a listed file it left out. */
#define SKIPPED (-1)

/*
 * A recording whose recorder died before naming all its addresses (it
 * names each chunk's in the next): the rest named from the local files
 * whose build-ids match, and said so.
 */
static void name_locally(struct model *m, const char *path, const char *symfs)
{
	struct localnames_stats st;

	localnames_fill(m, symfs, &st);
	if (st.missing)
		pr_warn("'%s' lacks names (its recorder did not finish): %zu of %zu addresses "
			"named from the local files%s", text_escape(path), st.named, st.missing,
			st.stale_dsos ? ", some files skipped: not the recorded build" : "");
}

/*
 * Loads in into m. On failure prints why and returns EXIT_FAIL, or for a
 * file of a directory (listed), warns that it is left out and returns
 * SKIPPED; a truncated or damaged file only gets a warning and returns 0.
 */
static int load(struct model *m, const struct input *in, const struct offline_args *a,
		bool fold)
{
	const char *path = in->path;
	int err = fold ? model_load_folded(m, path, a->read_limit)
		       : model_load_within(m, path, a->read_limit);
	const char *problem = err == -ENODATA ? "the file is empty" : tr_strerror(err);
	char why[160];

	if (err == -ENOENT && in->by_default) {
		pr_err("no " DEFAULT_INPUT " here: make one with 'gtrace record -- COMMAND', or name "
		       "a recording or a directory of them with -i");
		return EXIT_FAIL;
	}
	if (err && in->listed) {
		pr_warn("cannot read '%s': %s; leaving it out", text_escape(path), problem);
		return SKIPPED;
	}
	if (err) {
		pr_err("cannot read '%s': %s", text_escape(path), problem);
		return EXIT_FAIL;
	}
	if (m->damage == -TR_ERR_TRUNCATED)
		pr_warn("'%s' is truncated after chunk %llu (offset %llu); showing what was read",
			text_escape(path), (unsigned long long)m->chunks,
			(unsigned long long)m->damage_offset);
	else if (m->damage == -TR_ERR_BUDGET)
		pr_warn("'%s' is cut short after chunk %llu (offset %llu): %s; showing what was "
			"read (" READ_LIMIT_ENV " sets the limit)", path,
			(unsigned long long)m->chunks, (unsigned long long)m->damage_offset,
			model_damage_text(m, why, sizeof(why)));
	else if (m->damage)
		pr_warn("'%s' is damaged after chunk %llu (offset %llu): %s; showing what was read",
			text_escape(path), (unsigned long long)m->chunks,
			(unsigned long long)m->damage_offset, tr_strerror(m->damage));
	if (localnames_needed(m))
		name_locally(m, path, a->symfs);
	rustnames_demangle(m, a->rust_hashes);
	return 0;
}

/* READ_LIMIT_ENV, when set: a size, 512M or 8G (binary units), or bytes; else 0. */
static int read_limit_env(uint64_t *limit)
{
	static const char units[] = "KMGT";
	const char *s = getenv(READ_LIMIT_ENV), *unit;
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	*limit = 0;
	if (!s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end && (unit = strchr(units, *end))) {
		shift = 10 * (unsigned)(unit - units + 1);
		end++;
	}
	/* strtoull would take blanks and a sign: " -1" as the largest size. */
	if (*s < '0' || *s > '9' || errno || *end || !v || v > UINT64_MAX >> shift) {
		pr_err("invalid " READ_LIMIT_ENV " '%s': expected a size such as 512M or 8G", s);
		return EXIT_USAGE;
	}
	*limit = (uint64_t)v << shift;
	return 0;
}

/* For getopt_long's '?' and ':' (with opterr = 0 and a ':' leading the option string). */
static int bad_option(const char *cmd, char **argv, int c)
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

static int extra_arg(const char *cmd, const char *arg)
{
	pr_err("unexpected argument '%s'; see 'gtrace %s --help'", arg, cmd);
	return EXIT_USAGE;
}

int offline_parse_count(const char *s, size_t *n)
{
	char *end;
	unsigned long long v;

	/* strtoull would take leading blanks and a sign: " -1" as the largest count. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*n = (size_t)v;
	return 0;
}

int offline_parse_percent(const char *s, double *p)
{
	char *end;

	errno = 0;
	*p = strtod(s, &end);
	return errno || end == s || *end || *p < 0 || *p > 100 ? -EINVAL : 0;
}

static int link_window_option(const char *arg, uint64_t *window_ns)
{
	if (!duration_parse(arg, 1, window_ns))
		return 0;
	pr_err("invalid --link-window '%s'; use e.g. 5ms, 200us, 1s or a number of ns", arg);
	return EXIT_USAGE;
}

static int python_option(const char *arg, enum model_python_view *view)
{
	static const struct {
		const char *name;
		enum model_python_view view;
	} views[] = {
		{ "on", MODEL_PYTHON_ON }, { "off", MODEL_PYTHON_OFF }, { "both", MODEL_PYTHON_BOTH },
	};

	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		if (!strcmp(arg, views[i].name)) {
			*view = views[i].view;
			return 0;
		}
	}
	pr_err("invalid --python '%s'; use on, off or both", arg);
	return EXIT_USAGE;
}

void offline_link_origins(struct origin_links *l, const struct model *m, uint64_t window_ns)
{
	if (window_ns == LINK_WINDOW_DEFAULT)
		window_ns = origins_default_window(m);
	origins_link(l, m, window_ns);
}

bool offline_has_pc_samples(const struct model *m, const char *path)
{
	char why[512];

	if (m->t.pc_samples.len)
		return true;
	pr_err("no GPU PC samples in '%s': %s", text_escape(path),
	       text_escape(pc_explain(m, why, sizeof(why))));
	return false;
}

bool offline_only_lanes(const struct sample_filter *flt)
{
	for (size_t i = 0; i < flt->tids.len; i++)
		if (flt->tids.v[i] < TR_SYNTHETIC_TID_BASE)
			return false;
	return flt->tids.len > 0;
}

/*
 * Handles one of the filter options: returns 1 when c was one (0 done,
 * EXIT_USAGE printed into *status on a bad list), 0 when it was not.
 */
static int filter_option(struct sample_filter *flt, int c, const char *arg, int *status)
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
		{ OPT_RANK, FILTER_RANK, "--rank" },
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

void offline_args_init(struct offline_args *a, const char *cmd, void (*usage)(void),
		       int argc, char **argv)
{
	*a = (struct offline_args){
		.cmd = cmd,
		.usage = usage,
		.argc = argc,
		.argv = argv,
		.input = DEFAULT_INPUT,
		.window = LINK_WINDOW_DEFAULT,
		.python = MODEL_PYTHON_ON,
		.funcs_flags = FUNCS_PYTHON_LINES,
		.end_ns = UINT64_MAX,
	};
	opterr = 0;
}

int offline_next_option(struct offline_args *a, const char *shortopts,
			const struct option *longopts)
{
	while (!a->status) {
		int c = getopt_long(a->argc, a->argv, shortopts, longopts, NULL);

		switch (c) {
		case -1:
			while (optind < a->argc && a->operands.n < a->operands.max)
				a->operands.v[a->operands.n++] = a->argv[optind++];
			if (optind < a->argc)
				a->status = extra_arg(a->cmd, a->argv[optind]);
			else if (!(a->status = offline_check_window(a)))
				a->status = read_limit_env(&a->read_limit);
			return -1;
		case 'i':
			*VEC_PUSH(&a->inputs) = optarg;
			a->input = optarg;
			break;
		case 'h':
			a->usage();
			a->status = OFFLINE_HELP;
			break;
		case OPT_LINK_WINDOW:
			a->status = link_window_option(optarg, &a->window);
			break;
		case OPT_PYTHON:
			a->status = python_option(optarg, &a->python);
			break;
		case OPT_NO_PYTHON_LINES:
			a->funcs_flags &= ~(unsigned)FUNCS_PYTHON_LINES;
			break;
		case OPT_NO_KERNEL:
			a->no_kernel = true;
			break;
		case OPT_SYMFS:
			a->symfs = optarg;
			break;
		case OPT_VERBOSE:
			a->rust_hashes = true;
			break;
		case OPT_START:
			a->start_arg = optarg;
			a->status = a->time_arg ? offline_time_window_option(a, NULL)
						: offline_time_option("--start", optarg, &a->start_ns);
			break;
		case OPT_END:
			a->end_arg = optarg;
			a->status = a->time_arg ? offline_time_window_option(a, NULL)
						: offline_time_option("--end", optarg, &a->end_ns);
			break;
		case OPT_TIME:
			a->status = offline_time_window_option(a, optarg);
			break;
		case OPT_ALIGN:
			a->align_collectives = !strcmp(optarg, "collectives");
			if (!a->align_collectives && strcmp(optarg, "clocks")) {
				pr_err("invalid --align '%s'; use clocks or collectives", optarg);
				a->status = EXIT_USAGE;
			}
			break;
		case OPT_JSON_FORMAT:
			a->json = !strcmp(optarg, "json");
			if (!a->json && strcmp(optarg, "text")) {
				pr_err("invalid --format '%s'; use text or json", optarg);
				a->status = EXIT_USAGE;
			}
			break;
		case '?':
		case ':':
			a->status = bad_option(a->cmd, a->argv, c);
			break;
		default:
			if (!filter_option(&a->filter, c, optarg, &a->status))
				return c;
		}
	}
	return -1;
}

/*
 * Compares names with their runs of digits as numbers, so that rank9
 * comes before rank10; names equal so (rank01, rank1) by their bytes.
 */
static int natural_cmp(const void *pa, const void *pb)
{
	const char *a = ((const struct input *)pa)->path, *b = ((const struct input *)pb)->path;
	const char *x = a, *y = b;

	while (*x || *y) {
		if (isdigit((unsigned char)*x) && isdigit((unsigned char)*y)) {
			size_t nx, ny;
			int c;

			x += strspn(x, "0");
			y += strspn(y, "0");
			nx = strspn(x, "0123456789");
			ny = strspn(y, "0123456789");
			if (nx != ny)
				return nx < ny ? -1 : 1;
			if ((c = strncmp(x, y, nx)))
				return c;
			x += nx;
			y += ny;
		} else if (*x != *y) {
			return (unsigned char)*x < (unsigned char)*y ? -1 : 1;
		} else {
			x++;
			y++;
		}
	}
	return strcmp(a, b);
}

/* A name that -o's renaming gave the recording of an earlier run. */
static bool is_earlier_run(const char *name)
{
	size_t len = strlen(name);

	return len > 4 && !strcmp(name + len - 4, ".old");
}

/*
 * Adds the recordings in directory dir to inputs, by name: the regular
 * files that start with the gtrace magic, anything else left out, and one
 * that cannot be read with a warning. A directory is one job's: the
 * recordings of earlier runs (FILE.old) are left out, said once. On
 * failure prints why and returns EXIT_FAIL.
 */
static int add_dir(input_vec *inputs, const char *dir)
{
	DIR *d = opendir(dir);
	size_t first = inputs->len, dir_len = strlen(dir), earlier = 0;
	const char *sep = dir_len && dir[dir_len - 1] == '/' ? "" : "/";
	struct dirent *e;

	if (!d) {
		pr_err("cannot read '%s': %s", dir, strerror(errno));
		return EXIT_FAIL;
	}
	while ((e = readdir(d))) {
		size_t len = dir_len + strlen(e->d_name) + 2;
		char *path = xmalloc(len);
		struct stat st;
		int is_trace = 0;

		snprintf(path, len, "%s%s%s", dir, sep, e->d_name);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			is_trace = tr_file_is_trace(path);
		if (is_trace < 0)
			pr_warn("cannot read '%s': %s; leaving it out", text_escape(path),
				strerror(-is_trace));
		if (is_trace > 0 && is_earlier_run(e->d_name)) {
			earlier++;
			is_trace = 0;
		}
		if (is_trace > 0)
			*VEC_PUSH(inputs) = (struct input){ path, true, false };
		else
			free(path);
	}
	closedir(d);
	if (earlier)
		pr_warn("leaving out %zu recording%s of earlier runs in '%s' (*.old)", earlier,
			earlier == 1 ? "" : "s", text_escape(dir));
	if (inputs->len == first) {
		pr_err("no gtrace recordings in '%s'", dir);
		return EXIT_FAIL;
	}
	qsort(inputs->v + first, inputs->len - first, sizeof(*inputs->v), natural_cmp);
	return 0;
}

/* The recordings paths name, in order: a directory's in its place; none: DEFAULT_INPUT. */
static int input_paths(const char *const *paths, size_t n, input_vec *inputs)
{
	struct stat st;

	if (!n) {
		*VEC_PUSH(inputs) = (struct input){ xstrdup(DEFAULT_INPUT), false, true };
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int status;

		if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if ((status = add_dir(inputs, paths[i])))
				return status;
		} else {
			*VEC_PUSH(inputs) = (struct input){ xstrdup(paths[i]), false, false };
		}
	}
	return 0;
}

/* What messages call several -i: their values joined by ", ". */
static void join_inputs(struct offline_args *a)
{
	size_t len = 1;

	if (a->inputs.len < 2)
		return;
	for (size_t i = 0; i < a->inputs.len; i++)
		len += strlen(a->inputs.v[i]) + 2;
	a->inputs_label = xmalloc(len);
	a->inputs_label[0] = '\0';
	for (size_t i = 0; i < a->inputs.len; i++) {
		if (i)
			strcat(a->inputs_label, ", ");
		strcat(a->inputs_label, a->inputs.v[i]);
	}
	a->input = a->inputs_label;
}

/* A --rank that names no rank of m fails: it would select nothing, silently. */
static int check_ranks(const struct sample_filter *flt, const struct model *m)
{
	for (size_t i = 0; i < flt->ranks.len; i++) {
		size_t r = 0;

		while (r < m->ranks.len && m->ranks.v[r].rank != flt->ranks.v[i])
			r++;
		if (r == m->ranks.len) {
			pr_err("no rank %" PRIu32 " in the recordings", flt->ranks.v[i]);
			return EXIT_FAIL;
		}
	}
	return 0;
}

/* Whether a thread of m has pid (field FILTER_PID) or tid id. */
static bool thread_with_id(const struct model *m, enum filter_field field, uint32_t id)
{
	for (size_t t = 0; t < m->threads.len; t++)
		if ((field == FILTER_PID ? m->threads.v[t].pid : m->threads.v[t].tid) == id)
			return true;
	return false;
}

/* Whether a thread of f's model was ever called comm, by the names the filters give it. */
static bool thread_called(struct funcs *f, const char *comm)
{
	const struct model *m = f->m;

	for (size_t t = 0; t < m->threads.len; t++) {
		const struct model_thread *th = &m->threads.v[t];

		if (!strcmp(funcs_name(f, funcs_thread_name(f, th)), comm))
			return true;
		for (uint32_t i = th->first_name; !th->lane && i < th->first_name + th->names; i++)
			if (!strcmp(funcs_name(f, funcs_thread_named(f, th, m->names.v[i].name)),
				    comm))
				return true;
	}
	return false;
}

/* The names of m's threads and lanes, for a --comm that names none: the first few. */
static void thread_names(const struct model *m, char *out, size_t size)
{
	size_t len = 0, shown = 0;

	out[0] = '\0';
	for (size_t t = 0; t < m->threads.len && len < size; t++) {
		const struct model_thread *th = &m->threads.v[t];
		const char *name = model_str(m, th->name);
		char quoted[64];

		snprintf(quoted, sizeof(quoted), "'%s'", name ? name : "");
		if (!name || !*name || strstr(out, quoted))
			continue;
		len += (size_t)snprintf(out + len, size - len, "%s%s", shown ? ", " : "",
					shown < 8 ? quoted : "...");
		if (++shown > 8)
			break;
	}
}

/*
 * A --pid, --tid or --comm that names no thread of m fails, as --rank
 * does: the view would be empty, and say nothing of why.
 */
static int check_threads(const struct sample_filter *flt, const struct model *m)
{
	struct funcs f;
	char names[512];
	int status = 0;

	for (size_t i = 0; i < flt->pids.len; i++) {
		if (!thread_with_id(m, FILTER_PID, flt->pids.v[i])) {
			pr_err("no process %" PRIu32 " in the recording", flt->pids.v[i]);
			return EXIT_FAIL;
		}
	}
	for (size_t i = 0; i < flt->tids.len; i++) {
		if (!thread_with_id(m, FILTER_TID, flt->tids.v[i])) {
			if (flt->tids.v[i] >= TR_SYNTHETIC_TID_BASE)
				pr_err("no lane 0x%" PRIx32 " in the recording", flt->tids.v[i]);
			else
				pr_err("no thread %" PRIu32 " in the recording", flt->tids.v[i]);
			return EXIT_FAIL;
		}
	}
	if (!flt->comms.len)
		return 0;
	funcs_init(&f, m, 0);
	for (size_t i = 0; i < flt->comms.len && !status; i++) {
		if (!thread_called(&f, flt->comms.v[i])) {
			thread_names(m, names, sizeof(names));
			pr_err("no thread or lane named '%s' in the recording; its names: %s",
			       text_escape(flt->comms.v[i]), text_escape(names));
			status = EXIT_FAIL;
		}
	}
	funcs_free(&f);
	return status;
}

/* --align collectives, saying so when there was nothing to align by. */
static void align_by_collectives(struct model *m)
{
	struct funcs f;

	if (m->ranks.len < 2)
		return;
	funcs_init(&f, m, 0);
	if (!align_collectives(m, &f))
		pr_warn("no collective kernel ran on the first rank and another: the ranks stay "
			"aligned by their clock pairs");
	funcs_free(&f);
}

/*
 * The recording merged last into m, against those before it: a job records
 * each rank once, so two that claim one rank are of different runs.
 */
static int check_rank_unique(const struct model *m)
{
	const struct model_rank *last = &m->ranks.v[m->ranks.len - 1];

	for (size_t r = 0; last->has_rank && r + 1 < m->ranks.len; r++) {
		if (m->ranks.v[r].has_rank && m->ranks.v[r].rank == last->rank) {
			pr_err("'%s' and '%s' both claim rank %" PRId64 ": they are of different runs; "
			       "read one run's recordings", text_escape(m->ranks.v[r].path),
			       text_escape(last->path), last->rank);
			return EXIT_FAIL;
		}
	}
	return 0;
}

/*
 * Loads the recordings paths name (label, in messages) into m, each after
 * the first merged into it: one at a time, so that memory holds the model
 * and one recording.
 */
static int load_inputs(struct offline_args *a, const char *const *paths, size_t n,
		       const char *label, struct model *m)
{
	input_vec inputs = {0};
	int status = input_paths(paths, n, &inputs);
	size_t loaded = 0;

	for (size_t i = 0; !status && i < inputs.len; i++) {
		struct model other;
		/* Folded recordings do not merge: ranks keep their rows. */
		int got = load(loaded ? &other : m, &inputs.v[i], a,
			       a->fold_samples && inputs.len == 1 && !offline_windowed(a));

		if (got == SKIPPED)
			continue;
		status = got;
		if (!status && loaded++) {
			model_merge(m, &other);
			status = check_rank_unique(m);
		}
		if (status && loaded)
			model_free(m);
	}
	if (!status && !loaded) {
		pr_err("no gtrace recording in '%s' could be read", label);
		status = EXIT_FAIL;
	}
	if (!status && loaded > 1)
		model_merge_end(m);
	if (!status && a->align_collectives)
		align_by_collectives(m);
	if (!status && (status = check_ranks(&a->filter, m)))
		model_free(m);
	if (!status && (status = offline_apply_window(a, m)))
		model_free(m);
	for (size_t i = 0; i < inputs.len; i++)
		free(inputs.v[i].path);
	VEC_FREE(&inputs);
	return status;
}

/* After a load that set a->status: m in the --python view, or a freed and false. */
static bool loaded(struct offline_args *a, struct model *m)
{
	if (!a->status) {
		model_view_stacks(m, a->python, a->no_kernel);
		return true;
	}
	if (a->status == OFFLINE_HELP)
		a->status = 0;
	offline_args_free(a);
	return false;
}

bool offline_load_input(struct offline_args *a, struct model *m)
{
	join_inputs(a);
	if (!a->status)
		a->status = load_inputs(a, a->inputs.v, a->inputs.len, a->input, m);
	/* Not for diff's pair: a thread may be in one side only. */
	if (!a->status && (a->status = check_threads(&a->filter, m)))
		model_free(m);
	return loaded(a, m);
}

bool offline_load_pair(struct offline_args *a, struct model m[2])
{
	for (int s = 0; s < 2; s++) {
		if (!a->status)
			a->status = load_inputs(a, &a->operands.v[s], 1, a->operands.v[s], &m[s]);
		if (!loaded(a, &m[s])) {
			if (s)
				model_free(&m[0]);
			return false;
		}
	}
	return true;
}

void offline_args_free(struct offline_args *a)
{
	filter_free(&a->filter);
	VEC_FREE(&a->inputs);
	free(a->inputs_label);
	a->inputs_label = NULL;
}

FILE *offline_output_open(struct offline_output *o, const char *path)
{
	int err;

	o->path = path;
	o->out = stdout;
	if (!strcmp(path, "-"))
		return o->out;
	err = outfile_create(&o->file, path, 0666, false);
	o->out = err ? NULL : fdopen(o->file.fd, "w");
	if (!err && !o->out)
		err = -errno;
	if (err) {
		pr_err("cannot create '%s': %s", path, outfile_strerror(err));
		outfile_close(&o->file);
	}
	return o->out;
}

int offline_output_close(struct offline_output *o, bool failed)
{
	int err = 0;

	if (o->out == stdout)
		return failed ? EXIT_FAIL : 0;
	/* On disk before it takes the name: a crash leaves the old file or the new. */
	if (fflush(o->out) || ferror(o->out) || failed || fsync(o->file.fd))
		err = errno ? -errno : -EIO;
	if (!err)
		err = outfile_place(&o->file);
	/* The stream owns the descriptor: a close that fails undoes the file. */
	o->file.fd = -1;
	if (fclose(o->out) && !err)
		err = errno ? -errno : -EIO;
	if (err) {
		pr_err("cannot write '%s': %s", o->path, outfile_strerror(err));
		outfile_discard(&o->file);
	}
	outfile_close(&o->file);
	return err ? EXIT_FAIL : 0;
}
