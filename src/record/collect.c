/* SPDX-License-Identifier: MIT */
/*
 * The collector made and freed, and the records that are not samples made
 * rows: tasks (forks, exits, names), maps and their dsos, off-CPU
 * intervals, losses; the recorder's own counters named. Samples are
 * collect-samples.c's, the span channel's rows collect-target.c's, chunks
 * and naming collect-flush.c's.
 */
#include "record/collect-internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/counters.h"
#include "format/tables.h"
#include "symbols/symbols.h"
#include "unwind/addrspace.h"
#include "util/xalloc.h"

static const char *const fixed_counter_names[CNT_UNWIND] = {
	[CNT_SAMPLES] = COUNTER_SAMPLES,
	[CNT_LOST] = COUNTER_LOST,
	[CNT_THROTTLED] = COUNTER_THROTTLED,
	[CNT_THREADS] = COUNTER_THREADS,
	[CNT_PROCESSES] = COUNTER_PROCESSES,
	[CNT_CHUNKS] = COUNTER_CHUNKS,
	[CNT_MALFORMED] = COUNTER_RECORDS_MALFORMED,
	[CNT_PROCESSES_RECOVERED] = COUNTER_PROCESSES_RECOVERED,
	[CNT_PROCESSES_UNRECOVERED] = COUNTER_PROCESSES_UNRECOVERED,
	[CNT_KERNEL_FRAMES] = COUNTER_KERNEL_FRAMES,
	[CNT_SWITCH_STACKS] = COUNTER_SWITCH_STACKS,
};

static const char *const symbol_counter_names[] = {
	COUNTER_SYMBOLS_RESOLVED, COUNTER_SYMBOLS_UNRESOLVED, COUNTER_SYMBOLS_MISSING_DSO,
	COUNTER_SYMBOLS_REFUSED, COUNTER_SYMBOLS_JIT_MAPS_CUT, COUNTER_SYMBOLS_FILES_READ,
	COUNTER_SYMBOLS_CODE_KEPT, COUNTER_SYMBOLS_CODE_BYTES, COUNTER_SYMBOLS_CODE_CUT,
	COUNTER_SYMBOLS_KERNEL_HIDDEN,
};

/* The python.* counter of each slot from CNT_PYTHON on. */
static const enum python_counter python_slot_counters[NCOUNTERS - CNT_PYTHON] = {
	[PY_MATCHED] = PYTHON_MATCHED,
	[PY_MISMATCH] = PYTHON_MISMATCH,
	[PY_NO_THREAD_STATE] = PYTHON_NO_THREAD_STATE,
	[PY_READ_FAILED] = PYTHON_READ_FAILED,
	[PY_EXITED] = PYTHON_EXITED,
	[PY_UNSUPPORTED] = PYTHON_UNSUPPORTED,
	[PY_OVER_BUDGET] = PYTHON_OVER_BUDGET,
	[CNT_PYTHON_FRAMES - CNT_PYTHON] = PYTHON_FRAMES,
	[CNT_PYTHON_NAMES_OVER_BUDGET - CNT_PYTHON] = PYTHON_NAMES_OVER_BUDGET,
	[CNT_PYTHON_READER - CNT_PYTHON + PY_CODES_EVICTED] = PYTHON_CODES_EVICTED,
	[CNT_PYTHON_READER - CNT_PYTHON + PY_NAMES_CUT] = PYTHON_NAMES_CUT,
	[CNT_PYTHON_READER - CNT_PYTHON + PY_TABLES_TOO_LONG] = PYTHON_LINETABLES_TOO_LONG,
};

_Static_assert(NCOUNTERS - CNT_PYTHON == PYTHON_COUNTERS, "a slot for each python.* counter");

static uint32_t intern_str(struct collector *c, const char *s)
{
	uint32_t id = strtab_intern(&c->strings, s);

	if (id > c->strings_out) {
		*VEC_PUSH(&c->cur->strings) = xstrdup(s);
		c->strings_out = id;
	}
	return id;
}

void collector_sync_dsos(struct collector *c)
{
	uint32_t n = addrspaces_dso_count(c->as);

	while (c->dsos_out < n) {
		const struct dso_info *d = addrspaces_dso(c->as, ++c->dsos_out);
		struct tr_dso *row = VEC_PUSH(&c->cur->dsos);

		row->path = intern_str(c, d->path);
		row->pid = d->pid;
		row->flags = d->flags;
		row->build_id_len = d->build_id_len > TR_BUILD_ID_MAX ? TR_BUILD_ID_MAX
								    : d->build_id_len;
		memcpy(row->build_id, d->build_id, row->build_id_len);
	}
}

static void add_task(struct collector *c, uint64_t ts, uint32_t pid, uint32_t tid,
		     enum tr_task_kind kind, uint32_t arg)
{
	struct tr_task *t = VEC_PUSH(&c->cur->tasks);

