/* SPDX-License-Identifier: MIT */
/* annotate: one function's samples by its source lines. */
#include "analysis/views/annotate.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/views/annotate-private.h"
#include "util/json.h"
#include "util/text.h"
#include "util/xalloc.h"

/*
 * What reading a source file may take: a file larger is not shown (a
 * recording names the files, and gtrace may run as root), and a line
 * longer is cut.
 */
#define SOURCE_MAX_BYTES (16u << 20)
#define SOURCE_LINE_MAX 512
/* The text shows the lines between those with samples too, when they span at most this many. */
#define SOURCE_SPAN_MAX 1000

/* By sample index: 1 for the samples of the threads the filter selects, else 0. */
static uint32_t *selected_samples(struct funcs *f, const struct sample_filter *flt)
{
	const struct model *m = f->m;
	uint32_t *name_on = xcalloc(m->names.len + 1, sizeof(*name_on)), *groups;

	for (size_t ti = 0; ti < m->real_threads; ti++) {
		const struct model_thread *th = &m->threads.v[ti];

		for (uint32_t n = th->first_name; n < th->first_name + th->names; n++)
			name_on[n] = filter_thread_named(flt, f, th, m->names.v[n].name);
	}
	groups = groups_by_name(m, name_on);
	free(name_on);
	return groups;
}

/* The innermost func of a stack node. */
static uint32_t leaf_func(const struct funcs *f, uint32_t node)
{
	uint32_t n;

	return funcs_of_node(f, node, &n)[0];
}

/*
 * The func id named o->symbol (or the hottest by name, ties by name) with
 * the most self samples of its name, or -ENOENT; *samples: those of its
 * name, in every dso.
 */
static int pick_func(struct funcs *f, const struct stack_counts *sc, const char *symbol,
		     uint32_t *func, uint64_t *samples)
{
	uint64_t *self = xcalloc(f->v.len, sizeof(*self));
	struct u64map by_name = {0};	/* names id -> self samples of that name */
	uint64_t best = 0, sum = 0;
	const char *best_name = NULL;
	int err = -ENOENT;

	for (size_t i = 0; i < sc->c.len; i++)
		if (sc->c.v[i].node)
			self[leaf_func(f, sc->c.v[i].node)] += sc->c.v[i].count;
	for (size_t fi = 0; fi < f->v.len; fi++) {
		uint32_t name = f->v.v[fi].name;

		if (!self[fi])
			continue;
		sum = u64map_get(&by_name, name, &sum) ? sum + self[fi] : self[fi];
		u64map_put(&by_name, name, sum);
	}
	for (size_t fi = 0; fi < f->v.len; fi++) {
		const char *name = funcs_name(f, f->v.v[fi].name);

		if (!self[fi] || (symbol && strcmp(name, symbol)))
			continue;
		u64map_get(&by_name, f->v.v[fi].name, &sum);
		/* The name's total picks it; its dso is the one with most samples. */
		if (err || sum > best || (sum == best && strcmp(name, best_name) < 0) ||
		    (sum == best && !strcmp(name, best_name) && self[fi] > self[*func])) {
			best = sum;
			best_name = name;
			*func = (uint32_t)fi;
			err = 0;
		}
	}
	*samples = best;
	u64map_free(&by_name);
	free(self);
	return err;
}

/* The function's own row of loc: the last, that the others are inlined into. */
static const struct tr_symbol *own_symbol(const struct model *m, uint32_t loc)
{
	uint32_t n;
	const struct tr_symbol *syms = model_loc_symbols(m, loc, &n);

	return n ? &syms[n - 1] : NULL;
}

