/* SPDX-License-Identifier: MIT */
/*
 * DWARF unwinding. Most frames step by the rows of cfi.c, kept per code
 * address; a frame whose rules those rows cannot express (expressions,
 * signal frames, other registers) takes one step with the library (see
 * unwinder.h). Frames without a table step through the frame pointer.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/tables.h"
#include "unwind/unwinder.h"
#include "util/prefetch.h"
#include "util/untrusted.h"
#include "util/xalloc.h"

/*
 * Above a thread's outermost frame, what the last step may still read: the
 * frame-pointer slots of _start or a return address of 0.
 */
#define STACK_TOP_MARGIN 512
/* The most of a stack copy that prefetch_stack asks for. */
#define STACK_PREFETCH_MAX (8u << 10)

/* The search table of the dso's .eh_frame_hdr, which linkers place in a read-only segment. */
static void read_search_table(struct unwind_dso *ud, const struct dso_elf *elf)
{
	const struct dso_load *l = dso_load_of_vaddr(elf, elf->eh_frame_hdr);
	uint64_t off;

	if (!l)
		return;
	off = elf->eh_frame_hdr - l->vaddr + l->offset;
	if (off >= ud->size)
		return;
	ud->cfi = (struct cfi_image){
		.data = ud->data, .size = ud->size, .elf = elf,
		.hdr_vaddr = elf->eh_frame_hdr, .hdr_off = off,
	};
	eh_hdr_read(ud->data + off, ud->size - off, &ud->cfi.hdr);
}

static void unwind_dso_open(struct unwind_dso *ud, const struct dso_info *dso)
{
	const struct dso_elf *elf = dso_elf(dso);
	struct stat st;
	void *p;
	int fd;

	ud->opened = true;
	if (dso->flags & TR_DSO_ANON)
		return;
	if (elf->image) {
		ud->data = elf->image;
		ud->size = elf->image_size;
	} else {
		fd = untrusted_open(dso->path, &untrusted_mapped_file, &st);
		if (fd < 0)
			return;
		if (st.st_size > 0) {
			p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (p != MAP_FAILED) {
				ud->data = p;
				ud->size = (size_t)st.st_size;
				ud->mapped = true;
			}
		}
		close(fd);
	}
	if (ud->data && elf->eh_frame_hdr)
		read_search_table(ud, elf);
}

const struct unwind_dso *unwind_dso_get(struct unwinder *u,
					       const struct dso_info *dso)
{
	struct unwind_dso *ud;

	if (u->dsos.len < dso->id) {
		VEC_RESERVE(&u->dsos, dso->id - u->dsos.len);
		memset(&u->dsos.v[u->dsos.len], 0,
		       (dso->id - u->dsos.len) * sizeof(*u->dsos.v));
		u->dsos.len = dso->id;
	}
	ud = &u->dsos.v[dso->id - 1];
	if (!ud->opened)
		unwind_dso_open(ud, dso);
	return ud;
}

uint64_t unwind_regs_mask(enum unwind_method method)
{
	if (method == UNWIND_FP)
		return UNWIND_FP_REGS_MASK;
	/* The general registers: a CFA rule may name any of them. */
	return REG_BIT(AX) | REG_BIT(BX) | REG_BIT(CX) | REG_BIT(DX) |
	       REG_BIT(SI) | REG_BIT(DI) | REG_BIT(BP) | REG_BIT(SP) |
	       REG_BIT(IP) | REG_BIT(R8) | REG_BIT(R9) | REG_BIT(R10) |
	       REG_BIT(R11) | REG_BIT(R12) | REG_BIT(R13) | REG_BIT(R14) |
	       REG_BIT(R15);
}

int unwinder_new(struct unwinder **out, enum unwind_method method,
		 const struct addrspaces *as)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));
	int err = library_new(&u->library);

	if (err) {
		free(u);
		return err;
	}
	u->method = method;
	u->as = as;
	*out = u;
	return 0;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	library_free(u->library);
	u64map_free(&u->stack_tops);
	for (size_t i = 0; i < u->dsos.len; i++)
		if (u->dsos.v[i].mapped)
			munmap((void *)u->dsos.v[i].data, u->dsos.v[i].size);
	VEC_FREE(&u->dsos);
	free(u);
}

void unwinder_forget_pid(struct unwinder *u, uint32_t pid)
{
	library_forget_pid(u->library, pid);
}

size_t unwinder_stack_needed(const struct unwinder *u, uint32_t tid, uint64_t sp, size_t len)
{
	uint64_t top;

	if (!u64map_get(&u->stack_tops, tid, &top) || top <= sp || top - sp >= len)
		return len;
	return (size_t)(top - sp);
}

void unwinder_forget_thread(struct unwinder *u, uint32_t tid)
{
	if (u64map_get(&u->stack_tops, tid, NULL))
		u64map_put(&u->stack_tops, tid, 0);
}

uint64_t unwinder_stack_top(const struct unwinder *u, uint32_t tid)
{
	uint64_t top = 0;

	u64map_get(&u->stack_tops, tid, &top);
	return top;
}

