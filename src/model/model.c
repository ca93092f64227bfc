/* SPDX-License-Identifier: MIT */
#include "model/model.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "contract/meta.h"
#include "model/model-internal.h"
#include "util/saturate.h"
#include "util/xalloc.h"

void model_see_ts(uint64_t *first, uint64_t *last, uint64_t ts)
{
	if (!ts)
		return;
	if (!*first || ts < *first)
		*first = ts;
	if (ts > *last)
		*last = ts;
}

/* A new thread that tid finds from now on. */
static struct model_thread *new_thread(struct model *m, uint32_t tid, uint32_t pid)
{
	struct model_thread *th;

	u64map_put(&m->thread_by_tid, tid, m->threads.len);
	th = VEC_PUSH(&m->threads);
	th->tid = tid;
	th->pid = pid;
	return th;
}

/* The thread of tid, created on first sight. */
static struct model_thread *thread_of(struct model *m, uint32_t tid, uint32_t pid)
{
	struct model_thread *th;
	uint64_t idx;

	if (u64map_get(&m->thread_by_tid, tid, &idx)) {
		th = &m->threads.v[idx];
		if (!th->pid)
			th->pid = pid;
		return th;
	}
	return new_thread(m, tid, pid);
}

static void index_tasks(struct model *m)
{
	for (size_t i = 0; i < m->t.tasks.len; i++) {
		const struct tr_task *task = &m->t.tasks.v[i];
		struct model_thread *th = thread_of(m, task->tid, task->pid);

		/* Tasks are in time order per thread, so the last name wins. */
		if (task->kind == TR_TASK_COMM || task->kind == TR_TASK_EXEC)
			th->name = task->arg;
		/* Cut to a window: a name given before it names, but is not an event in it. */
		if (!m->window_to || (task->ts >= m->window_from && task->ts < m->window_to))
			model_see_ts(&th->first_ts, &th->last_ts, task->ts);
	}
}

static void index_samples(struct model *m)
{
	struct model_thread *th = NULL;

	for (size_t i = 0; i < m->t.samples.len; i++) {
		const struct tr_sample *s = &m->t.samples.v[i];

		/* Samples come in runs of one thread: skip the lookup within a run. */
		if (!th || th->tid != s->tid)
			th = thread_of(m, s->tid, s->pid);
		th->samples += model_sample_weight(m, i);
		model_see_ts(&th->first_ts, &th->last_ts, s->ts);
	}
	/* Folded: the threads had samples, each a row at its first. */
	for (size_t i = 0; i < m->folded.len; i++) {
		th = thread_of(m, m->folded.v[i].tid, 0);
		model_see_ts(&th->first_ts, &th->last_ts, m->folded.v[i].last_sample);
	}
}

static void see_offcpu_reason(struct model_thread *th, uint32_t reason, uint64_t ns)
{
	uint32_t why = model_offcpu_reason(reason);

	th->offcpu_reason_ns[why] = u64_sat_add(th->offcpu_reason_ns[why], ns);
}

static void index_offcpu(struct model *m)
{
	for (size_t i = 0; i < m->t.offcpu.len; i++) {
		const struct tr_offcpu *o = &m->t.offcpu.v[i];
		struct model_thread *th = thread_of(m, o->tid, 0);

		if (o->end > o->start)
			th->offcpu_ns = u64_sat_add(th->offcpu_ns, o->end - o->start);
		see_offcpu_reason(th, o->reason, o->end > o->start ? o->end - o->start : 0);
		model_see_ts(&th->first_ts, &th->last_ts, o->start);
		model_see_ts(&th->first_ts, &th->last_ts, o->end);
	}
	for (size_t i = 0; i < m->folded.len; i++) {
		const struct model_folded_thread *ft = &m->folded.v[i];
		struct model_thread *th;

		if (!ft->offcpu)
			continue;
		th = thread_of(m, ft->tid, 0);
		model_see_ts(&th->first_ts, &th->last_ts, ft->offcpu_first);
		model_see_ts(&th->first_ts, &th->last_ts, ft->offcpu_last);
	}
	/* Their time, summed by stack and reason as they were folded. */
	for (size_t i = 0; i < m->folded_offcpu.v.len; i++) {
		const struct model_offcpu_sum *f = &m->folded_offcpu.v.v[i];
		struct model_thread *th = thread_of(m, f->tid, 0);

		th->offcpu_ns = u64_sat_add(th->offcpu_ns, f->ns);
		see_offcpu_reason(th, f->reason, f->ns);
	}
}

