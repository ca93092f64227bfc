/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_RUST_TEXT_H
#define GTRACE_SYMBOLS_RUST_TEXT_H

/*
 * What rust-demangle.c (legacy names) and rust-v0.c (v0 names) share, and
 * no other file uses: the demangled name being written, within RUST_OUT_MAX
 * bytes, and the character classes of the manglings.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RUST_OUT_MAX 8192

/* The demangled name being written: a put fails once it would pass RUST_OUT_MAX. */
struct text {
	char *buf;
	size_t len;
};

bool rust_put(struct text *t, const char *s, size_t n);
bool rust_put_str(struct text *t, const char *s);
/* c, a Unicode scalar value, as UTF-8. */
bool rust_put_utf8(struct text *t, uint32_t c);
/* A Unicode scalar value: what Rust's char holds. */
bool rust_is_scalar(uint64_t c);

/* The v0 name s (after "_R", len bytes of it), then its suffix as it is. */
bool rust_v0_print(struct text *t, const char *s, size_t len, bool hashes);

static inline bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_lower_hex(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f');
}

static inline bool is_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

static inline bool is_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

#endif
