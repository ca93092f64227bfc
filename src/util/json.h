/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_JSON_H
#define GTRACE_UTIL_JSON_H

/*
 * A streaming JSON writer: the views' --format json documents, written as
 * they are walked, with the writer keeping the nesting, the commas and the
 * line breaks. Every value function takes the member's key, NULL for an
 * element of an array or the document itself; strings are escaped as
 * utf8_fput_json does (a byte that is not UTF-8 becomes U+FFFD).
 *
 * The views print their documents half pretty: a container is laid out
 * either on one line ({"a": 1, "b": 2}) or a member a line, each indented
 * two spaces per such container around it, its closing bracket on a line
 * of its own (none when it is empty). The document ends with a newline.
 * Compact, for documents too big to be read by eye (export's Chrome JSON):
 * no space after a comma or a colon, and a member a line starts at the
 * line's start, the closing bracket right after the last member.
 *
 *	json_begin_document(&j, stdout, 1);
 *	json_begin_array(&j, "rows", JSON_LINES);
 *	...
 *	json_end(&j);
 *	json_end(&j);
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum json_layout {
	JSON_INLINE,	/* members on one line, ", " between them */
	JSON_LINES,	/* a member a line */
};

#define JSON_MAX_DEPTH 16

struct json {
	FILE *out;
	bool compact;		/* json_init_compact */
	int depth;		/* containers open */
	int indent;		/* of them, those laid out a member a line */
	int break_indent;	/* >= 0: the next member starts a line of its own, so indented */
	struct {
		bool object;	/* else an array */
		bool lines;	/* JSON_LINES */
		bool members;	/* one was written */
	} open[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *out);
void json_init_compact(struct json *j, FILE *out);
/*
 * json_init, then opens a document as the views print theirs: an object a
 * member a line whose first member is "version", that of the document's
 * keys (gtrace-report(1) and the others list them); json_end closes it.
 */
void json_begin_document(struct json *j, FILE *out, int version);

/* A container, as a member (key) or an element (NULL); json_end closes it. */
void json_begin_object(struct json *j, const char *key, enum json_layout layout);
void json_begin_array(struct json *j, const char *key, enum json_layout layout);
void json_end(struct json *j);

/* s as a JSON string; null for NULL. */
void json_string(struct json *j, const char *key, const char *s);
void json_null(struct json *j, const char *key);
void json_bool(struct json *j, const char *key, bool v);
void json_int(struct json *j, const char *key, int64_t v);
void json_uint(struct json *j, const char *key, uint64_t v);
/* v with decimals digits after the point (printf's %.*f). */
void json_fixed(struct json *j, const char *key, int decimals, double v);
/* As json_fixed when known, else null: a figure a view may lack. */
void json_fixed_or_null(struct json *j, const char *key, bool known, int decimals, double v);
/* num / den with decimals digits after the point, or null where den is not above 0. */
void json_ratio_or_null(struct json *j, const char *key, int decimals, double num, double den);
/* v with at most digits significant digits (printf's %.*g). */
void json_general(struct json *j, const char *key, int digits, double v);
/* value / 10^decimals, exactly: its integer part, a point and decimals digits. */
void json_scaled(struct json *j, const char *key, uint64_t value, unsigned decimals);

/*
 * Starts the next member of an inline container on a line of its own,
 * indented by indent spaces: for a row too long for one line.
 */
void json_break(struct json *j, int indent);

#endif
