/* SPDX-License-Identifier: MIT */
#include "record/records.h"

#include <errno.h>
#include <string.h>

#include "util/sorted.h"

/* The sample fields this parser knows, in the order the kernel writes them. */
#define KNOWN_SAMPLE_BITS                                                      \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |           \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |                \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |        \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* A bounds-checked walk over a record's u64 words. */
struct words {
	const uint64_t *p, *end;
	int err;
};

static void words_init(struct words *w, const struct perf_event_header *h)
{
	w->p = (const uint64_t *)(h + 1);
	w->end = (const uint64_t *)((const uint8_t *)h + (h->size & ~7u));
	w->err = w->p > w->end;
}

/* Returns n words and steps over them, or NULL at the end of the record. */
static const uint64_t *words_take(struct words *w, uint64_t n)
{
	const uint64_t *at = w->p;

	if (w->err || n > (uint64_t)(w->end - w->p)) {
		w->err = 1;
		return NULL;
	}
	w->p += n;
	return at;
}

static uint64_t words_next(struct words *w)
{
	const uint64_t *v = words_take(w, 1);

	return v ? *v : 0;
}

static void split_u32(uint64_t v, uint32_t *lo, uint32_t *hi)
{
	/* The kernel writes two u32s into one word: the first is the low half. */
	*lo = (uint32_t)v;
	*hi = (uint32_t)(v >> 32);
}

/* The leading fields, which the kernel writes before any of variable length. */
static void take_head(struct words *w, uint64_t type, struct rec_head *hd)
{
	if (type & PERF_SAMPLE_IDENTIFIER)
		hd->id = words_next(w);
	if (type & PERF_SAMPLE_IP)
		hd->ip = words_next(w);
	if (type & PERF_SAMPLE_TID)
		split_u32(words_next(w), &hd->pid, &hd->tid);
	if (type & PERF_SAMPLE_TIME)
		hd->time = words_next(w);
}

int rec_parse_head(const struct rec_layout *l, const struct perf_event_header *h,
		   struct rec_head *hd)
{
	struct words w;

	memset(hd, 0, sizeof(*hd));
	if (l->sample_type & ~(uint64_t)KNOWN_SAMPLE_BITS)
		return -EINVAL;
	words_init(&w, h);
	take_head(&w, l->sample_type, hd);
	if (w.err) {
		memset(hd, 0, sizeof(*hd));
		return -EINVAL;
	}
	return 0;
}

int rec_parse_sample(const struct rec_layout *l, const struct perf_event_header *h,
		     struct rec_sample *s)
{
	uint64_t type = l->sample_type;
	struct rec_head hd = {0};
	uint32_t unused;
	struct words w;

	memset(s, 0, sizeof(*s));
	if (type & ~(uint64_t)KNOWN_SAMPLE_BITS)
		return -EINVAL;
	words_init(&w, h);
	take_head(&w, type, &hd);
	s->id = hd.id;
	s->ip = hd.ip;
	s->pid = hd.pid;
	s->tid = hd.tid;
	s->time = hd.time;
	if (type & PERF_SAMPLE_ADDR)
		words_next(&w);
	if (type & PERF_SAMPLE_ID)
		words_next(&w);
	if (type & PERF_SAMPLE_STREAM_ID)
		words_next(&w);
	if (type & PERF_SAMPLE_CPU)
		split_u32(words_next(&w), &s->cpu, &unused);
	if (type & PERF_SAMPLE_PERIOD)
		s->period = words_next(&w);
	if (type & PERF_SAMPLE_CALLCHAIN) {
		s->callchain_nr = words_next(&w);
		s->callchain = words_take(&w, s->callchain_nr);
	}
	if (type & PERF_SAMPLE_REGS_USER) {
		s->regs_abi = words_next(&w);
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE)
			s->regs = words_take(&w, (uint64_t)__builtin_popcountll(l->regs_mask));
	}
	if (type & PERF_SAMPLE_STACK_USER) {
		uint64_t size = words_next(&w);

		if (size) {
			s->stack = (const uint8_t *)words_take(&w, size / 8);
			s->stack_len = words_next(&w);
			if (s->stack_len > size || size % 8)
				w.err = 1;
		}
	}
	if (w.err) {
		memset(s, 0, sizeof(*s));
		return -EINVAL;
	}
	return 0;
}