/* Whether task row t names its thread. */
static bool names_thread(const struct tr_task *t)
{
	return t->kind == TR_TASK_COMM || t->kind == TR_TASK_EXEC;
}

/*
 * Each real thread's names, from its rows that name it, in their order (a
 * repeat of the name before left out); one of string id 0 for a thread
 * never named. Then the samples taken under each.
 */
static void index_names(struct model *m)
{
	size_t nthreads = m->real_threads, *fill = xcalloc(nthreads + 1, sizeof(*fill));
	const struct model_thread *th = NULL;

	/* Counted into fill[ti + 1], so that the prefix sum leaves fill[ti] as ti's start. */
	for (size_t i = 0; i < m->t.tasks.len; i++)
		if (names_thread(&m->t.tasks.v[i]))
			fill[model_real_thread_index(m, m->t.tasks.v[i].tid) + 1]++;
	for (size_t ti = 0; ti < nthreads; ti++) {
		fill[ti + 1] += fill[ti] + !(fill[ti + 1]);	/* room for name 0 */
		m->threads.v[ti].first_name = (uint32_t)fill[ti];
	}
	VEC_ZEROED(&m->names, fill[nthreads]);
	for (size_t i = 0; i < m->t.tasks.len; i++) {
		const struct tr_task *t = &m->t.tasks.v[i];
		struct model_thread *named;

		if (!names_thread(t))
			continue;
		named = &m->threads.v[model_real_thread_index(m, t->tid)];
		if (named->names && m->names.v[named->first_name + named->names - 1].name == t->arg)
			continue;
		m->names.v[named->first_name + named->names++] =
			(struct model_name){ .ts = t->ts, .name = t->arg };
	}
	/* Close the gaps that repeats and name 0 left. */
	m->names.len = 0;
	for (size_t ti = 0; ti < nthreads; ti++) {
		struct model_thread *t = &m->threads.v[ti];

		memmove(&m->names.v[m->names.len], &m->names.v[t->first_name],
			t->names * sizeof(*m->names.v));
		t->first_name = (uint32_t)m->names.len;
		t->names += !t->names;
		m->names.len += t->names;
	}
	for (size_t i = 0; i < m->t.samples.len; i++) {
		const struct tr_sample *smp = &m->t.samples.v[i];

		/* Samples come in runs of one thread: skip the lookup within a run. */
		if (!th || th->tid != smp->tid)
			th = &m->threads.v[model_real_thread_index(m, smp->tid)];
		m->names.v[model_name_at(m, th, smp->ts)].samples += model_sample_weight(m, i);
	}
	free(fill);
}

/*
 * Each lane a thread of its own, whatever the file says: lanes past the
 * synthetic tids are cut off, and a real row's tid among them (no kernel
 * gives one) finds the lane from now on, never renames it.
 */
static void index_lanes(struct model *m)
{
	if (m->t.lanes.len > TR_MAX_LANES) {
		m->lanes_past_limit += m->t.lanes.len - TR_MAX_LANES;
		m->t.lanes.len = TR_MAX_LANES;
	}
	/* In lane order, after the real threads: what model_lane_thread finds. */
	for (size_t i = 0; i < m->t.lanes.len; i++) {
		const struct tr_lane *lane = &m->t.lanes.v[i];
		struct model_thread *th;

		th = new_thread(m, TR_SYNTHETIC_TID_BASE + (uint32_t)i, lane->pid);
		th->lane = (uint32_t)i + 1;
		th->name = lane->name;
	}
	for (size_t i = 0; i < m->t.spans.len; i++) {
		const struct tr_span *sp = &m->t.spans.v[i];
		struct model_thread *th;

		if (!sp->lane || sp->lane > m->t.lanes.len)
			continue;
		th = &m->threads.v[m->real_threads + sp->lane - 1];
		th->spans++;
		th->span_ns = u64_sat_add(th->span_ns, sp->dur);
		model_see_ts(&th->first_ts, &th->last_ts, sp->start);
		model_see_ts(&th->first_ts, &th->last_ts, model_span_end(sp));
	}
}

