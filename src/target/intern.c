/* SPDX-License-Identifier: MIT */
/*
 * Strings and lanes of the process. Both are kept until the process ends,
 * so handles and string pointers stay valid without reference counts, and
 * a new connection can be sent every definition again.
 */
#include "target/internal.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * strings[id - 1]: struct tgt_string; by_text: open addressing on a hash
 * of the text. Arrays of void * so that one grow and one rehash serve both.
 */
static void **strings;
static uint32_t nstrings, strings_cap;
static void **by_text;
static size_t by_text_cap;

/* lanes[id - 1]: gtrace_lane; by_pair: open addressing on (kind, name). */
static void **lanes;
static uint32_t nlanes, lanes_cap;
static void **by_pair;
static size_t by_pair_cap;

void tgt_intern_lock(void)
{
	pthread_mutex_lock(&intern_lock);
}

void tgt_intern_unlock(void)
{
	pthread_mutex_unlock(&intern_lock);
}

static uint64_t hash_text(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_pair(uint32_t kind, uint32_t name)
{
	uint64_t h = ((uint64_t)kind << 32 | name) * 0x9e3779b97f4a7c15ull;

	return h ^ h >> 29;
}

/* Grows an array of pointers to hold one more; false when out of memory. */
static bool reserve(void ***array, uint32_t len, uint32_t *cap)
{
	uint32_t new_cap = *cap ? *cap * 2 : 64;
	void **grown;

	if (len < *cap)
		return true;
	grown = realloc(*array, new_cap * sizeof(**array));
	if (!grown)
		return false;
	*array = grown;
	*cap = new_cap;
	return true;
}

/*
 * Keeps an open-addressing table at most half full: rebuilds it twice as
 * big from the id-ordered array when the next insert would pass that.
 */
static bool rehash(void ***table, size_t *cap, void *const *all, uint32_t len,
		   uint64_t (*hash)(const void *))
{
	size_t new_cap = *cap ? *cap * 2 : 128;
	void **grown;

	if ((len + 1) * 2 <= *cap)
		return true;
	grown = calloc(new_cap, sizeof(*grown));
	if (!grown)
		return false;
	for (uint32_t i = 0; i < len; i++) {
		size_t slot = hash(all[i]) & (new_cap - 1);

		while (grown[slot])
			slot = (slot + 1) & (new_cap - 1);
		grown[slot] = all[i];
	}
	free(*table);
	*table = grown;
	*cap = new_cap;
	return true;
}

static uint64_t string_hash(const void *p)
{
	const struct tgt_string *s = p;

	return hash_text(s->str, s->len);
}

static uint64_t lane_hash(const void *p)
{
	const gtrace_lane *l = p;

	return hash_pair(l->kind, l->name);
}

const struct tgt_string *tgt_intern(const char *text)
{
	size_t len = strnlen(text, TGT_NAME_MAX);
	uint64_t h = hash_text(text, len);
	struct tgt_string *s = NULL;
	size_t slot;

	pthread_mutex_lock(&intern_lock);
	if (!rehash(&by_text, &by_text_cap, strings, nstrings, string_hash) ||
	    !reserve(&strings, nstrings, &strings_cap))
		goto out;
	for (slot = h & (by_text_cap - 1); by_text[slot]; slot = (slot + 1) & (by_text_cap - 1)) {
		s = by_text[slot];
		if (s->len == len && memcmp(s->str, text, len) == 0)
			goto out;
	}
	s = malloc(sizeof(*s) + len + 1);
	if (!s)
		goto out;
	s->id = nstrings + 1;
	s->len = len;
	memcpy(s->str, text, len);
	s->str[len] = '\0';
	strings[nstrings++] = s;
	by_text[slot] = s;
out:
	pthread_mutex_unlock(&intern_lock);
	return s;
}

gtrace_lane *tgt_lane_get(const char *kind, const char *name)
{
	const struct tgt_string *k = tgt_intern(kind ? kind : "");
	const struct tgt_string *n = tgt_intern(name ? name : "");
	gtrace_lane *l = NULL;
	size_t slot;

	if (!k || !n)
		return NULL;
	pthread_mutex_lock(&intern_lock);
	if (!rehash(&by_pair, &by_pair_cap, lanes, nlanes, lane_hash) ||
	    !reserve(&lanes, nlanes, &lanes_cap))
		goto out;
	slot = hash_pair(k->id, n->id) & (by_pair_cap - 1);
	for (; by_pair[slot]; slot = (slot + 1) & (by_pair_cap - 1)) {
		l = by_pair[slot];
		if (l->kind == k->id && l->name == n->id)
			goto out;
	}
	l = malloc(sizeof(*l));
	if (!l)
		goto out;
	l->id = nlanes + 1;
	l->kind = k->id;
	l->name = n->id;
	lanes[nlanes++] = l;
	by_pair[slot] = l;
out:
	pthread_mutex_unlock(&intern_lock);
	return l;
}

const struct tgt_string *tgt_string_by_id(uint32_t id)
{
	const struct tgt_string *s = NULL;

	pthread_mutex_lock(&intern_lock);
	if (id >= 1 && id <= nstrings)
		s = strings[id - 1];
	pthread_mutex_unlock(&intern_lock);
	return s;
}

const gtrace_lane *tgt_lane_by_id(uint32_t id)
{
	const gtrace_lane *l = NULL;

	pthread_mutex_lock(&intern_lock);
	if (id >= 1 && id <= nlanes)
		l = lanes[id - 1];
	pthread_mutex_unlock(&intern_lock);
	return l;
}
