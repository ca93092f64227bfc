/* SPDX-License-Identifier: MIT */
/*
 * Rust's v0 names (_R <path> [<instantiating-crate>] [<suffix>]), the
 * grammar of rustc's mangling RFC 2603, printed as rustc-demangle's v0.rs
 * does. Const generic arguments are read for the literals stable Rust has
 * (integers, bool, char, _); a name that holds anything else stays
 * mangled. A name is read within RUST_DEPTH_MAX levels of nesting and
 * RUST_STEPS_MAX paths, types and back-references: a backref may only
 * point before itself, but what it names can hold backrefs again.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "symbols/rust-text.h"

#define RUST_DEPTH_MAX 256
#define RUST_STEPS_MAX 65536
#define PUNYCODE_MAX 128	/* characters of one decoded identifier */

struct v0 {
	const char *s;		/* after "_R": backrefs count from here */
	size_t len, pos;
	struct text *t;
	bool skip;		/* parsing only, printing nothing: an impl's own path */
	bool hashes;
	unsigned depth;
	size_t steps;
	uint64_t bound_lifetimes;	/* for<'a, ...> binders open */
};

enum backref_kind { BACKREF_PATH, BACKREF_VALUE_PATH, BACKREF_TYPE, BACKREF_CONST,
		    BACKREF_OPEN_PATH };

static bool v0_path(struct v0 *p, bool in_value);
static bool v0_type(struct v0 *p);
static bool v0_const(struct v0 *p);
static bool v0_open_path(struct v0 *p, bool *open);

static bool out(struct v0 *p, const char *s)
{
	return p->skip || rust_put_str(p->t, s);
}

static bool out_n(struct v0 *p, const char *s, size_t n)
{
	return p->skip || rust_put(p->t, s, n);
}

static bool out_u64(struct v0 *p, uint64_t v, bool hex)
{
	char b[24];

	snprintf(b, sizeof(b), hex ? "%llx" : "%llu", (unsigned long long)v);
	return out(p, b);
}