void model_index_symbols(struct model *m)
{
	free(m->loc_syms);
	m->loc_syms = xcalloc(m->t.locs.len + 1, sizeof(*m->loc_syms));
	for (size_t i = 0; i < m->t.symbols.len; i++) {
		uint32_t loc = m->t.symbols.v[i].loc;
		struct model_loc_syms *ls;

		if (!loc || loc > m->t.locs.len)
			continue;
		ls = &m->loc_syms[loc];
		/* Rows of one loc are consecutive; a later run replaces an earlier one. */
		if (!ls->count || ls->first + ls->count != i) {
			ls->first = (uint32_t)i;
			ls->count = 0;
		}
		ls->count++;
	}
}

static void index_span_attrs(struct model *m)
{
	m->span_attrs = xcalloc(m->t.spans.len + 1, sizeof(*m->span_attrs));
	for (size_t i = 0; i < m->t.span_attrs.len; i++) {
		uint32_t span = m->t.span_attrs.v[i].span;
		struct model_span_attrs *sa;

		if (!span || span > m->t.spans.len)
			continue;
		sa = &m->span_attrs[span];
		/* Rows of one span are consecutive; a later run replaces an earlier one. */
		if (!sa->count || sa->first + sa->count != i) {
			sa->first = (uint32_t)i;
			sa->count = 0;
		}
		sa->count++;
	}
}

void model_add_text(struct model *m, uint32_t id)
{
	size_t known = m->texts.len;
	const char *s = m->t.strings.v[id - 1];

	if (strtab_intern(&m->texts, s ? s : "") > known)
		*VEC_PUSH(&m->text_string_id) = id;
}

/* A recorder writes each text once; should one repeat, its first id wins. */
static void index_strings(struct model *m)
{
	for (size_t i = 0; i < m->t.strings.len; i++)
		model_add_text(m, (uint32_t)i + 1);
}

/* Each meta key's last row, so that model_meta is one lookup, not a scan of them all. */
static void index_meta(struct model *m)
{
	m->meta_last = xcalloc(m->t.meta.len + 1, sizeof(*m->meta_last));
	for (size_t i = 0; i < m->t.meta.len; i++)
		if (m->t.meta.v[i].key)
			m->meta_last[strtab_intern(&m->meta_keys, m->t.meta.v[i].key) - 1] = i;
}

static void index_counters(struct model *m)
{
	struct strtab names = {0};

	for (size_t i = 0; i < m->t.counters.len; i++) {
		const struct tr_counter *c = &m->t.counters.v[i];
		const char *name = model_str(m, c->name);
		uint32_t id;

		if (!name)
			continue;
		id = strtab_intern(&names, name);
		if (id > m->counters.len)
			*VEC_PUSH(&m->counters) = *c;
		else
			m->counters.v[id - 1].value = c->value;
	}
	strtab_free(&names);
}

/*
 * The metric values by series: each tick's values rows are those after the
 * ticks before it; rows naming no series, and ticks claiming rows past the
 * end, are left out.
 */
static void index_metrics(struct model *m)
{
	size_t nmetrics = m->t.metrics.len, nvalues = m->t.metric_values.len, row = 0;
	uint32_t *fill;

	if (!nmetrics)
		return;
	m->metric_first = xcalloc(nmetrics + 2, sizeof(*m->metric_first));
	m->metric_points = xcalloc(nvalues ? nvalues : 1, sizeof(*m->metric_points));
	for (size_t i = 0; i < nvalues; i++) {
		uint32_t id = m->t.metric_values.v[i].metric;

		if (id && id <= nmetrics)
			m->metric_first[id + 1]++;
	}
	for (size_t id = 1; id <= nmetrics + 1; id++)
		m->metric_first[id] += m->metric_first[id - 1];
	fill = xcalloc(nmetrics + 1, sizeof(*fill));
	memcpy(fill, m->metric_first, (nmetrics + 1) * sizeof(*fill));
	for (size_t t = 0; t < m->t.metric_ticks.len && row < nvalues; t++) {
		const struct tr_metric_tick *tick = &m->t.metric_ticks.v[t];

		for (uint32_t k = 0; k < tick->values && row < nvalues; k++, row++) {
			const struct tr_metric_value *v = &m->t.metric_values.v[row];

			if (v->metric && v->metric <= nmetrics)
				m->metric_points[fill[v->metric]++] = (struct model_point){
					tick->ts, v->value };
		}
	}
	/* Values no tick claimed: their series end where the ticks did. */
	for (size_t id = 1; id <= nmetrics; id++)
		m->metric_first[id + 1] = fill[id];
	free(fill);
}

