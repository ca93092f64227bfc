/* SPDX-License-Identifier: MIT */
/*
 * export --format sqlite: the recording as an SQLite database, for SQL
 * (the sqlite3 shell, Python's sqlite3, any SQL tool), as Nsight Systems
 * users script against its export. A table per kind of row, typed,
 * filled in one transaction by prepared statements, indexed at the end;
 * the schema is export-sqlite-schema.c's, documented in
 * man/gtrace-export.1.
 *
 * What is selected is what the timeline export (export.c) exports: the
 * threads the filters select, their samples, off-CPU intervals and metric
 * series, the spans of the lanes they select or that their threads
 * queued; each in the window as export.c has it; the stacks those
 * samples and the spans' linked origins are on, with their frames; the
 * counters. This file writes the recording's, the threads' and the samples'
 * tables; export-sqlite-spans.c the lanes' and spans'.
 */
#include "analysis/encoders/export-emitter.h"
#include "analysis/encoders/export-sqlite.h"
#include "analysis/views/metrics.h"
#include "analysis/views/offcpu.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "util/hashmap.h"
#include "util/xalloc.h"

/* The schema's version, in table export: a change to a table's columns counts it up. */
#define SQLITE_SCHEMA_VERSION 1

bool export_sqlite_available(void)
{
	return sqldb_available();
}

/* What the export is of: its zero on the clock, the window, the schema. */
static void write_export_info(struct sqlite_export *x)
{
	struct sqlstmt *st = sqldb_prepare(x->db, "INSERT INTO export VALUES (?, ?)");

	sqlstmt_text(st, 1, "schema-version");
	sqlstmt_int(st, 2, SQLITE_SCHEMA_VERSION);
	sqlstmt_run(st);
	sqlstmt_text(st, 1, "time-zero-ns");
	sqlstmt_u64(st, 2, x->zero);
	sqlstmt_run(st);
	sqlstmt_text(st, 1, "sample-period-ns");
	sqlstmt_u64(st, 2, model_sample_period_ns(x->m));
	sqlstmt_run(st);
	sqlstmt_text(st, 1, "start-ns");
	sqlstmt_u64(st, 2, x->o->start_ns);
	sqlstmt_run(st);
	sqlstmt_text(st, 1, "end-ns");
	if (x->o->end_ns != UINT64_MAX)
		sqlstmt_u64(st, 2, x->o->end_ns);
	sqlstmt_run(st);
	sqlstmt_free(st);
}

static void write_meta(struct sqlite_export *x)
{
	const struct model *m = x->m;
	struct sqlstmt *st = sqldb_prepare(x->db, "INSERT INTO meta VALUES (?, ?)");

	for (size_t i = 0; i < m->t.meta.len; i++) {
		if (!export_meta_last(m, i))
			continue;
		sqlstmt_text(st, 1, m->t.meta.v[i].key);
		sqlstmt_text(st, 2, m->t.meta.v[i].value);
		sqlstmt_run(st);
	}
	sqlstmt_free(st);
}

static void write_ranks(struct sqlite_export *x)
{
	const struct model *m = x->m;
	struct sqlstmt *st = sqldb_prepare(x->db, "INSERT INTO ranks VALUES (?, ?, ?, ?, ?)");

	for (size_t r = 0; r < m->ranks.len; r++) {
		const struct model_rank *rk = &m->ranks.v[r];

		sqlstmt_int(st, 1, rk->rank);
		sqlstmt_text(st, 2, rk->path);
		if (rk->local_rank >= 0)
			sqlstmt_int(st, 3, rk->local_rank);
		if (rk->world_size >= 0)
			sqlstmt_int(st, 4, rk->world_size);
		sqlstmt_int(st, 5, rk->shift_ns);
		sqlstmt_run(st);
	}
	sqlstmt_free(st);
}

/* A process, named after its main thread as the views name it. */
static void write_process(struct sqlite_export *x, struct sqlstmt *st, uint32_t pid)
{
	const struct model *m = x->m;
	long main_thread = model_real_thread_index(m, pid);

	sqlstmt_int(st, 1, pid);
	if (main_thread >= 0)
		sqlstmt_text(st, 2, funcs_name(x->f, funcs_thread_name(x->f,
								       &m->threads.v[main_thread])));
	sqlstmt_int(st, 3, pid_rank(m, pid));
	sqlstmt_run(st);
}

