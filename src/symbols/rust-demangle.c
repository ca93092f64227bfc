/* SPDX-License-Identifier: MIT */
/*
 * Rust symbol names, after rustc-demangle (its legacy.rs and v0.rs): what
 * it prints with {} (hashes) and with {:#} (without). This file reads the
 * legacy names and the suffixes both have; rust-v0.c the v0 grammar.
 * Every name is read within RUST_NAME_MAX bytes in and RUST_OUT_MAX out.
 */
#include "symbols/rust-demangle.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/rust-text.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define RUST_NAME_MAX 8192

bool rust_put(struct text *t, const char *s, size_t n)
{
	if (n >= RUST_OUT_MAX - t->len)
		return false;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	t->buf[t->len] = 0;
	return true;
}

bool rust_put_str(struct text *t, const char *s)
{
	return rust_put(t, s, strlen(s));
}

bool rust_put_utf8(struct text *t, uint32_t c)
{
	char b[4];

	return rust_put(t, b, utf8_encode(c, b));
}

bool rust_is_scalar(uint64_t c)
{
	return c <= 0x10ffff && (c < 0xd800 || c > 0xdfff);
}

/* Printable ASCII without blanks: what both manglings are made of. */
static bool is_symbol_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

/*
 * Where the mangled part of name ends: before an LLVM ".llvm.<hex>" suffix
 * (dropped, as rustc-demangle does), or at its end. What follows the
 * mangled part otherwise (".cold", ".constprop.0") is printed as it is.
 */
static size_t without_llvm_suffix(const char *name, size_t len)
{
	const char *llvm = strstr(name, ".llvm.");

	if (!llvm)
		return len;
	for (const char *c = llvm + 6; *c; c++)
		if (!(is_lower_hex(*c) || (*c >= 'A' && *c <= 'F') || *c == '@'))
			return len;
	return (size_t)(llvm - name);
}

/* ---- legacy: _ZN <len><bytes>... E, the last element h<16 hex digits> ---- */

static bool is_rust_hash(const char *s, size_t n)
{
	if (n != 17 || s[0] != 'h')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!is_lower_hex(s[i]) && !(s[i] >= 'A' && s[i] <= 'F'))
			return false;
	return true;
}

/* The next element at *at (before end): false at 'E' or on a malformed one. */
static bool legacy_element(const char **at, const char *end, const char **el, size_t *n)
{
	size_t len = 0;

	if (*at >= end || !is_digit(**at))
		return false;
	for (; *at < end && is_digit(**at); (*at)++) {
		len = len * 10 + (size_t)(**at - '0');
		if (len > RUST_NAME_MAX)
			return false;
	}
	if (len == 0 || len > (size_t)(end - *at))
		return false;
	*el = *at;
	*n = len;
	*at += len;
	return true;
}

/*
 * Where the legacy path of name (after "_ZN") ends, its 'E', or NULL when it
 * is not a Rust legacy name: two elements or more, the last a hash.
 */
static const char *legacy_end(const char *path, const char *end)
{
	const char *at = path, *el = NULL;
	size_t n = 0, count = 0;

	while (legacy_element(&at, end, &el, &n))
		count++;
	if (at >= end || *at != 'E' || count < 2 || !is_rust_hash(el, n))
		return NULL;
	return at;
}

/* One $...$ escape of a legacy element; false when it is not one. */
static bool legacy_escape(struct text *t, const char *esc, size_t n, bool *ok)
{
	static const struct {
		const char *name;
		char c;
	} escapes[] = {
		{ "SP", '@' }, { "BP", '*' }, { "RF", '&' }, { "LT", '<' }, { "GT", '>' },
		{ "LP", '(' }, { "RP", ')' }, { "C", ',' },
	};
	uint32_t c = 0;

	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++)
		if (strlen(escapes[i].name) == n && !memcmp(esc, escapes[i].name, n)) {
			*ok = rust_put(t, &escapes[i].c, 1);
			return true;
		}
	if (n < 2 || n > 7 || esc[0] != 'u')
		return false;
	for (size_t i = 1; i < n; i++) {
		if (!is_lower_hex(esc[i]))
			return false;
		c = c << 4 | (uint32_t)(is_digit(esc[i]) ? esc[i] - '0' : esc[i] - 'a' + 10);
	}
	/* Control characters stay escaped, as rustc-demangle leaves them. */
	if (!rust_is_scalar(c) || c < 0x20 || (c >= 0x7f && c < 0xa0))
		return false;
	*ok = rust_put_utf8(t, c);
	return true;
}

/* One element: "$LT$" and the like decoded, ".." as "::". */
static bool legacy_print_element(struct text *t, const char *s, size_t n)
{
	const char *end = s + n;

	if (n >= 2 && s[0] == '_' && s[1] == '$')
		s++;
	while (s < end) {
		const char *close;
		bool ok = true;

		if (*s == '.') {
			bool pair = s + 1 < end && s[1] == '.';

			if (!rust_put_str(t, pair ? "::" : "."))
				return false;
			s += pair ? 2 : 1;
			continue;
		}
		close = *s == '$' ? memchr(s + 1, '$', (size_t)(end - s - 1)) : NULL;
		if (close && legacy_escape(t, s + 1, (size_t)(close - s - 1), &ok)) {
			if (!ok)
				return false;
			s = close + 1;
			continue;
		}
		if (*s == '$')	/* not an escape: the rest as it is */
			return rust_put(t, s, (size_t)(end - s));
		for (close = s; close < end && *close != '$' && *close != '.'; close++)
			;
		if (!rust_put(t, s, (size_t)(close - s)))
			return false;
		s = close;
	}
	return true;
}

static bool legacy_print(struct text *t, const char *path, const char *end, bool hashes)
{
	const char *at = path, *el;
	size_t n;

	for (bool first = true; legacy_element(&at, end, &el, &n); first = false) {
		if (!hashes && at == end)
			break;	/* the hash, the last element */
		if ((!first && !rust_put_str(t, "::")) || !legacy_print_element(t, el, n))
			return false;
	}
	return true;
}

char *rust_demangle(const char *name, bool hashes)
{
	size_t len, end;
	struct text t = { 0 };
	const char *path_end;
	char *plain;
	bool ok;

	/* Every C name and most C++ ones end here, unread. */
	if (strncmp(name, "_ZN", 3) && strncmp(name, "_R", 2))
		return NULL;
	len = strnlen(name, RUST_NAME_MAX + 1);
	if (len > RUST_NAME_MAX || len < 3 || !is_symbol_text(name, len))
		return NULL;
	end = without_llvm_suffix(name, len);
	if (!strncmp(name, "_ZN", 3)) {
		path_end = legacy_end(name + 3, name + end);
		if (!path_end || (path_end + 1 < name + end && path_end[1] != '.'))
			return NULL;
		t.buf = xcalloc(1, RUST_OUT_MAX);
		ok = legacy_print(&t, name + 3, path_end, hashes) &&
		     rust_put(&t, path_end + 1, (size_t)(name + end - path_end - 1));
	} else if (!strncmp(name, "_R", 2)) {
		t.buf = xcalloc(1, RUST_OUT_MAX);
		ok = rust_v0_print(&t, name + 2, end - 2, hashes);
	} else {
		return NULL;
	}
	plain = ok ? xstrdup(t.buf) : NULL;	/* its length, not RUST_OUT_MAX */
	free(t.buf);
	return plain;
}

bool rust_mangled(const char *name)
{
	char *plain = rust_demangle(name, true);
	bool ok = plain != NULL;

	free(plain);
	return ok;
}