	t->ts = ts;
	t->pid = pid;
	t->tid = tid;
	t->kind = kind;
	t->arg = arg;
}

static void thread_born(struct collector *c, uint32_t pid)
{
	uint64_t n = 0;

	u64map_get(&c->live_threads, pid, &n);
	u64map_put(&c->live_threads, pid, n + 1);
	c->counters[CNT_THREADS]++;
	if (!n && c->on_process)
		c->on_process(c->on_process_arg, pid, true);
}

void collector_forget_pid(struct collector *c, uint32_t pid)
{
	unwinder_forget_pid(c->unwinder, pid);
	if (c->pool)
		unwind_pool_forget_pid(c->pool, pid);
}

/* Forgets a process's maps once its last thread is gone. */
static void thread_died(struct collector *c, uint32_t pid, uint32_t tid)
{
	uint64_t n = 0;

	u64map_put(&c->switched_out, tid, 0);
	u64map_put(&c->switch_why, tid, 0);
	u64map_put(&c->last_node, tid, 0);
	u64map_put(&c->switch_node, tid, 0);
	unwinder_forget_thread(c->unwinder, tid);
	u64map_get(&c->live_threads, pid, &n);
	if (n > 1) {
		u64map_put(&c->live_threads, pid, n - 1);
		return;
	}
	u64map_put(&c->live_threads, pid, 0);
	if (c->on_process)
		c->on_process(c->on_process_arg, pid, false);
	addrspace_exit(c->as, pid);
	collector_forget_pid(c, pid);
	pyreader_forget(c->python, pid);
}

/* The record's fixed part, or NULL if the record is shorter than that. */
static const void *body(const struct perf_event_header *h, size_t len)
{
	return h->size >= sizeof(*h) + len ? h + 1 : NULL;
}

/* A NUL-terminated string at p inside the record, or NULL. */
static const char *record_str(const struct perf_event_header *h, const void *p)
{
	const char *s = p, *end = (const char *)h + h->size;

	return memchr(s, '\0', (size_t)(end - s)) ? s : NULL;
}

struct fork_exit_body {
	uint32_t pid, ppid;
	uint32_t tid, ptid;
	uint64_t time;
};

static void on_fork(struct collector *c, const struct perf_event_header *h, uint64_t ts)
{
	const struct fork_exit_body *f = body(h, sizeof(*f));
	uint64_t comm;

	if (!f) {
		c->counters[CNT_MALFORMED]++;
		return;
	}
	if (f->pid == f->tid) {
		addrspace_fork(c->as, f->pid, f->ppid);
		c->counters[CNT_PROCESSES]++;
		/* A new process with the pid: worth reading if its FORK is lost too. */
		if (u64map_get(&c->unrecoverable, f->pid, NULL))
			u64map_put(&c->unrecoverable, f->pid, 0);
	}
	thread_born(c, f->pid);
	add_task(c, ts, f->pid, f->tid, TR_TASK_NEW, f->ptid);
	/* A new thread carries its creator's name until it sets its own. */
	if (u64map_get(&c->comms, f->ptid, &comm) && comm) {
		u64map_put(&c->comms, f->tid, comm);
		add_task(c, ts, f->pid, f->tid, TR_TASK_COMM, (uint32_t)comm);
	}
}

static void on_exit_record(struct collector *c, const struct perf_event_header *h,
			   uint64_t ts)
{
	const struct fork_exit_body *f = body(h, sizeof(*f));

	if (!f) {
		c->counters[CNT_MALFORMED]++;
		return;
	}
	add_task(c, ts, f->pid, f->tid, TR_TASK_EXIT, 0);
	thread_died(c, f->pid, f->tid);
}

struct comm_body {
	uint32_t pid, tid;
	char comm[];
};

static void on_comm(struct collector *c, const struct perf_event_header *h, uint64_t ts)
{
	const struct comm_body *b = body(h, sizeof(*b));
	const char *name = b ? record_str(h, b->comm) : NULL;
	bool exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
	uint32_t id;

	if (!name) {
		c->counters[CNT_MALFORMED]++;
		return;
	}
	id = intern_str(c, name);
	u64map_put(&c->comms, b->tid, id);
	if (exec) {
		addrspace_exec(c->as, b->pid);
		collector_forget_pid(c, b->pid);
		pyreader_forget(c->python, b->pid);
	}
	add_task(c, ts, b->pid, b->tid, exec ? TR_TASK_EXEC : TR_TASK_COMM, id);
}