/*
 * The selected threads, each with its names over time, and their
 * processes; then the processes of the lanes, which a process may have
 * without a thread of its own recorded.
 */
static void write_threads(struct sqlite_export *x)
{
	const struct model *m = x->m;
	struct sqlstmt *thread = sqldb_prepare(x->db, "INSERT INTO threads VALUES (?, ?, ?, ?, ?, ?, ?)");
	struct sqlstmt *name = sqldb_prepare(x->db, "INSERT INTO thread_names VALUES (?, ?, ?, ?)");
	struct sqlstmt *process = sqldb_prepare(x->db, "INSERT INTO processes VALUES (?, ?, ?)");
	struct u64map pids = {0};

	for (size_t i = 0; i < m->real_threads; i++) {
		const struct model_thread *th = &m->threads.v[i];

		if (!(x->thread_selected[i] = filter_thread(x->o->filter, x->f, th)))
			continue;
		sqlstmt_int(thread, 1, th->tid);
		sqlstmt_int(thread, 2, th->pid);
		sqlstmt_text(thread, 3, funcs_name(x->f, funcs_thread_name(x->f, th)));
		sqlstmt_u64(thread, 4, th->samples);
		if (th->first_ts || th->last_ts) {
			sqlstmt_int(thread, 5, sqlite_time(x, th->first_ts));
			sqlstmt_int(thread, 6, sqlite_time(x, th->last_ts));
		}
		sqlstmt_u64(thread, 7, th->offcpu_ns);
		sqlstmt_run(thread);
		for (uint32_t k = 0; k < th->names; k++) {
			const struct model_name *n = &m->names.v[th->first_name + k];

			sqlstmt_int(name, 1, th->tid);
			sqlstmt_int(name, 2, sqlite_time(x, n->ts));
			sqlstmt_text(name, 3, funcs_name(x->f, funcs_thread_named(x->f, th, n->name)));
			sqlstmt_u64(name, 4, n->samples);
			sqlstmt_run(name);
		}
		if (!u64map_get(&pids, th->pid, NULL)) {
			u64map_put(&pids, th->pid, 1);
			write_process(x, process, th->pid);
		}
	}
	for (size_t l = 0; l < m->t.lanes.len; l++) {
		uint32_t pid = m->t.lanes.v[l].pid;

		if (!u64map_get(&pids, pid, NULL) && filter_process(x->o->filter, m, pid)) {
			u64map_put(&pids, pid, 1);
			write_process(x, process, pid);
		}
	}
	u64map_free(&pids);
	sqlstmt_free(thread);
	sqlstmt_free(name);
	sqlstmt_free(process);
}

/*
 * The frames of location loc, first met at stack node node: its funcs,
 * innermost first, each at the line of its symbol row, as pprof's
 * locations have them (export-pprof.c).
 */
static void write_frames(struct sqlite_export *x, struct sqlstmt *st, uint32_t loc,
			 uint32_t node)
{
	const struct model *m = x->m;
	uint32_t n, nsyms;
	const uint32_t *fn = funcs_of_node(x->f, node, &n);
	const struct tr_symbol *syms = model_loc_symbols(m, loc, &nsyms);
	bool python = model_loc_is_python(m, loc);

	for (uint32_t i = 0; i < n; i++) {
		const struct func *func = &x->f->v.v[fn[i]];
		const struct tr_symbol *sym = n <= nsyms ? &syms[nsyms - n + i] : NULL;

		sqlstmt_int(st, 1, loc);
		sqlstmt_int(st, 2, i);
		sqlstmt_text(st, 3, funcs_name(x->f, func->name));
		sqlstmt_text(st, 4, funcs_name(x->f, func->dso));
		if (sym && sym->file)
			sqlstmt_text(st, 5, model_str(m, sym->file));
		if (sym && sym->line)
			sqlstmt_int(st, 6, sym->line);
		sqlstmt_int(st, 7, i + 1 < n);
		sqlstmt_int(st, 8, python);
		sqlstmt_run(st);
	}
}