static const char *meta_in(const struct tr_meta *v, size_t n, const char *key)
{
	for (size_t i = n; i-- > 0;)
		if (v[i].key && !strcmp(v[i].key, key))
			return v[i].value;
	return NULL;
}

/* A signed decimal meta value, or fallback when absent or malformed. */
static int64_t meta_int(const struct tr_meta *v, size_t n, const char *key, int64_t fallback)
{
	const char *s = meta_in(v, n, key);
	char *end;
	long long x;

	if (!s || !*s)
		return fallback;
	x = strtoll(s, &end, 10);
	return *end ? fallback : (int64_t)x;
}

void model_rank_facts(struct model_rank *r, const struct tr_meta *meta, size_t n, size_t index)
{
	int64_t start = meta_int(meta, n, META_START_NS, 0), end = meta_int(meta, n, META_END_NS, 0);

	r->rank = meta_int(meta, n, META_RANK, -1);
	r->has_rank = r->rank >= 0;
	if (!r->has_rank)
		r->rank = (int64_t)index;
	r->local_rank = meta_int(meta, n, META_LOCAL_RANK, -1);
	r->world_size = meta_int(meta, n, META_WORLD_SIZE, -1);
	r->start_ns = start > 0 ? model_shifted((uint64_t)start, r->shift_ns) : 0;
	r->end_ns = end > 0 ? model_shifted((uint64_t)end, r->shift_ns) : 0;
}

void model_index(struct model *m)
{
	uint64_t start_ns = 0;
	struct u64map pids = {0};

	if (!m->ranks.len)
		model_rank_facts(VEC_PUSH(&m->ranks), m->t.meta.v, m->t.meta.len, 0);
	/* The recording starts with the earliest of its recordings. */
	for (size_t i = 0; i < m->ranks.len; i++)
		if (m->ranks.v[i].start_ns && (!start_ns || m->ranks.v[i].start_ns < start_ns))
			start_ns = m->ranks.v[i].start_ns;

	index_tasks(m);
	index_samples(m);
	index_offcpu(m);
	m->real_threads = m->threads.len;
	index_names(m);
	for (size_t i = 0; i < m->real_threads; i++) {
		const struct model_thread *th = &m->threads.v[i];

		model_see_ts(&m->first_ts, &m->last_ts, th->first_ts);
		model_see_ts(&m->first_ts, &m->last_ts, th->last_ts);
		if (th->pid)
			u64map_put(&pids, th->pid, 0);
	}
	m->processes = pids.len;
	u64map_free(&pids);
	index_lanes(m);
	model_classify_lanes(m);
	for (size_t i = m->real_threads; i < m->threads.len; i++) {
		model_see_ts(&m->first_ts, &m->last_ts, m->threads.v[i].first_ts);
		model_see_ts(&m->first_ts, &m->last_ts, m->threads.v[i].last_ts);
	}
	model_index_symbols(m);
	index_span_attrs(m);
	index_strings(m);
	index_meta(m);
	index_counters(m);
	index_metrics(m);
	m->start_ts = start_ns && start_ns <= m->first_ts ? start_ns : m->first_ts;
}