struct mmap2_body {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {
			uint8_t build_id_size;
			uint8_t reserved_1;
			uint16_t reserved_2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

static void on_mmap2(struct collector *c, const struct perf_event_header *h)
{
	const struct mmap2_body *m = body(h, sizeof(*m));
	const char *path = m ? record_str(h, m->filename) : NULL;
	bool has_build_id = h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID;
	uint32_t build_id_len = 0;

	if (!path) {
		c->counters[CNT_MALFORMED]++;
		return;
	}
	if (has_build_id)
		build_id_len = m->build_id_size > sizeof(m->build_id) ? sizeof(m->build_id)
								       : m->build_id_size;
	addrspace_mmap(c->as, m->pid, m->addr, m->len, m->pgoff, m->prot, path,
		       build_id_len ? m->build_id : NULL, build_id_len);
	collector_sync_dsos(c);
	/* A process that was not Python when first sampled may be now. */
	if (pyreader_is_python_path(path))
		pyreader_mapped(c->python, m->pid);
}

/*
 * tid was off the CPU from out to in, unless out is 0: it was on it. Why,
 * and the stack it last ran in, were kept at its switch-out.
 */
static void add_offcpu(struct collector *c, uint32_t tid, uint64_t out, uint64_t in)
{
	uint64_t why = 0;

	/* A switch in read before the attach found its thread asleep: no interval. */
	if (out && in > out) {
		struct tr_offcpu *row = VEC_PUSH(&c->cur->offcpu);

		u64map_get(&c->switch_why, tid, &why);
		row->tid = tid;
		row->start = out;
		row->end = in;
		row->reason = (uint32_t)(why >> 32);
		row->node = (uint32_t)why;
	}
}

static void on_switch(struct collector *c, const struct perf_event_header *h, uint64_t ts)
{
	struct rec_id id;
	uint64_t out;

	if (rec_parse_id(c->layout, h, &id)) {
		c->counters[CNT_MALFORMED]++;
		return;
	}
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT) {
		/* Still runnable (the kernel took the CPU) or waiting for something. */
		uint64_t reason = h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT ?
					  TR_OFFCPU_PREEMPTED : TR_OFFCPU_BLOCKED;
		uint64_t node = 0;

		/* Where it went off, sampled at the switch; else where it last ran. */
		if (!u64map_get(&c->switch_node, id.tid, &node) || !node)
			u64map_get(&c->last_node, id.tid, &node);
		u64map_put(&c->switch_node, id.tid, 0);
		u64map_put(&c->switched_out, id.tid, ts);
		u64map_put(&c->switch_why, id.tid, reason << 32 | node);
	} else if (u64map_get(&c->switched_out, id.tid, &out) && out) {
		add_offcpu(c, id.tid, out, ts);
		u64map_put(&c->switched_out, id.tid, 0);
	}
}

static void on_lost(struct collector *c, const struct perf_event_header *h)
{
	/* PERF_RECORD_LOST: id then count; PERF_RECORD_LOST_SAMPLES: count. */
	size_t off = h->type == PERF_RECORD_LOST ? 1 : 0;
	const uint64_t *v = body(h, (off + 1) * sizeof(uint64_t));

	struct rec_id id;

	if (!v || rec_parse_id(c->layout, h, &id)) {
		c->counters[CNT_MALFORMED]++;
		return;
	}
	c->counters[CNT_LOST] += v[off];
	*VEC_PUSH(&c->cur->losses) = (struct tr_loss){
		.ts = id.time, .cpu = id.cpu, .tid = id.tid, .count = v[off],
	};
}

void collector_record(void *arg, const struct perf_event_header *h, uint64_t time)
{
	struct collector *c = arg;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		collector_take_sample(c, h);
		break;
	case PERF_RECORD_MMAP2:
		on_mmap2(c, h);
		break;
	case PERF_RECORD_FORK:
		on_fork(c, h, time);
		break;
	case PERF_RECORD_EXIT:
		on_exit_record(c, h, time);
		break;
	case PERF_RECORD_COMM:
		on_comm(c, h, time);
		break;
	case PERF_RECORD_SWITCH:
		on_switch(c, h, time);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		on_lost(c, h);
		break;
	case PERF_RECORD_THROTTLE:
		c->counters[CNT_THROTTLED]++;
		break;
	default:
		break;
	}
	collector_flush_if_large(c);
}

