/* SPDX-License-Identifier: MIT */
/*
 * stamp IN OUT RULE...: writes OUT, the recording IN with the making
 * machine's names replaced by stable ones, chunk for chunk (the same
 * chunks, tables and rows, only some strings changed), so that the golden
 * recordings and the views of them say nothing of where they were made.
 *   FROM=TO     every string and meta value: FROM replaced by TO where it
 *               starts a path ("/home/me" in "/home/me/x" and in "a
 *               /home/me", not in "/home/meg" nor "/x/home/me")
 *   KEY:=VALUE  the meta value of KEY set to VALUE (hostname:=golden)
 * Exit status 0, or 1 with a message.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/buf.h"
#include "format/file.h"
#include "format/tables.h"
#include "util/xalloc.h"

struct rule {
	char *from, *to;	/* a text rule */
	bool meta;		/* from is a meta key, to its value */
};

static bool path_char(char c)
{
	return c == '/' || c == '.' || c == '-' || c == '_' ||
	       (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* s with each path-starting from replaced by to; s itself when there is none. */
static char *replaced(char *s, const struct rule *r)
{
	size_t from_len = strlen(r->from), to_len = strlen(r->to), n = 0;
	char *out, *o;

	for (const char *p = strstr(s, r->from); p; p = strstr(p + from_len, r->from))
		n++;
	if (!n)
		return s;
	o = out = xmalloc(strlen(s) + n * to_len + 1);
	for (const char *p = s; *p;) {
		char after = p[from_len];

		if (!strncmp(p, r->from, from_len) && (p == s || !path_char(p[-1])) &&
		    (!after || after == '/' || !path_char(after))) {
			memcpy(o, r->to, to_len);
			o += to_len;
			p += from_len;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	free(s);
	return out;
}

static char *stamped(char *s, const struct rule *rules, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!rules[i].meta)
			s = replaced(s, &rules[i]);
	return s;
}

static void stamp(struct tr_tables *t, const struct rule *rules, size_t n)
{
	for (size_t i = 0; i < t->strings.len; i++)
		t->strings.v[i] = stamped(t->strings.v[i], rules, n);
	for (size_t i = 0; i < t->meta.len; i++) {
		struct tr_meta *kv = &t->meta.v[i];

		kv->value = stamped(kv->value, rules, n);
		for (size_t k = 0; k < n; k++) {
			if (rules[k].meta && !strcmp(kv->key, rules[k].from)) {
				free(kv->value);
				kv->value = xstrdup(rules[k].to);
			}
		}
	}
}

static int parse_rule(const char *arg, struct rule *r)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg)
		return -1;
	r->meta = eq[-1] == ':';
	r->from = xstrndup(arg, (size_t)(eq - arg) - r->meta);
	r->to = xstrdup(eq + 1);
	return *r->from ? 0 : -1;
}

/* Copies IN to OUT chunk by chunk, each TABLES chunk stamped. */
static int copy(const char *in, const char *out, const struct rule *rules, size_t n)
{
	struct tr_tables t = {0};
	struct gbuf payload = {0};
	struct tr_writer *w = NULL;
	struct tr_reader *r;
	struct tr_header hdr;
	struct tr_chunk c;
	int err, got;

	err = tr_reader_open(&r, in, &hdr);
	if (err) {
		fprintf(stderr, "stamp: cannot read '%s': %s\n", in, tr_strerror(err));
		return 1;
	}
	err = tr_writer_open(&w, out, hdr.features);
	while (!err && (got = tr_reader_next(r, &c)) > 0) {
		if (c.type == TR_CHUNK_TABLES) {
			tr_tables_clear(&t);
			err = tr_tables_decode(&t, c.payload, c.len);
			if (err)
				break;
			stamp(&t, rules, n);
			gbuf_reset(&payload);
			tr_tables_encode(&t, &payload);
			err = tr_writer_put(w, c.type, payload.data, payload.len);
		} else {
			err = tr_writer_put(w, c.type, c.payload, c.len);
		}
	}
	if (!err && got < 0)
		err = got;
	if (!err)
		err = tr_writer_close(w);
	else if (w)
		tr_writer_discard(w);
	if (err)
		fprintf(stderr, "stamp: cannot copy '%s' to '%s': %s\n", in, out, tr_strerror(err));
	tr_reader_close(r);
	tr_tables_free(&t);
	gbuf_free(&payload);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 3 ? (size_t)argc - 3 : 0;
	struct rule *rules = xcalloc(n + 1, sizeof(*rules));
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: stamp IN OUT [FROM=TO | KEY:=VALUE]...\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		if (parse_rule(argv[i + 3], &rules[i])) {
			fprintf(stderr, "stamp: bad rule '%s': FROM=TO or KEY:=VALUE\n",
				argv[i + 3]);
			return 1;
		}
	}
	status = copy(argv[1], argv[2], rules, n);
	for (size_t i = 0; i < n; i++) {
		free(rules[i].from);
		free(rules[i].to);
	}
	free(rules);
	return status;
}
