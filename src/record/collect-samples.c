/* SPDX-License-Identifier: MIT */
/*
 * Samples made rows: unwound here or ahead on the unwind pool, their
 * Python stacks read, their stacks interned frame by frame into the loc
 * and node tables (the frames a thread's stack shares with its last taken
 * from a cache), and a process that no record announced read from /proc
 * at its first sample.
 */
#include "record/collect-internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "contract/meta.h"
#include "format/tables.h"
#include "record/procfs.h"
#include "unwind/addrspace.h"
#include "unwind/unwind.h"
#include "util/prefetch.h"
#include "util/xalloc.h"

/*
 * Bytes of distinct Python function and file names a recording takes: a
 * program that makes ever new ones gets one name for the rest. Half the
 * least a reader decodes of a file, so that its recording stays readable.
 */
#define PYTHON_NAME_BYTES (8u << 20)
#define PYTHON_OVER_BUDGET_FUNC "[name over budget]"
#define PYTHON_OVER_BUDGET_FILE "[python]"
/* What a batch asks for of the record after the one taken: a sample's fields, most often. */
#define RECORD_HEAD_BYTES 256

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
		collector_sync_dsos(c);
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

/*
 * Interns the kernel's frames kips[0 .. n), innermost first, under node:
 * locs of the kernel's dso at their absolute addresses, return addresses
 * less one as a caller's frame is, named from /proc/kallsyms at the end.
 */
static uint32_t intern_kernel(struct collector *c, uint32_t node, const uint64_t *kips,
			      size_t n)
{
	bool added;

	if (n && !c->kernel_dso) {
		c->kernel_dso = addrspaces_add_dso(c->as, KERNEL_DSO_PATH, TR_DSO_KERNEL);
		collector_sync_dsos(c);
	}
	for (size_t i = n; i; i--) {
		uint64_t addr = i > 1 ? kips[i - 1] - 1 : kips[0];

		node = intern_node(c, node, intern_loc_at(c, c->kernel_dso, addr, &added));
	}
	c->counters[CNT_KERNEL_FRAMES] += n;
	return node;
}

/* Marks loc as a sample's innermost frame: its function's code is kept when it is named. */
static uint32_t sampled_loc(struct collector *c, uint32_t loc)
{
	while (c->loc_sampled.len < loc)
		*VEC_PUSH(&c->loc_sampled) = 0;
	c->loc_sampled.v[loc - 1] = 1;
	return loc;
}