void unwinder_set_stack_top(struct unwinder *u, uint32_t tid, uint64_t top)
{
	if (top || u64map_get(&u->stack_tops, tid, NULL))
		u64map_put(&u->stack_tops, tid, top);
}

void unwinder_without_rows(struct unwinder *u)
{
	u->without_rows = true;
}

static void row_of(struct unwinder *u, const struct map *m, uint64_t ip, struct cfi_row *row)
{
	const struct unwind_dso *ud = unwind_dso_get(u, m->dso);
	uint64_t addr = map_to_elf_addr(m, ip);
	struct row_slot *slot;

	if (!ud->cfi.hdr.count) {
		*row = (struct cfi_row){ .kind = CFI_NO_ENTRY };
		return;
	}
	slot = &u->rows[((addr ^ (uint64_t)m->dso->id << 40) * 0x9e3779b97f4a7c15ULL) >>
			(64 - __builtin_ctz(ROW_CACHE_SLOTS))];
	if (slot->dso != m->dso->id || slot->addr != addr) {
		cfi_row_at(&ud->cfi, addr, &slot->row);
		slot->dso = m->dso->id;
		slot->addr = addr;
	}
	*row = slot->row;
}

/* The row of a frame of pid looked up at addr; false when no map holds addr. */
static bool frame_row(struct unwinder *u, uint32_t pid, uint64_t addr, struct cfi_row *row)
{
	uint64_t generation = u->generation;
	struct frame_slot *slot;
	const struct map *m;

	slot = &u->frames[((addr ^ (uint64_t)pid << 44) * 0x9e3779b97f4a7c15ULL) >>
			  (64 - __builtin_ctz(ROW_CACHE_SLOTS))];
	if (slot->generation != generation || slot->pid != pid || slot->addr != addr) {
		m = addrspace_find(u->as, pid, addr);
		*slot = (struct frame_slot){
			.pid = pid, .addr = addr, .generation = generation, .mapped = m != NULL,
		};
		if (m)
			row_of(u, m, addr, &slot->row);
	}
	*row = slot->row;
	return slot->mapped;
}

/*
 * The frame a step reached at return address *ip: its row, and in *ip the
 * ip to record. A return address follows its call, so the frame's row is
 * the call's, at ip - 1. A signal trampoline's ip is where the handler
 * returns to, and the interrupted frame's ip is exact: neither follows a
 * call. False when no map holds the frame.
 */
bool caller_frame(struct unwinder *u, uint32_t pid, uint64_t *ip, bool *after_signal,
		  struct cfi_row *row)
{
	if (*after_signal) {
		*after_signal = false;
		return frame_row(u, pid, *ip, row);
	}
	if (!frame_row(u, pid, *ip - 1, row))
		return false;
	*after_signal = row->signal;
	if (!row->signal)
		(*ip)--;
	return true;
}

/* Why a read of the stack at addr failed: past the copy, or somewhere invalid. */
static enum unwind_outcome stack_miss(const struct unwind_sample *s, uint64_t addr)
{
	uint64_t sp = s->regs.r[PERF_REG_X86_SP];

	return addr >= sp && addr - sp >= s->stack_len ? UNWIND_TRUNCATED_STACK
						       : UNWIND_FAILED_BAD_FRAME;
}

/* One step by a cfi row: false with *why when the walk ends. */
static bool step_row(const struct unwind_sample *s, const struct cfi_row *row,
		     struct frame *f, enum unwind_outcome *why)
{
	uint64_t cfa, ra, bp = 0;

	if (row->cfa_bp && !f->bp_known) {
		*why = f->bp_off_stack ? UNWIND_TRUNCATED_STACK : UNWIND_FAILED_BAD_FRAME;
		return false;
	}
	cfa = (row->cfa_bp ? f->bp : f->sp) + (uint64_t)(int64_t)row->cfa_off;
	if (row->cfa_deref) {
		uint64_t at = cfa;

		if (!stack_read(s, at, &cfa)) {
			*why = stack_miss(s, at);
			return false;
		}
	}
	if (!stack_read(s, cfa + (uint64_t)(int64_t)row->ra_off, &ra)) {
		*why = stack_miss(s, cfa + (uint64_t)(int64_t)row->ra_off);
		return false;
	}
	if (row->bp_saved && (f->bp_known || !row->bp_at_bp)) {
		uint64_t at = (row->bp_at_bp ? f->bp : cfa) + (uint64_t)(int64_t)row->bp_off;

		f->bp_known = stack_read(s, at, &bp);
		f->bp_off_stack = !f->bp_known && stack_miss(s, at) == UNWIND_TRUNCATED_STACK;
		f->bp = bp;
	} else if (row->bp_saved) {
		/* Saved where an unknown rbp points: the caller's is unknown too. */
		f->bp_off_stack = false;
	}
	if (!ra) {
		*why = UNWIND_COMPLETE;
		return false;
	}
	f->ip = ra;
	f->sp = cfa;
	return true;
}

/*
 * A frame without an unwind table, or outside every mapping: a step
 * through its frame pointer. A zero frame pointer in known code ends the
 * chain, as in ld.so's _start, which has no table.
 */
