/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_TESTS_PCAPP_H
#define GTRACE_TESTS_PCAPP_H

/*
 * For the tests that read the cubins of tests/cuda/pc-app.cu (built by
 * nvcc into the build's tests/cuda): the source, its marked lines, and
 * files read whole.
 */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/xalloc.h"

#define PCAPP_SOURCE "tests/cuda/pc-app.cu"
#define PCAPP_INSN 16		/* bytes of a SASS instruction */

/* A file read whole. */
struct blob {
	unsigned char *bytes;
	size_t len;
};

/* False when path cannot be read (the build has no nvcc), or is empty. */
static inline bool read_blob(const char *path, struct blob *b)
{
	FILE *f = fopen(path, "rb");
	long len;
	bool ok;

	if (!f)
		return false;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return false;
	}
	b->len = (size_t)len;
	b->bytes = xmalloc(b->len);
	ok = fread(b->bytes, 1, b->len, f) == b->len;
	fclose(f);
	return ok;
}

/* The line of PCAPP_SOURCE that holds mark ("PC-HOT-LINE"), 0 when none does. */
static inline unsigned marked_line(const char *mark)
{
	FILE *f = fopen(PCAPP_SOURCE, "r");
	char buf[512];
	unsigned n = 0, found = 0;

	if (!f)
		return 0;
	while (!found && fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, mark))
			found = n;
	}
	fclose(f);
	return found;
}

#endif
