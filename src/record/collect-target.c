/* SPDX-License-Identifier: MIT */
/*
 * The rows the span channel brings (src/record/ingest.c): lanes, spans
 * and their attributes, the target's counters summed over processes, GPU
 * code images within their cap, and GPU PC samples.
 */
#include "record/collect-internal.h"

#include "contract/counters.h"
#include "format/tables.h"

/* What an image counts against the cap at least, so that the cap bounds their number too. */
#define CUBIN_MIN_BYTES 4096
/* Images over the cap remembered, each to be counted once; past them every refusal counts. */
#define CUBIN_REFUSED_KEPT 65536

uint32_t collector_add_lane(struct collector *c, uint32_t pid, uint32_t kind, uint32_t name)
{
	struct tr_lane *row = VEC_PUSH(&c->cur->lanes);

	row->pid = pid;
	row->kind = kind;
	row->name = name;
	collector_count_target(c, TARGET_LANES, 1);
	return ++c->lanes;
}

void collector_add_spans(struct collector *c, const struct tr_span *rows, size_t n,
			 const struct tr_span_attr *attrs, size_t nattrs)
{
	VEC_APPEND(&c->cur->spans, rows, n);
	VEC_RESERVE(&c->cur->span_attrs, nattrs);
	for (size_t i = 0; i < nattrs; i++) {
		struct tr_span_attr *a = &c->cur->span_attrs.v[c->cur->span_attrs.len++];

		*a = attrs[i];
		a->span += c->spans + 1;
	}
	c->spans += (uint32_t)n;
	collector_count_target(c, TARGET_SPANS, n);
	if (nattrs)
		collector_count_target(c, TARGET_SPAN_ATTRS, nattrs);
	collector_flush_if_large(c);
}

bool collector_add_to_counter(struct collector *c, uint32_t name, uint64_t delta)
{
	uint64_t i;

	if (!u64map_get(&c->target_sum_index, name, &i)) {
		for (int k = 0; k < NCOUNTERS; k++)
			if (c->counter_names[k] == name)
				return false;
		i = c->target_sums.len;
		VEC_PUSH(&c->target_sums)->name = name;
		u64map_put(&c->target_sum_index, name, i);
	}
	c->target_sums.v[i].value += delta;
	return true;
}

void collector_set_cubin_max(struct collector *c, uint64_t bytes)
{
	c->cubin_max = bytes;
}

/* One more of the recorder's own cubin losses, named name (*id: its string id, once made). */
static void count_cubin_loss(struct collector *c, uint32_t *id, const char *name)
{
	if (!*id)
		*id = collector_intern(c, name);
	collector_add_to_counter(c, *id, 1);
}

/* What an image of size bytes holds of the cap. */
static uint64_t cubin_charge(uint64_t size)
{
	return size > CUBIN_MIN_BYTES ? size : CUBIN_MIN_BYTES;
}

/* The index of crc in cubins_coming, or its length. */
static size_t cubin_coming(const struct collector *c, uint64_t crc)
{
	size_t i = 0;

	while (i < c->cubins_coming.len && c->cubins_coming.v[i] != crc)
		i++;
	return i;
}

/* An image is no longer on its way. */
static void cubin_came(struct collector *c, uint64_t crc)
{
	size_t i = cubin_coming(c, crc);

	if (i < c->cubins_coming.len)
		c->cubins_coming.v[i] = c->cubins_coming.v[--c->cubins_coming.len];
}

bool collector_cubin_wanted(struct collector *c, uint64_t crc, uint64_t size)
{
	uint64_t charge = cubin_charge(size);

	if (u64map_get(&c->cubin_ids, crc, NULL) || cubin_coming(c, crc) < c->cubins_coming.len)
		return false;
	/* What is held never passes the cap: the room left is cubin_max - cubin_bytes. */
	if (charge <= c->cubin_max - c->cubin_bytes && size <= CUBIN_MAX_ONE) {
		c->cubin_bytes += charge;
		*VEC_PUSH(&c->cubins_coming) = crc;
		return true;
	}
	if (c->cubins_refused < CUBIN_REFUSED_KEPT) {
		c->cubins_refused++;
		u64map_put(&c->cubin_ids, crc, 0);
	}
	count_cubin_loss(c, &c->over_cap_name, cuda_counters[CUDA_CNT_PC_CUBINS_OVER_CAP].name);
	return false;
}

void collector_cubin_cut_short(struct collector *c, uint64_t crc, uint64_t size)
{
	cubin_came(c, crc);
	c->cubin_bytes -= cubin_charge(size);
	count_cubin_loss(c, &c->cut_short_name, cuda_counters[CUDA_CNT_PC_CUBINS_CUT_SHORT].name);
}

void collector_add_cubin(struct collector *c, uint64_t crc, uint8_t *image, uint64_t size)
{
	struct tr_cubin *row = VEC_PUSH(&c->cur->cubins);

	row->crc = crc;
	row->image.data = image;
	row->image.len = size;
	cubin_came(c, crc);
	u64map_put(&c->cubin_ids, crc, ++c->cubins);
	c->cubin_bytes_pending += size;
	collector_flush_if_large(c);
}

uint32_t collector_cubin_id(const struct collector *c, uint64_t crc)
{
	uint64_t id = 0;

	u64map_get(&c->cubin_ids, crc, &id);
	return (uint32_t)id;
}

void collector_add_pc_samples(struct collector *c, const struct tr_pc_sample *rows, size_t n)
{
	VEC_APPEND(&c->cur->pc_samples, rows, n);
	c->pc_buckets += n;
	collector_flush_if_large(c);
}

void collector_count_target(struct collector *c, enum target_counter k, uint64_t n)
{
	c->counters[CNT_TARGET + k] += n;
	c->target_counted = true;
}
