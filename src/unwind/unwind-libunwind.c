/* SPDX-License-Identifier: MIT */
/*
 * DWARF unwinding. Most frames step by the rows of cfi.c, kept per code
 * address; a frame whose rules those rows cannot express (expressions,
 * signal frames, other registers) takes one step with libunwind's remote
 * API, which walks .eh_frame and asks us, through the accessors below, for
 * registers, memory (the copied stack, or the mapped files for code and
 * tables) and the table covering an ip (found through the dso's
 * .eh_frame_hdr). Frames without a table step through the frame pointer.
 */
#include <asm/perf_regs.h>
#include <elf.h>
#include <fcntl.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/tables.h"
#include "unwind/cfi.h"
#include "unwind/unwind-internal.h"
#include "util/hashmap.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* Exported by libunwind but not declared in its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);

/* Pointer encodings of .eh_frame_hdr (the LSB's DW_EH_PE_*). */
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_datarel 0x30

#define REG_BIT(r) (1ULL << PERF_REG_X86_##r)

/* What the unwinders read of one dso: its bytes and its binary search table. */
struct unwind_dso {
	bool opened;		/* tried already, whatever came of it */
	bool mapped;		/* data is our mapping of the file */
	const uint8_t *data;
	size_t size;
	uint64_t table_off;	/* of the search table, from .eh_frame_hdr */
	uint64_t fde_count;	/* 0: no usable table */
	struct cfi_image cfi;
};

/*
 * The rows of recent code addresses. A sampled program returns to the same
 * few thousand call sites again and again, so each row is worked out once.
 */
#define ROW_CACHE_SLOTS 8192

/*
 * Above a thread's outermost frame, what the last step may still read: the
 * frame-pointer slots of _start or a return address of 0.
 */
#define STACK_TOP_MARGIN 512

struct row_slot {
	uint32_t dso;		/* 0: empty */
	uint64_t addr;		/* ELF address */
	struct cfi_row row;
};

/*
 * The same by process address, in front of it: a hit costs no map lookup.
 * A slot holds while no process's maps have changed.
 */
struct frame_slot {
	uint32_t pid;
	bool mapped;		/* some map holds addr */
	uint64_t addr;
	uint64_t generation;	/* of the address spaces; 0: empty */
	struct cfi_row row;
};

struct unwinder {
	enum unwind_method method;
	const struct addrspaces *as;
	/*
	 * One libunwind address space per process: its cache of unwind rules
	 * is keyed by ip alone, and different programs share ips.
	 */
	struct u64map spaces;		/* pid -> unw_addr_space_t, 0 forgotten */
	VEC(struct unwind_dso) dsos;	/* dsos.v[id - 1] */
	uint64_t sps[UNWIND_MAX_FRAMES];/* the stack pointer of each frame of an unwind */
	struct row_slot rows[ROW_CACHE_SLOTS];
	struct frame_slot frames[ROW_CACHE_SLOTS];
	struct u64map stack_tops;	/* tid -> highest stack address unwinding reads, 0 unknown */
	bool without_rows;		/* the tests' reference: libunwind walks alone */
};

/* The process addresses [lo, hi) whose bytes are at base: the last file range read. */
struct read_window {
	uint64_t lo, hi;
	const uint8_t *base;
};

/* One unwind in progress, handed to every accessor. */
struct unwind_ctx {
	struct unwinder *u;
	const struct unwind_sample *s;
	const struct unwind_regs *regs;	/* where libunwind started */
	struct unwind_regs restart;	/* after a frame-pointer step */
	struct read_window window;
	/* Why the current step failed. */
	bool no_map;
	bool no_info;
	bool off_stack;
};

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

static unsigned encoded_size(uint8_t encoding)
{
	switch (encoding & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	default:
		return 0;
	}
}

/*
 * .eh_frame_hdr: version, the encodings of eh_frame_ptr, fde_count and the
 * table, then eh_frame_ptr, fde_count and the sorted (ip, fde) table that
 * libunwind binary-searches. It takes only 4-byte datarel entries, which
 * is what linkers write.
 */
