/* SPDX-License-Identifier: MIT */
#include "symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cachedir.h"
#include "util/sorted.h"
#include "util/xalloc.h"

/* /proc/kallsyms is made a page at a time: reading more a call saves the calls. */
#define KALLSYMS_READ_BYTES (64u << 10)
/* The cache's copies: this, then the boot id and the modules' hash. */
#define KALLSYMS_CACHE_PREFIX "kallsyms-"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool name_ends(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * Adds the symbol of one "ADDR TYPE name[\t[module]]" line of n bytes (a
 * NUL ends it early); lines that do not parse are skipped. By hand, as
 * sscanf costs more than the rest of the reading together.
 */
static void parse_line(struct kallsyms *k, const char *line, size_t n)
{
	const char *nul = memchr(line, '\0', n), *end = nul ? nul : line + n, *p = line;
	const char *name, *name_end;
	uint64_t addr = 0;
	size_t digits = 0;
	int d;

	for (; p < end && digits <= 16 && (d = hex_digit(*p)) >= 0; p++, digits++)
		addr = addr << 4 | (uint64_t)d;
	if (!digits || digits > 16 || end - p < 4 || p[0] != ' ' || p[2] != ' ' ||
	    !memchr("tTwW", p[1], 4))
		return;
	name = name_end = p + 3;
	while (name_end < end && !name_ends(*name_end))
		name_end++;
	if (name_end == name)
		return;
	if (!addr) {
		k->zero++;
		return;
	}
	*VEC_PUSH(&k->syms) = (struct ksym){ .addr = addr, .name = (uint32_t)k->names.len };
	VEC_APPEND(&k->names, name, (size_t)(name_end - name));
	*VEC_PUSH(&k->names) = '\0';
}

size_t kallsyms_parse(struct kallsyms *k, const char *text, size_t len, bool final)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (!nl && !final)
			break;
		if (n < KALLSYMS_MAX_LINE)
			parse_line(k, p, n);
		p += nl ? n + 1 : n;
	}
	return (size_t)(p - text);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool ksyms_sorted(const struct kallsyms *k)
{
	for (size_t i = 1; i < k->syms.len; i++)
		if (k->syms.v[i - 1].addr > k->syms.v[i].addr)
			return false;
	return true;
}

/* Reads the listing fd (which it closes). */
static int read_fd(struct kallsyms *k, int fd)
{
	/* At least twice the longest line: a whole one always fits after a cut one's tail. */
	_Static_assert(KALLSYMS_READ_BYTES >= 2 * KALLSYMS_MAX_LINE, "a line fits twice");
	const size_t size = KALLSYMS_READ_BYTES;
	size_t held = 0, total = 0;
	bool skipping = false;
	int err = 0;
	char *buf = xmalloc(size);

	while (total < KALLSYMS_MAX_BYTES) {
		ssize_t got = read(fd, buf + held, size - held);
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
			taken = kallsyms_parse(k, buf, held, !got);
			if (!taken && held == size) {
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
	free(buf);
	/* The kernel lists its own symbols by address: without modules, nothing to sort. */
	if (!ksyms_sorted(k))
		qsort(k->syms.v, k->syms.len, sizeof(*k->syms.v), cmp_ksym);
	return err;
}

int kallsyms_load(struct kallsyms *k, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	return fd < 0 ? -errno : read_fd(k, fd);
}

static uint64_t fnv1a(uint64_t hash, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		hash = (hash ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return hash;
}

/*
 * The cache's name for this boot's listing with the modules loaded now:
 * boot id and a hash of each module's name, size and address in
 * /proc/modules (not its users, which come and go). False when either
 * cannot be read.
 */
static bool cache_name(char *name, size_t size)
{
	char boot[40], line[512];
	uint64_t hash = 0xcbf29ce484222325ull;	/* FNV-1a's basis */
	size_t total = 0;
	ssize_t got;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	FILE *modules;

	if (fd < 0)
		return false;
	got = read(fd, boot, sizeof(boot) - 1);
	close(fd);
	boot[got > 0 ? got : 0] = '\0';
	if (got < 36 || strspn(boot, "0123456789abcdef-") != 36)
		return false;
	/* A kernel built without modules has no list of them. */
	modules = fopen("/proc/modules", "re");
	if (!modules && errno != ENOENT)
		return false;
	while (modules && total < KALLSYMS_MAX_BYTES && fgets(line, sizeof(line), modules)) {
		char *save = NULL, *field;

		/* Counted before strtok_r cuts the line at its first field. */
		total += strlen(line);
		field = strtok_r(line, " \n", &save);
		/* name size refcount users state address: the first two and the sixth. */
		for (int i = 1; field; i++, field = strtok_r(NULL, " \n", &save))
			if (i == 1 || i == 2 || i == 6)
				hash = fnv1a(hash, field, strlen(field) + 1);
	}
	if (modules)
		fclose(modules);
	return snprintf(name, size, KALLSYMS_CACHE_PREFIX "%.36s-%016" PRIx64, boot, hash) <
	       (int)size;
}

/* Writes k's symbols to the cache as a listing read_fd reads back. */
static void cache_write(const struct kallsyms *k, const struct cachedir *c, const char *name)
{
	VEC(char) text = {0};
	char line[32];

	for (size_t i = 0; i < k->syms.len; i++) {
		const char *sym = k->names.v + k->syms.v[i].name;

		VEC_APPEND(&text, line, (size_t)snprintf(line, sizeof(line), "%" PRIx64 " t ",
							 k->syms.v[i].addr));
		VEC_APPEND(&text, sym, strlen(sym));
		*VEC_PUSH(&text) = '\n';
	}
	cachedir_put(c, name, text.v, text.len);
	VEC_FREE(&text);
}

int kallsyms_load_cached(struct kallsyms *k, const struct cachedir *c)
{
	char name[80];
	bool named = c->fd >= 0 && cache_name(name, sizeof(name));
	int fd = named ? cachedir_read(c, name, KALLSYMS_MAX_BYTES) : -ENOENT, err;

	if (fd >= 0 && !read_fd(k, fd) && k->syms.len)
		return 0;
	kallsyms_free(k);
	err = kallsyms_load(k, KALLSYMS_PATH);
	if (!err && named && k->syms.len) {
		cache_write(k, c, name);
		/* Other boots' and module sets' listings are not read again. */
		cachedir_prune(c, KALLSYMS_CACHE_PREFIX, name);
	}
	return err;
}

bool kallsyms_hidden(const struct kallsyms *k)
{
	return !k->syms.len && k->zero;
}

const char *kallsyms_find(const struct kallsyms *k, uint64_t addr)
{
	size_t at = sorted_at_or_below(k->syms.v, k->syms.len, sizeof(*k->syms.v),
				       offsetof(struct ksym, addr), addr);

	return at ? k->names.v + k->syms.v[at - 1].name : NULL;
}

void kallsyms_free(struct kallsyms *k)
{
	VEC_FREE(&k->syms);
	VEC_FREE(&k->names);
	k->zero = 0;
}
