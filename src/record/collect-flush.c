/* SPDX-License-Identifier: MIT */
/*
 * Chunks handed to the chunk writer, each second or early when the rows
 * pile up, with the counters; and the locs named (symbolized) on the way,
 * within a budget, and at the end.
 */
#include "record/collect-internal.h"

#include <errno.h>
#include <string.h>

#include "contract/meta.h"
#include "format/tables.h"
#include "symbols/symbols.h"
#include "unwind/addrspace.h"
#include "util/clock.h"
#include "util/xalloc.h"

/*
 * The code kept of each sampled function (table codes): its first
 * CODE_MAX_ONE bytes, and CODE_MAX_ALL bytes in all; a function cut or
 * left out by them counts in symbols.code-cut.
 */
#define CODE_MAX_ONE (64u << 10)
#define CODE_MAX_ALL (16u << 20)

/* Rows pending past which a chunk is closed before its second is up. */
#define CHUNK_SOON_ROWS (256u << 10)
/* ... and past which the drain waits for the writer rather than grow. */
#define CHUNK_MAX_ROWS (4u << 20)

/*
 * The time a chunk may spend naming the addresses of the chunks before it:
 * well under what the rings hold (50 ms), so that no sample is lost to it.
 */
#define NAMING_BUDGET_NS (20 * NSEC_PER_MSEC)

/* Rows waiting for the chunk, code images by CUBIN_ROW_BYTES. */
static size_t pending_rows(const struct collector *c)
{
	return c->cur->samples.len + c->cur->nodes.len + c->cur->offcpu.len +
	       c->cur->tasks.len + c->cur->spans.len + c->cur->span_attrs.len +
	       c->cur->pc_samples.len + c->cur->codes.len +
	       c->cubin_bytes_pending / CUBIN_ROW_BYTES;
}

void collector_flush_if_large(struct collector *c)
{
	if (pending_rows(c) >= CHUNK_SOON_ROWS)
		collector_flush(c, pending_rows(c) >= CHUNK_MAX_ROWS);
}

/* Appends the counters [from, to) to the chunk; returns how many. */
static size_t put_counters(struct collector *c, int from, int to)
{
	for (int i = from; i < to; i++) {
		struct tr_counter *row = VEC_PUSH(&c->cur->counters);

		row->name = c->counter_names[i];
		row->value = c->counters[i];
	}
	return (size_t)(to - from);
}

/* Writes the code of the function loc is in, once per function, within the bounds. */
static void keep_code(struct collector *c, struct symbolizer *sym, const struct tr_loc *loc)
{
	uint64_t key = (uint64_t)loc->dso << 44, left;
	struct sym_code code;
	struct tr_code *row;

	if (symbolizer_code(sym, addrspaces_dso(c->as, loc->dso), loc->addr, &code) != 1 ||
	    loc->dso >= 1u << 20 || code.start >= 1ull << 44 ||
	    u64map_get(&c->code_kept, key | code.start, &left))
		return;
	u64map_put(&c->code_kept, key | code.start, 1);
	left = CODE_MAX_ALL - c->counters[CNT_SYM_CODE_BYTES];
	if (code.len > CODE_MAX_ONE)
		code.len = CODE_MAX_ONE;
	if (code.len > left)
		code.len = left;
	if (code.len < code.size)
		c->counters[CNT_SYM_CODE_CUT]++;
	if (!code.len)
		return;
	row = VEC_PUSH(&c->cur->codes);
	row->dso = loc->dso;
	row->machine = code.machine;
	row->size = code.size;
	row->addr = code.start;
	row->code.len = code.len;
	row->code.data = xmalloc(code.len);
	memcpy(row->code.data, code.bytes, code.len);
	c->counters[CNT_SYM_CODE_KEPT]++;
	c->counters[CNT_SYM_CODE_BYTES] += code.len;
}

static void symbolize_loc(struct collector *c, struct symbolizer *sym, uint32_t id,
			  struct sym_frame *frames)
{
	const struct tr_loc *loc = &c->locs.v[id - 1];
	int n;

