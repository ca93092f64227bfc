/* SPDX-License-Identifier: MIT */
/*
 * The Python reader: a sampled thread's state and frame chain walked into
 * groups, its snapshots held until their samples, matched against the
 * native stacks (its memory: python-memory.c; its code objects:
 * python-code.c).
 */
#include "record/python.h"

#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "record/python-internal.h"
#include "util/xalloc.h"

int pyreader_new(struct pyreader **pr, py_name_fn *name, void *arg,
		 const struct py_memory *mem)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	*pr = xcalloc(1, sizeof(**pr));
	(*pr)->mem = mem ? *mem : (struct py_memory){ .find = py_find_live, .read = py_read_live };
	(*pr)->name = name;
	(*pr)->name_arg = arg;
	(*pr)->codes = xcalloc(CODE_SETS * CODE_WAYS, sizeof(*(*pr)->codes));
	return 0;
}

const uint64_t *pyreader_counts(const struct pyreader *pr)
{
	return pr->counts;
}

static void snapshot_free(struct snapshot *snap)
{
	free(snap->frames);
	free(snap->group_start);
	free(snap);
}

static void proc_free(struct pyproc *p)
{
	size_t pos = 0;
	uint64_t tid, v;

	while (u64map_next(&p->hints, &pos, &tid, &v))
		free((void *)(uintptr_t)v);
	u64map_free(&p->tstates);
	u64map_free(&p->hints);
	u64map_free(&p->cframes);
	free(p);
}

/* Its code objects stay in the cache under a serial no process has now, till evicted. */
void pyreader_forget(struct pyreader *pr, uint32_t pid)
{
	uint64_t v;

	if (!u64map_get(&pr->procs, pid, &v) || !v)
		return;
	proc_free((struct pyproc *)(uintptr_t)v);
	u64map_put(&pr->procs, pid, 0);
}

void pyreader_mapped(struct pyreader *pr, uint32_t pid)
{
	uint64_t v;

	if (u64map_get(&pr->procs, pid, &v) && v &&
	    ((struct pyproc *)(uintptr_t)v)->state != PROC_PYTHON)
		pyreader_forget(pr, pid);
}

void pyreader_free(struct pyreader *pr)
{
	size_t pos = 0;
	uint64_t pid, v;

	if (!pr)
		return;
	while (u64map_next(&pr->procs, &pos, &pid, &v))
		if (v)
			proc_free((struct pyproc *)(uintptr_t)v);
	u64map_free(&pr->procs);
	for (size_t i = 0; i < pr->pending.len; i++) {
		for (size_t k = 0; k < pr->pending.v[i].snaps.len; k++)
			snapshot_free(pr->pending.v[i].snaps.v[k]);
		VEC_FREE(&pr->pending.v[i].snaps);
	}
	VEC_FREE(&pr->pending);
	u64map_free(&pr->pending_of);
	for (size_t i = 0; i < CODE_SETS * CODE_WAYS; i++)
		free(pr->codes[i].runs);
	free(pr->codes);
	free(pr);
}

bool pyreader_is_python_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libpython3.", 11) || !strncmp(base, "python3", 7);
}

/* Where a thread state holds its current frame: itself (3.13), else its _PyCFrame. */
static uint32_t frame_holder_at(const struct py_layout *l)
{
	return l->tstate_cframe ? l->tstate_cframe : l->current_frame;
}

/* What the reader reads of a thread state, [lo, hi): its next, thread id and frame holder. */
static void tstate_span(const struct py_layout *l, uint32_t *lo, uint32_t *hi)
{
	uint32_t at[] = { l->tstate_next, l->tstate_native_thread_id, frame_holder_at(l) };

	*lo = *hi = at[0];
	for (size_t i = 1; i < sizeof(at) / sizeof(at[0]); i++) {
		*lo = at[i] < *lo ? at[i] : *lo;
		*hi = at[i] > *hi ? at[i] : *hi;
	}
	*hi += 8;
}

