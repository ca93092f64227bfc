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

#define VEC_RESERVE(vec, n)                                                    \
	do {                                                                   \
		size_t vec_need_ = (vec)->len + (n);                           \
		if (vec_need_ > (vec)->cap) {                                  \
			size_t vec_cap_ = (vec)->cap ? (vec)->cap * 2 : 16;    \
			while (vec_cap_ < vec_need_)                           \
				vec_cap_ *= 2;                                 \
			(vec)->v = xrealloc((vec)->v,                          \
					    vec_cap_ * sizeof(*(vec)->v));     \
			(vec)->cap = vec_cap_;                                 \
		}                                                              \
	} while (0)

/* Appends one zeroed element and evaluates to its address. */
#define VEC_PUSH(vec)                                                          \
	(VEC_RESERVE(vec, 1),                                                  \
	 memset(&(vec)->v[(vec)->len], 0, sizeof(*(vec)->v)),                  \
	 &(vec)->v[(vec)->len++])

#define VEC_FREE(vec)                                                          \
	do {                                                                   \
		free((vec)->v);                                                \
		(vec)->v = NULL;                                               \
		(vec)->len = (vec)->cap = 0;                                   \
	} while (0)

#endif
