/* SPDX-License-Identifier: MIT */
#include "record/unwind-pool.h"
#include "record/collect.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/counters.h"
#include "contract/meta.h"
#include "format/file.h"
#include "format/tables.h"
#include "record/procfs.h"
#include "record/python.h"
#include "symbols/symbols.h"
#include "unwind/addrspace.h"
#include "util/clock.h"
#include "util/hashmap.h"
#include "util/vec.h"
#include "util/xalloc.h"

/*
 * Bytes of distinct Python function and file names a recording takes: a
 * program that makes ever new ones gets one name for the rest. Half the
 * least a reader decodes of a file, so that its recording stays readable.
 */
#define PYTHON_NAME_BYTES (8u << 20)
#define PYTHON_OVER_BUDGET_FUNC "[name over budget]"
#define PYTHON_OVER_BUDGET_FILE "[python]"
/* Rows pending past which a chunk is closed before its second is up. */
#define CHUNK_SOON_ROWS (256u << 10)
/* ... and past which the drain waits for the writer rather than grow. */
#define CHUNK_MAX_ROWS (4u << 20)
/*
 * Bytes of code images that count as one pending row: a chunk holds 64 MiB
 * of them before the drain waits, plus the one image that crossed, which
 * may be a quarter of what a chunk can hold; a larger one is over the cap.
 */
#define CUBIN_ROW_BYTES 16
#define CUBIN_MAX_ONE (TR_CHUNK_MAX_RAW / 4)
/* What an image counts against the cap at least, so that the cap bounds their number too. */
#define CUBIN_MIN_BYTES 4096
/* Images over the cap remembered, each to be counted once; past them every refusal counts. */
#define CUBIN_REFUSED_KEPT 65536

enum counter {
	CNT_SAMPLES,
	CNT_LOST,
	CNT_THROTTLED,
	CNT_THREADS,
	CNT_PROCESSES,
	CNT_CHUNKS,
	CNT_MALFORMED,
	CNT_PROCESSES_RECOVERED,
	CNT_PROCESSES_UNRECOVERED,
	CNT_UNWIND,	/* one per enum unwind_outcome */
	CNT_SYM_RESOLVED = CNT_UNWIND + UNWIND_OUTCOMES,
	CNT_SYM_UNRESOLVED,
	CNT_SYM_MISSING_DSO,
	CNT_SYM_REFUSED,
	CNT_SYM_JIT_MAPS_CUT,
	CNT_SYM_FILES_READ,
	CNT_TARGET,	/* one per enum target_counter */
	CNT_PYTHON = CNT_TARGET + TARGET_COUNTERS,	/* one per enum py_outcome */
	CNT_PYTHON_FRAMES = CNT_PYTHON + PY_OUTCOMES,
	CNT_PYTHON_NAMES_OVER_BUDGET,
	CNT_PYTHON_READER,	/* one per enum py_counter */
	NCOUNTERS = CNT_PYTHON_READER + PY_COUNTERS
};

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
};