	/* A Python frame's symbol row was written with its loc. */
	if (loc->dso && (addrspaces_dso(c->as, loc->dso)->flags & TR_DSO_PYTHON))
		return;
	if (!loc->dso) {
		c->counters[CNT_SYM_UNRESOLVED]++;
		return;
	}
	n = symbolize(sym, addrspaces_dso(c->as, loc->dso), loc->addr, frames,
		      SYM_MAX_INLINE);
	if (n <= 0 && loc->dso == c->kernel_dso && symbolizer_kernel_hidden(sym)) {
		c->counters[CNT_SYM_KERNEL_HIDDEN]++;
		return;
	}
	if (n == -EPERM || n == -EFBIG) {
		c->counters[CNT_SYM_REFUSED]++;
		return;
	}
	if (n < 0) {
		c->counters[CNT_SYM_MISSING_DSO]++;
		return;
	}
	if (!n) {
		c->counters[CNT_SYM_UNRESOLVED]++;
		return;
	}
	c->counters[CNT_SYM_RESOLVED]++;
	for (int i = 0; i < n; i++) {
		struct tr_symbol *row = VEC_PUSH(&c->cur->symbols);

		row->loc = id;
		row->func = collector_intern(c, frames[i].func);
		row->file = frames[i].file ? collector_intern(c, frames[i].file) : 0;
		row->line = frames[i].line;
		row->flags = frames[i].inlined ? TR_SYM_INLINED : 0;
	}
	if (id <= c->loc_sampled.len && c->loc_sampled.v[id - 1])
		keep_code(c, sym, loc);
}

/* Names the locs up to last until deadline (CLOCK_MONOTONIC ns). */
static void name_locs(struct collector *c, uint32_t last, uint64_t deadline)
{
	uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	struct sym_frame frames[SYM_MAX_INLINE];

	if (!c->sym && symbolizer_new(&c->sym)) {
		c->counters[CNT_SYM_UNRESOLVED] += last - c->named;
		c->named = last;
		return;
	}
	while (c->named < last && now_ns(CLOCK_MONOTONIC) < deadline)
		symbolize_loc(c, c->sym, ++c->named, frames);
	c->counters[CNT_SYM_JIT_MAPS_CUT] = symbolizer_jit_maps_cut(c->sym);
	c->counters[CNT_SYM_FILES_READ] = symbolizer_files_read(c->sym);
	c->naming_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
}

uint64_t collector_naming_ns(const struct collector *c)
{
	return c->naming_ns;
}

void collector_flush(struct collector *c, bool wait)
{
	size_t added;

	/* An idle second needs no chunk. */
	if (!tr_tables_rows(c->cur) && !wait)
		return;
	/*
	 * The names of the locs that the chunks before this one brought, so
	 * that a recorder killed later leaves them named; within a budget,
	 * as the rings fill meanwhile. The rest wait for the next chunk.
	 */
	if (!c->symbolized)
		name_locs(c, c->locs_flushed, now_ns(CLOCK_MONOTONIC) + NAMING_BUDGET_NS);
	c->counters[CNT_CHUNKS]++;
	added = put_counters(c, 0, CNT_SYM_RESOLVED);
	if (c->symbolized)
		added += put_counters(c, CNT_SYM_RESOLVED, CNT_TARGET);
	if (c->target_counted)
		added += put_counters(c, CNT_TARGET, CNT_PYTHON);
	if (c->python_counted) {
		memcpy(c->counters + CNT_PYTHON_READER, pyreader_counts(c->python),
		       PY_COUNTERS * sizeof(*c->counters));
		added += put_counters(c, CNT_PYTHON, NCOUNTERS);
	}
	for (size_t i = 0; i < c->target_sums.len; i++)
		*VEC_PUSH(&c->cur->counters) = c->target_sums.v[i];
	added += c->target_sums.len;
	if (!chunk_writer_hand(c->cw, &c->cur, wait)) {
		/* The writer is busy: these rows wait, and the counters come again. */
		c->counters[CNT_CHUNKS]--;
		c->cur->counters.len -= added;
	} else {
		c->cubin_bytes_pending = 0;
		c->locs_flushed = (uint32_t)c->locs.len;
	}
}

void collector_finish(struct collector *c)
{
	name_locs(c, (uint32_t)c->locs.len, UINT64_MAX);
	c->symbolized = true;
	if (c->kernel_dso)
		collector_meta(c, META_KERNEL_FRAMES,
			       c->sym && symbolizer_kernel_hidden(c->sym)
				       ? "kept, unnamed: /proc/kallsyms hid the kernel's addresses "
					 "(kptr_restrict; root with kptr_restrict <= 1 sees them)"
				       : "kept, named from /proc/kallsyms");
}

void collector_stats(const struct collector *c, struct collect_stats *st)
{
	st->samples = c->counters[CNT_SAMPLES];
	st->threads = c->counters[CNT_THREADS];
	st->lost = c->counters[CNT_LOST];
	st->cut_stacks = c->counters[CNT_UNWIND + UNWIND_TRUNCATED_STACK];
	st->spans = c->counters[CNT_TARGET + TARGET_SPANS];
	st->lanes = c->counters[CNT_TARGET + TARGET_LANES];
	st->pc_buckets = c->pc_buckets;
	st->cubins = c->cubins;
	st->spans_dropped = 0;
	for (int k = TARGET_DROPPED_QUEUE_FULL; k <= TARGET_DROPPED_LIMIT; k++)
		st->spans_dropped += c->counters[CNT_TARGET + k];
}
