/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_EXPORTS_H
#define GTRACE_TESTS_EXPORTS_H

/* What gtrace export writes of a synthetic model, for the tests to look into. */

#include <stdio.h>
#include <string.h>

#include "analysis/encoders/export-emitter.h"
#include "analysis/passes/passes.h"
#include "synth.h"
#include "test.h"

/* The export of m in format with the window [start, end) ns, as a NUL-terminated text. */
static inline char *export_text(struct model *m, enum export_format format, const struct sample_filter *flt,
		    uint64_t start, uint64_t end, size_t *len)
{
	struct sample_filter none = {0};
	struct origin_links links;
	struct funcs f;
	struct export_opts o = {
		.format = format,
		.filter = flt ? flt : &none,
		.links = &links,
		.start_ns = start,
		.end_ns = end,
	};
	char *text = NULL;
	FILE *out = open_memstream(&text, len);

	funcs_init(&f, m, 0);
	origins_link(&links, m, 4 * SYNTH_PERIOD);
	CHECK(export_write(out, &f, &o) == 0);
	fclose(out);
	origins_free(&links);
	funcs_free(&f);
	return text;
}

/* How many times what stands in the len bytes of text, which may hold NULs. */
static inline size_t export_count(const char *text, size_t len, const char *what)
{
	size_t n = 0, wlen = strlen(what);

	for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), what, wlen)); p += wlen)
		n++;
	return n;
}

#endif
