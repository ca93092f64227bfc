/* SPDX-License-Identifier: MIT */
/*
 * Joining each span's origin (the CPU thread and time it was queued from)
 * to the sample of that thread nearest in time that has a stack: the
 * stack that queued the work.
 */
#include "analysis/passes/passes.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define DEFAULT_WINDOW_PERIODS 4
#define DEFAULT_WINDOW_NS 4000000ull	/* when the sampling rate is unknown */

static const char *const outcome_names[ORIGIN_OUTCOMES] = {
	[ORIGIN_NONE] = "none",
	[ORIGIN_LINKED] = "linked",
	[ORIGIN_BAD_TID] = "bad_tid",
	[ORIGIN_NO_THREAD] = "no_thread",
	[ORIGIN_NO_STACK] = "no_stack",
	[ORIGIN_TOO_FAR] = "too_far",
};

const char *origin_outcome_name(enum origin_outcome o)
{
	return o < ORIGIN_OUTCOMES ? outcome_names[o] : "?";
}

uint64_t origins_default_window(const struct model *m)
{
	uint64_t period = model_sample_period_ns(m);

	return period ? DEFAULT_WINDOW_PERIODS * period : DEFAULT_WINDOW_NS;
}

/*
 * The samples with a stack of each real thread some origin names, in time
 * order: samples[at[ti] .. at[ti + 1]) are thread ti's.
 */
struct sample_index {
	size_t *at;		/* by thread index, real_threads + 1 entries */
	uint32_t *samples;	/* indexes in m->t.samples */
};

