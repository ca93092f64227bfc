/* SPDX-License-Identifier: MIT */
/* The on-cpu column encoding's prediction (see on-cpu.h). */
#include "format/on-cpu.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void on_cpu_init(struct on_cpu *oc, struct offcpu_rows off, uint64_t step)
{
	memset(oc, 0, sizeof(*oc));
	oc->off = off;
	oc->step = step;
	oc->next = xmalloc((off.len ? off.len : 1) * sizeof(*oc->next));
	for (size_t i = off.len; i-- > 0;) {
		uint64_t after = off.len;

		u64map_get(&oc->first, off.v[i].tid, &after);
		oc->next[i] = (size_t)after;
		u64map_put(&oc->first, off.v[i].tid, i);
	}
}

uint64_t on_cpu_predict(struct on_cpu *oc, uint32_t key)
{
	struct on_cpu_key *k;
	uint64_t slot, p;
	size_t i;

	oc->row_key = NULL;
	if (!u64map_get(&oc->slot, key, &slot))
		return oc->prev;
	k = &oc->keys.v[slot];
	p = k->last + oc->step;
	for (i = k->cursor; i < oc->off.len && oc->off.v[i].start < p; i = oc->next[i])
		if (oc->off.v[i].start >= k->last)
			p += oc->off.v[i].end - oc->off.v[i].start;
	k->cursor = i;
	oc->row_key = k;
	return p;
}

void on_cpu_put(struct on_cpu *oc, uint32_t key, uint64_t v)
{
	struct on_cpu_key *k = oc->row_key;
	uint64_t first = oc->off.len;

	if (!k) {
		u64map_get(&oc->first, key, &first);
		u64map_put(&oc->slot, key, oc->keys.len);
		k = VEC_PUSH(&oc->keys);
		k->cursor = (size_t)first;
	}
	k->last = v;
	oc->prev = v;
}

void on_cpu_free(struct on_cpu *oc)
{
	free(oc->next);
	u64map_free(&oc->first);
	u64map_free(&oc->slot);
	VEC_FREE(&oc->keys);
}