/* What a read of a thread's state learns. */
struct thread_read {
	uint64_t ts;			/* its PyThreadState */
	uint64_t holder;		/* what holds its current frame */
	uint64_t frame;			/* its current frame, when frame_known */
	bool frame_known;
};

/* tid's hint, NULL when none. */
static struct thread_hint *hint_of(const struct pyproc *p, uint32_t tid)
{
	uint64_t v;

	return u64map_get(&p->hints, tid, &v) ? (struct thread_hint *)(uintptr_t)v : NULL;
}

/*
 * The pages [*lo, *end) that tid's next walk should find its frames in,
 * by its last: up to the page end of its current frame then, down to its
 * lowest frame's page, at most STACK_WINDOW.
 */
static bool hinted_pages(const struct thread_hint *h, uint64_t *lo, uint64_t *end)
{
	if (!h->low || h->low > h->top || h->top > UINT64_MAX - PAGE_SIZE)
		return false;
	*end = (h->top + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
	*lo = h->low & ~(uint64_t)(PAGE_SIZE - 1);
	if (*end - *lo > STACK_WINDOW)
		*lo = *end - STACK_WINDOW;
	return true;
}

/* The ranges a read of a noted state takes at most: its own, a frame, fingerprints, pages. */
#define STATE_RANGES (2 + HINT_CODES + 1)

/*
 * Reads tid's noted state t->ts into buf ([lo, hi) of it) and, in the same
 * read: before 3.13, the frame that the _PyCFrame of tid's last read holds
 * now (tid's current frame, t->frame_known, when the state still points
 * to that _PyCFrame); then what tid's last walk met, for this one to find
 * already read: the fingerprints of its code objects (pr->prints) and the
 * pages of its frames (pr->stack, the pages read from the lowest on).
 */
static int read_noted_state(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint32_t tid,
			    uint8_t *buf, uint32_t lo, uint32_t hi, struct thread_read *t)
{
	const struct py_layout *l = p->layout;
	const struct thread_hint *h = hint_of(p, tid);
	struct iovec local[STATE_RANGES] = { { buf, hi - lo }, { &t->frame, sizeof(t->frame) } };
	struct iovec remote[STATE_RANGES] = { { (void *)(uintptr_t)(t->ts + lo), hi - lo } };
	uint64_t cframe = 0, pages_lo = 0, pages_end = 0;
	unsigned long n = 1, prints_at, pages_at;
	size_t len = hi - lo, left;
	ssize_t got;

	if (t->ts > UINT64_MAX - hi)
		return -EFAULT;
	if (l->tstate_cframe && u64map_get(&p->cframes, tid, &cframe) && cframe &&
	    cframe <= UINT64_MAX - l->current_frame - sizeof(t->frame)) {
		remote[n++] = (struct iovec){ (void *)(uintptr_t)(cframe + l->current_frame),
					      sizeof(t->frame) };
		len += sizeof(t->frame);
	}
	prints_at = n;
	for (uint32_t i = 0; h && i < h->ncodes; i++, n++) {
		local[n] = (struct iovec){ pr->print[i], FINGERPRINT_LEN };
		remote[n] = (struct iovec){ (void *)(uintptr_t)(h->codes[i] + CODE_FINGERPRINT),
					    FINGERPRINT_LEN };
		len += FINGERPRINT_LEN;
	}
	pages_at = n;
	/* In one range: the kernel pins a range's pages at once, and ends it at one that faults. */
	if (h && hinted_pages(h, &pages_lo, &pages_end)) {
		local[n] = (struct iovec){ pr->stack.bytes, pages_end - pages_lo };
		remote[n++] = (struct iovec){ (void *)(uintptr_t)pages_lo, pages_end - pages_lo };
		len += pages_end - pages_lo;
	}
	got = py_read_some(pr, pid, local, remote, n, len);
	if (got < 0)
		return (int)got;
	if ((size_t)got < hi - lo)
		return -EFAULT;
	memcpy(&t->holder, buf + frame_holder_at(l) - lo, sizeof(t->holder));
	/* The read ends at the first range that faults: what came whole is used. */
	left = (size_t)got - (hi - lo);
	t->frame_known = prints_at == 2 && left >= sizeof(t->frame) && t->holder == cframe;
	left -= prints_at == 2 ? (left < sizeof(t->frame) ? left : sizeof(t->frame)) : 0;
	for (unsigned long i = prints_at; i < pages_at && left >= FINGERPRINT_LEN; i++) {
		pr->print_addr[pr->prints++] = h->codes[i - prints_at];
		left -= FINGERPRINT_LEN;
	}
	if (pr->prints == pages_at - prints_at && left >= PAGE_SIZE) {
		pr->stack.lo = pages_lo;
		pr->stack.len = left / PAGE_SIZE * PAGE_SIZE;
	}
	return 0;
}

/*
 * The PyThreadState of tid, and what holds its current frame (read with it):
 * the state noted for tid if it still says so, else from a walk of the list,
 * noting each state met. A walk that runs out of budget goes on from there
 * at the next read, while the list has the same head and the walk has met
 * no more states than are noted: else (a list replaced, or one that loops)
 * it starts again at the head.
 */
static int thread_state(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint32_t tid,
			struct thread_read *t)
{
	const struct py_layout *l = p->layout;
	uint32_t next = l->tstate_next, id_at = l->tstate_native_thread_id;
	uint32_t holder_at = frame_holder_at(l), lo, hi;
	uint8_t buf[256];
	uint64_t at = 0, head = 0, interp, id, known;
	uint32_t steps = 0;
	int err;

	tstate_span(l, &lo, &hi);
	t->frame_known = false;
	if (u64map_get(&p->tstates, tid, &t->ts) && t->ts &&
	    !read_noted_state(pr, p, pid, tid, buf, lo, hi, t)) {
		memcpy(&id, buf + id_at - lo, sizeof(id));
		if (id == tid)
			return 0;
		t->frame_known = false;
	}
	err = py_peek_u64(pr, pid, p->runtime + l->runtime_interpreters_head, &interp);
	if (!err)
		err = interp ? py_peek_u64(pr, pid, interp + l->interp_threads_head, &head) : -ENOENT;
	if (!err) {
		at = head;
		if (p->walk_at && p->walk_head == head && p->walk_steps < MAX_THREADS) {
			at = p->walk_at;
			steps = p->walk_steps;
		}
	}
	for (; !err && at; steps++) {
		err = py_peek(pr, pid, at + lo, buf, hi - lo);
		if (err)
			break;
		memcpy(&id, buf + id_at - lo, sizeof(id));
		if (id && id <= UINT32_MAX &&
		    (p->tstates.len < MAX_THREADS || u64map_get(&p->tstates, id, &known)))
			u64map_put(&p->tstates, id, at);
		if (id == tid) {
			p->walk_at = 0;
			t->ts = at;
			memcpy(&t->holder, buf + holder_at - lo, sizeof(t->holder));
			return 0;
		}
		memcpy(&at, buf + next - lo, sizeof(at));
	}
	p->walk_at = err == OVER_BUDGET ? at : 0;
	p->walk_head = head;
	p->walk_steps = steps;
	return err ? err : -ENOENT;
}

/*
 * tid's current frame, 0 when none, unless its state's read found it; the
 * _PyCFrame that holds it is noted for the next read (before 3.13).
 */
static int current_frame(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint32_t tid,
			 struct thread_read *t)
{
	uint64_t known;

	if (!p->layout->tstate_cframe) {
		t->frame = t->holder;
		return 0;
	}
	if (p->cframes.len < MAX_THREADS || u64map_get(&p->cframes, tid, &known))
		u64map_put(&p->cframes, tid, t->holder);
	return t->frame_known ? 0
			      : py_peek_u64(pr, pid, t->holder + p->layout->current_frame, &t->frame);
}

static bool window_holds(const struct window *w, uint64_t addr, size_t len)
{
	return addr >= w->lo && addr - w->lo <= w->len && w->len - (addr - w->lo) >= len;
}

/* len bytes at addr into buf when the window holds them. */
static bool window_copy(const struct window *w, uint64_t addr, uint8_t *buf, size_t len)
{
	if (!window_holds(w, addr, len))
		return false;
	memcpy(buf, w->bytes + (addr - w->lo), len);
	return true;
}

/*
 * Reads the stack window of a walk that begins at the frame at addr, len
 * bytes of it: down to the page of the lowest frame tid's last walk met
 * within STACK_WINDOW below (3.11+ keeps a thread's frames in chunks of its
 * data stack, the callers below), else to its own page, and at most
 * FRAME_WINDOW then; in one read, the pages top first, so that one not
 * mapped ends the window there instead of failing the read.
 */
static int read_stack_window(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint32_t tid,
			     uint64_t addr, size_t len)
{
	struct window *w = &pr->stack;
	struct iovec local[STACK_WINDOW / PAGE_SIZE + 1], remote[STACK_WINDOW / PAGE_SIZE + 1];
	const struct thread_hint *h = hint_of(p, tid);
	uint64_t end, lo, low, got_lo;
	unsigned n = 0;
	ssize_t got;

	w->len = 0;
	if (!addr || addr > UINT64_MAX - len)
		return -EFAULT;
	end = addr + len;
	lo = addr & ~(uint64_t)(PAGE_SIZE - 1);
	if (h && (low = h->low) && low <= addr) {
		low &= ~(uint64_t)(PAGE_SIZE - 1);
		lo = end - low > STACK_WINDOW ? end - STACK_WINDOW : low;
	} else if (end - lo > FRAME_WINDOW) {
		lo = end - FRAME_WINDOW;
	}
	for (uint64_t top = end; top > lo; n++) {
		uint64_t base = (top - 1) & ~(uint64_t)(PAGE_SIZE - 1);

		base = base < lo ? lo : base;
		local[n] = (struct iovec){ w->bytes + (base - lo), top - base };
		remote[n] = (struct iovec){ (void *)(uintptr_t)base, top - base };
		top = base;
	}
	got = py_read_some(pr, pid, local, remote, n, end - lo);
	if (got < 0)
		return (int)got;
	/* Whole pages, from the top: the read ends at the first that faults. */
	got_lo = end;
	for (unsigned i = 0; i < n && (size_t)got >= remote[i].iov_len; i++) {
		got -= (ssize_t)remote[i].iov_len;
		got_lo = (uintptr_t)remote[i].iov_base;
	}
	if (got_lo > addr)
		return -EFAULT;
	memmove(w->bytes, w->bytes + (got_lo - lo), end - got_lo);
	w->lo = got_lo;
	w->len = end - got_lo;
	return 0;
}

/*
 * len bytes of the frame at addr: from the stack window or the window of
 * the last read when there, else read anew with what lies below it in its
 * page (its callers' frames, most often) up to FRAME_WINDOW bytes.
 */
static int frame_bytes(struct pyreader *pr, uint32_t pid, uint64_t addr, uint8_t *buf,
		       size_t len)
{
	struct window *w = &pr->window;
	uint64_t end, lo;
	int err;

	if (window_copy(&pr->stack, addr, buf, len) || window_copy(w, addr, buf, len))
		return 0;
	if (!addr || addr > UINT64_MAX - len)
		return -EFAULT;
	end = addr + len;
	lo = addr & ~(uint64_t)(PAGE_SIZE - 1);
	if (end - lo > FRAME_WINDOW)
		lo = end - FRAME_WINDOW;
	w->len = 0;
	if ((err = py_peek(pr, pid, lo, w->bytes, end - lo)))
		return err;
	w->lo = lo;
	w->len = end - lo;
	memcpy(buf, w->bytes + (addr - lo), len);
	return 0;
}

/*
 * Walks the frame chain from frame into st, in groups, one per eval call
 * (3.11: a group ends with its entry frame; 3.12+: with the shim frame the
 * eval call pushed, which is not a Python frame).
 */
static int walk_frames(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint32_t tid,
		       uint64_t frame, struct py_stack *st)
{
	const struct py_layout *l = p->layout;
	uint32_t len = (l->frame_is_entry > l->frame_owner ? l->frame_is_entry : l->frame_owner) + 1;
	uint64_t end = frame + len, low = 0;
	struct thread_hint *h;
	uint8_t buf[80];
	bool open = false;
	int err;

	st->nframes = st->groups = 0;
	st->group_start[0] = 0;
	pr->window.len = 0;
	/* The pages read with the thread state, when they hold its current frame. */
	if (frame && !window_holds(&pr->stack, frame, len) &&
	    (err = read_stack_window(pr, p, pid, tid, frame, len)))
		return err;
	for (int i = 0; frame; i++) {
		if (i == MAX_FRAMES || st->groups == PY_MAX_FRAMES)
			return -ELOOP;
		err = frame_bytes(pr, pid, frame, buf, len);
		if (err)
			return err;
		/* The lowest frame within the reach of the next walk's stack window. */
		if (frame < end && end - frame <= STACK_WINDOW && (!low || frame < low))
			low = frame;
		memcpy(&frame, buf + l->frame_previous, sizeof(frame));
		if (!l->frame_is_entry && buf[l->frame_owner] == FRAME_OWNED_BY_CSTACK) {
			st->group_start[++st->groups] = st->nframes;
			open = false;
			continue;
		}
		if (st->nframes < PY_MAX_FRAMES) {
			struct raw_frame *raw = &pr->raw[st->nframes++];

			memcpy(&raw->code, buf + l->frame_code, sizeof(raw->code));
			memcpy(&raw->instr, buf + l->frame_instr, sizeof(raw->instr));
		}
		open = !(l->frame_is_entry && buf[l->frame_is_entry]);
		if (!open)
			st->group_start[++st->groups] = st->nframes;
	}
	/* The outermost frames of a thread belong to its first eval call too. */
	if (open)
		st->group_start[++st->groups] = st->nframes;
	h = hint_of(p, tid);
	if (!h && p->hints.len < MAX_THREADS) {
		h = xcalloc(1, sizeof(*h));
		u64map_put(&p->hints, tid, (uintptr_t)h);
	}
	if (h && low) {
		h->low = low;
		h->top = end;
	}
	err = py_name_frames(pr, p, pid, st);
	if (h)
		py_note_codes(pr, p, h, st->nframes);
	return err;
}

/*
 * Holds st's groups against the eval frames of the native stack, each
 * innermost first; on a match, notes which native frame runs each group.
 */
static enum py_outcome match_native(uint64_t eval_lo, uint64_t eval_hi, struct py_stack *st,
				    const uint64_t *ips, size_t n, bool complete)
{
	uint32_t evals = 0;

	for (size_t i = 0; i < n; i++) {
		if (ips[i] < eval_lo || ips[i] >= eval_hi)
			continue;
		if (evals < st->groups)
			st->eval_at[evals] = (uint32_t)i;
		evals++;
	}
	/* A cut native stack holds the innermost eval calls only. */
	if (evals == st->groups || (!complete && evals < st->groups)) {
		st->groups = evals;
		return PY_MATCHED;
	}
	return PY_MISMATCH;
}

/*
 * Reads tid's Python stack into st: PY_MATCHED when read, to be matched
 * yet against the native frames in [eval[0], eval[1]).
 */
static enum py_outcome read_stack(struct pyreader *pr, uint32_t pid, uint32_t tid,
				  struct py_stack *st, uint64_t eval[2], const char **found)
{
	struct pyproc *p = NULL;
	struct thread_read t;
	uint64_t v;
	int err;

	st->nframes = st->groups = 0;
	*found = NULL;
	pr->stack.len = 0;
	pr->prints = 0;
	pr->read++;
	pr->reads_left = PY_SAMPLE_READS;
	pr->bytes_left = PY_SAMPLE_BYTES;
	if (u64map_get(&pr->procs, pid, &v) && v)
		p = (struct pyproc *)(uintptr_t)v;
	else
		p = py_proc_detect(pr, pid, found);
	if (p->state == PROC_NOT_PYTHON)
		return PY_NOT_PYTHON;
	if (p->state == PROC_UNSUPPORTED)
		return PY_UNSUPPORTED;
	eval[0] = p->eval_lo;
	eval[1] = p->eval_hi;
	err = thread_state(pr, p, pid, tid, &t);
	if (err == -ENOENT)
		return PY_NO_THREAD_STATE;
	if (!err)
		err = current_frame(pr, p, pid, tid, &t);
	if (!err)
		err = walk_frames(pr, p, pid, tid, t.frame, st);
	if (err == -ESRCH)
		return PY_EXITED;
	if (err == OVER_BUDGET || err == -ELOOP)
		return PY_OVER_BUDGET;
	return err ? PY_READ_FAILED : PY_MATCHED;
}

static struct pending *pending_of(struct pyreader *pr, uint32_t tid)
{
	uint64_t i;

	if (!u64map_get(&pr->pending_of, tid, &i)) {
		i = pr->pending.len;
		VEC_PUSH(&pr->pending);
		u64map_put(&pr->pending_of, tid, i);
	}
	return &pr->pending.v[i];
}

void pyreader_snapshot(struct pyreader *pr, uint32_t pid, uint32_t tid, uint64_t time,
		       const char **found)
{
	struct py_stack *st = &pr->scratch;
	uint64_t eval[2];
	enum py_outcome outcome = read_stack(pr, pid, tid, st, eval, found);
	struct snapshot *snap;

	if (outcome == PY_NOT_PYTHON)
		return;
	snap = xcalloc(1, sizeof(*snap));
	snap->time = time;
	snap->outcome = outcome;
	snap->eval_lo = eval[0];
	snap->eval_hi = eval[1];
	snap->groups = st->groups;
	snap->frames = xmemdup(st->frames, st->nframes * sizeof(*st->frames));
	snap->group_start = xmemdup(st->group_start, (st->groups + 1) * sizeof(*st->group_start));
	*VEC_PUSH(&pending_of(pr, tid)->snaps) = snap;
}

/* The snapshot of the sample, taken out of the reader; NULL when there is none. */
static struct snapshot *take_snapshot(struct pyreader *pr, uint32_t tid, uint64_t time)
{
	struct pending *p = pending_of(pr, tid);

	for (size_t i = 0; i < p->snaps.len; i++) {
		struct snapshot *snap = p->snaps.v[i];

		if (snap->time == time) {
			p->snaps.v[i] = p->snaps.v[--p->snaps.len];
			/* A thread's room goes with its last snapshot: tids come and go. */
			if (!p->snaps.len)
				VEC_FREE(&p->snaps);
			return snap;
		}
	}
	return NULL;
}

enum py_outcome pyreader_sample(struct pyreader *pr, uint32_t pid, uint32_t tid, uint64_t time,
				const uint64_t *ips, size_t n, bool complete,
				struct py_stack *st, const char **found)
{
	struct snapshot *snap = take_snapshot(pr, tid, time);
	enum py_outcome outcome;
	uint64_t eval[2];

	*found = NULL;
	if (snap) {
		outcome = snap->outcome;
		eval[0] = snap->eval_lo;
		eval[1] = snap->eval_hi;
		st->groups = snap->groups;
		st->nframes = snap->group_start[snap->groups];
		memcpy(st->frames, snap->frames, st->nframes * sizeof(*st->frames));
		memcpy(st->group_start, snap->group_start,
		       (snap->groups + 1) * sizeof(*st->group_start));
		snapshot_free(snap);
	} else {
		outcome = read_stack(pr, pid, tid, st, eval, found);
	}
	return outcome == PY_MATCHED ? match_native(eval[0], eval[1], st, ips, n, complete)
				     : outcome;
}
