/* SPDX-License-Identifier: MIT */
/*
 * Feeds arbitrary bytes to the JIT map parser, as the text of a
 * /tmp/perf-PID.map, which the recorded program writes. Every symbol it
 * keeps must be well formed, sorted, and found at its own first address.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/jitmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strtab names = {0};
	struct jitmap m = {0};

	jitmap_parse(&m, (const char *)data, size, &names);
	for (size_t i = 0; i < m.syms.len; i++) {
		const struct jit_sym *s = &m.syms.v[i];
		const char *name = strtab_get(&names, s->name);

		if (s->end <= s->start || !name || !*name || strlen(name) >= JITMAP_MAX_LINE ||
		    (i && m.syms.v[i - 1].start > s->start) || !jitmap_find(&m, s->start))
			abort();
	}
	/* Addresses below, between and above the symbols find nothing or a symbol covering them. */
	for (uint64_t addr = 0; addr < 64; addr++)
		(void)jitmap_find(&m, addr << 58);
	jitmap_free(&m);
	strtab_free(&names);
	return 0;
}