/* What model_index built, so that it can build it again. */
static void free_indexes(struct model *m)
{
	VEC_FREE(&m->threads);
	VEC_FREE(&m->names);
	VEC_FREE(&m->counters);
	u64map_free(&m->thread_by_tid);
	free(m->loc_syms);
	free(m->span_attrs);
	free(m->lane_class);
	free(m->stream_span_class);
	VEC_FREE(&m->text_string_id);
	free(m->meta_last);
	free(m->metric_points);
	free(m->metric_first);
	strtab_free(&m->texts);
	strtab_free(&m->meta_keys);
	m->loc_syms = NULL;
	m->span_attrs = NULL;
	m->lane_class = NULL;
	m->stream_span_class = NULL;
	m->meta_last = NULL;
	m->metric_points = NULL;
	m->metric_first = NULL;
	m->real_threads = 0;
	m->first_ts = m->last_ts = m->start_ts = 0;
	m->processes = 0;
}

void model_reindex(struct model *m)
{
	free_indexes(m);
	model_index(m);
}

void model_free(struct model *m)
{
	tr_tables_free(&m->t);
	VEC_FREE(&m->sample_weights);
	VEC_FREE(&m->folded);
	VEC_FREE(&m->folded_offcpu.v);
	free_indexes(m);
	for (size_t i = 0; i < m->ranks.len; i++) {
		struct model_rank *r = &m->ranks.v[i];

		free(r->path);
		for (size_t k = 0; k < r->meta.len; k++) {
			free(r->meta.v[k].key);
			free(r->meta.v[k].value);
		}
		VEC_FREE(&r->meta);
	}
	VEC_FREE(&m->ranks);
	u64map_free(&m->rank_of_pid);
	u64map_free(&m->merged_ids);
	u64map_free(&m->merged_counters);
	memset(m, 0, sizeof(*m));
}

const char *model_damage_text(const struct model *m, char *buf, size_t size)
{
	char limit[32];

	if (m->damage != -TR_ERR_BUDGET)
		return tr_strerror(m->damage);
	if (m->budget.limit < 1 << 20)
		snprintf(limit, sizeof(limit), "%" PRIu64 " bytes", m->budget.limit);
	else
		snprintf(limit, sizeof(limit), "%.1f MiB", (double)m->budget.limit / (1 << 20));
	if (m->budget.table)
		snprintf(buf, size, "table '%s' decodes to more than the read limit (%s)",
			 m->budget.table, limit);
	else
		snprintf(buf, size, "a chunk decompresses to more than the read limit (%s)", limit);
	return buf;
}

const char *model_str(const struct model *m, uint32_t id)
{
	return id && id <= m->t.strings.len ? m->t.strings.v[id - 1] : NULL;
}

const char *model_meta(const struct model *m, const char *key)
{
	uint32_t id = strtab_find(&m->meta_keys, key);

	return id ? m->t.meta.v[m->meta_last[id - 1]].value : NULL;
}

const char *model_rank_meta(const struct model *m, size_t r, const char *key)
{
	if (!r)
		return model_meta(m, key);
	return r < m->ranks.len ? meta_in(m->ranks.v[r].meta.v, m->ranks.v[r].meta.len, key)
				: NULL;
}

size_t model_metric_rank(const struct model *m, uint32_t metric)
{
	size_t r = m->ranks.len;

	while (r > 1 && metric < m->ranks.v[r - 1].first_metric)
		r--;
	return r ? r - 1 : 0;
}

size_t model_rank_of(const struct model *m, uint32_t pid)
{
	uint64_t r = 0;

	u64map_get(&m->rank_of_pid, pid, &r);
	return r ? (size_t)r - 1 : 0;
}

bool model_counter(const struct model *m, const char *name, uint64_t *value)
{
	for (size_t i = 0; i < m->counters.len; i++) {
		const char *s = model_str(m, m->counters.v[i].name);

		if (s && !strcmp(s, name)) {
			*value = m->counters.v[i].value;
			return true;
		}
	}
	return false;
}

uint32_t model_string_id(const struct model *m, const char *s)
{
	uint32_t text = strtab_find(&m->texts, s);

	return text ? m->text_string_id.v[text - 1] : 0;
}

