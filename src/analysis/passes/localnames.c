/* SPDX-License-Identifier: MIT */
/*
 * Names for a recording whose recorder died before it symbolized (that is
 * done at the end): each address is looked up in the local file the
 * recording names, used only where its build-id is the recorded one, as
 * perf report does with its build-id cache.
 */
#include "analysis/passes/passes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "contract/counters.h"
#include "symbols/symbols.h"
#include "util/hashmap.h"
#include "util/xalloc.h"

bool localnames_needed(const struct model *m)
{
	uint64_t v;

	/* The recorder's symbol counters come with its names, at the end. */
	return m->t.locs.len && !model_counter(m, COUNTER_SYMBOLS_RESOLVED, &v);
}

/*
 * The model's string id of a symbolizer string, added once: the
 * symbolizer hands out one pointer per text, so the pointer is the key.
 */
static uint32_t add_string(struct model *m, struct u64map *added, const char *s)
{
	uint64_t id;

	if (!u64map_get(added, (uintptr_t)s, &id)) {
		*VEC_PUSH(&m->t.strings) = xstrdup(s);
		id = m->t.strings.len;
		u64map_put(added, (uintptr_t)s, id);
	}
	return (uint32_t)id;
}

/* The dso as the symbolizer takes it, its path under symfs. */
static struct dso_info dso_of(const struct model *m, uint32_t id, const char *symfs,
			      char **path)
{
	const struct tr_dso *d = &m->t.dsos.v[id - 1];
	const char *recorded = model_str(m, d->path);
	struct dso_info info = {
		.id = id, .flags = d->flags, .pid = d->pid, .build_id_len = d->build_id_len,
	};

	if (!recorded)
		recorded = "";
	*path = xmalloc(strlen(symfs ? symfs : "") + strlen(recorded) + 1);
	strcpy(*path, symfs ? symfs : "");
	strcat(*path, recorded);
	info.path = *path;
	if (info.build_id_len > sizeof(info.build_id))
		info.build_id_len = sizeof(info.build_id);
	memcpy(info.build_id, d->build_id, info.build_id_len);
	return info;
}

void localnames_fill(struct model *m, const char *symfs, struct localnames_stats *st)
{
	struct sym_frame frames[SYM_MAX_INLINE];
	uint8_t *dso_state = xcalloc(m->t.dsos.len + 1, 1);	/* 1 usable, 2 stale, 3 missing */
	struct u64map added = {0};	/* symbolizer string -> model string id */
	struct symbolizer *sym;

	memset(st, 0, sizeof(*st));
	if (symbolizer_new(&sym)) {
		free(dso_state);
		return;
	}
	for (uint32_t loc = 1; loc <= m->t.locs.len; loc++) {
		const struct tr_loc *l = &m->t.locs.v[loc - 1];
		struct dso_info info;
		char *path;
		int n;

		if (m->loc_syms[loc].count || !l->dso || l->dso > m->t.dsos.len ||
		    (m->t.dsos.v[l->dso - 1].flags & TR_DSO_PYTHON))
			continue;
		st->missing++;
		if (dso_state[l->dso] > 1)
			continue;
		info = dso_of(m, l->dso, symfs, &path);
		n = symbolize(sym, &info, l->addr, frames, SYM_MAX_INLINE);
		free(path);
		if (n < 0) {
			dso_state[l->dso] = n == -ESTALE ? 2 : 3;
			st->stale_dsos += n == -ESTALE;
			st->missing_dsos += n != -ESTALE;
			continue;
		}
		dso_state[l->dso] = 1;
		st->named += n > 0;
		for (int i = 0; i < n; i++) {
			struct tr_symbol *row = VEC_PUSH(&m->t.symbols);

			row->loc = loc;
			row->func = add_string(m, &added, frames[i].func);
			row->file = frames[i].file ? add_string(m, &added, frames[i].file) : 0;
			row->line = frames[i].line;
			row->flags = frames[i].inlined ? TR_SYM_INLINED : 0;
		}
	}
	symbolizer_free(sym);
	u64map_free(&added);
	free(dso_state);
	model_index_symbols(m);
}
