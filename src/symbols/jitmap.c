/* SPDX-License-Identifier: MIT */
#include "symbols/jitmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_sym(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Adds the symbol on one line; lines that do not parse are skipped. */
static void parse_line(struct jitmap *m, char *line, struct strtab *names)
{
	uint64_t start, size;
	struct jit_sym *sym;
	size_t len = strcspn(line, "\n");
	int name_at = 0;

	line[len] = '\0';
	if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size,
		   &name_at) != 2 || !name_at || !line[name_at] || !size ||
	    start + size < start)
		return;
	sym = VEC_PUSH(&m->syms);
	sym->start = start;
	sym->end = start + size;
	sym->name = strtab_intern(names, line + name_at);
	sym->order = (uint32_t)m->syms.len;
}

int jitmap_load(struct jitmap *m, const char *path, struct strtab *names)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	int err = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) >= 0)
		parse_line(m, line, names);
	if (ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	qsort(m->syms.v, m->syms.len, sizeof(*m->syms.v), cmp_sym);
	return err;
}

uint32_t jitmap_find(const struct jitmap *m, uint64_t addr)
{
	size_t lo = 0, hi = m->syms.len;

	/* The last symbol starting at or before addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms.v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->syms.v[lo - 1].end)
		return 0;
	return m->syms.v[lo - 1].name;
}

void jitmap_free(struct jitmap *m)
{
	VEC_FREE(&m->syms);
}
