/* SPDX-License-Identifier: MIT */
/*
 * Rust function names as the views show them. The recorder stores them
 * mangled (src/symbols/demangle.c), the one form that holds both what
 * rustc-demangle shows by default and its hashes; each distinct name is
 * demangled here once, into a string of its own, so that a span or a
 * thread that happens to share the text keeps it.
 */
#include "analysis/passes/passes.h"

#include "symbols/rust-demangle.h"
#include "util/hashmap.h"

void rustnames_demangle(struct model *m, bool hashes)
{
	struct u64map done = { 0 };	/* string id -> its demangled string id, 0 if not Rust */

	for (size_t i = 0; i < m->t.symbols.len; i++) {
		struct tr_symbol *sym = &m->t.symbols.v[i];
		const char *name;
		char *plain;
		uint64_t id;

		if (!u64map_get(&done, sym->func, &id)) {
			name = model_str(m, sym->func);
			plain = name && name[0] == '_' ? rust_demangle(name, hashes) : NULL;
			id = 0;
			if (plain) {
				*VEC_PUSH(&m->t.strings) = plain;
				id = m->t.strings.len;
			}
			u64map_put(&done, sym->func, id);
		}
		if (id)
			sym->func = (uint32_t)id;
	}
	u64map_free(&done);
}