static int cmp_sample_ts(const void *pa, const void *pb, void *pctx)
{
	const struct tr_sample *samples = pctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (samples[a].ts != samples[b].ts)
		return samples[a].ts < samples[b].ts ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The thread of the last sample looked at, to skip the lookup in runs of one thread. */
struct thread_cache {
	uint32_t tid;
	long ti;
};

/* The thread index of sample i when the index takes it (a wanted thread, a stack), else -1. */
static long indexed_thread(const struct model *m, const bool *wanted, size_t i,
			   struct thread_cache *c)
{
	const struct tr_sample *s = &m->t.samples.v[i];

	if (i == 0 || s->tid != c->tid) {
		c->tid = s->tid;
		c->ti = model_real_thread_index(m, s->tid);
	}
	return c->ti >= 0 && wanted[c->ti] && s->node ? c->ti : -1;
}

static void index_samples(struct sample_index *ix, const struct model *m, const bool *wanted)
{
	size_t nthreads = m->real_threads, *fill;
	struct thread_cache cache = { 0, -1 };
	long ti;

	ix->at = xcalloc(nthreads + 2, sizeof(*ix->at));
	/* Counted into at[ti + 2] so that the prefix sum leaves at[ti + 1] as the fill start. */
	for (size_t i = 0; i < m->t.samples.len; i++)
		if ((ti = indexed_thread(m, wanted, i, &cache)) >= 0)
			ix->at[ti + 2]++;
	for (size_t t = 2; t <= nthreads + 1; t++)
		ix->at[t] += ix->at[t - 1];
	ix->samples = xmalloc((ix->at[nthreads + 1] + 1) * sizeof(*ix->samples));
	fill = ix->at + 1;
	for (size_t i = 0; i < m->t.samples.len; i++)
		if ((ti = indexed_thread(m, wanted, i, &cache)) >= 0)
			ix->samples[fill[ti]++] = (uint32_t)i;
	/* Chunks keep each thread's samples in time order; check rather than trust. */
	for (size_t t = 0; t < nthreads; t++) {
		for (size_t k = ix->at[t] + 1; k < ix->at[t + 1]; k++) {
			if (m->t.samples.v[ix->samples[k]].ts <
			    m->t.samples.v[ix->samples[k - 1]].ts) {
				qsort_r(ix->samples + ix->at[t], ix->at[t + 1] - ix->at[t],
					sizeof(*ix->samples), cmp_sample_ts, m->t.samples.v);
				break;
			}
		}
	}
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* The first sample of [first, last) at or after ts; last when there is none. */
static const uint32_t *first_from(const struct model *m, const uint32_t *first,
				  const uint32_t *last, uint64_t ts)
{
	const uint32_t *lo = first, *hi = last;

	while (lo < hi) {
		const uint32_t *mid = lo + (hi - lo) / 2;

		if (m->t.samples.v[*mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The sample of [first, last) that the span's origin links to: the one
 * nearest to it, the earlier one on a tie. A span that began at its origin
 * ran on that thread (a CUDA call, a CPU wait): a sample taken while it ran
 * is the call's own and wins over a nearer one just before it, in the
 * caller's previous function waking up, say.
 */
static uint32_t nearest(const struct model *m, const uint32_t *first, const uint32_t *last,
			const struct tr_span *sp)
{
	uint64_t ts = sp->origin_ts;
	const uint32_t *lo = first_from(m, first, last, ts);

	if (lo != last && sp->start == ts && m->t.samples.v[*lo].ts - ts < sp->dur)
		return *lo;
	if (lo == last)
		return lo[-1];
	if (lo == first)
		return *lo;
	return distance(m->t.samples.v[lo[-1]].ts, ts) <= distance(m->t.samples.v[*lo].ts, ts)
		? lo[-1] : *lo;
}

static void add_distance(struct distance_stats *d, uint64_t ns)
{
	if (!d->count || ns < d->min)
		d->min = ns;
	if (ns > d->max)
		d->max = ns;
	d->sum += ns;
	d->count++;
}

/* Decides between linked, too_far and no_stack for a span of a known thread. */
static void link_span(struct origin_links *l, const struct model *m,
		      const struct sample_index *ix, size_t span)
{
	const struct tr_span *sp = &m->t.spans.v[span];
	long ti = model_real_thread_index(m, sp->origin_tid);
	uint32_t best;
	uint64_t dist;

	if (ix->at[ti] == ix->at[ti + 1]) {
		l->outcome[span] = ORIGIN_NO_STACK;
		return;
	}
	best = nearest(m, ix->samples + ix->at[ti], ix->samples + ix->at[ti + 1], sp);
	dist = distance(m->t.samples.v[best].ts, sp->origin_ts);
	if (dist <= l->window_ns) {
		l->sample[span] = best + 1;
		add_distance(&l->linked, dist);
	} else {
		l->outcome[span] = ORIGIN_TOO_FAR;
		add_distance(&l->too_far, dist);
	}
}

void origins_link(struct origin_links *l, const struct model *m, uint64_t window_ns)
{
	size_t nspans = m->t.spans.len;
	bool *wanted = xcalloc(m->real_threads + 1, sizeof(*wanted));
	struct sample_index ix;

	memset(l, 0, sizeof(*l));
	l->window_ns = window_ns;
	l->outcome = xcalloc(nspans + 1, sizeof(*l->outcome));
	l->sample = xcalloc(nspans + 1, sizeof(*l->sample));
	for (size_t i = 0; i < nspans; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		long ti;

		/* A tid of 0 with a time is a broken origin; with neither, none. */
		if (!sp->origin_tid && !sp->origin_ts) {
			l->outcome[i] = ORIGIN_NONE;
		} else if (!sp->origin_tid || sp->origin_tid >= TR_SYNTHETIC_TID_BASE) {
			l->outcome[i] = ORIGIN_BAD_TID;
		} else if ((ti = model_real_thread_index(m, sp->origin_tid)) < 0) {
			l->outcome[i] = ORIGIN_NO_THREAD;
		} else {
			l->outcome[i] = ORIGIN_LINKED;	/* to be decided below */
			wanted[ti] = true;
		}
	}
	index_samples(&ix, m, wanted);
	for (size_t i = 0; i < nspans; i++) {
		if (l->outcome[i] == ORIGIN_LINKED)
			link_span(l, m, &ix, i);
		l->counts[l->outcome[i]]++;
	}
	free(ix.at);
	free(ix.samples);
	free(wanted);
}

void origins_free(struct origin_links *l)
{
	free(l->outcome);
	free(l->sample);
	memset(l, 0, sizeof(*l));
}
