/* SPDX-License-Identifier: MIT */
/*
 * Folded samples: a second pass over a recording's chunks that keeps, of
 * the samples of a thread no span names as its origin, one row per thread,
 * name and stack with the number of samples it stands for, and of every
 * thread's off-CPU intervals their sum and bounds. What the counting views
 * read stays the same; the memory grows with the distinct stacks, not with
 * the samples. The threads that queued work keep their rows: joining an
 * origin to the nearest sample needs each sample's time.
 */
#include <stdlib.h>
#include <string.h>

#include "model/model-internal.h"
#include "util/saturate.h"
#include "util/xalloc.h"

struct folder {
	struct model *m;
	struct u64map origin_tids;	/* tid -> 0: the threads whose rows stay */
	struct u64map owners;		/* (tid, name epoch) pair ids */
	struct u64map rows;		/* owner << 32 | node -> index in m->t.samples */
	struct u64map threads;		/* tid -> index in m->folded */
	struct offcpu_summer offcpu;	/* m->folded_offcpu's index */
	/* The thread of the last sample seen, to skip the lookups within a run. */
	bool seen;
	uint32_t tid;
	bool keeps_rows;
	const struct model_thread *th;	/* NULL: no name from the first pass */
};

static struct model_folded_thread *folded_thread(struct folder *fo, uint32_t tid)
{
	struct model *m = fo->m;
	uint64_t at;

	if (u64map_get(&fo->threads, tid, &at))
		return &m->folded.v[at];
	u64map_put(&fo->threads, tid, m->folded.len);
	*VEC_PUSH(&m->folded) = (struct model_folded_thread){ .tid = tid };
	return &m->folded.v[m->folded.len - 1];
}

static void see_thread(struct folder *fo, uint32_t tid)
{
	long ti;

	fo->seen = true;
	fo->tid = tid;
	fo->keeps_rows = u64map_get(&fo->origin_tids, tid, NULL);
	ti = model_real_thread_index(fo->m, tid);
	fo->th = ti >= 0 ? &fo->m->threads.v[ti] : NULL;
}

static void fold_sample(struct folder *fo, const struct tr_sample *s)
{
	struct model *m = fo->m;
	uint32_t epoch = 0, owner;
	uint64_t at, key;
	struct model_folded_thread *ft;

	if (!fo->seen || s->tid != fo->tid)
		see_thread(fo, s->tid);
	if (fo->keeps_rows) {
		*VEC_PUSH(&m->t.samples) = *s;
		*VEC_PUSH(&m->sample_weights) = 1;
		return;
	}
	/* Which of its names the thread had: samples under two names stay two rows. */
	if (fo->th && fo->th->names > 1)
		epoch = (uint32_t)(model_name_at(m, fo->th, s->ts) - fo->th->first_name);
	owner = u64map_pair_id(&fo->owners, s->tid, epoch);
	key = (uint64_t)owner << 32 | s->node;
	if (u64map_get(&fo->rows, key, &at)) {
		m->sample_weights.v[at]++;
	} else {
		u64map_put(&fo->rows, key, m->t.samples.len);
		*VEC_PUSH(&m->t.samples) = *s;
		*VEC_PUSH(&m->sample_weights) = 1;
	}
	ft = folded_thread(fo, s->tid);
	if (s->ts > ft->last_sample)
		ft->last_sample = s->ts;
}

static void fold_offcpu(struct folder *fo, const struct tr_offcpu *o)
{
	struct model_folded_thread *ft = folded_thread(fo, o->tid);

	ft->offcpu = true;
	model_see_ts(&ft->offcpu_first, &ft->offcpu_last, o->start);
	model_see_ts(&ft->offcpu_first, &ft->offcpu_last, o->end);
	model_offcpu_add(&fo->offcpu, &fo->m->folded_offcpu, o->tid, o->node, o->reason,
			 o->end > o->start ? o->end - o->start : 0, 1);
}

void model_offcpu_add(struct offcpu_summer *sm, struct model_offcpu_sums *sums,
		      uint32_t tid, uint32_t node, uint32_t reason, uint64_t ns,
		      uint64_t intervals)
{
	uint32_t why = model_offcpu_reason(reason);
	uint64_t key = (uint64_t)u64map_pair_id(&sm->pairs, tid, node) << 2 | why, at;
	struct model_offcpu_sum *sum;

	if (u64map_get(&sm->index, key, &at)) {
		sum = &sums->v.v[at];
	} else {
		u64map_put(&sm->index, key, sums->v.len);
		sum = VEC_PUSH(&sums->v);
		sum->tid = tid;
		sum->node = node;
		sum->reason = why;
	}
	sum->ns = u64_sat_add(sum->ns, ns);
	sum->intervals = u64_sat_add(sum->intervals, intervals);
}

void model_offcpu_summer_free(struct offcpu_summer *sm)
{
	u64map_free(&sm->pairs);
	u64map_free(&sm->index);
}

void model_offcpu_sums(const struct model *m, struct model_offcpu_sums *out)
{
	struct offcpu_summer sm = {0};

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < m->t.offcpu.len; i++) {
		const struct tr_offcpu *o = &m->t.offcpu.v[i];

		model_offcpu_add(&sm, out, o->tid, o->node, o->reason,
				 o->end > o->start ? o->end - o->start : 0, 1);
	}
	for (size_t i = 0; i < m->folded_offcpu.v.len; i++) {
		const struct model_offcpu_sum *f = &m->folded_offcpu.v.v[i];

		model_offcpu_add(&sm, out, f->tid, f->node, f->reason, f->ns, f->intervals);
	}
	model_offcpu_summer_free(&sm);
}

/*
 * The samples of one chunk's payload folded into m; false when it does not
 * decode, or its rows pass b's limit: b is charged as for rows kept, so
 * that a file is read folded only where it could be read whole.
 */
static bool fold_chunk(struct folder *fo, struct tr_tables *scratch, const struct tr_chunk *c,
		       struct tr_budget *b)
{
	bool ok = !tr_tables_decode_part(scratch, c->payload, c->len, b, TR_DECODE_SAMPLES);

	for (size_t i = 0; ok && i < scratch->samples.len; i++)
		fold_sample(fo, &scratch->samples.v[i]);
	for (size_t i = 0; ok && i < scratch->offcpu.len; i++)
		fold_offcpu(fo, &scratch->offcpu.v[i]);
	tr_tables_clear(scratch);
	return ok;
}

static void free_folder(struct folder *fo)
{
	u64map_free(&fo->origin_tids);
	u64map_free(&fo->owners);
	u64map_free(&fo->rows);
	u64map_free(&fo->threads);
	model_offcpu_summer_free(&fo->offcpu);
}

bool model_fold_samples(struct model *m, struct tr_reader *r)
{
	struct folder fo = { .m = m };
	struct tr_tables scratch = {0};
	struct tr_chunk c;
	uint64_t chunks = 0;
	bool ok = true;
	int ret;

	for (size_t i = 0; i < m->t.spans.len; i++)
		if (m->t.spans.v[i].origin_tid)
			u64map_put(&fo.origin_tids, m->t.spans.v[i].origin_tid, 0);
	/* The chunks the first pass read whole, and no more: the same rows. */
	tr_reader_rewind(r);
	while (ok && chunks < m->chunks && (ret = tr_reader_next(r, &c)) > 0) {
		if (c.type == TR_CHUNK_TABLES)
			ok = fold_chunk(&fo, &scratch, &c, tr_reader_budget(r));
		chunks++;
	}
	tr_tables_free(&scratch);
	free_folder(&fo);
	return ok && chunks == m->chunks;
}
