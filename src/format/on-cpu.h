/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_FORMAT_ON_CPU_H
#define GTRACE_FORMAT_ON_CPU_H

/*
 * The on-cpu column encoding (man/gtrace-format.5): a thread's next sample
 * predicted from its last one, a period of CPU time on, pushed on by the
 * thread's off-CPU intervals of the same chunk. Private to format/.
 */

#include <stddef.h>
#include <stdint.h>

#include "format/tables.h"
#include "util/hashmap.h"
#include "util/vec.h"

/* The on-cpu encoding's input: the offcpu rows of the payload before the table's record. */
struct offcpu_rows {
	const struct tr_offcpu *v;
	size_t len;
};

/* The on-cpu state of one key. */
struct on_cpu_key {
	uint64_t last;		/* its last row's value */
	size_t cursor;		/* its first interval not yet taken */
};

/*
 * The prediction: from the last value of the row's key, a step on, pushed
 * on by the key's off-CPU intervals in row order, each taken once.
 */
struct on_cpu {
	struct offcpu_rows off;
	size_t *next;		/* next[i]: the next interval of off.v[i].tid, off.len for none */
	struct u64map first;	/* key -> its first interval */
	struct u64map slot;	/* key -> its state in keys */
	VEC(struct on_cpu_key) keys;
	struct on_cpu_key *row_key;	/* the current row's, NULL for a key not seen before */
	uint64_t step;
	uint64_t prev;		/* the previous row's value */
};

void on_cpu_init(struct on_cpu *oc, struct offcpu_rows off, uint64_t step);
/* The predicted value of the next row, of key. */
uint64_t on_cpu_predict(struct on_cpu *oc, uint32_t key);
/* After on_cpu_predict for the same row: its value is v. */
void on_cpu_put(struct on_cpu *oc, uint32_t key, uint64_t v);
void on_cpu_free(struct on_cpu *oc);

#endif