bool frame_pointer_step(const struct unwinder *u, const struct unwind_sample *s, bool mapped,
			struct frame *f, enum unwind_outcome *why)
{
	enum unwind_outcome no_step = mapped ? UNWIND_FAILED_NO_INFO : UNWIND_FAILED_NO_MAP;
	struct fp_frame fp = { .ip = f->ip, .sp = f->sp, .bp = f->bp };

	if (!f->bp_known) {
		*why = no_step;
		return false;
	}
	if (!fp_step(u->as, s, &fp, why)) {
		if (*why != UNWIND_TRUNCATED_STACK && (*why != UNWIND_COMPLETE || !mapped))
			*why = no_step;
		return false;
	}
	*f = (struct frame){ .ip = fp.ip, .sp = fp.sp, .bp = fp.bp, .bp_known = true };
	return true;
}

/*
 * The walk by cfi rows, the library taking only the frames they cannot
 * express. Frame i's ip in ips[i], its stack pointer in sps[i].
 */
static enum unwind_outcome walk_rows(struct unwinder *u, const struct unwind_sample *s,
				     uint64_t *ips, uint64_t *sps, size_t *n)
{
	const uint64_t need = REG_BIT(IP) | REG_BIT(SP);
	struct frame f = {
		.ip = s->regs.r[PERF_REG_X86_IP],
		.sp = s->regs.r[PERF_REG_X86_SP],
		.bp = s->regs.r[PERF_REG_X86_BP],
		.bp_known = s->regs.mask & REG_BIT(BP),
	};
	bool after_signal = false, mapped;
	enum unwind_outcome why;
	struct cfi_row row;

	if ((s->regs.mask & need) != need)
		return UNWIND_FAILED_BAD_FRAME;
	mapped = frame_row(u, s->pid, f.ip, &row);
	sps[*n] = f.sp;
	ips[(*n)++] = f.ip;
	while (*n < UNWIND_MAX_FRAMES) {
		uint64_t prev_sp = f.sp;
		bool stepped;

		if (!mapped || row.kind == CFI_NO_ENTRY) {
			if (!frame_pointer_step(u, s, mapped, &f, &why))
				return why;
			/* Known to follow a call: no signal frame is found this way. */
			f.ip--;
			mapped = frame_row(u, s->pid, f.ip, &row);
			after_signal = false;
			sps[*n] = f.sp;
			ips[(*n)++] = f.ip;
			continue;
		}
		if (row.kind == CFI_OUTERMOST)
			return UNWIND_COMPLETE;
		stepped = row.kind == CFI_STEP ? step_row(s, &row, &f, &why)
					       : library_step(u, s, *n == 1, &f, &why);
		if (!stepped)
			return why;
		if (f.sp <= prev_sp)
			return UNWIND_FAILED_BAD_FRAME;
		if (!caller_frame(u, s->pid, &f.ip, &after_signal, &row))
			return UNWIND_FAILED_NO_MAP;
		mapped = true;
		sps[*n] = f.sp;
		ips[(*n)++] = f.ip;
	}
	return UNWIND_TRUNCATED_DEPTH;
}

/*
 * The kernel wrote the stack copy on the sampled thread's CPU, and a walk
 * reads its lines one after another, each a miss: asked for together,
 * the misses overlap. What the thread's walks have read, at most
 * STACK_PREFETCH_MAX.
 */
static void prefetch_stack(const struct unwinder *u, const struct unwind_sample *s)
{
	size_t len = unwinder_stack_needed(u, s->tid, s->regs.r[PERF_REG_X86_SP], s->stack_len);

	prefetch_range(s->stack, len < STACK_PREFETCH_MAX ? len : STACK_PREFETCH_MAX);
}

enum unwind_outcome unwind(struct unwinder *u, const struct unwind_sample *s,
			   uint64_t *ips, size_t *n)
{
	enum unwind_outcome outcome;

	if (u->method == UNWIND_FP)
		return unwind_frame_pointers(u->as, s, ips, n);
	/* Read once a walk, not once a frame: the maps do not change during one. */
	u->generation = addrspaces_generation(u->as) + 1;
	*n = 0;
	prefetch_stack(u, s);
	outcome = u->without_rows ? UNWIND_FAILED_BAD_FRAME : walk_rows(u, s, ips, u->sps, n);
	/*
	 * Rows carry only rsp, rbp and the return address from frame to
	 * frame, and the library, handed a frame past the first, only those:
	 * a rule naming another register fails there. A walk that failed is
	 * done again by the library alone, which carries them all.
	 */
	if (unwind_failed(outcome))
		library_walk(u, s, ips, n, &outcome);
	/* What the stack copies of this thread need; learnt afresh if a copy fell short. */
	if (outcome == UNWIND_COMPLETE)
		u64map_put(&u->stack_tops, s->tid, u->sps[*n - 1] + STACK_TOP_MARGIN);
	else if (outcome == UNWIND_TRUNCATED_STACK)
		unwinder_forget_thread(u, s->tid);
	if (outcome == UNWIND_TRUNCATED_STACK && s->callchain)
		outcome = unwind_fp_tail(u->as, s, u->sps, ips, n);
	return outcome;
}
