/* SPDX-License-Identifier: MIT */
#include "util/utf8.h"

#include <stdint.h>

size_t utf8_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff) || c == 0xfffe || c == 0xffff)
		return 0;
	return n;
}

void utf8_fput(FILE *out, const char *s, void (*put_ascii)(FILE *out, char c))
{
	for (; *s; s++) {
		size_t n = utf8_len(s);

		if (n == 0) {
			fputs(UTF8_REPLACEMENT, out);
		} else if (n > 1) {
			fwrite(s, 1, n, out);
			s += n - 1;
		} else {
			put_ascii(out, *s);
		}
	}
}

/* One ASCII character inside a JSON string. */
static void put_json_ascii(FILE *out, char c)
{
	if (c == '"' || c == '\\')
		fprintf(out, "\\%c", c);
	else if ((unsigned char)c < 0x20)
		fprintf(out, "\\u%04x", (unsigned)c);
	else
		fputc(c, out);
}

void utf8_fput_json(FILE *out, const char *s)
{
	fputc('"', out);
	utf8_fput(out, s, put_json_ascii);
	fputc('"', out);
}

size_t utf8_encode(uint32_t c, char out[4])
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		if (c >= 0xd800 && c <= 0xdfff)
			return utf8_encode(0xfffd, out);
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c > 0x10ffff)
		return utf8_encode(0xfffd, out);
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}