static int peek(const struct v0 *p)
{
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static int next(struct v0 *p)
{
	return p->pos < p->len ? (unsigned char)p->s[p->pos++] : -1;
}

static bool eat(struct v0 *p, int c)
{
	if (peek(p) != c)
		return false;
	p->pos++;
	return true;
}

/* One more level of nesting, within the limits; leave() ends it. */
static bool enter(struct v0 *p)
{
	if (p->depth >= RUST_DEPTH_MAX || p->steps >= RUST_STEPS_MAX)
		return false;
	p->depth++;
	p->steps++;
	return true;
}

static bool leave(struct v0 *p, bool ok)
{
	p->depth--;
	return ok;
}

/* <base-62-number>: "_" is 0, digits then "_" their value + 1. */
static bool base62(struct v0 *p, uint64_t *v)
{
	uint64_t x = 0;
	int c;

	if (eat(p, '_')) {
		*v = 0;
		return true;
	}
	while ((c = next(p)) != '_') {
		unsigned d;

		if (is_digit(c))
			d = (unsigned)(c - '0');
		else if (is_lower(c))
			d = (unsigned)(c - 'a' + 10);
		else if (is_upper(c))
			d = (unsigned)(c - 'A' + 36);
		else
			return false;
		if (x > (UINT64_MAX - 2 - d) / 62)
			return false;
		x = x * 62 + d;
	}
	*v = x + 1;
	return true;
}

/* tag <base-62-number> as that + 1, or 0 when tag is not there. */
static bool opt_base62(struct v0 *p, int tag, uint64_t *v)
{
	*v = 0;
	if (!eat(p, tag))
		return true;
	if (!base62(p, v))
		return false;
	(*v)++;
	return true;
}

static bool disambiguator(struct v0 *p, uint64_t *v)
{
	return opt_base62(p, 's', v);
}

/* A decimal count of bytes: no leading zeros, within the name. */
static bool decimal(struct v0 *p, size_t *v)
{
	int c = next(p);

	if (!is_digit(c))
		return false;
	*v = (size_t)(c - '0');
	if (c == '0')
		return true;
	while (is_digit(peek(p))) {
		*v = *v * 10 + (size_t)(next(p) - '0');
		if (*v > p->len)
			return false;
	}
	return true;
}

/* An identifier: its ASCII part and, for a "u" one, its punycode part. */
struct ident {
	const char *ascii, *puny;
	size_t ascii_len, puny_len;
};

static bool ident(struct v0 *p, struct ident *id)
{
	bool is_puny = eat(p, 'u');
	size_t n;
	const char *s;

	if (!decimal(p, &n))
		return false;
	eat(p, '_');
	if (n > p->len - p->pos)
		return false;
	s = p->s + p->pos;
	p->pos += n;
	*id = (struct ident){ .ascii = s, .ascii_len = n };
	if (!is_puny)
		return true;
	/* The ASCII characters, '_', then the deltas that insert the others. */
	id->ascii_len = 0;
	id->puny = s;
	for (size_t i = n; i-- > 0;)
		if (s[i] == '_') {
			id->ascii_len = i;
			id->puny = s + i + 1;
			break;
		}
	id->puny_len = n - (size_t)(id->puny - s);
	return id->puny_len > 0;
}

/* RFC 3492's decoder, into at most PUNYCODE_MAX characters. */
static bool punycode(const struct ident *id, uint32_t *c, size_t *len)
{
	enum { BASE = 36, T_MIN = 1, T_MAX = 26, SKEW = 38, DAMP = 700 };
	uint64_t bias = 72, i = 0, n = 0x80;
	const char *s = id->puny, *end = id->puny + id->puny_len;

	if (id->ascii_len > PUNYCODE_MAX)
		return false;
	for (*len = 0; *len < id->ascii_len; (*len)++)
		c[*len] = (unsigned char)id->ascii[*len];
	for (bool first = true; s < end; first = false) {
		uint64_t delta = 0, w = 1, k = 0;

		for (;;) {
			uint64_t t, d;

			k += BASE;
			t = k <= bias ? T_MIN : k - bias >= T_MAX ? T_MAX : k - bias;
			if (s >= end)
				return false;
			if (is_lower(*s))
				d = (uint64_t)(*s - 'a');
			else if (is_digit(*s))
				d = (uint64_t)(26 + *s - '0');
			else
				return false;
			s++;
			if (w && d > (UINT32_MAX - delta) / w)
				return false;
			delta += d * w;
			if (d < t)
				break;
			w *= BASE - t;
			if (w > UINT32_MAX)
				return false;
		}
		if (*len >= PUNYCODE_MAX || delta > UINT32_MAX - i)
			return false;
		i += delta;
		n += i / (*len + 1);
		i %= *len + 1;
		if (!rust_is_scalar(n))
			return false;
		memmove(c + i + 1, c + i, (*len - i) * sizeof(*c));
		c[i++] = (uint32_t)n;
		(*len)++;
		delta = first ? delta / DAMP : delta / 2;
		delta += delta / *len;
		for (k = 0; delta > ((BASE - T_MIN) * T_MAX) / 2; k += BASE)
			delta /= BASE - T_MIN;
		bias = k + ((BASE - T_MIN + 1) * delta) / (delta + SKEW);
	}
	return true;
}

static bool out_ident(struct v0 *p, const struct ident *id)
{
	uint32_t c[PUNYCODE_MAX];
	size_t n;

	if (p->skip || !id->puny_len)
		return out_n(p, id->ascii, id->ascii_len);
	if (!punycode(id, c, &n))
		return out(p, "punycode{") && out_n(p, id->ascii, id->ascii_len) &&
		       (!id->ascii_len || out(p, "-")) && out_n(p, id->puny, id->puny_len) &&
		       out(p, "}");
	for (size_t i = 0; i < n; i++)
		if (!rust_put_utf8(p->t, c[i]))
			return false;
	return true;
}

/* 'a, 'b... for the binders open; '_ for 0, the erased lifetime. */
static bool out_lifetime(struct v0 *p, uint64_t lt)
{
	uint64_t depth;
	char c[2] = { 0 };

	if (p->skip)
		return true;
	if (!out(p, "'"))
		return false;
	if (!lt)
		return out(p, "_");
	if (lt > p->bound_lifetimes)
		return false;
	depth = p->bound_lifetimes - lt;
	if (depth >= 26)
		return out(p, "_") && out_u64(p, depth, false);
	c[0] = (char)('a' + depth);
	return out(p, c);
}

/* [G <count>]: "for<'a, 'b> " for a fn type or dyn bounds; *count to close. */
static bool open_binder(struct v0 *p, uint64_t *count)
{
	if (!opt_base62(p, 'G', count))
		return false;
	if (p->skip || !*count) {
		*count = 0;
		return true;
	}
	if (*count > RUST_OUT_MAX || !out(p, "for<"))
		return false;
	for (uint64_t i = 0; i < *count; i++) {
		p->bound_lifetimes++;
		if ((i && !out(p, ", ")) || !out_lifetime(p, 1))
			return false;
	}
	return out(p, "> ");
}

/* B <base-62-number>: what is at that offset, before the B, printed again. */
static bool backref(struct v0 *p, enum backref_kind kind, bool *open)
{
	size_t at = p->pos - 1, back;
	uint64_t to;
	bool ok;

	if (!base62(p, &to) || to >= at)
		return false;
	if (p->skip)	/* parsing alone need not follow it */
		return true;
	if (!enter(p))
		return false;
	back = p->pos;
	p->pos = (size_t)to;
	switch (kind) {
	case BACKREF_PATH:
	case BACKREF_VALUE_PATH:
		ok = v0_path(p, kind == BACKREF_VALUE_PATH);
		break;
	case BACKREF_TYPE:
		ok = v0_type(p);
		break;
	case BACKREF_CONST:
		ok = v0_const(p);
		break;
	default:
		ok = v0_open_path(p, open);
		break;
	}
	p->pos = back;
	return leave(p, ok);
}

/* {<generic-arg>} E, separated by ", ". */
static bool generic_args(struct v0 *p)
{
	for (unsigned i = 0; !eat(p, 'E'); i++) {
		uint64_t lt;
		bool ok;

		if (peek(p) < 0 || (i && !out(p, ", ")))
			return false;
		if (eat(p, 'L'))
			ok = base62(p, &lt) && out_lifetime(p, lt);
		else if (eat(p, 'K'))
			ok = v0_const(p);
		else
			ok = v0_type(p);
		if (!ok)
			return false;
	}
	return true;
}

/* N <namespace> <path> <identifier>: "::name", or "::{closure#0}" for A-Z. */
static bool nested_path(struct v0 *p, bool in_value)
{
	int ns = next(p);
	struct ident id;
	uint64_t dis;
	bool named;

	if (!is_upper(ns) && !is_lower(ns))
		return false;
	if (!v0_path(p, in_value) || !disambiguator(p, &dis) || !ident(p, &id))
		return false;
	named = id.ascii_len || id.puny_len;
	if (is_lower(ns))
		return !named || (out(p, "::") && out_ident(p, &id));
	return out(p, "::{") &&
	       out(p, ns == 'C' ? "closure" : ns == 'S' ? "shim" : (char[]){ (char)ns, 0 }) &&
	       (!named || (out(p, ":") && out_ident(p, &id))) && out(p, "#") &&
	       out_u64(p, dis, false) && out(p, "}");
}

static bool v0_path(struct v0 *p, bool in_value)
{
	int tag = next(p);
	struct ident id;
	uint64_t dis;
	bool ok = true, skip;

	if (!enter(p))
		return false;
	switch (tag) {
	case 'C':
		ok = disambiguator(p, &dis) && ident(p, &id) && out_ident(p, &id);
		if (ok && p->hashes && dis)
			ok = out(p, "[") && out_u64(p, dis, true) && out(p, "]");
		break;
	case 'N':
		ok = nested_path(p, in_value);
		break;
	case 'M':
	case 'X':
	case 'Y':
		if (tag != 'Y') {	/* the impl's own path is not shown */
			skip = p->skip;
			p->skip = true;
			ok = disambiguator(p, &dis) && v0_path(p, false);
			p->skip = skip;
		}
		ok = ok && out(p, "<") && v0_type(p) &&
		     (tag == 'M' || (out(p, " as ") && v0_path(p, false))) && out(p, ">");
		break;
	case 'I':
		ok = v0_path(p, in_value) && (!in_value || out(p, "::")) && out(p, "<") &&
		     generic_args(p) && out(p, ">");
		break;
	case 'B':
		ok = backref(p, in_value ? BACKREF_VALUE_PATH : BACKREF_PATH, NULL);
		break;
	default:
		ok = false;
	}
	return leave(p, ok);
}

static const char *basic_type(int tag)
{
	switch (tag) {
	case 'a': return "i8";
	case 'b': return "bool";
	case 'c': return "char";
	case 'd': return "f64";
	case 'e': return "str";
	case 'f': return "f32";
	case 'h': return "u8";
	case 'i': return "isize";
	case 'j': return "usize";
	case 'l': return "i32";
	case 'm': return "u32";
	case 'n': return "i128";
	case 'o': return "u128";
	case 's': return "i16";
	case 't': return "u16";
	case 'u': return "()";
	case 'v': return "...";
	case 'x': return "i64";
	case 'y': return "u64";
	case 'z': return "!";
	case 'p': return "_";
	default: return NULL;
	}
}

/* {<type>} E, separated by sep; *count of them. */
static bool type_list(struct v0 *p, const char *sep, unsigned *count)
{
	for (*count = 0; !eat(p, 'E'); (*count)++)
		if (peek(p) < 0 || (*count && !out(p, sep)) || !v0_type(p))
			return false;
	return true;
}

/* F [<binder>] [U] [K <abi>] {<type>} E <type>: "unsafe extern "C" fn(..) -> T". */
static bool fn_type(struct v0 *p)
{
	uint64_t bound;
	struct ident abi = { 0 };
	bool is_unsafe, ok;
	unsigned n;

	if (!open_binder(p, &bound))
		return false;
	is_unsafe = eat(p, 'U');
	if (eat(p, 'K')) {
		if (eat(p, 'C'))
			abi = (struct ident){ .ascii = "C", .ascii_len = 1 };
		else if (!ident(p, &abi) || !abi.ascii_len || abi.puny_len)
			return false;
	}
	ok = !is_unsafe || out(p, "unsafe ");
	if (ok && abi.ascii_len) {
		ok = out(p, "extern \"");
		/* The ABI's '-' were mangled as '_'. */
		for (size_t i = 0; ok && i < abi.ascii_len; i++)
			ok = out_n(p, abi.ascii[i] == '_' ? "-" : abi.ascii + i, 1);
		ok = ok && out(p, "\" ");
	}
	ok = ok && out(p, "fn(") && type_list(p, ", ", &n) && out(p, ")") &&
	     (eat(p, 'u') || (out(p, " -> ") && v0_type(p)));
	p->bound_lifetimes -= bound;
	return ok;
}

/* A dyn bound's trait: a path whose generics stay open for "Item = T". */
static bool v0_open_path(struct v0 *p, bool *open)
{
	*open = false;
	if (eat(p, 'B'))
		return backref(p, BACKREF_OPEN_PATH, open);
	if (eat(p, 'I')) {
		*open = true;
		return v0_path(p, false) && out(p, "<") && generic_args(p);
	}
	return v0_path(p, false);
}

static bool dyn_trait(struct v0 *p)
{
	bool open = false;
	struct ident name;

	if (!v0_open_path(p, &open))
		return false;
	while (eat(p, 'p')) {
		if (!out(p, open ? ", " : "<") || !ident(p, &name) || !out_ident(p, &name) ||
		    !out(p, " = ") || !v0_type(p))
			return false;
		open = true;
	}
	return !open || out(p, ">");
}

/* D <binder> {<dyn-trait>} E L <lifetime>: "dyn A + B + 'a". */
static bool dyn_type(struct v0 *p)
{
	uint64_t bound, lt;
	bool ok = out(p, "dyn ") && open_binder(p, &bound);

	for (unsigned i = 0; ok && !eat(p, 'E'); i++)
		ok = peek(p) >= 0 && (!i || out(p, " + ")) && dyn_trait(p);
	if (ok)
		p->bound_lifetimes -= bound;
	return ok && eat(p, 'L') && base62(p, &lt) &&
	       (!lt || (out(p, " + ") && out_lifetime(p, lt)));
}

static bool v0_type(struct v0 *p)
{
	const char *basic = basic_type(peek(p));
	uint64_t lt;
	unsigned n;
	int tag;
	bool ok;

	if (basic) {
		p->pos++;
		return out(p, basic);
	}
	if (!enter(p))
		return false;
	switch (tag = next(p)) {
	case 'R':
	case 'Q':
		ok = out(p, "&");
		if (ok && eat(p, 'L'))
			ok = base62(p, &lt) && (!lt || (out_lifetime(p, lt) && out(p, " ")));
		ok = ok && (tag == 'R' || out(p, "mut ")) && v0_type(p);
		break;
	case 'P':
	case 'O':
		ok = out(p, tag == 'P' ? "*const " : "*mut ") && v0_type(p);
		break;
	case 'A':
	case 'S':
		ok = out(p, "[") && v0_type(p) &&
		     (tag == 'S' || (out(p, "; ") && v0_const(p))) && out(p, "]");
		break;
	case 'T':
		ok = out(p, "(") && type_list(p, ", ", &n) && (n != 1 || out(p, ",")) &&
		     out(p, ")");
		break;
	case 'F':
		ok = fn_type(p);
		break;
	case 'D':
		ok = dyn_type(p);
		break;
	case 'B':
		ok = backref(p, BACKREF_TYPE, NULL);
		break;
	default:
		p->pos -= tag >= 0;	/* a path: it reads its tag */
		ok = v0_path(p, false);
		break;
	}
	return leave(p, ok);
}

/* <hex-digits> _ as nibbles: *hex and *n, leading zeros dropped. */
static bool hex_nibbles(struct v0 *p, const char **hex, size_t *n)
{
	size_t start = p->pos;

	while (is_lower_hex(peek(p)))
		p->pos++;
	*hex = p->s + start;
	*n = p->pos - start;
	if (!eat(p, '_'))
		return false;
	while (*n && **hex == '0') {
		(*hex)++;
		(*n)--;
	}
	return true;
}

static uint64_t hex_value(const char *hex, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 4 | (uint64_t)(is_digit(hex[i]) ? hex[i] - '0' : hex[i] - 'a' + 10);
	return v;
}

/* An integer constant: decimal, or 0x... past 64 bits; its type with hashes. */
static bool const_uint(struct v0 *p, int type)
{
	const char *hex;
	size_t n;

	if (!hex_nibbles(p, &hex, &n))
		return false;
	if (n > 16) {
		if (!out(p, "0x") || !out_n(p, hex, n))
			return false;
	} else if (!out_u64(p, hex_value(hex, n), false)) {
		return false;
	}
	return !p->hashes || out(p, basic_type(type));
}

/* A char constant as Rust's Debug writes it: 'a', '\n', '\u{1b}'. */
static bool const_char(struct v0 *p)
{
	const char *hex;
	size_t n;
	uint64_t c;
	char esc[16];

	if (!hex_nibbles(p, &hex, &n) || n > 6 || !rust_is_scalar(c = hex_value(hex, n)))
		return false;
	if (p->skip)
		return true;
	if (c == '\'' || c == '\\' || c == '\n' || c == '\t' || c == '\r' || c == 0)
		snprintf(esc, sizeof(esc), "'\\%c'", c == '\n' ? 'n' : c == '\t' ? 't' :
			 c == '\r' ? 'r' : c == 0 ? '0' : (char)c);
	else if (c < 0x20 || (c >= 0x7f && c < 0xa0))
		snprintf(esc, sizeof(esc), "'\\u{%llx}'", (unsigned long long)c);
	else
		return out(p, "'") && rust_put_utf8(p->t, (uint32_t)c) && out(p, "'");
	return out(p, esc);
}

static bool v0_const(struct v0 *p)
{
	int tag = next(p);
	const char *hex;
	size_t n;
	bool ok;

	if (!enter(p))
		return false;
	switch (tag) {
	case 'p':
		ok = out(p, "_");
		break;
	case 'h': case 't': case 'm': case 'y': case 'o': case 'j':
		ok = const_uint(p, tag);
		break;
	case 'a': case 's': case 'l': case 'x': case 'n': case 'i':
		ok = (!eat(p, 'n') || out(p, "-")) && const_uint(p, tag);
		break;
	case 'b':
		ok = hex_nibbles(p, &hex, &n) && n <= 1 &&
		     out(p, n && *hex == '1' ? "true" : "false") && (!n || *hex == '1');
		break;
	case 'c':
		ok = const_char(p);
		break;
	case 'B':
		ok = backref(p, BACKREF_CONST, NULL);
		break;
	default:
		ok = false;	/* str, references, arrays, ADTs: not in stable Rust */
		break;
	}
	return leave(p, ok);
}

bool rust_v0_print(struct text *t, const char *s, size_t len, bool hashes)
{
	struct v0 p = { .s = s, .len = len, .t = t, .hashes = hashes };

	/* A path starts with an uppercase tag; a digit would be a version. */
	if (!is_upper(peek(&p)) || !v0_path(&p, true))
		return false;
	if (is_upper(peek(&p))) {	/* the instantiating crate: not shown */
		p.skip = true;
		if (!v0_path(&p, false))
			return false;
		p.skip = false;
	}
	if (p.pos < len && s[p.pos] != '.' && s[p.pos] != '$')
		return false;
	return rust_put(t, s + p.pos, len - p.pos);
}