static int cmp_lines(const void *pa, const void *pb, void *ctx)
{
	const struct annotate_line *a = pa, *b = pb;
	const struct model *m = ctx;
	int c;

	/* Lines of an unknown file go last. */
	if (!a->file != !b->file)
		return a->file ? -1 : 1;
	if (a->file != b->file && (c = strcmp(model_str(m, a->file) ? model_str(m, a->file) : "",
					       model_str(m, b->file) ? model_str(m, b->file) : "")))
		return c;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

static int cmp_addrs(const void *pa, const void *pb)
{
	const struct annotate_addr *a = pa, *b = pb;

	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int annotate_build(struct annotate *a, struct funcs *f, const struct annotate_opts *o)
{
	const struct model *m = f->m;
	uint32_t *groups = selected_samples(f, o->filter);
	struct u64map at = {0};		/* file << 32 | line -> index in a->lines */
	struct stack_counts sc;
	uint32_t name;
	int err;

	memset(a, 0, sizeof(*a));
	count_stacks(&sc, f, o->filter, groups);
	free(groups);
	a->total = sc.total;
	err = pick_func(f, &sc, o->symbol, &a->func, &a->samples);
	name = f->v.v[a->func].name;
	for (size_t i = 0; !err && i < sc.c.len; i++) {
		uint32_t node = sc.c.v[i].node, loc;
		const struct tr_symbol *sym;
		uint64_t key, k;

		if (!node || f->v.v[leaf_func(f, node)].name != name)
			continue;
		loc = m->t.nodes.v[node - 1].loc;
		sym = loc && loc <= m->t.locs.len ? own_symbol(m, loc) : NULL;
		key = sym && sym->line ? (uint64_t)sym->file << 32 | sym->line : 0;
		if (!u64map_get(&at, key, &k)) {
			k = a->lines.len;
			u64map_put(&at, key, k);
			*VEC_PUSH(&a->lines) = (struct annotate_line){
				.file = (uint32_t)(key >> 32), .line = (uint32_t)key,
			};
		}
		a->lines.v[k].samples += sc.c.v[i].count;
		if (loc && loc <= m->t.locs.len && !model_loc_is_python(m, loc))
			*VEC_PUSH(&a->addrs) = (struct annotate_addr){
				m->t.locs.v[loc - 1].dso, m->t.locs.v[loc - 1].addr, sc.c.v[i].count,
			};
	}
	if (a->lines.len)
		qsort_r(a->lines.v, a->lines.len, sizeof(*a->lines.v), cmp_lines, (void *)m);
	if (a->addrs.len)
		VEC_SORT(&a->addrs, cmp_addrs);
	u64map_free(&at);
	stack_counts_free(&sc);
	return err;
}

void annotate_free(struct annotate *a)
{
	VEC_FREE(&a->lines);
	VEC_FREE(&a->addrs);
}

/* The first lines of a source file, up to a bound; n 0 when it is not readable. */
struct source {
	char *path;		/* where it was read */
	char **text;		/* by line - 1 */
	uint32_t n;
};

/* Reads lines 1 .. upto of path: a regular file, not too large; false when it is not. */
static bool source_read(struct source *s, const char *path, uint32_t upto)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	char buf[SOURCE_LINE_MAX + 1];
	struct stat st;
	FILE *in;

	if (fd < 0)
		return false;
	/* A FIFO or a device named by a recording would block or never end. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > SOURCE_MAX_BYTES ||
	    !(in = fdopen(fd, "r"))) {
		close(fd);
		return false;
	}
	s->text = xcalloc(upto, sizeof(*s->text));
	while (s->n < upto && fgets(buf, sizeof(buf), in)) {
		size_t len = strcspn(buf, "\n");

		/* The rest of a line cut at the bound is skipped. */
		if (!buf[len])
			for (int c; (c = getc(in)) != EOF && c != '\n';)
				;
		buf[len] = '\0';
		s->text[s->n++] = xstrdup(buf);
	}
	fclose(in);
	s->path = xstrdup(path);
	return true;
}

static void source_free(struct source *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		free(s->text[i]);
	free(s->text);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

/* The source of recorded path file, lines 1 .. upto, where annotate_print says it looks. */
static void source_open(struct source *s, const char *file, const char *dir, uint32_t upto)
{
	char path[4096];

	memset(s, 0, sizeof(*s));
	if (!file || !*file || !upto)
		return;
	if (dir) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) < sizeof(path) &&
		    source_read(s, path, upto))
			return;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, path_basename(file)) <
		    sizeof(path) && source_read(s, path, upto))
			return;
	}
	source_read(s, file, upto);
}

/* Line line's text with its tabs made spaces (to 8 columns), or NULL when not read. */
static const char *source_line(const struct source *s, uint32_t line, char *buf, size_t size)
{
	size_t col = 0;

	if (!line || line > s->n)
		return NULL;
	for (const char *p = s->text[line - 1]; *p && col + 8 < size; p++) {
		if (*p == '\t')
			do
				buf[col++] = ' ';
			while (col % 8);
		else
			buf[col++] = *p;
	}
	buf[col] = '\0';
	return buf;
}

/*
 * The lines shown, of a->lines: all, or the limit's hottest, still in file
 * order. Returns a flag per line.
 */
static bool *shown_lines(const struct annotate *a, size_t limit)
{
	bool *shown = xcalloc(a->lines.len + 1, sizeof(*shown));

	for (size_t i = 0; i < a->lines.len; i++) {
		size_t hotter = 0;

		/* Few lines: a count of the hotter ones beats sorting a copy. */
		for (size_t k = 0; limit && k < a->lines.len && hotter < limit; k++)
			hotter += a->lines.v[k].samples > a->lines.v[i].samples ||
				  (a->lines.v[k].samples == a->lines.v[i].samples && k < i);
		shown[i] = !limit || hotter < limit;
	}
	return shown;
}

/* The largest line of the file's lines [first, end). */
static uint32_t last_line(const struct annotate *a, size_t first, size_t end)
{
	return end > first ? a->lines.v[end - 1].line : 0;
}

double annotate_share(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0;
}