static const char *const symbol_counter_names[] = {
	COUNTER_SYMBOLS_RESOLVED, COUNTER_SYMBOLS_UNRESOLVED, COUNTER_SYMBOLS_MISSING_DSO,
	COUNTER_SYMBOLS_REFUSED, COUNTER_SYMBOLS_JIT_MAPS_CUT, COUNTER_SYMBOLS_FILES_READ,
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

/*
 * The leaf node of a recent native stack. A program is sampled in the same
 * few stacks again and again, so each is interned frame by frame only
 * once; a slot holds while the maps its frames were named through do.
 */
#define STACK_CACHE_SLOTS 4096

struct stack_slot {
	uint64_t hash, generation;
	uint32_t pid, node;
	size_t n, cap;
	uint64_t *ips;
};

struct collector {
	struct tr_tables *cur;		/* rows of the chunk being filled */
	struct chunk_writer *cw;
	const struct rec_layout *layout;
	struct addrspaces *as;
	struct unwinder *unwinder;
	struct pyreader *python;

	struct strtab strings;
	uint32_t strings_out;		/* ids up to this are in a chunk already */
	uint32_t dsos_out;

	VEC(struct tr_loc) locs;	/* every loc so far: locs.v[id - 1] */
	struct u64map loc_ids;		/* hash of (dso, addr) -> loc id, probed on collision */
	struct u64map node_ids;		/* parent << 32 | loc -> node id */
	uint32_t nodes;
	uint64_t python_name_bytes;	/* of the distinct names of Python code */
	uint64_t python_over_budget;	/* the names past PYTHON_NAME_BYTES, once needed */
	struct u64map python_files;	/* file string id -> its dso id */

	struct u64map switched_out;	/* tid -> time it went off the CPU, 0 if running */
	struct u64map comms;		/* tid -> string id of its name */
	struct u64map live_threads;	/* pid -> threads not yet exited */
	struct u64map unrecoverable;	/* pid -> 1 when sampled unannounced and not in /proc */
	process_fn on_process;		/* told of processes coming and going, or NULL */
	void *on_process_arg;

	uint64_t counters[NCOUNTERS];
	uint32_t counter_names[NCOUNTERS];
	bool symbolized;		/* every loc named: the symbol counters are final */
	struct symbolizer *sym;		/* created at the first naming */
	uint32_t named;			/* locs 1 .. named have been named */
	uint32_t locs_flushed;		/* locs in the chunks handed so far */
	uint64_t naming_ns;		/* CPU time spent naming */
	bool target_counted;	/* the target.* counters are worth writing */
	bool python_counted;	/* ... and the python.* ones */
	uint32_t lanes;
	uint32_t spans;			/* span ids up to this are taken */
	struct u64map cubin_ids;	/* crc -> cubin id, 0 when over the cap */
	VEC(uint64_t) cubins_coming;	/* crcs of the images wanted and on their way */
	uint32_t cubins, cubins_refused;
	uint64_t pc_buckets;
	uint64_t cubin_max;
	uint64_t cubin_bytes;		/* kept, and on their way: held against the cap */
	uint64_t cubin_bytes_pending;	/* in the chunk being filled */
	uint32_t over_cap_name;		/* string id of cuda.pc.cubins-over-cap */
	uint32_t cut_short_name;	/* ... of cuda.pc.cubins-cut-short */
	/* Counters named by the target's processes: sums over processes. */
	VEC(struct tr_counter) target_sums;
	struct u64map target_sum_index;	/* name -> index in target_sums */

	struct stack_slot stacks[STACK_CACHE_SLOTS];

	/* Samples unwound ahead by the pool, taken in order by on_sample. */
	struct unwind_pool *pool;
	struct unwind_job *jobs;	/* UNWIND_AHEAD of them */
	size_t njobs, next_job;

	/* Scratch for one sample, reused: no allocation per sample. */
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct py_stack python_stack;
};

static uint32_t intern_str(struct collector *c, const char *s)
{
	uint32_t id = strtab_intern(&c->strings, s);

	if (id > c->strings_out) {
		*VEC_PUSH(&c->cur->strings) = xstrdup(s);
		c->strings_out = id;
	}
	return id;
}

/* Emits a dso row for every dso the address spaces have created since. */
static void sync_dsos(struct collector *c)
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

/* What the unwinders keep of a process that exec'd or exited. */
static void forget_pid(struct collector *c, uint32_t pid)
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
	forget_pid(c, pid);
	pyreader_forget(c->python, pid);
}

static uint64_t loc_hash(uint32_t dso, uint64_t addr)
{
	uint64_t h = hash_u64(addr ^ hash_u64(dso));

	return h == U64MAP_EMPTY ? 0 : h;
}

/* The loc (dso, addr); *added when it is new. */
static uint32_t intern_loc_at(struct collector *c, uint32_t dso, uint64_t addr, bool *added)
{
	uint64_t key = loc_hash(dso, addr), id;
	struct tr_loc *loc;

	if (dso > c->dsos_out)
		sync_dsos(c);
	*added = false;
	/* Keys are hashes: a different loc under the same key probes on. */
	while (u64map_get(&c->loc_ids, key, &id)) {
		loc = &c->locs.v[id - 1];
		if (loc->dso == dso && loc->addr == addr)
			return (uint32_t)id;
		key = loc_hash(dso, key);
	}
	loc = VEC_PUSH(&c->locs);
	loc->dso = dso;
	loc->addr = addr;
	*VEC_PUSH(&c->cur->locs) = *loc;
	u64map_put(&c->loc_ids, key, c->locs.len);
	*added = true;
	return (uint32_t)c->locs.len;
}