bool rec_is_switch_sample(const struct rec_layout *l, uint64_t id)
{
	size_t at = sorted_at_or_below(l->switch_ids, l->nswitch_ids, sizeof(*l->switch_ids), 0,
				       id);

	return at && l->switch_ids[at - 1] == id;
}

uint64_t rec_sample_reg(const struct rec_layout *l, const struct rec_sample *s, unsigned reg)
{
	if (!s->regs || reg >= 64 || !(l->regs_mask & (1ULL << reg)))
		return 0;
	/* Packed: one word per bit of the mask, the lowest bit first. */
	return s->regs[__builtin_popcountll(l->regs_mask & ((1ULL << reg) - 1))];
}

size_t rec_copy_sample(const struct rec_layout *l, const struct perf_event_header *h,
		       const struct rec_sample *s, size_t max_stack, void *dst)
{
	const uint8_t *src = (const uint8_t *)h;
	uint64_t size, keep, dyn_size;
	size_t stack_off, tail_off, put_off, end = h->size;
	uint8_t *out = dst;

	if (!s->stack) {
		memmove(dst, h, h->size);
		return h->size;
	}
	/* ... u64 size | u8 data[size] | u64 dyn_size | the fields after */
	stack_off = (size_t)(s->stack - src);
	memcpy(&size, s->stack - 8, sizeof(size));
	dyn_size = s->stack_len < max_stack ? s->stack_len : max_stack;
	keep = (dyn_size + 7) & ~(uint64_t)7;
	tail_off = stack_off + size + 8;
	/* A size of 0 has no dyn_size after it. */
	put_off = stack_off + keep + (keep ? 8 : 0);
	memmove(out, src, stack_off + keep);
	memcpy(out + stack_off - 8, &keep, sizeof(keep));
	if (keep)
		memcpy(out + stack_off + keep, &dyn_size, sizeof(dyn_size));
	memmove(out + put_off, src + tail_off, end - tail_off);
	/* Written last: h may be dst. */
	((struct perf_event_header *)out)->size = (uint16_t)(put_off + end - tail_off);
	return put_off + end - tail_off;
}

int rec_parse_id(const struct rec_layout *l, const struct perf_event_header *h,
		 struct rec_id *id)
{
	static const uint64_t trailer_bits[] = {
		PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER,
	};
	uint64_t type = l->sample_type;
	size_t nwords = 0;
	uint32_t unused;
	struct words w;

	memset(id, 0, sizeof(*id));
	for (size_t i = 0; i < sizeof(trailer_bits) / sizeof(trailer_bits[0]); i++)
		nwords += !!(type & trailer_bits[i]);
	words_init(&w, h);
	if (w.err || (size_t)(w.end - w.p) < nwords)
		return -EINVAL;
	w.p = w.end - nwords;
	if (type & PERF_SAMPLE_TID)
		split_u32(words_next(&w), &id->pid, &id->tid);
	if (type & PERF_SAMPLE_TIME)
		id->time = words_next(&w);
	if (type & PERF_SAMPLE_ID)
		words_next(&w);
	if (type & PERF_SAMPLE_STREAM_ID)
		words_next(&w);
	if (type & PERF_SAMPLE_CPU)
		split_u32(words_next(&w), &id->cpu, &unused);
	return 0;
}

uint64_t rec_time(const struct rec_layout *l, const struct perf_event_header *h)
{
	if (h->type == PERF_RECORD_SAMPLE) {
		struct rec_head hd;

		return rec_parse_head(l, h, &hd) ? 0 : hd.time;
	} else {
		struct rec_id id;

		return rec_parse_id(l, h, &id) ? 0 : id.time;
	}
}