void sqlite_use_stack(struct sqlite_export *x, uint32_t node)
{
	for (; node && !x->node_used[node]; node = stack_caller(x->m, node))
		x->node_used[node] = true;
}

/* The stack nodes used, and the frames of each location they are at. */
static void write_stacks(struct sqlite_export *x)
{
	const struct model *m = x->m;
	struct sqlstmt *node = sqldb_prepare(x->db, "INSERT INTO stacks VALUES (?, ?, ?)");
	struct sqlstmt *frame = sqldb_prepare(x->db,
					      "INSERT INTO frames VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
	bool *written = xcalloc(m->t.locs.len + 1, sizeof(*written));

	for (uint32_t id = 1; id <= m->t.nodes.len; id++) {
		uint32_t loc = m->t.nodes.v[id - 1].loc, parent = stack_caller(m, id);

		if (!x->node_used[id])
			continue;
		sqlstmt_int(node, 1, id);
		if (parent)
			sqlstmt_int(node, 2, parent);
		if (loc && loc <= m->t.locs.len) {
			sqlstmt_int(node, 3, loc);
			if (!written[loc])
				write_frames(x, frame, loc, id);
			written[loc] = true;
		}
		sqlstmt_run(node);
	}
	free(written);
	sqlstmt_free(node);
	sqlstmt_free(frame);
}

/* Whether real thread tid is exported. */
static bool thread_selected(const struct sqlite_export *x, uint32_t tid)
{
	long ti = tid < TR_SYNTHETIC_TID_BASE ? model_real_thread_index(x->m, tid) : -1;

	return ti >= 0 && x->thread_selected[ti];
}

/* The selected threads' samples in the window that pass the dso filter. */
static void write_samples(struct sqlite_export *x)
{
	const struct model *m = x->m;
	bool *node_ok = filter_nodes(x->f, x->o->filter);
	struct sqlstmt *st = sqldb_prepare(x->db,
					   "INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?)");
	bool selected = false;

	for (size_t i = 0; i < m->t.samples.len; i++) {
		const struct tr_sample *s = &m->t.samples.v[i];

		/* Samples come in runs of one thread: one lookup a run. */
		if (i == 0 || s->tid != s[-1].tid)
			selected = thread_selected(x, s->tid);
		if (!selected || !export_in_window(x->from, x->to, s->ts, 0) ||
		    s->node > m->t.nodes.len || (node_ok && !node_ok[s->node]))
			continue;
		sqlstmt_u64(st, 1, i + 1);
		sqlstmt_int(st, 2, sqlite_time(x, s->ts));
		sqlstmt_int(st, 3, s->pid);
		sqlstmt_int(st, 4, s->tid);
		if (s->node)
			sqlstmt_int(st, 5, s->node);
		sqlite_use_stack(x, s->node);
		sqlstmt_int(st, 6, s->cpu);
		sqlstmt_int(st, 7, !!(s->flags & TR_SAMPLE_TRUNCATED));
		sqlstmt_run(st);
	}
	sqlstmt_free(st);
	free(node_ok);
}

/* The selected threads' off-CPU intervals and lost samples in the window. */
static void write_offcpu(struct sqlite_export *x)
{
	const struct model *m = x->m;
	struct sqlstmt *st = sqldb_prepare(x->db, "INSERT INTO offcpu VALUES (?, ?, ?, ?)");
	struct sqlstmt *lost = sqldb_prepare(x->db, "INSERT INTO lost VALUES (?, ?, ?, ?)");

	for (size_t i = 0; i < m->t.offcpu.len; i++) {
		const struct tr_offcpu *oc = &m->t.offcpu.v[i];

		if (oc->end < oc->start || !thread_selected(x, oc->tid) ||
		    !export_in_window(x->from, x->to, oc->start, oc->end - oc->start))
			continue;
		sqlstmt_int(st, 1, oc->tid);
		sqlstmt_int(st, 2, sqlite_time(x, oc->start));
		sqlstmt_u64(st, 3, oc->end - oc->start);
		if (oc->reason == TR_OFFCPU_BLOCKED || oc->reason == TR_OFFCPU_PREEMPTED)
			sqlstmt_text(st, 4, offcpu_reason_name(oc->reason));
		else
			sqlstmt_null(st, 4);
		sqlstmt_run(st);
	}
	/* A loss is reported by the CPU's ring, with whichever thread it came with. */
	for (size_t i = 0; i < m->t.losses.len; i++) {
		const struct tr_loss *l = &m->t.losses.v[i];

		if (!export_in_window(x->from, x->to, l->ts, 0))
			continue;
		sqlstmt_int(lost, 1, sqlite_time(x, l->ts));
		sqlstmt_int(lost, 2, l->cpu);
		sqlstmt_int(lost, 3, l->tid);
		sqlstmt_u64(lost, 4, l->count);
		sqlstmt_run(lost);
	}
	sqlstmt_free(st);
	sqlstmt_free(lost);
}

static void write_counters(struct sqlite_export *x)
{
	const struct model *m = x->m;
	struct sqlstmt *st = sqldb_prepare(x->db, "INSERT OR REPLACE INTO counters VALUES (?, ?)");

	for (size_t i = 0; i < m->counters.len; i++) {
		const char *name = model_str(m, m->counters.v[i].name);

		sqlstmt_text(st, 1, name ? name : "-");
		sqlstmt_u64(st, 2, m->counters.v[i].value);
		sqlstmt_run(st);
	}
	sqlstmt_free(st);
}

/* The selected series, each with its values read in the window, in its unit. */
static void write_metrics(struct sqlite_export *x)
{
	const struct model *m = x->m;
	struct sqlstmt *series = sqldb_prepare(x->db,
					       "INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)");
	struct sqlstmt *value = sqldb_prepare(x->db, "INSERT INTO metric_values VALUES (?, ?, ?)");

	for (uint32_t id = 1; id <= m->t.metrics.len; id++) {
		const struct tr_metric *s = &m->t.metrics.v[id - 1];
		double scale = pow(10, s->decimals);
		const struct model_point *p;
		size_t n;

		if (!metric_selected(x->f, x->o->filter, s, (uint32_t)model_metric_rank(m, id)))
			continue;
		sqlstmt_int(series, 1, id);
		sqlstmt_text(series, 2, model_str(m, s->name));
		sqlstmt_text(series, 3, metric_unit(m, s));
		if (s->pid)
			sqlstmt_int(series, 4, s->pid);
		if (s->gpu)
			sqlstmt_int(series, 5, s->gpu - 1);
		sqlstmt_int(series, 6, s->decimals);
		sqlstmt_run(series);
		p = model_metric_points(m, id, &n);
		for (size_t i = 0; i < n; i++) {
			if (!export_in_window(x->from, x->to, p[i].ts, 0))
				continue;
			sqlstmt_int(value, 1, id);
			sqlstmt_int(value, 2, sqlite_time(x, p[i].ts));
			sqlstmt_real(value, 3, (double)p[i].value / scale);
			sqlstmt_run(value);
		}
	}
	sqlstmt_free(series);
	sqlstmt_free(value);
}

int export_sqlite(const char *path, struct funcs *f, const struct export_opts *o)
{
	const struct model *m = f->m;
	struct sqlite_export x = { .f = f, .m = m, .o = o, .zero = model_time_zero(m) };
	int err = sqldb_open(&x.db, path);

	if (err)
		return err;
	export_window(o, x.zero, &x.from, &x.to);
	x.thread_selected = xcalloc(m->real_threads + 1, sizeof(*x.thread_selected));
	x.node_used = xcalloc(m->t.nodes.len + 1, sizeof(*x.node_used));
	sqldb_exec(x.db, "BEGIN");
	sqlite_schema_create(x.db);
	write_export_info(&x);
	write_meta(&x);
	write_ranks(&x);
	write_threads(&x);
	write_samples(&x);
	write_offcpu(&x);
	write_counters(&x);
	write_metrics(&x);
	sqlite_write_spans(&x);
	sqlite_write_pc_samples(&x);
	write_stacks(&x);
	sqlite_schema_index(x.db);
	sqldb_exec(x.db, "COMMIT");
	free(x.thread_selected);
	free(x.node_used);
	return sqldb_close(x.db);
}