bool model_span_attr(const struct model *m, uint32_t span_id, uint32_t key_sid,
		     uint64_t *value)
{
	const struct model_span_attrs *sa;

	if (!span_id || span_id > m->t.spans.len || !key_sid)
		return false;
	sa = &m->span_attrs[span_id];
	for (uint32_t i = 0; i < sa->count; i++) {
		const struct tr_span_attr *a = &m->t.span_attrs.v[sa->first + i];

		if (a->key == key_sid) {
			*value = a->value;
			return true;
		}
	}
	return false;
}

const struct model_point *model_metric_points(const struct model *m, uint32_t metric, size_t *n)
{
	*n = 0;
	if (!m->metric_first || !metric || metric > m->t.metrics.len)
		return NULL;
	*n = m->metric_first[metric + 1] - m->metric_first[metric];
	return *n ? &m->metric_points[m->metric_first[metric]] : NULL;
}

/* Each recording's ticks are in time order, as its reader wrote them: a binary search. */
uint64_t model_metric_tick_before(const struct model *m, uint32_t metric, uint64_t ts)
{
	const struct tr_metric_tick *ticks = m->t.metric_ticks.v;
	size_t first = 0, lo, hi = m->t.metric_ticks.len;

	/* A merged recording's ticks are its rows; one recording's, all. */
	if (m->ranks.len > 1) {
		const struct model_rows *rows =
			&m->ranks.v[model_metric_rank(m, metric)].rows[TIMED_METRIC_TICKS];

		first = rows->first < hi ? rows->first : hi;
		hi = rows->n < hi - first ? first + rows->n : hi;
	}
	/* The first tick at or after ts, in lo. */
	for (lo = first; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (ticks[mid].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > first && ticks[lo - 1].ts < ts ? ticks[lo - 1].ts : 0;
}

uint32_t model_metric_find(const struct model *m, const char *name, uint32_t pid, uint32_t gpu)
{
	for (size_t i = 0; i < m->t.metrics.len; i++) {
		const struct tr_metric *s = &m->t.metrics.v[i];
		const char *text = model_str(m, s->name);

		if (s->pid == pid && s->gpu == gpu && text && !strcmp(text, name))
			return (uint32_t)i + 1;
	}
	return 0;
}

long model_thread_index(const struct model *m, uint32_t tid)
{
	uint64_t idx;

	return u64map_get(&m->thread_by_tid, tid, &idx) ? (long)idx : -1;
}

long model_real_thread_index(const struct model *m, uint32_t tid)
{
	long ti = model_thread_index(m, tid);

	return ti >= 0 && (size_t)ti < m->real_threads ? ti : -1;
}

size_t model_name_at(const struct model *m, const struct model_thread *th, uint64_t ts)
{
	size_t lo = th->first_name, hi = lo + th->names;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->names.v[mid].ts <= ts)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

const struct tr_symbol *model_loc_symbols(const struct model *m, uint32_t loc, uint32_t *n)
{
	if (!loc || loc > m->t.locs.len || !m->loc_syms[loc].count) {
		*n = 0;
		return NULL;
	}
	*n = m->loc_syms[loc].count;
	return &m->t.symbols.v[m->loc_syms[loc].first];
}

uint64_t model_time_zero(const struct model *m)
{
	if (m->first_ts && m->first_ts < m->start_ts)
		return m->first_ts;
	return m->start_ts;
}

bool model_window_has_events(const struct model *m, uint64_t start_ns, uint64_t end_ns)
{
	uint64_t zero = model_time_zero(m);

	if (!m->last_ts || start_ns >= end_ns)
		return false;
	return m->last_ts - zero >= start_ns && m->first_ts - zero < end_ns;
}

uint64_t model_sample_period_ns(const struct model *m)
{
	const char *freq = model_meta(m, META_FREQUENCY);
	unsigned long long hz = freq ? strtoull(freq, NULL, 10) : 0;

	return hz ? 1000000000ull / hz : 0;
}

uint64_t model_thread_oncpu_ns(const struct model *m, const struct model_thread *th)
{
	uint64_t life = th->last_ts - th->first_ts;

	if (th->lane)
		return 0;
	if (m->header.features & TR_FEAT_OFFCPU)
		return life > th->offcpu_ns ? life - th->offcpu_ns : 0;
	return th->samples * model_sample_period_ns(m);
}