static void read_search_table(struct unwind_dso *ud, const struct dso_elf *elf)
{
	const struct dso_load *l = dso_load_of_vaddr(elf, elf->eh_frame_hdr);
	unsigned ptr_size, count_size;
	const uint8_t *hdr;
	uint64_t off, count = 0;

	if (!l)
		return;
	off = elf->eh_frame_hdr - l->vaddr + l->offset;
	if (off >= ud->size || ud->size - off < 4)
		return;
	hdr = ud->data + off;
	if (hdr[0] != 1 || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) ||
	    (hdr[2] & 0x70))
		return;
	ptr_size = encoded_size(hdr[1]);
	count_size = encoded_size(hdr[2]);
	if (!ptr_size || !count_size || ud->size - off < 4 + ptr_size + count_size)
		return;
	memcpy(&count, hdr + 4 + ptr_size, count_size);
	ud->table_off = 4 + ptr_size + count_size;
	if (count > (ud->size - off - ud->table_off) / 8)
		return;
	ud->fde_count = count;
	ud->cfi = (struct cfi_image){
		.data = ud->data, .size = ud->size, .elf = elf,
		.hdr_vaddr = elf->eh_frame_hdr, .hdr_off = off,
		.table = hdr + ud->table_off, .fde_count = count,
	};
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
		fd = open(dso->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		if (!fstat(fd, &st) && st.st_size > 0) {
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

static const struct unwind_dso *unwind_dso_get(struct unwinder *u,
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

static bool window_read(const struct read_window *w, uint64_t addr, uint64_t *val)
{
	size_t len;

	if (addr < w->lo || addr >= w->hi)
		return false;
	/* libunwind reads aligned words; the last may pass the end of the bytes. */
	len = w->hi - addr < sizeof(*val) ? w->hi - addr : sizeof(*val);
	*val = 0;
	memcpy(val, w->base + (addr - w->lo), len);
	return true;
}

/* Points the window at [lo, lo + len) of the process, the dso's bytes from off. */
static bool window_open(struct unwind_ctx *ctx, const struct dso_info *dso,
			uint64_t lo, uint64_t len, uint64_t off)
{
	const struct unwind_dso *ud = unwind_dso_get(ctx->u, dso);

	if (!ud->data || off >= ud->size)
		return false;
	if (len > ud->size - off)
		len = ud->size - off;
	ctx->window = (struct read_window){ .lo = lo, .hi = lo + len, .base = ud->data + off };
	return true;
}

/*
 * The segment holding addr in the same ELF image as a neighbouring mapping,
 * writable ones included: a CIE that names its personality routine through
 * the GOT ("zPLR", every C++ or -fexceptions frame with a cleanup) makes
 * libunwind read that slot. Only the read must succeed: the unwinder never
 * calls the routine, so the file's unrelocated bytes serve.
 */
static bool window_beside_map(struct unwind_ctx *ctx, const struct map *m, uint64_t addr)
{
	const struct dso_load *l;
	uint64_t bias;

	if (!m || (m->dso->flags & TR_DSO_ANON))
		return false;
	bias = m->start - map_to_elf_addr(m, m->start);
	l = dso_load_of_vaddr(dso_elf(m->dso), addr - bias);
	return l && window_open(ctx, m->dso, bias + l->vaddr, l->filesz, l->offset);
}

/*
 * Code and read-only data come from the files, which hold what the process
 * has mapped. Without data mmaps the kernel reports only the code, so
 * .eh_frame (in a segment beside it) and the GOT are reached through the
 * ELF layout.
 */
static bool read_dso(struct unwind_ctx *ctx, uint64_t addr, uint64_t *val)
{
	const struct addrspaces *as = ctx->u->as;
	const struct map *m, *above;
	bool opened;

	if (window_read(&ctx->window, addr, val))
		return true;
	m = addrspace_find(as, ctx->s->pid, addr);
	if (m) {
		opened = !(m->prot & PROT_WRITE) && !(m->dso->flags & TR_DSO_ANON) &&
			 window_open(ctx, m->dso, m->start, m->end - m->start, m->pgoff);
	} else {
		addrspace_neighbours(as, ctx->s->pid, addr, &m, &above);
		opened = window_beside_map(ctx, m, addr) ||
			 window_beside_map(ctx, above, addr);
	}
	return opened && window_read(&ctx->window, addr, val);
}

static int access_mem(unw_addr_space_t space, unw_word_t addr, unw_word_t *valp,
		      int write, void *arg)
{
	struct unwind_ctx *ctx = arg;
	uint64_t sp = ctx->s->regs.r[PERF_REG_X86_SP];

	if (write)
		return -UNW_EINVAL;
	if (stack_read(ctx->s, addr, valp) || read_dso(ctx, addr, valp))
		return 0;
	if (addr >= sp && addr - sp >= ctx->s->stack_len)
		ctx->off_stack = true;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t space, unw_regnum_t regnum,
		      unw_word_t *valp, int write, void *arg)
{
	static const int8_t perf_reg[] = {
		[UNW_X86_64_RAX] = PERF_REG_X86_AX, [UNW_X86_64_RDX] = PERF_REG_X86_DX,
		[UNW_X86_64_RCX] = PERF_REG_X86_CX, [UNW_X86_64_RBX] = PERF_REG_X86_BX,
		[UNW_X86_64_RSI] = PERF_REG_X86_SI, [UNW_X86_64_RDI] = PERF_REG_X86_DI,
		[UNW_X86_64_RBP] = PERF_REG_X86_BP, [UNW_X86_64_RSP] = PERF_REG_X86_SP,
		[UNW_X86_64_R8] = PERF_REG_X86_R8, [UNW_X86_64_R9] = PERF_REG_X86_R9,
		[UNW_X86_64_R10] = PERF_REG_X86_R10, [UNW_X86_64_R11] = PERF_REG_X86_R11,
		[UNW_X86_64_R12] = PERF_REG_X86_R12, [UNW_X86_64_R13] = PERF_REG_X86_R13,
		[UNW_X86_64_R14] = PERF_REG_X86_R14, [UNW_X86_64_R15] = PERF_REG_X86_R15,
		[UNW_X86_64_RIP] = PERF_REG_X86_IP,
	};
	const struct unwind_ctx *ctx = arg;
	int reg;

	if (write)
		return -UNW_EREADONLYREG;
	if (regnum < 0 || (size_t)regnum >= sizeof(perf_reg) / sizeof(perf_reg[0]))
		return -UNW_EBADREG;
	reg = perf_reg[regnum];
	if (!(ctx->regs->mask & (1ULL << reg)))
		return -UNW_EBADREG;
	*valp = ctx->regs->r[reg];
	return 0;
}

static int access_fpreg(unw_addr_space_t space, unw_regnum_t regnum,
			unw_fpreg_t *valp, int write, void *arg)
{
	return -UNW_EINVAL;
}

/*
 * A failure here is reported as -UNW_ESTOPUNWIND rather than -UNW_ENOINFO:
 * on ENOINFO libunwind guesses a frame-pointer frame itself but assumes
 * the frame was 16 bytes, losing the stack pointer for the frames above.
 * unwind() takes that step through the frame pointer properly instead.
 */
static int find_proc_info(unw_addr_space_t space, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct unwind_ctx *ctx = arg;
	const struct map *m = addrspace_find(ctx->u->as, ctx->s->pid, ip);
	const struct unwind_dso *ud;
	unw_dyn_info_t di;
	uint64_t bias;
	int ret;

	if (!m) {
		ctx->no_map = true;
		return -UNW_ESTOPUNWIND;
	}
	ud = unwind_dso_get(ctx->u, m->dso);
	if (!ud->fde_count) {
		ctx->no_info = true;
		return -UNW_ESTOPUNWIND;
	}
	bias = ip - map_to_elf_addr(m, ip);
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.u.rti.segbase = bias + dso_elf(m->dso)->eh_frame_hdr;
	di.u.rti.table_data = di.u.rti.segbase + ud->table_off;
	di.u.rti.table_len = ud->fde_count * 8 / sizeof(unw_word_t);
	ret = UNW_OBJ(dwarf_search_unwind_table)(space, ip, &di, pi,
						 need_unwind_info, arg);
	if (ret == -UNW_ENOINFO) {
		ctx->no_info = true;
		return -UNW_ESTOPUNWIND;
	}
	return ret;
}

static void put_unwind_info(unw_addr_space_t space, unw_proc_info_t *pi, void *arg)
{
}

static int get_dyn_info_list_addr(unw_addr_space_t space, unw_word_t *dilap,
				  void *arg)
{
	return -UNW_ENOINFO;
}

static int resume(unw_addr_space_t space, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t space, unw_word_t addr, char *buf,
			 size_t len, unw_word_t *offp, void *arg)
{
	return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

static unw_addr_space_t space_of(struct unwinder *u, uint32_t pid)
{
	unw_addr_space_t space;
	uint64_t v;

	if (u64map_get(&u->spaces, pid, &v) && v)
		return (unw_addr_space_t)(uintptr_t)v;
	space = unw_create_addr_space(&accessors, 0);
	if (!space)
		return NULL;
	unw_set_caching_policy(space, UNW_CACHE_GLOBAL);
	u64map_put(&u->spaces, pid, (uintptr_t)space);
	return space;
}

int unwinder_new(struct unwinder **u, enum unwind_method method,
		 const struct addrspaces *as)
{
	*u = xcalloc(1, sizeof(**u));
	(*u)->method = method;
	(*u)->as = as;
	return 0;
}

void unwinder_free(struct unwinder *u)
{
	uint64_t space;

	if (!u)
		return;
	for (size_t pos = 0; u64map_next(&u->spaces, &pos, NULL, &space);)
		if (space)
			unw_destroy_addr_space((unw_addr_space_t)(uintptr_t)space);
	u64map_free(&u->spaces);
	u64map_free(&u->stack_tops);
	for (size_t i = 0; i < u->dsos.len; i++)
		if (u->dsos.v[i].mapped)
			munmap((void *)u->dsos.v[i].data, u->dsos.v[i].size);
	VEC_FREE(&u->dsos);
	free(u);
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

void unwinder_forget_pid(struct unwinder *u, uint32_t pid)
{
	uint64_t v;

	if (u64map_get(&u->spaces, pid, &v) && v) {
		unw_destroy_addr_space((unw_addr_space_t)(uintptr_t)v);
		u64map_put(&u->spaces, pid, 0);
	}
}

static enum unwind_outcome failed_step(const struct unwind_ctx *ctx)
{
	if (ctx->off_stack)
		return UNWIND_TRUNCATED_STACK;
	if (ctx->no_map)
		return UNWIND_FAILED_NO_MAP;
	if (ctx->no_info)
		return UNWIND_FAILED_NO_INFO;
	return UNWIND_FAILED_BAD_FRAME;
}

/* A frame as the walk knows it: ip is the address its row is looked up by. */
struct frame {
	uint64_t ip, sp, bp;
	bool bp_known;
	bool bp_off_stack;	/* unknown because its slot lies past the copy */
};

static void row_of(struct unwinder *u, const struct map *m, uint64_t ip, struct cfi_row *row)
{
	const struct unwind_dso *ud = unwind_dso_get(u, m->dso);
	uint64_t addr = map_to_elf_addr(m, ip);
	struct row_slot *slot;

	if (!ud->fde_count) {
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
	uint64_t generation = addrspaces_generation(u->as) + 1;
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
static bool caller_frame(struct unwinder *u, uint32_t pid, uint64_t *ip, bool *after_signal,
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
	uint64_t cfa, ra, bp;

	if (row->cfa_bp && !f->bp_known) {
		*why = f->bp_off_stack ? UNWIND_TRUNCATED_STACK : UNWIND_FAILED_BAD_FRAME;
		return false;
	}
	cfa = (row->cfa_bp ? f->bp : f->sp) + (uint64_t)(int64_t)row->cfa_off;
	if (!stack_read(s, cfa + (uint64_t)(int64_t)row->ra_off, &ra)) {
		*why = stack_miss(s, cfa + (uint64_t)(int64_t)row->ra_off);
		return false;
	}
	if (row->bp_saved) {
		uint64_t at = cfa + (uint64_t)(int64_t)row->bp_off;

		f->bp_known = stack_read(s, at, &bp);
		f->bp_off_stack = !f->bp_known && stack_miss(s, at) == UNWIND_TRUNCATED_STACK;
		f->bp = bp;
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
static bool step_fp(const struct unwinder *u, const struct unwind_sample *s, bool mapped,
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
 * A frame whose rules need more than a row: one step by libunwind, from
 * the sample's registers for the first frame, from ip, sp and rbp after.
 */
static bool step_libunwind(struct unwinder *u, const struct unwind_sample *s, bool first,
			   struct frame *f, enum unwind_outcome *why)
{
	struct unwind_ctx ctx = { .u = u, .s = s, .regs = &s->regs };
	unw_addr_space_t space = space_of(u, s->pid);
	unw_word_t ip, sp, bp;
	unw_cursor_t cursor;
	int ret;

	if (!first) {
		ctx.restart.mask = REG_BIT(IP) | REG_BIT(SP) | (f->bp_known ? REG_BIT(BP) : 0);
		ctx.restart.r[PERF_REG_X86_IP] = f->ip;
		ctx.restart.r[PERF_REG_X86_SP] = f->sp;
		ctx.restart.r[PERF_REG_X86_BP] = f->bp;
		ctx.regs = &ctx.restart;
	}
	if (!space || unw_init_remote(&cursor, space, &ctx) < 0) {
		*why = UNWIND_FAILED_BAD_FRAME;
		return false;
	}
	ret = unw_step(&cursor);
	if (ret <= 0) {
		*why = ret == 0 ? UNWIND_COMPLETE : failed_step(&ctx);
		return false;
	}
	if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 ||
	    unw_get_reg(&cursor, UNW_REG_SP, &sp) < 0) {
		*why = UNWIND_FAILED_BAD_FRAME;
		return false;
	}
	f->bp_known = unw_get_reg(&cursor, UNW_X86_64_RBP, &bp) == 0;
	f->bp_off_stack = !f->bp_known && ctx.off_stack;
	f->bp = bp;
	f->ip = ip;
	f->sp = sp;
	return true;
}

/*
 * The cursor's frame has no unwind table: step to its caller through the
 * frame pointer and start libunwind afresh there, knowing only ip, sp and
 * bp. On success the caller's frame is in ctx->restart.
 */
static bool step_frame_pointer(struct unwind_ctx *ctx, unw_cursor_t *cursor,
			       unw_addr_space_t space, enum unwind_outcome *why)
{
	unw_word_t ip, sp, bp;
	struct fp_frame f;

	if (unw_get_reg(cursor, UNW_REG_IP, &ip) < 0 ||
	    unw_get_reg(cursor, UNW_REG_SP, &sp) < 0 ||
	    unw_get_reg(cursor, UNW_X86_64_RBP, &bp) < 0) {
		*why = failed_step(ctx);
		return false;
	}
	f = (struct fp_frame){ .ip = ip, .sp = sp, .bp = bp };
	if (!fp_step(ctx->u->as, ctx->s, &f, why)) {
		/*
		 * A zero frame pointer in known code ends the chain, as in
		 * ld.so's _start, which has no table.
		 */
		if (*why != UNWIND_TRUNCATED_STACK &&
		    (*why != UNWIND_COMPLETE || ctx->no_map))
			*why = failed_step(ctx);
		return false;
	}
	ctx->restart.mask = UNWIND_FP_REGS_MASK;
	/* Inside the call, so the caller's own table row applies. */
	ctx->restart.r[PERF_REG_X86_IP] = f.ip - 1;
	ctx->restart.r[PERF_REG_X86_SP] = f.sp;
	ctx->restart.r[PERF_REG_X86_BP] = f.bp;
	ctx->regs = &ctx->restart;
	if (unw_init_remote(cursor, space, ctx) < 0) {
		*why = UNWIND_FAILED_BAD_FRAME;
		return false;
	}
	return true;
}

/*
 * The whole walk by libunwind, its cursor carrying every register the
 * tables restore from frame to frame. Frame i's ip in ips[i], its stack
 * pointer in sps[i].
 */
static enum unwind_outcome walk_libunwind(struct unwinder *u, const struct unwind_sample *s,
					  uint64_t *ips, uint64_t *sps, size_t *n)
{
	const uint64_t need = REG_BIT(IP) | REG_BIT(SP);
	struct unwind_ctx ctx = { .u = u, .s = s, .regs = &s->regs };
	bool after_signal = false;
	enum unwind_outcome why;
	unw_addr_space_t space;
	unw_cursor_t cursor;
	uint64_t prev_sp;

	if ((s->regs.mask & need) != need)
		return UNWIND_FAILED_BAD_FRAME;
	prev_sp = sps[*n] = s->regs.r[PERF_REG_X86_SP];
	ips[(*n)++] = s->regs.r[PERF_REG_X86_IP];
	space = space_of(u, s->pid);
	if (!space || unw_init_remote(&cursor, space, &ctx) < 0)
		return UNWIND_FAILED_BAD_FRAME;
	while (*n < UNWIND_MAX_FRAMES) {
		struct cfi_row row;
		unw_word_t ip, sp;
		int ret;

		ctx.no_map = ctx.no_info = ctx.off_stack = false;
		ret = unw_step(&cursor);
		if (ret == 0)
			return UNWIND_COMPLETE;	/* return address undefined: outermost */
		if (ret < 0) {
			if (!ctx.no_info && !ctx.no_map)
				return failed_step(&ctx);
			if (!step_frame_pointer(&ctx, &cursor, space, &why))
				return why;
			prev_sp = sps[*n] = ctx.restart.r[PERF_REG_X86_SP];
			ips[(*n)++] = ctx.restart.r[PERF_REG_X86_IP];
			after_signal = false;
			continue;
		}
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 ||
		    unw_get_reg(&cursor, UNW_REG_SP, &sp) < 0 || sp <= prev_sp)
			return UNWIND_FAILED_BAD_FRAME;
		if (!caller_frame(u, s->pid, &ip, &after_signal, &row))
			return UNWIND_FAILED_NO_MAP;
		sps[*n] = sp;
		ips[(*n)++] = ip;
		prev_sp = sp;
	}
	return UNWIND_TRUNCATED_DEPTH;
}

/*
 * The walk by cfi rows, libunwind taking only the frames they cannot
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
			if (!step_fp(u, s, mapped, &f, &why))
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
					       : step_libunwind(u, s, *n == 1, &f, &why);
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

enum unwind_outcome unwind(struct unwinder *u, const struct unwind_sample *s,
			   uint64_t *ips, size_t *n)
{
	enum unwind_outcome outcome;

	if (u->method == UNWIND_FP)
		return unwind_frame_pointers(u->as, s, ips, n);
	*n = 0;
	outcome = u->without_rows ? UNWIND_FAILED_BAD_FRAME : walk_rows(u, s, ips, u->sps, n);
	/*
	 * Rows carry only rsp, rbp and the return address from frame to
	 * frame, and libunwind, handed a frame past the first, only those: a
	 * rule naming another register fails there. A walk that failed is
	 * done again by libunwind alone, whose cursor carries them all.
	 */
	if (unwind_failed(outcome)) {
		*n = 0;
		outcome = walk_libunwind(u, s, ips, u->sps, n);
	}
	/* What the stack copies of this thread need; learnt afresh if a copy fell short. */
	if (outcome == UNWIND_COMPLETE)
		u64map_put(&u->stack_tops, s->tid, u->sps[*n - 1] + STACK_TOP_MARGIN);
	else if (outcome == UNWIND_TRUNCATED_STACK)
		unwinder_forget_thread(u, s->tid);
	if (outcome == UNWIND_TRUNCATED_STACK && s->callchain)
		outcome = unwind_fp_tail(u->as, s, u->sps, ips, n);
	return outcome;
}
