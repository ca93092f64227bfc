/* SPDX-License-Identifier: MIT */
#include "util/hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

uint64_t hash_u64(uint64_t x)
{
	/* splitmix64's finaliser: cheap and mixes every input bit. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return hash_u64(h);
}

static size_t slot_of(const struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	size_t i = hash_u64(key) & mask;

	while (m->keys[i] != U64MAP_EMPTY && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

static void grow(struct u64map *m)
{
	struct u64map bigger = { .cap = m->cap ? m->cap * 2 : 64 };

	bigger.keys = xmalloc(bigger.cap * sizeof(*bigger.keys));
	bigger.vals = xmalloc(bigger.cap * sizeof(*bigger.vals));
	memset(bigger.keys, 0xff, bigger.cap * sizeof(*bigger.keys));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != U64MAP_EMPTY)
			u64map_put(&bigger, m->keys[i], m->vals[i]);
	u64map_free(m);
	*m = bigger;
}

bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	i = slot_of(m, key);
	if (m->keys[i] == U64MAP_EMPTY)
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

void u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	/* Keep the load under 1/2 so probe chains stay short. */
	if ((m->len + 1) * 2 > m->cap)
		grow(m);
	i = slot_of(m, key);
	if (m->keys[i] == U64MAP_EMPTY) {
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
}

uint32_t u64map_pair_id(struct u64map *m, uint32_t a, uint32_t b)
{
	uint64_t key = (uint64_t)a << 32 | b, id;

	if (u64map_get(m, key, &id))
		return (uint32_t)id;
	id = m->len + 1;
	u64map_put(m, key, id);
	return (uint32_t)id;
}

bool u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	for (; *pos < m->cap; (*pos)++) {
		if (m->keys[*pos] == U64MAP_EMPTY)
			continue;
		if (key)
			*key = m->keys[*pos];
		if (val)
			*val = m->vals[*pos];
		(*pos)++;
		return true;
	}
	return false;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static uint64_t str_key(const char *s)
{
	uint64_t h = hash_bytes(s, strlen(s));

	return h == U64MAP_EMPTY ? 0 : h;
}

uint32_t strtab_find(const struct strtab *t, const char *s)
{
	uint64_t id;

	if (!u64map_get(&t->index, str_key(s), &id))
		return 0;
	for (; id; id = t->next[id - 1])
		if (!strcmp(t->strs[id - 1], s))
			return (uint32_t)id;
	return 0;
}

uint32_t strtab_intern(struct strtab *t, const char *s)
{
	uint64_t key = str_key(s), head = 0;
	uint32_t id = strtab_find(t, s);

	if (id)
		return id;
	if (t->len == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->strs = xrealloc(t->strs, t->cap * sizeof(*t->strs));
		t->next = xrealloc(t->next, t->cap * sizeof(*t->next));
	}
	u64map_get(&t->index, key, &head);
	t->strs[t->len] = xstrdup(s);
	t->next[t->len] = (uint32_t)head;
	id = (uint32_t)++t->len;
	u64map_put(&t->index, key, id);
	return id;
}

const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id && id <= t->len ? t->strs[id - 1] : NULL;
}

void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->len; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->next);
	u64map_free(&t->index);
	memset(t, 0, sizeof(*t));
}