uint64_t collector_name_python_code(void *arg, const char *func, const char *file)
{
	struct collector *c = arg;
	uint64_t cost = (strtab_find(&c->strings, func) ? 0 : strlen(func) + 1) +
			(strtab_find(&c->strings, file) ? 0 : strlen(file) + 1);

	if (c->python_name_bytes + cost > PYTHON_NAME_BYTES) {
		c->counters[CNT_PYTHON_NAMES_OVER_BUDGET]++;
		if (!c->python_over_budget)
			c->python_over_budget =
				(uint64_t)collector_intern(c, PYTHON_OVER_BUDGET_FUNC) << 32 |
				collector_intern(c, PYTHON_OVER_BUDGET_FILE);
		return c->python_over_budget;
	}
	c->python_name_bytes += cost;
	return (uint64_t)collector_intern(c, func) << 32 | collector_intern(c, file);
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

/*
 * The frames of a sample into c->path, outermost first: the native ones
 * of c->ips[0 .. n), the sampled ip last, each group of Python frames of
 * py (NULL: none) right under the eval frame running it.
 */
static void path_of(struct collector *c, size_t n, const struct py_stack *py)
{
	uint32_t group = py ? py->groups : 0;

	c->path.len = 0;
	VEC_RESERVE(&c->path, n + (py ? py->nframes : 0));
	while (n--) {
		c->path.v[c->path.len++] = (struct path_step){
			.what = c->ips[n], .how = n ? PATH_NATIVE : PATH_LEAF,
		};
		if (!group || py->eval_at[group - 1] != n)
			continue;
		group--;
		for (uint32_t k = py->group_start[group + 1]; k > py->group_start[group]; k--)
			c->path.v[c->path.len++] = (struct path_step){
				.what = py->frames[k - 1].func,
				.how = (uint64_t)py->frames[k - 1].line << 2 | PATH_PYTHON,
			};
	}
}

static uint32_t step_loc(struct collector *c, uint32_t pid, const struct path_step *st)
{
	if ((st->how & 3) == PATH_PYTHON)
		return intern_python_loc(c, &(struct py_frame){ .func = st->what,
								.line = (uint32_t)(st->how >> 2) });
	if (st->how == PATH_LEAF)
		return sampled_loc(c, intern_loc(c, pid, st->what));
	return intern_loc(c, pid, st->what);
}

/*
 * The node of the frames of c->path, in thread tid of pid: those that its
 * last stack had too, outermost first, are taken from its slot; the rest
 * interned, and the slot made this stack's.
 */
static uint32_t intern_path(struct collector *c, uint32_t pid, uint32_t tid)
{
	struct path_slot *slot = &c->paths[tid % PATH_CACHE_SLOTS];
	uint64_t generation = addrspaces_generation(c->as);
	size_t shared = 0, n = c->path.len;
	uint32_t node;

	if (slot->tid == tid && slot->pid == pid && slot->generation == generation)
		while (shared < n && shared < slot->steps.len &&
		       slot->steps.v[shared].what == c->path.v[shared].what &&
		       slot->steps.v[shared].how == c->path.v[shared].how)
			shared++;
	node = shared ? slot->steps.v[shared - 1].node : 0;
	for (size_t i = shared; i < n; i++)
		c->path.v[i].node = node = intern_node(c, node, step_loc(c, pid, &c->path.v[i]));
	slot->generation = generation;
	slot->tid = tid;
	slot->pid = pid;
	slot->steps.len = shared;
	VEC_APPEND(&slot->steps, c->path.v + shared, n - shared);
	return node;
}

static void unpack_regs(const struct rec_layout *l, const struct rec_sample *s,
			struct unwind_regs *regs)
{
	size_t k = 0;

	memset(regs, 0, sizeof(*regs));
	if (!s->regs)
		return;
	/* The mask's bits, lowest first: one packed word each. */
	for (uint64_t bits = l->regs_mask; bits; bits &= bits - 1, k++) {
		unsigned bit = (unsigned)__builtin_ctzll(bits);

		if (bit < sizeof(regs->r) / sizeof(regs->r[0])) {
			regs->r[bit] = s->regs[k];
			regs->mask |= 1ull << bit;
		}
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
	collector_forget_pid(c, s->pid);
	pyreader_forget(c->python, s->pid);
	collector_sync_dsos(c);
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

/*
 * A context switch's sample: its stack is where the thread goes off the
 * CPU, kept for the switch-out record that follows it on the same ring.
 * Not a sample of time: no row, no unwind or Python count.
 */
static void take_switch_stack(struct collector *c, const struct rec_sample *s, size_t n,
			      const uint64_t *kips, size_t nkernel)
{
	path_of(c, n, NULL);
	u64map_put(&c->switch_node, s->tid,
		   intern_kernel(c, intern_path(c, s->pid, s->tid), kips, nkernel));
	c->counters[CNT_SWITCH_STACKS]++;
}

void collector_take_sample(struct collector *c, const struct perf_event_header *h)
{
	const struct unwind_job *job = c->next_job < c->njobs ? &c->jobs[c->next_job++] : NULL;
	struct unwind_sample us = {0};
	enum unwind_outcome outcome;
	struct rec_sample s;
	struct tr_sample *row;
	const uint64_t *kips;
	uint32_t node;
	size_t n = 0, nkernel;

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
	nkernel = callchain_context(s.callchain, s.callchain_nr, PERF_CONTEXT_KERNEL, &kips);
	if (rec_is_switch_sample(c->layout, s.id)) {
		take_switch_stack(c, &s, n, kips, nkernel);
		return;
	}
	c->counters[CNT_UNWIND + outcome]++;
	/* Never drop a sample: with no frame at all, keep the sampled ip. */
	if (!n && !nkernel && s.ip) {
		c->ips[0] = s.ip;
		n = 1;
	}
	path_of(c, n, read_python(c, &s, n, unwind_complete(outcome)));
	node = intern_kernel(c, intern_path(c, s.pid, s.tid), kips, nkernel);

	row = VEC_PUSH(&c->cur->samples);
	row->ts = s.time;
	row->pid = s.pid;
	row->tid = s.tid;
	row->node = node;
	row->cpu = s.cpu;
	row->flags = unwind_complete(outcome) ? 0 : TR_SAMPLE_TRUNCATED;
	u64map_put(&c->last_node, s.tid, node);
	c->counters[CNT_SAMPLES]++;
}

void collector_arrived(void *arg, const struct perf_event_header *h, uint64_t time)
{
	struct collector *c = arg;
	struct rec_head hd;
	const char *found;

	if (h->type != PERF_RECORD_SAMPLE || rec_parse_head(c->layout, h, &hd) ||
	    rec_is_switch_sample(c->layout, hd.id))
		return;
	(void)time;
	pyreader_snapshot(c->python, hd.pid, hd.tid, hd.time, &found);
	python_found(c, hd.pid, found);
}

bool collector_reads_python(const struct collector *c)
{
	return c->python_counted;
}

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
 * collector_take_sample to take in the same order.
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
		/* Its process is read from /proc first, by collector_take_sample. */
		if (parsed && unannounced(c, s.pid))
			break;
		c->njobs++;
		memset(&job->s, 0, sizeof(job->s));
		/* A malformed one unwinds to nothing; collector_take_sample counts it. */
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
		/* Its fields are read next; the kernel wrote them on another CPU. */
		if (i + 1 < n)
			prefetch_range(hs[i + 1], RECORD_HEAD_BYTES);
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

const struct unwinder *collector_unwinder(const struct collector *c)
{
	return c->unwinder;
}
