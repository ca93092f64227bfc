/* SPDX-License-Identifier: MIT */
#include "symbols/jitmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/sorted.h"
#include "util/untrusted.h"
#include "util/xalloc.h"

static int cmp_sym(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Adds the symbol on one line, NUL-terminated; lines that do not parse are skipped. */
static void parse_line(struct jitmap *m, const char *line, struct strtab *names)
{
	uint64_t start, size;
	struct jit_sym *sym;
	int name_at = 0;

	if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &name_at) != 2 ||
	    !name_at || !line[name_at] || !size || start + size < start)
		return;
	sym = VEC_PUSH(&m->syms);
	sym->start = start;
	sym->end = start + size;
	sym->name = strtab_intern(names, line + name_at);
	sym->order = (uint32_t)m->syms.len;
}

void jitmap_parse(struct jitmap *m, const char *text, size_t len, struct strtab *names)
{
	char line[JITMAP_MAX_LINE];
	const char *end = text + len;

	for (const char *p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		/* Copied to end in a NUL; a NUL inside ends the name. */
		if (n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
			parse_line(m, line, names);
		}
		p += n + 1;
	}
	if (m->syms.len)
		qsort(m->syms.v, m->syms.len, sizeof(*m->syms.v), cmp_sym);
}

/* Up to JITMAP_MAX_BYTES of fd into *text; 1 when there was more. */
static int read_capped(int fd, size_t hint, char **text, size_t *len)
{
	size_t cap = hint < 4096 ? 4096 : hint > JITMAP_MAX_BYTES ? JITMAP_MAX_BYTES : hint;
	char *buf = xmalloc(cap), more;
	size_t n = 0;
	ssize_t got;

	for (;;) {
		if (n == cap) {
			if (cap == JITMAP_MAX_BYTES)
				break;
			cap = cap > JITMAP_MAX_BYTES / 2 ? JITMAP_MAX_BYTES : 2 * cap;
			buf = xrealloc(buf, cap);
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(buf);
			return -errno;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	*text = buf;
	*len = n;
	return n == JITMAP_MAX_BYTES && read(fd, &more, 1) > 0;
}

int jitmap_load(struct jitmap *m, const char *path, uid_t owner, struct strtab *names)
{
	const struct untrusted_rules rules = {
		.owned = true, .owner = owner, .one_link = true,
	};
	struct stat st;
	int fd = untrusted_open(path, &rules, &st), cut;
	size_t len = 0;
	char *text = NULL;

	if (fd < 0)
		return fd;
	cut = read_capped(fd, (size_t)st.st_size + 1, &text, &len);
	close(fd);
	if (cut < 0)
		return cut;
	/* The line the cap went through is not whole. */
	if (cut) {
		char *nl = memrchr(text, '\n', len);

		len = nl ? (size_t)(nl + 1 - text) : 0;
	}
	jitmap_parse(m, text, len, names);
	free(text);
	return cut;
}

uint32_t jitmap_find(const struct jitmap *m, uint64_t addr)
{
	/* Past the last symbol starting at or before addr. */
	size_t lo = sorted_at_or_below(m->syms.v, m->syms.len, sizeof(*m->syms.v),
				       offsetof(struct jit_sym, start), addr);

	if (!lo || addr >= m->syms.v[lo - 1].end)
		return 0;
	return m->syms.v[lo - 1].name;
}

void jitmap_free(struct jitmap *m)
{
	VEC_FREE(&m->syms);
}
