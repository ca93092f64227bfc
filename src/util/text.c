/* SPDX-License-Identifier: MIT */
#include "util/text.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"
#include "util/xalloc.h"

/* The escaped copies, used in turn. */
static struct {
	char *v;
	size_t cap;
} copies[TEXT_ESCAPES];
static unsigned next_copy;

/* How many bytes of s from here are written as they are: 0 when the next one is escaped. */
static size_t plain_len(const char *s, bool folded)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = utf8_len(s);

	if (n == 1)
		return *p >= 0x20 && *p != 0x7f && *p != '\\' && !(folded && *p == ';');
	/* U+0080 .. U+009F: C2 80 .. C2 9F. */
	return n == 2 && p[0] == 0xc2 && p[1] < 0xa0 ? 0 : n;
}

static const char *escape(const char *s, bool folded)
{
	size_t size = 1, escapes = 0, at = 0;
	char *out;

	for (const char *p = s; *p;) {
		size_t n = plain_len(p, folded);

		size += n ? n : 4;
		escapes += !n;
		p += n ? n : 1;
	}
	if (!escapes)
		return s;
	next_copy = (next_copy + 1) % TEXT_ESCAPES;
	if (copies[next_copy].cap < size) {
		free(copies[next_copy].v);
		copies[next_copy].v = xmalloc(size);
		copies[next_copy].cap = size;
	}
	out = copies[next_copy].v;
	for (const char *p = s; *p;) {
		size_t n = plain_len(p, folded);

		if (n) {
			memcpy(out + at, p, n);
			at += n;
			p += n;
		} else if (*p == '\\') {
			memcpy(out + at, "\\\\", 2);
			at += 2;
			p++;
		} else {
			snprintf(out + at, 5, "\\x%02x", (unsigned char)*p++);
			at += 4;
		}
	}
	out[at] = '\0';
	return out;
}

const char *text_escape(const char *s)
{
	return escape(s, false);
}

const char *text_escape_folded(const char *s)
{
	return escape(s, true);
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}