/* The loc of ip in pid: (dso, ELF address), or (0, ip) outside any map. */
static uint32_t intern_loc(struct collector *c, uint32_t pid, uint64_t ip)
{
	const struct map *m = addrspace_find(c->as, pid, ip);
	bool added;

	return intern_loc_at(c, m ? m->dso->id : 0, m ? map_to_elf_addr(m, ip) : ip, &added);
}

static uint32_t intern_node(struct collector *c, uint32_t parent, uint32_t loc)
{
	uint64_t key = (uint64_t)parent << 32 | loc, id;
	struct tr_node *n;

	if (u64map_get(&c->node_ids, key, &id))
		return (uint32_t)id;
	n = VEC_PUSH(&c->cur->nodes);
	n->parent = parent;
	n->loc = loc;
	u64map_put(&c->node_ids, key, ++c->nodes);
	return c->nodes;
}

static uint64_t stack_hash(uint32_t pid, const uint64_t *ips, size_t n)
{
	uint64_t h = (uint64_t)pid << 32 | n;

	for (size_t i = 0; i < n; i++) {
		h = (h ^ ips[i]) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	return h;
}

/* The node of the native stack c->ips[0 .. n), the sampled ip first. */
static uint32_t intern_stack(struct collector *c, uint32_t pid, size_t n)
{
	uint64_t hash = stack_hash(pid, c->ips, n), generation = addrspaces_generation(c->as);
	struct stack_slot *slot = &c->stacks[hash % STACK_CACHE_SLOTS];
	uint32_t node = 0;

	if (slot->hash == hash && slot->generation == generation && slot->pid == pid &&
	    slot->n == n && !memcmp(slot->ips, c->ips, n * sizeof(*c->ips)))
		return slot->node;
	for (size_t i = n; i;)
		node = intern_node(c, node, intern_loc(c, pid, c->ips[--i]));
	if (slot->cap < n) {
		slot->cap = n;
		slot->ips = xrealloc(slot->ips, n * sizeof(*slot->ips));
	}
	memcpy(slot->ips, c->ips, n * sizeof(*c->ips));
	*slot = (struct stack_slot){ .hash = hash, .generation = generation, .pid = pid,
				     .node = node, .n = n, .cap = slot->cap, .ips = slot->ips };
	return node;
}

/*
 * Names a code object the Python reader met: name << 32 | file (string
 * ids), within PYTHON_NAME_BYTES of names not seen before.
 */
static uint64_t name_python_code(void *arg, const char *func, const char *file)
{
	struct collector *c = arg;
	uint64_t cost = (strtab_find(&c->strings, func) ? 0 : strlen(func) + 1) +
			(strtab_find(&c->strings, file) ? 0 : strlen(file) + 1);

	if (c->python_name_bytes + cost > PYTHON_NAME_BYTES) {
		c->counters[CNT_PYTHON_NAMES_OVER_BUDGET]++;
		if (!c->python_over_budget)
			c->python_over_budget =
				(uint64_t)intern_str(c, PYTHON_OVER_BUDGET_FUNC) << 32 |
				intern_str(c, PYTHON_OVER_BUDGET_FILE);
		return c->python_over_budget;
	}
	c->python_name_bytes += cost;
	return (uint64_t)intern_str(c, func) << 32 | intern_str(c, file);
}

/*
 * The loc of a Python frame: in its source file's dso, at its line and
 * function, named by a symbol row of its own when new. Frames named past
 * the budget have no line, so that their locs do not grow either.
 */
static uint32_t intern_python_loc(struct collector *c, const struct py_frame *f)
{
	uint32_t name = (uint32_t)(f->func >> 32), file = (uint32_t)f->func, loc;
	uint32_t line = f->func == c->python_over_budget ? 0 : f->line;
	uint64_t dso;
	bool added;

	if (!u64map_get(&c->python_files, file, &dso)) {
		dso = addrspaces_add_dso(c->as, collector_string(c, file), TR_DSO_PYTHON);
		u64map_put(&c->python_files, file, dso);
	}
	loc = intern_loc_at(c, (uint32_t)dso, TR_PYTHON_ADDR(line, name), &added);
	if (added)
		*VEC_PUSH(&c->cur->symbols) = (struct tr_symbol){
			.loc = loc, .func = name, .file = file, .line = line,
		};
	return loc;
}

/* Interns the Python frames of group g of st under node, outermost first. */
static uint32_t intern_python_group(struct collector *c, uint32_t node,
				    const struct py_stack *st, uint32_t g)
{
	for (uint32_t k = st->group_start[g + 1]; k > st->group_start[g]; k--)
		node = intern_node(c, node, intern_python_loc(c, &st->frames[k - 1]));
	return node;
}

static void unpack_regs(const struct rec_layout *l, const struct rec_sample *s,
			struct unwind_regs *regs)
{
	size_t k = 0;

	memset(regs, 0, sizeof(*regs));
	if (!s->regs)
		return;
	for (unsigned bit = 0; bit < 64; bit++) {
		if (!(l->regs_mask & (1ull << bit)))
			continue;
		if (bit < sizeof(regs->r) / sizeof(regs->r[0])) {
			regs->r[bit] = s->regs[k];
			regs->mask |= 1ull << bit;
		}
		k++;
	}
}

/* found, when not NULL, says that process pid is CPython, and which. */
static void python_found(struct collector *c, uint32_t pid, const char *found)
{
	char key[32];

	if (!found)
		return;
	snprintf(key, sizeof(key), META_PYTHON_PROCESS_PREFIX "%" PRIu32, pid);
	collector_meta(c, key, found);
	c->python_counted = true;
}

/*
 * The sample's Python stack, as read when it arrived, held against its
 * native one in c->ips: the stack when it matched, else NULL.
 */
static const struct py_stack *read_python(struct collector *c, const struct rec_sample *s,
					  size_t n, bool complete)
{
	struct py_stack *st = &c->python_stack;
	enum py_outcome outcome;
	const char *found;

	outcome = pyreader_sample(c->python, s->pid, s->tid, s->time, c->ips, n, complete, st,
				  &found);
	python_found(c, s->pid, found);
	if (outcome == PY_NOT_PYTHON)
		return NULL;
	c->counters[CNT_PYTHON + outcome]++;
	if (outcome != PY_MATCHED)
		return NULL;
	c->counters[CNT_PYTHON_FRAMES] += st->group_start[st->groups];
	return st;
}

/*
 * Whether pid's samples come with no process the records announced: its
 * FORK record was lost while the recorder fell behind (or the records
 * of its threads' ends outnumbered those of their starts).
 */
static bool unannounced(const struct collector *c, uint32_t pid)
{
	uint64_t threads = 0, failed = 0;

	u64map_get(&c->live_threads, pid, &threads);
	u64map_get(&c->unrecoverable, pid, &failed);
	return !threads && !failed;
}

/*
 * Learns an unannounced process from /proc at its first sample: its maps,
 * and the sampled thread with its name. Once only: a process gone, or
 * whose pid a newer process took, is counted and not read again.
 */
static void recover_process(struct collector *c, const struct rec_sample *s)
{
	uint64_t start;
	char comm[64];

	if (procfs_start_ns(s->pid, &start) || start > s->time ||
	    addrspace_load_proc(c->as, s->pid)) {
		u64map_put(&c->unrecoverable, s->pid, 1);
		c->counters[CNT_PROCESSES_UNRECOVERED]++;
		return;
	}
	forget_pid(c, s->pid);
	pyreader_forget(c->python, s->pid);
	sync_dsos(c);
	c->counters[CNT_PROCESSES]++;
	c->counters[CNT_PROCESSES_RECOVERED]++;
	procfs_comm(s->pid, s->tid, comm, sizeof(comm));
	collector_add_thread(c, s->pid, s->tid, comm, s->time);
}

static void unwind_sample_of(const struct collector *c, const struct rec_sample *s,
			     struct unwind_sample *us)
{
	us->pid = s->pid;
	us->tid = s->tid;
	unpack_regs(c->layout, s, &us->regs);
	us->stack = s->stack;
	us->stack_len = s->stack_len;
	us->callchain = s->callchain;
	us->callchain_len = s->callchain_nr;
}

static void on_sample(struct collector *c, const struct perf_event_header *h)
{
	const struct unwind_job *job = c->next_job < c->njobs ? &c->jobs[c->next_job++] : NULL;
	struct unwind_sample us = {0};
	enum unwind_outcome outcome;
	const struct py_stack *py;
	struct rec_sample s;
	struct tr_sample *row;
	uint32_t node = 0, group;
	size_t n = 0;

	if (rec_parse_sample(c->layout, h, &s)) {
		c->counters[CNT_MALFORMED]++;
		return;
	}
	if (unannounced(c, s.pid))
		recover_process(c, &s);
	if (job) {
		outcome = job->outcome;
		n = job->n;
		memcpy(c->ips, job->ips, n * sizeof(*c->ips));
	} else {
		unwind_sample_of(c, &s, &us);
		outcome = unwind(c->unwinder, &us, c->ips, &n);
	}
	c->counters[CNT_UNWIND + outcome]++;
	/* Never drop a sample: with no frame at all, keep the sampled ip. */
	if (!n && s.ip) {
		c->ips[0] = s.ip;
		n = 1;
	}
	py = read_python(c, &s, n, unwind_complete(outcome));
	if (!py)
		node = intern_stack(c, s.pid, n);
	/* Each group of Python frames goes right under the eval frame running it. */
	for (group = py ? py->groups : 0; py && n;) {
		node = intern_node(c, node, intern_loc(c, s.pid, c->ips[--n]));
		if (group && py->eval_at[group - 1] == n)
			node = intern_python_group(c, node, py, --group);
	}

	row = VEC_PUSH(&c->cur->samples);
	row->ts = s.time;
	row->pid = s.pid;
	row->tid = s.tid;
	row->node = node;
	row->cpu = s.cpu;
	row->flags = unwind_complete(outcome) ? 0 : TR_SAMPLE_TRUNCATED;
	c->counters[CNT_SAMPLES]++;
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
		forget_pid(c, b->pid);
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
	sync_dsos(c);
	/* A process that was not Python when first sampled may be now. */
	if (pyreader_is_python_path(path))
		pyreader_mapped(c->python, m->pid);
}

/* tid was off the CPU from out to in, unless out is 0: it was on it. */
static void add_offcpu(struct collector *c, uint32_t tid, uint64_t out, uint64_t in)
{
	/* A switch in read before the attach found its thread asleep: no interval. */
	if (out && in > out) {
		struct tr_offcpu *row = VEC_PUSH(&c->cur->offcpu);

		row->tid = tid;
		row->start = out;
		row->end = in;
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
		u64map_put(&c->switched_out, id.tid, ts);
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

/* Rows waiting for the chunk, code images by CUBIN_ROW_BYTES. */
static size_t pending_rows(const struct collector *c)
{
	return c->cur->samples.len + c->cur->nodes.len + c->cur->offcpu.len +
	       c->cur->tasks.len + c->cur->spans.len + c->cur->span_attrs.len +
	       c->cur->pc_samples.len + c->cubin_bytes_pending / CUBIN_ROW_BYTES;
}

/* Closes the chunk early when it grows large, and waits rather than grow without bound. */
static void flush_if_large(struct collector *c)
{
	if (pending_rows(c) >= CHUNK_SOON_ROWS)
		collector_flush(c, pending_rows(c) >= CHUNK_MAX_ROWS);
}

void collector_arrived(void *arg, const struct perf_event_header *h, uint64_t time)
{
	struct collector *c = arg;
	struct rec_sample s;
	const char *found;

	if (h->type != PERF_RECORD_SAMPLE || rec_parse_sample(c->layout, h, &s))
		return;
	(void)time;
	pyreader_snapshot(c->python, s.pid, s.tid, s.time, &found);
	python_found(c, s.pid, found);
}

bool collector_reads_python(const struct collector *c)
{
	return c->python_counted;
}

void collector_record(void *arg, const struct perf_event_header *h, uint64_t time)
{
	struct collector *c = arg;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(c, h);
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
	flush_if_large(c);
}

/*
 * The time a chunk may spend naming the addresses of the chunks before it:
 * well under what the rings hold (50 ms), so that no sample is lost to it.
 */
#define NAMING_BUDGET_NS (20 * NSEC_PER_MSEC)

/* Samples one run of the pool unwinds at most. */
#define UNWIND_AHEAD 1024

/* Whether a record may change what an address of some process holds. */
static bool changes_maps(const struct perf_event_header *h)
{
	return h->type == PERF_RECORD_MMAP2 || h->type == PERF_RECORD_FORK ||
	       h->type == PERF_RECORD_EXIT ||
	       (h->type == PERF_RECORD_COMM && (h->misc & PERF_RECORD_MISC_COMM_EXEC));
}

/*
 * Unwinds on the pool the samples of hs[0 .. n) up to the first record
 * that may change the maps they are unwound through, one job each, for
 * on_sample to take in the same order.
 */
static void unwind_ahead(struct collector *c, const struct perf_event_header *const *hs,
			 size_t n)
{
	c->njobs = c->next_job = 0;
	for (size_t i = 0; i < n && !changes_maps(hs[i]) && c->njobs < UNWIND_AHEAD; i++) {
		struct unwind_job *job = &c->jobs[c->njobs];
		bool parsed;
		struct rec_sample s;

		if (hs[i]->type != PERF_RECORD_SAMPLE)
			continue;
		parsed = !rec_parse_sample(c->layout, hs[i], &s);
		/* Its process is read from /proc first, by on_sample. */
		if (parsed && unannounced(c, s.pid))
			break;
		c->njobs++;
		memset(&job->s, 0, sizeof(job->s));
		/* A malformed one unwinds to nothing; on_sample counts it. */
		if (parsed)
			unwind_sample_of(c, &s, &job->s);
	}
	unwind_pool_run(c->pool, c->unwinder, c->jobs, c->njobs);
}

void collector_record_batch(void *arg, const struct perf_event_header *const *hs,
			    const uint64_t *times, size_t n)
{
	struct collector *c = arg;

	for (size_t i = 0; i < n; i++) {
		if (c->pool && c->next_job == c->njobs && hs[i]->type == PERF_RECORD_SAMPLE)
			unwind_ahead(c, hs + i, n - i);
		collector_record(c, hs[i], times[i]);
	}
	c->njobs = c->next_job = 0;
}

int collector_unwind_threads(struct collector *c, enum unwind_method method, unsigned threads)
{
	int err;

	if (!threads || method != UNWIND_DWARF)
		return 0;
	err = unwind_pool_new(&c->pool, threads, method, c->as);
	if (!err)
		c->jobs = xcalloc(UNWIND_AHEAD, sizeof(*c->jobs));
	return err;
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
		err = pyreader_new(&c->python, name_python_code, c, NULL);
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
	for (size_t i = 0; i < STACK_CACHE_SLOTS; i++)
		free(c->stacks[i].ips);
	pyreader_free(c->python);
	if (c->as)
		addrspaces_free(c->as);
	tr_tables_free(c->cur);
	free(c->cur);
	strtab_free(&c->strings);
	VEC_FREE(&c->locs);
	u64map_free(&c->loc_ids);
	u64map_free(&c->node_ids);
	u64map_free(&c->python_files);
	u64map_free(&c->switched_out);
	u64map_free(&c->comms);
	u64map_free(&c->live_threads);
	u64map_free(&c->unrecoverable);
	u64map_free(&c->cubin_ids);
	VEC_FREE(&c->cubins_coming);
	VEC_FREE(&c->target_sums);
	u64map_free(&c->target_sum_index);
	free(c);
}

const struct unwinder *collector_unwinder(const struct collector *c)
{
	return c->unwinder;
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
	sync_dsos(c);
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
	flush_if_large(c);
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

void collector_set_cubin_max(struct collector *c, uint64_t bytes)
{
	c->cubin_max = bytes;
}

/* One more of the recorder's own cubin losses, named name (*id: its string id, once made). */
static void count_cubin_loss(struct collector *c, uint32_t *id, const char *name)
{
	if (!*id)
		*id = intern_str(c, name);
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
	flush_if_large(c);
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
	flush_if_large(c);
}

void collector_count_target(struct collector *c, enum target_counter k, uint64_t n)
{
	c->counters[CNT_TARGET + k] += n;
	c->target_counted = true;
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
		row->func = intern_str(c, frames[i].func);
		row->file = frames[i].file ? intern_str(c, frames[i].file) : 0;
		row->line = frames[i].line;
		row->flags = frames[i].inlined ? TR_SYM_INLINED : 0;
	}
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
