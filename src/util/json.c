/* SPDX-License-Identifier: MIT */
#include "util/json.h"

#include <assert.h>
#include <inttypes.h>

#include "util/utf8.h"

void json_init(struct json *j, FILE *out)
{
	*j = (struct json){ .out = out, .break_indent = -1 };
}

void json_init_compact(struct json *j, FILE *out)
{
	json_init(j, out);
	j->compact = true;
}

void json_begin_document(struct json *j, FILE *out, int version)
{
	json_init(j, out);
	json_begin_object(j, NULL, JSON_LINES);
	json_int(j, "version", version);
}

static void new_line(struct json *j, int spaces)
{
	fprintf(j->out, "\n%*s", spaces, "");
}

/* What goes before a value: the separator from the member before, and the key. */
static void member(struct json *j, const char *key)
{
	if (j->depth) {
		bool *members = &j->open[j->depth - 1].members;

		if (*members)
			fputc(',', j->out);
		if (j->break_indent >= 0)
			new_line(j, j->break_indent);
		else if (j->open[j->depth - 1].lines)
			new_line(j, j->compact ? 0 : 2 * j->indent);
		else if (*members && !j->compact)
			fputc(' ', j->out);
		*members = true;
		j->break_indent = -1;
	}
	if (key) {
		utf8_fput_json(j->out, key);
		fputs(j->compact ? ":" : ": ", j->out);
	}
}

static void begin(struct json *j, const char *key, bool object, enum json_layout layout)
{
	assert(j->depth < JSON_MAX_DEPTH);
	member(j, key);
	fputc(object ? '{' : '[', j->out);
	j->open[j->depth].object = object;
	j->open[j->depth].lines = layout == JSON_LINES;
	j->open[j->depth].members = false;
	j->depth++;
	j->indent += layout == JSON_LINES;
}

void json_begin_object(struct json *j, const char *key, enum json_layout layout)
{
	begin(j, key, true, layout);
}

void json_begin_array(struct json *j, const char *key, enum json_layout layout)
{
	begin(j, key, false, layout);
}

void json_end(struct json *j)
{
	assert(j->depth > 0);
	j->depth--;
	if (j->open[j->depth].lines) {
		j->indent--;
		if (j->open[j->depth].members && !j->compact)
			new_line(j, 2 * j->indent);
	}
	j->break_indent = -1;
	fputc(j->open[j->depth].object ? '}' : ']', j->out);
	if (!j->depth)
		fputc('\n', j->out);
}

void json_string(struct json *j, const char *key, const char *s)
{
	if (!s) {
		json_null(j, key);
		return;
	}
	member(j, key);
	utf8_fput_json(j->out, s);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->out);
}

void json_bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->out);
}

void json_int(struct json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->out, "%" PRId64, v);
}

void json_uint(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->out, "%" PRIu64, v);
}

void json_fixed(struct json *j, const char *key, int decimals, double v)
{
	member(j, key);
	fprintf(j->out, "%.*f", decimals, v);
}

void json_fixed_or_null(struct json *j, const char *key, bool known, int decimals, double v)
{
	if (known)
		json_fixed(j, key, decimals, v);
	else
		json_null(j, key);
}

void json_ratio_or_null(struct json *j, const char *key, int decimals, double num, double den)
{
	json_fixed_or_null(j, key, den > 0, decimals, den > 0 ? num / den : 0);
}

void json_general(struct json *j, const char *key, int digits, double v)
{
	member(j, key);
	fprintf(j->out, "%.*g", digits, v);
}

void json_scaled(struct json *j, const char *key, uint64_t value, unsigned decimals)
{
	/* 10^19 is the last power of ten a uint64_t holds. */
	int digits = decimals < 19 ? (int)decimals : 19;
	uint64_t div = 1;

	for (int i = 0; i < digits; i++)
		div *= 10;
	member(j, key);
	if (digits)
		fprintf(j->out, "%" PRIu64 ".%0*" PRIu64, value / div, digits, value % div);
	else
		fprintf(j->out, "%" PRIu64, value);
}

void json_break(struct json *j, int indent)
{
	j->break_indent = indent;
}
