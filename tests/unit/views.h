/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_VIEWS_H
#define GTRACE_TESTS_VIEWS_H

/*
 * Checking what the views print: capture a view's output as one string,
 * then look for whole lines or count what it holds.
 *
 *	struct capture cap;
 *	threads_print(capture_start(&cap), &m, NULL, 0, false);
 *	CHECK(has_line(capture_end(&cap), "..."));
 *	free(cap.text);
 */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis/views/report.h"

/* What a view wrote, as one string. */
struct capture {
	char *text;
	size_t len;
	FILE *f;
};

static inline FILE *capture_start(struct capture *c)
{
	c->f = open_memstream(&c->text, &c->len);
	return c->f;
}

static inline const char *capture_end(struct capture *c)
{
	fclose(c->f);
	return c->text;
}

/* Whether text has line as a whole line; says which line it missed. */
static inline bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');

		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	printf("  missing line: \"%s\"\n", line);
	return false;
}

/* How many times needle stands in text, without overlaps. */
static inline size_t count_of(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The row of a report keyed by symbol whose function is named symbol. */
static inline const struct report_row *find_symbol_row(const struct report *r,
						       const struct funcs *f,
						       const char *symbol)
{
	for (size_t i = 0; i < r->rows.len; i++)
		if (!strcmp(funcs_name(f, f->v.v[r->rows.v[i].func].name), symbol))
			return &r->rows.v[i];
	return NULL;
}

#endif
