/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_UTF8_H
#define GTRACE_UTIL_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The length of the well-formed UTF-8 sequence at s, or 0 where it is not one
 * (a stray or missing continuation byte, an overlong form, a surrogate, or
 * past U+10FFFF). Names from the kernel (a comm cut mid-character) and from
 * binaries need not be UTF-8; the writers of text formats replace such bytes.
 */
size_t utf8_len(const char *s);

/* U+FFFD, what the writers put in place of a byte that is not UTF-8. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/*
 * Writes s to out for a text format: multi-byte characters as they are, a
 * byte that is not UTF-8 as U+FFFD, and each ASCII character through
 * put_ascii, which escapes what the format needs escaped.
 */
void utf8_fput(FILE *out, const char *s, void (*put_ascii)(FILE *out, char c));

/* Writes s as a JSON string: quoted, escaped, a byte that is not UTF-8 as U+FFFD. */
void utf8_fput_json(FILE *out, const char *s);

/* Writes code point c as UTF-8 (a surrogate or past U+10FFFF as U+FFFD); its length. */
size_t utf8_encode(uint32_t c, char out[4]);

#endif