int collector_new(struct collector **out, enum unwind_method method,
		  const struct rec_layout *layout, struct chunk_writer *cw)
{
	struct collector *c = xcalloc(1, sizeof(*c));
	char name[64];
	int err;

	c->cur = xcalloc(1, sizeof(*c->cur));
	c->cw = cw;
	c->layout = layout;
	err = addrspaces_new(&c->as);
	if (!err)
		err = unwinder_new(&c->unwinder, method, c->as);
	if (!err)
		err = pyreader_new(&c->python, collector_name_python_code, c, NULL);
	if (err) {
		collector_free(c);
		return err;
	}
	for (int i = 0; i < NCOUNTERS; i++) {
		if (i < CNT_UNWIND) {
			c->counter_names[i] = intern_str(c, fixed_counter_names[i]);
		} else if (i < CNT_SYM_RESOLVED) {
			snprintf(name, sizeof(name), UNWIND_COUNTER_PREFIX "%s",
				 unwind_outcome_name((enum unwind_outcome)(i - CNT_UNWIND)));
			c->counter_names[i] = intern_str(c, name);
		} else if (i < CNT_TARGET) {
			c->counter_names[i] =
				intern_str(c, symbol_counter_names[i - CNT_SYM_RESOLVED]);
		} else if (i < CNT_PYTHON) {
			c->counter_names[i] = intern_str(c, target_counters[i - CNT_TARGET].name);
		} else {
			enum python_counter k = python_slot_counters[i - CNT_PYTHON];

			c->counter_names[i] = intern_str(c, python_counters[k].name);
		}
	}
	*out = c;
	return 0;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	unwind_pool_free(c->pool);
	free(c->jobs);
	symbolizer_free(c->sym);
	if (c->unwinder)
		unwinder_free(c->unwinder);
	for (size_t i = 0; i < PATH_CACHE_SLOTS; i++)
		VEC_FREE(&c->paths[i].steps);
	VEC_FREE(&c->path);
	pyreader_free(c->python);
	if (c->as)
		addrspaces_free(c->as);
	tr_tables_free(c->cur);
	free(c->cur);
	strtab_free(&c->strings);
	VEC_FREE(&c->locs);
	VEC_FREE(&c->loc_sampled);
	u64map_free(&c->code_kept);
	u64map_free(&c->loc_ids);
	u64map_free(&c->node_ids);
	u64map_free(&c->python_files);
	u64map_free(&c->switched_out);
	u64map_free(&c->switch_why);
	u64map_free(&c->last_node);
	u64map_free(&c->switch_node);
	u64map_free(&c->comms);
	u64map_free(&c->live_threads);
	u64map_free(&c->unrecoverable);
	u64map_free(&c->cubin_ids);
	VEC_FREE(&c->cubins_coming);
	VEC_FREE(&c->target_sums);
	u64map_free(&c->target_sum_index);
	free(c);
}

void collector_meta(struct collector *c, const char *key, const char *value)
{
	struct tr_meta *m = VEC_PUSH(&c->cur->meta);

	m->key = xstrdup(key);
	m->value = xstrdup(value);
}

void collector_add_thread(struct collector *c, uint32_t pid, uint32_t tid,
			  const char *comm, uint64_t time)
{
	uint32_t id = intern_str(c, comm);

	thread_born(c, pid);
	u64map_put(&c->comms, tid, id);
	add_task(c, time, pid, tid, TR_TASK_NEW, 0);
	add_task(c, time, pid, tid, TR_TASK_COMM, id);
}

void collector_thread_off_cpu(struct collector *c, uint32_t tid, uint64_t since)
{
	u64map_put(&c->switched_out, tid, since);
}

void collector_end_offcpu(struct collector *c, uint64_t end)
{
	uint64_t tid, out;
	size_t pos = 0;

	/* Rows only: a put could grow the map under the walk. */
	while (u64map_next(&c->switched_out, &pos, &tid, &out))
		add_offcpu(c, (uint32_t)tid, out, end);
}

void collector_add_process(struct collector *c, uint32_t pid, const char *comm,
			   uint64_t time)
{
	addrspace_fork(c->as, pid, 0);
	c->counters[CNT_PROCESSES]++;
	collector_add_thread(c, pid, pid, comm, time);
}

int collector_attach_process(struct collector *c, uint32_t pid)
{
	int err;

	addrspace_fork(c->as, pid, 0);
	err = addrspace_load_proc(c->as, pid);
	if (err)
		return err;
	c->counters[CNT_PROCESSES]++;
	collector_sync_dsos(c);
	return 0;
}

bool collector_knows_process(const struct collector *c, uint32_t pid)
{
	return u64map_get(&c->live_threads, pid, NULL);
}

uint32_t collector_intern(struct collector *c, const char *s)
{
	return intern_str(c, s);
}

const char *collector_string(const struct collector *c, uint32_t id)
{
	const char *s = id ? strtab_get(&c->strings, id) : NULL;

	return s ? s : "";
}

void collector_add_metrics(struct collector *c, const struct tr_metric *series, size_t nseries,
			   const struct tr_metric_tick *ticks, size_t nticks,
			   const struct tr_metric_value *values, size_t nvalues)
{
	VEC_APPEND(&c->cur->metrics, series, nseries);
	VEC_APPEND(&c->cur->metric_ticks, ticks, nticks);
	VEC_APPEND(&c->cur->metric_values, values, nvalues);
}

void collector_watch_processes(struct collector *c, process_fn fn, void *arg)
{
	c->on_process = fn;
	c->on_process_arg = arg;
}
