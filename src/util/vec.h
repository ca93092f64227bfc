/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_VEC_H
#define GTRACE_UTIL_VEC_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/*
 * A growable array of any element type:
 *
 *	VEC(struct foo) foos = {0};
 *	struct foo *f = VEC_PUSH(&foos);
 *	for (size_t i = 0; i < foos.len; i++) use(&foos.v[i]);
 *	VEC_FREE(&foos);
 */
#define VEC(type) struct { type *v; size_t len, cap; }

/* Grows an array of cap elements of size bytes to hold need; returns it. */
static inline void *vec_grow_(void *v, size_t *cap, size_t need, size_t size)
{
	size_t new_cap = *cap ? *cap * 2 : 16;

	while (new_cap < need)
		new_cap *= 2;
	*cap = new_cap;
	return xrealloc(v, new_cap * size);
}

/* An expression, so that VEC_PUSH can use it. */
#define VEC_RESERVE(vec, n)                                                    \
	((vec)->len + (n) > (vec)->cap                                         \
		 ? (void)((vec)->v = vec_grow_((vec)->v, &(vec)->cap,          \
					       (vec)->len + (n),               \
					       sizeof(*(vec)->v)))             \
		 : (void)0)

/* Appends one zeroed element and evaluates to its address. */
#define VEC_PUSH(vec)                                                          \
	(VEC_RESERVE(vec, 1),                                                  \
	 memset(&(vec)->v[(vec)->len], 0, sizeof(*(vec)->v)),                  \
	 &(vec)->v[(vec)->len++])

/* Makes the vector n zeroed elements long. */
#define VEC_ZEROED(vec, n)                                                     \
	do {                                                                   \
		(vec)->len = 0;                                                \
		VEC_RESERVE(vec, n);                                           \
		if (n)                                                         \
			memset((vec)->v, 0, (n) * sizeof(*(vec)->v));          \
		(vec)->len = (n);                                              \
	} while (0)

/* Appends n elements copied from src. */
#define VEC_APPEND(vec, src, n)                                                \
	do {                                                                   \
		if (n) {                                                       \
			VEC_RESERVE(vec, n);                                   \
			memcpy(&(vec)->v[(vec)->len], src, (n) * sizeof(*(vec)->v)); \
			(vec)->len += (n);                                     \
		}                                                              \
	} while (0)

/* qsort of the elements; an empty vector's NULL array is never handed to qsort. */
#define VEC_SORT(vec, cmp)                                                     \
	do {                                                                   \
		if ((vec)->len)                                                \
			qsort((vec)->v, (vec)->len, sizeof(*(vec)->v), cmp);   \
	} while (0)

#define VEC_FREE(vec)                                                          \
	do {                                                                   \
		free((vec)->v);                                                \
		(vec)->v = NULL;                                               \
		(vec)->len = (vec)->cap = 0;                                   \
	} while (0)

#endif
