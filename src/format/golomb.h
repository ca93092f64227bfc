/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_FORMAT_GOLOMB_H
#define GTRACE_FORMAT_GOLOMB_H

/*
 * Runs of Exp-Golomb codes (man/gtrace-format.5, "golomb"), for signed
 * values whose low bits are noise, such as a timer's jitter in
 * nanoseconds: the low k bits are stored as they are and only the rest
 * pays for its size, two bits a doubling. As varints, zstd's byte-wise
 * entropy coder cannot pack such values: about a quarter of their bytes
 * is lost to the 7-bit groups. Private to format/.
 *
 * A run: uvarint k (1 to GOLOMB_K_MAX), uvarint byte count, then those
 * bytes: one code of order k a value, bits packed from each byte's least
 * significant bit up.
 */

#include <stddef.h>
#include <stdint.h>

#include "format/buf.h"

#define GOLOMB_K_MAX 63		/* so that a quotient plus one fits 64 bits */

/* Appends the run of the n values, zigzagged, in the k that takes the fewest bits. */
void golomb_run_put(struct gbuf *out, const int64_t *v, size_t n);

struct golomb_reader {
	const uint8_t *p, *end;
	uint64_t acc;		/* bits read ahead, the next lowest */
	unsigned have;		/* how many */
	unsigned k;
	int err;		/* set by a code that runs past the end or past 64 bits */
};

/* Takes a run's header and bytes from c (err set there if they are bad). */
void golomb_run_open(struct golomb_reader *r, struct gcursor *c);
/* The run's next value; 0 with err set if its code is bad. */
int64_t golomb_get(struct golomb_reader *r);
/*
 * After the run's last value: 0, or -1 with err set when more bytes, or
 * padding bits that are not zero, follow its last code: rows have one
 * encoding only.
 */
int golomb_run_close(struct golomb_reader *r);

#endif
