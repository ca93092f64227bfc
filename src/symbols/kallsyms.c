/* SPDX-License-Identifier: MIT */
#include "symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/sorted.h"
#include "util/xalloc.h"

/* Adds the symbol on one NUL-terminated line; lines that do not parse are skipped. */
static void parse_line(struct kallsyms *k, const char *line, struct strtab *names)
{
	char type, name[KALLSYMS_MAX_LINE];
	uint64_t addr;

	if (sscanf(line, "%" SCNx64 " %c %1023s", &addr, &type, name) != 3 ||
	    !strchr("tTwW", type))
		return;
	if (!addr) {
		k->zero++;
		return;
	}
	*VEC_PUSH(&k->syms) = (struct ksym){ .addr = addr, .name = strtab_intern(names, name) };
}

size_t kallsyms_parse(struct kallsyms *k, const char *text, size_t len, bool final,
		      struct strtab *names)
{
	char line[KALLSYMS_MAX_LINE];
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (!nl && !final)
			break;
		/* Copied to end in a NUL; a NUL inside ends the line. */
		if (n < sizeof(line)) {
			memcpy(line, p, n);
			line[n] = '\0';
			parse_line(k, line, names);
		}
		p += nl ? n + 1 : n;
	}
	return (size_t)(p - text);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int kallsyms_load(struct kallsyms *k, const char *path, struct strtab *names)
{
	/* Twice the longest line: a whole one always fits after a cut one's tail. */
	char buf[2 * KALLSYMS_MAX_LINE];
	size_t held = 0, total = 0;
	bool skipping = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), err = 0;

	if (fd < 0)
		return -errno;
	while (total < KALLSYMS_MAX_BYTES) {
		ssize_t got = read(fd, buf + held, sizeof(buf) - held);
		size_t taken;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			break;
		}
		total += (size_t)got;
		held += (size_t)got;
		if (skipping) {
			/* The rest of a line too long to be a symbol's. */
			char *nl = memchr(buf, '\n', held);

			taken = nl ? (size_t)(nl + 1 - buf) : held;
			skipping = !nl;
		} else {
			taken = kallsyms_parse(k, buf, held, !got, names);
			if (!taken && held == sizeof(buf)) {
				taken = held;
				skipping = true;
			}
		}
		memmove(buf, buf + taken, held - taken);
		held -= taken;
		if (!got)
			break;
	}
	close(fd);
	if (k->syms.len)
		qsort(k->syms.v, k->syms.len, sizeof(*k->syms.v), cmp_ksym);
	return err;
}

bool kallsyms_hidden(const struct kallsyms *k)
{
	return !k->syms.len && k->zero;
}

uint32_t kallsyms_find(const struct kallsyms *k, uint64_t addr)
{
	size_t at = sorted_at_or_below(k->syms.v, k->syms.len, sizeof(*k->syms.v),
				       offsetof(struct ksym, addr), addr);

	return at ? k->syms.v[at - 1].name : 0;
}

void kallsyms_free(struct kallsyms *k)
{
	VEC_FREE(&k->syms);
	k->zero = 0;
}
