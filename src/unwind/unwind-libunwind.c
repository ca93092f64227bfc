/* SPDX-License-Identifier: MIT */
/*
 * The library of unwinder.h: libunwind's remote API, which walks .eh_frame
 * and asks us, through the accessors below, for registers, memory (the
 * copied stack, or the mapped files for code and tables) and the table
 * covering an ip (found through the dso's .eh_frame_hdr).
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
#include "unwind/unwinder.h"
#include "util/xalloc.h"

/*
 * One libunwind address space per process: its cache of unwind rules is
 * keyed by ip alone, and different programs share ips.
 */
struct unwind_library {
	struct u64map spaces;		/* pid -> unw_addr_space_t, 0 forgotten */
};

/* Exported by libunwind but not declared in its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);

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
	if (!ud->cfi.hdr.count) {
		ctx->no_info = true;
		return -UNW_ESTOPUNWIND;
	}
	bias = ip - map_to_elf_addr(m, ip);
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.u.rti.segbase = bias + dso_elf(m->dso)->eh_frame_hdr;
	di.u.rti.table_data = di.u.rti.segbase +
			      (uint64_t)(ud->cfi.hdr.table - (ud->data + ud->cfi.hdr_off));
	di.u.rti.table_len = ud->cfi.hdr.count * 8 / sizeof(unw_word_t);
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

	if (u64map_get(&u->library->spaces, pid, &v) && v)
		return (unw_addr_space_t)(uintptr_t)v;
	space = unw_create_addr_space(&accessors, 0);
	if (!space)
		return NULL;
	unw_set_caching_policy(space, UNW_CACHE_GLOBAL);
	u64map_put(&u->library->spaces, pid, (uintptr_t)space);
	return space;
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

/*
 * A frame whose rules need more than a row: one step by libunwind, from
 * the sample's registers for the first frame, from ip, sp and rbp after.
 */
bool library_step(struct unwinder *u, const struct unwind_sample *s, bool first,
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
	struct frame f;

	if (unw_get_reg(cursor, UNW_REG_IP, &ip) < 0 ||
	    unw_get_reg(cursor, UNW_REG_SP, &sp) < 0 ||
	    unw_get_reg(cursor, UNW_X86_64_RBP, &bp) < 0) {
		*why = failed_step(ctx);
		return false;
	}
	f = (struct frame){ .ip = ip, .sp = sp, .bp = bp, .bp_known = true };
	if (!frame_pointer_step(ctx->u, ctx->s, !ctx->no_map, &f, why))
		return false;
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

bool library_walk(struct unwinder *u, const struct unwind_sample *s, uint64_t *ips,
		  size_t *n, enum unwind_outcome *outcome)
{
	*n = 0;
	*outcome = walk_libunwind(u, s, ips, u->sps, n);
	return true;
}

int library_new(struct unwind_library **l)
{
	*l = xcalloc(1, sizeof(**l));
	return 0;
}

void library_free(struct unwind_library *l)
{
	uint64_t space;

	if (!l)
		return;
	for (size_t pos = 0; u64map_next(&l->spaces, &pos, NULL, &space);)
		if (space)
			unw_destroy_addr_space((unw_addr_space_t)(uintptr_t)space);
	u64map_free(&l->spaces);
	free(l);
}

void library_forget_pid(struct unwind_library *l, uint32_t pid)
{
	uint64_t v;

	if (u64map_get(&l->spaces, pid, &v) && v) {
		unw_destroy_addr_space((unw_addr_space_t)(uintptr_t)v);
		u64map_put(&l->spaces, pid, 0);
	}
}