/* One file's lines [first, end): its sampled lines, and between them the others when read. */
static void print_file(FILE *out, const struct annotate *a, const struct model *m,
		       const struct annotate_opts *o, size_t first, size_t end, const bool *shown)
{
	const char *file = model_str(m, a->lines.v[first].file);
	uint32_t lo = a->lines.v[first].line, hi = last_line(a, first, end);
	bool fill = !o->limit && hi - lo < SOURCE_SPAN_MAX;
	struct source s;
	char text[SOURCE_LINE_MAX * 8 + 8];

	source_open(&s, a->lines.v[first].file ? file : NULL, o->source_dir, hi);
	if (!a->lines.v[first].file)
		fprintf(out, "# Source: unknown (no line table)\n");
	else if (s.n)
		fprintf(out, "# Source: %s\n", text_escape(s.path));
	else
		fprintf(out, "# Source: %s (not readable here: line numbers only)\n",
			text_escape(file ? file : ""));
	fprintf(out, "#\n# Percent  Samples    Line%s\n#\n", s.n ? "  Source" : "");
	fill = fill && s.n;
	for (size_t i = first; i < end; i++) {
		const struct annotate_line *l = &a->lines.v[i];

		if (!shown[i])
			continue;
		/* The lines without samples since the one before, when the text is shown. */
		for (uint32_t k = i > first ? a->lines.v[i - 1].line + 1 : l->line;
		     fill && k < l->line; k++) {
			bool known = source_line(&s, k, text, sizeof(text));

			fprintf(out, "%18s%8" PRIu32 "%s%s\n", "", k, known ? "  " : "",
				known ? text_escape(text) : "");
		}
		if (l->line) {
			fprintf(out, "%8.2f%% %8" PRIu64 "%8" PRIu32, annotate_share(l->samples, a->samples),
				l->samples, l->line);
			if (source_line(&s, l->line, text, sizeof(text)))
				fprintf(out, "  %s", text_escape(text));
			fputc('\n', out);
		} else {
			fprintf(out, "%8.2f%% %8" PRIu64 "%8s\n", annotate_share(l->samples, a->samples),
				l->samples, "?");
		}
	}
	source_free(&s);
}

/* The end of the run of lines of a->lines.v[first]'s file. */
static size_t file_end(const struct annotate *a, size_t first)
{
	size_t end = first + 1;

	while (end < a->lines.len && a->lines.v[end].file == a->lines.v[first].file)
		end++;
	return end;
}

void annotate_print(FILE *out, const struct annotate *a, struct funcs *f,
		    const struct annotate_opts *o, const char *path)
{
	const struct func *fn = &f->v.v[a->func];
	bool *shown = shown_lines(a, o->limit);

	fprintf(out, "# Function: %s (%s): %" PRIu64 " of %" PRIu64 " samples (%.2f%%)\n",
		text_escape(funcs_name(f, fn->name)), text_escape(funcs_name(f, fn->dso)),
		a->samples, a->total, annotate_share(a->samples, a->total));
	fprintf(out, "# File: %s\n", text_escape(path));
	for (size_t first = 0, end; first < a->lines.len; first = end) {
		end = file_end(a, first);
		fprintf(out, "#\n");
		print_file(out, a, f->m, o, first, end, shown);
	}
	if (o->asm_code)
		annotate_print_asm(out, a, f->m);
	free(shown);
}

void annotate_print_json(FILE *out, const struct annotate *a, struct funcs *f,
			 const struct annotate_opts *o, const char *path)
{
	const struct func *fn = &f->v.v[a->func];
	bool *shown = shown_lines(a, o->limit);
	struct json j;

	json_begin_document(&j, out, 1);
	json_string(&j, "path", path);
	json_string(&j, "symbol", funcs_name(f, fn->name));
	json_string(&j, "dso", funcs_name(f, fn->dso));
	json_uint(&j, "samples", a->samples);
	json_uint(&j, "total", a->total);
	json_ratio_or_null(&j, "percent", 2, 100.0 * (double)a->samples, (double)a->total);
	json_begin_array(&j, "files", JSON_LINES);
	for (size_t first = 0, end; first < a->lines.len; first = end) {
		const char *file = model_str(f->m, a->lines.v[first].file);
		struct source s;

		end = file_end(a, first);
		source_open(&s, a->lines.v[first].file ? file : NULL, o->source_dir,
			     last_line(a, first, end));
		json_begin_object(&j, NULL, JSON_LINES);
		if (a->lines.v[first].file && file)
			json_string(&j, "file", file);
		else
			json_null(&j, "file");
		if (s.n)
			json_string(&j, "source", s.path);
		else
			json_null(&j, "source");
		json_begin_array(&j, "lines", JSON_LINES);
		for (size_t i = first; i < end; i++) {
			const struct annotate_line *l = &a->lines.v[i];
			const char *t = l->line && l->line <= s.n ? s.text[l->line - 1] : NULL;

			if (!shown[i])
				continue;
			json_begin_object(&j, NULL, JSON_INLINE);
			if (l->line)
				json_uint(&j, "line", l->line);
			else
				json_null(&j, "line");
			json_uint(&j, "samples", l->samples);
			json_ratio_or_null(&j, "percent", 2, 100.0 * (double)l->samples,
					   (double)a->samples);
			if (t)
				json_string(&j, "text", t);
			else
				json_null(&j, "text");
			json_end(&j);
		}
		json_end(&j);
		json_end(&j);
		source_free(&s);
	}
	json_end(&j);
	if (o->asm_code)
		annotate_json_asm(&j, a, f->m);
	json_end(&j);
	free(shown);
}
