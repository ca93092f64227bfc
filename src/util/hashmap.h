/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_HASHMAP_H
#define GTRACE_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An open-addressing map from 64-bit keys to 64-bit values. Keys that are
 * structures (a stack node's parent and frame, a pid and address) are packed
 * or hashed into 64 bits by the caller; the all-ones key is reserved.
 */
struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	size_t cap;	/* a power of two, or 0 before the first insert */
	size_t len;
};

#define U64MAP_EMPTY UINT64_MAX

bool u64map_get(const struct u64map *m, uint64_t key, uint64_t *val);
/* Inserts or replaces. */
void u64map_put(struct u64map *m, uint64_t key, uint64_t val);
void u64map_free(struct u64map *m);
/*
 * Walks the entries in no particular order: start with *pos = 0; each call
 * gives the next entry, or returns false at the end.
 */
bool u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, uint64_t *val);
/*
 * Interns the pair (a, b) in a map that holds nothing else: its id, dense
 * from 1 in the order of first sight. An id above the caller's count of
 * pairs is a new one.
 */
uint32_t u64map_pair_id(struct u64map *m, uint32_t a, uint32_t b);

uint64_t hash_u64(uint64_t x);
uint64_t hash_bytes(const void *p, size_t len);

/*
 * Interns strings to dense ids 1, 2, ... (0 means "no string"), keeping one
 * copy of each. Used by the recorder for names and by the loader for lookups.
 */
struct strtab {
	struct u64map index;	/* hash -> id of the first string with it */
	char **strs;		/* strs[id - 1] */
	uint32_t *next;		/* next[id - 1]: next id with the same hash */
	size_t len, cap;
};

uint32_t strtab_intern(struct strtab *t, const char *s);
/* 0 when absent. */
uint32_t strtab_find(const struct strtab *t, const char *s);
const char *strtab_get(const struct strtab *t, uint32_t id);
void strtab_free(struct strtab *t);

#endif
