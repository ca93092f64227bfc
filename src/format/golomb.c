/* SPDX-License-Identifier: MIT */
#include "format/golomb.h"

struct golomb_writer {
	struct gbuf *out;
	uint64_t acc;		/* bits not yet whole bytes, the first lowest */
	unsigned n;		/* how many */
};

/* Bits of v up to its highest set bit; 0 for 0. */
static unsigned bit_length(uint64_t v)
{
	return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

static uint64_t low_bits(uint64_t v, unsigned bits)
{
	return bits < 64 ? v & ((UINT64_C(1) << bits) - 1) : v;
}

/* The k that codes the values in the fewest bits: 1 to GOLOMB_K_MAX. */
static unsigned best_k(const int64_t *v, size_t n)
{
	uint64_t lengths[65] = {0}, best_bits = UINT64_MAX;
	unsigned best = 1;

	for (size_t i = 0; i < n; i++)
		lengths[bit_length(zigzag(v[i]))]++;
	/*
	 * A value of b bits costs k + 1 bits when b <= k; when b > k its
	 * quotient plus one has b - k bits (one more only for a quotient of
	 * all ones), which cost twice that less one.
	 */
	for (unsigned k = 1; k <= GOLOMB_K_MAX; k++) {
		uint64_t bits = 0;

		for (unsigned b = 0; b <= 64; b++)
			bits += lengths[b] * (k + (b > k ? 2 * (b - k) - 1 : 1));
		if (bits < best_bits) {
			best_bits = bits;
			best = k;
		}
	}
	return best;
}

/* Appends the low bits of v, at most 32 at a time. */
static void put_bits(struct golomb_writer *w, uint64_t v, unsigned bits)
{
	while (bits) {
		unsigned now = bits < 32 ? bits : 32;

		w->acc |= low_bits(v, now) << w->n;
		w->n += now;
		v >>= now;
		bits -= now;
		while (w->n >= 8) {
			gbuf_put(w->out, &(uint8_t){ (uint8_t)w->acc }, 1);
			w->acc >>= 8;
			w->n -= 8;
		}
	}
}

/*
 * With q = v >> k and u = q + 1 of L bits: L - 1 zero bits, a one bit,
 * the L - 1 bits of u under its top bit, then the low k bits of v.
 */
static void put_code(struct golomb_writer *w, uint64_t v, unsigned k)
{
	uint64_t u = (v >> k) + 1;
	unsigned len = bit_length(u);

	put_bits(w, 0, len - 1);
	put_bits(w, 1, 1);
	put_bits(w, u, len - 1);
	put_bits(w, v, k);
}

void golomb_run_put(struct gbuf *out, const int64_t *v, size_t n)
{
	struct gbuf bits = {0};
	struct golomb_writer w = { .out = &bits };
	unsigned k = best_k(v, n);

	for (size_t i = 0; i < n; i++)
		put_code(&w, zigzag(v[i]), k);
	if (w.n)
		put_bits(&w, 0, 8 - w.n);	/* the last byte's padding */
	gbuf_put_uvarint(out, k);
	gbuf_put_uvarint(out, bits.len);
	gbuf_put(out, bits.data, bits.len);
	gbuf_free(&bits);
}

void golomb_run_open(struct golomb_reader *r, struct gcursor *c)
{
	uint64_t k = gcursor_uvarint(c), len = gcursor_uvarint(c);
	const uint8_t *bytes = len <= gcursor_left(c) ? gcursor_bytes(c, (size_t)len) : NULL;

	*r = (struct golomb_reader){0};
	if (!bytes || k < 1 || k > GOLOMB_K_MAX) {
		c->err = 1;
		r->err = 1;
		return;
	}
	r->k = (unsigned)k;
	r->p = bytes;
	r->end = bytes + len;
}

static void refill(struct golomb_reader *r)
{
	while (r->have <= 56 && r->p < r->end) {
		r->acc |= (uint64_t)*r->p++ << r->have;
		r->have += 8;
	}
}

/* The next bits, at most 32 at a time. */
static uint64_t get_bits(struct golomb_reader *r, unsigned bits)
{
	uint64_t v = 0;

	for (unsigned got = 0; got < bits;) {
		unsigned now = bits - got < 32 ? bits - got : 32;

		refill(r);
		if (r->have < now) {
			r->err = 1;
			return 0;
		}
		v |= low_bits(r->acc, now) << got;
		r->acc >>= now;
		r->have -= now;
		got += now;
	}
	return v;
}

/* The zero bits before the next one bit, which is taken too: at most 63. */
static unsigned get_zeros(struct golomb_reader *r)
{
	unsigned zeros = 0, tz;

	for (;;) {
		refill(r);
		if (!r->have || zeros > 63) {
			r->err = 1;
			return 0;
		}
		if (r->acc)
			break;
		zeros += r->have;
		r->have = 0;
	}
	tz = (unsigned)__builtin_ctzll(r->acc);
	zeros += tz;
	if (zeros > 63) {
		r->err = 1;
		return 0;
	}
	/* tz < have <= 64 */
	r->acc = tz < 63 ? r->acc >> (tz + 1) : 0;
	r->have -= tz + 1;
	return zeros;
}

int64_t golomb_get(struct golomb_reader *r)
{
	unsigned zeros;
	uint64_t q, z;

	if (r->err)
		return 0;
	zeros = get_zeros(r);
	q = (UINT64_C(1) << zeros | get_bits(r, zeros)) - 1;

	/* Bits of q shifted out of 64 would be lost: no writer makes such a code. */
	if (q >> (64 - r->k))
		r->err = 1;
	z = q << r->k | get_bits(r, r->k);
	return r->err ? 0 : unzigzag(z);
}

int golomb_run_close(struct golomb_reader *r)
{
	refill(r);
	if (r->p != r->end || r->have >= 8 || r->acc)
		r->err = 1;
	return r->err ? -1 : 0;
}
