/* SPDX-License-Identifier: MIT */
/*
 * The unwinder against this very process: a chain of functions captures its
 * registers and a copy of its stack as perf would, then unwinds it through
 * the maps in /proc/self/maps and checks the frames by symbol.
 */
#include <asm/perf_regs.h>
#include <fcntl.h>
#include <gelf.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "config.h"
#include "test.h"
#include "unwind/unwind-internal.h"

#define STACK_COPY 16384

struct captured {
	struct unwind_regs regs;
	uint8_t stack[STACK_COPY];
	size_t stack_len;
};

static struct captured dwarf_capture, fp_capture, tramp_capture, signal_capture;
static uintptr_t stack_top;
static struct addrspaces *as;
static uint32_t self_pid;

int main(void);
int unwind_test_a(struct captured *c);
int unwind_test_b(struct captured *c);
int unwind_test_c(struct captured *c);
int unwind_test_fp_a(struct captured *c);
int unwind_test_fp_b(struct captured *c);
int unwind_test_fp_c(struct captured *c);
/*
 * Calls fn(c) from a frame that has a frame pointer and locals but no unwind
 * table, so only the frame pointer says where its caller's frame is.
 */
int unwind_test_trampoline(int (*fn)(struct captured *), struct captured *c);
int unwind_test_raise(struct captured *c);
void unwind_test_on_signal(int sig);

__asm__(".text\n"
	".globl unwind_test_trampoline\n"
	".type unwind_test_trampoline, @function\n"
	"unwind_test_trampoline:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	subq $32, %rsp\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	call *%rax\n"
	"	leave\n"
	"	ret\n"
	".size unwind_test_trampoline, .-unwind_test_trampoline\n");

/* Copies the live stack word by word, out of the sanitizer's sight. */
__attribute__((noinline, no_sanitize_address))
static void copy_stack(struct captured *c)
{
	uintptr_t sp = c->regs.r[PERF_REG_X86_SP];
	const volatile uint64_t *from = (const volatile uint64_t *)sp;
	uint64_t *to = (uint64_t *)c->stack;

	c->stack_len = stack_top - sp < STACK_COPY ? stack_top - sp : STACK_COPY;
	for (size_t i = 0; i < c->stack_len / 8; i++)
		to[i] = from[i];
}

/* What perf_event hands over for a sample: the registers at this point. */
#define CAPTURE_REGS(regs)                                                     \
	__asm__ volatile("movq %%rbx, %[bx]\n\t"                               \
			 "movq %%rbp, %[bp]\n\t"                               \
			 "movq %%rsp, %[sp]\n\t"                               \
			 "movq %%r12, %[r12]\n\t"                              \
			 "movq %%r13, %[r13]\n\t"                              \
			 "movq %%r14, %[r14]\n\t"                              \
			 "movq %%r15, %[r15]\n\t"                              \
			 "leaq 0(%%rip), %%rax\n\t"                            \
			 "movq %%rax, %[ip]\n\t"                               \
			 : [bx] "=m"((regs)->r[PERF_REG_X86_BX]),              \
			   [bp] "=m"((regs)->r[PERF_REG_X86_BP]),              \
			   [sp] "=m"((regs)->r[PERF_REG_X86_SP]),              \
			   [r12] "=m"((regs)->r[PERF_REG_X86_R12]),            \
			   [r13] "=m"((regs)->r[PERF_REG_X86_R13]),            \
			   [r14] "=m"((regs)->r[PERF_REG_X86_R14]),            \
			   [r15] "=m"((regs)->r[PERF_REG_X86_R15]),            \
			   [ip] "=m"((regs)->r[PERF_REG_X86_IP])               \
			 :                                                     \
			 : "rax")

#ifdef __clang__
/* clang (make UBSAN=1) has no per-function optimize: the build's frame pointers for all. */
#define NOFP __attribute__((noinline))
#define FP __attribute__((noinline))
#else
#define NOFP __attribute__((noinline, noclone, optimize("omit-frame-pointer")))
#define FP __attribute__((noinline, noclone, optimize("no-omit-frame-pointer")))
#endif

/* The leaf of a chain: captures a sample as perf would. */
#define CAPTURING_FUNC(attr, name)                                             \
	attr int name(struct captured *c)                                      \
	{                                                                      \
		CAPTURE_REGS(&c->regs);                                        \
		copy_stack(c);                                                 \
		return 1;                                                      \
	}

/* A caller in the chain; the empty asm keeps the call from becoming a tail call. */
#define CALLING_FUNC(attr, name, callee)                                       \
	attr int name(struct captured *c)                                      \
	{                                                                      \
		int r = callee(c);                                             \
									       \
		__asm__ volatile("" ::: "memory");                             \
		return r + 1;                                                  \
	}

CAPTURING_FUNC(NOFP, unwind_test_c)
CALLING_FUNC(NOFP, unwind_test_b, unwind_test_c)
CALLING_FUNC(NOFP, unwind_test_a, unwind_test_b)

CAPTURING_FUNC(FP, unwind_test_fp_c)
CALLING_FUNC(FP, unwind_test_fp_b, unwind_test_fp_c)
CALLING_FUNC(FP, unwind_test_fp_a, unwind_test_fp_b)

/* A capture inside a signal handler: the unwind goes through the kernel's signal frame. */
NOFP void unwind_test_on_signal(int sig)
{
	unwind_test_c(&signal_capture);
	__asm__ volatile("" ::: "memory");
}

NOFP int unwind_test_raise(struct captured *c)
{
	int r;

	signal(SIGUSR1, unwind_test_on_signal);
	r = raise(SIGUSR1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

/* Function symbols of this binary, to name frames by. */
static const char *const func_names[] = {
	"unwind_test_a", "unwind_test_b", "unwind_test_c", "unwind_test_fp_a",
	"unwind_test_fp_b", "unwind_test_fp_c", "unwind_test_trampoline", "main",
	"unwind_test_on_signal", "unwind_test_raise",
};
#define NR_FUNCS (sizeof(func_names) / sizeof(func_names[0]))
static uint64_t func_lo[NR_FUNCS], func_hi[NR_FUNCS];

static int load_symbols(void)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), found = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !data)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			for (size_t f = 0; f < NR_FUNCS; f++) {
				if (strcmp(name, func_names[f]) || func_hi[f])
					continue;
				func_lo[f] = sym.st_value;
				func_hi[f] = sym.st_value + sym.st_size;
				found++;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found == (int)NR_FUNCS;
}

static const char *func_at(uint64_t ip)
{
	const struct map *m = addrspace_find(as, self_pid, ip);
	uint64_t addr;

	if (!m)
		return NULL;
	addr = map_to_elf_addr(m, ip);
	for (size_t f = 0; f < NR_FUNCS; f++)
		if (addr >= func_lo[f] && addr < func_hi[f])
			return func_names[f];
	return NULL;
}

/* Index of the first frame in func, or -1. */
static int frame_of(const uint64_t *ips, size_t n, const char *func)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = func_at(ips[i]);

		if (name && !strcmp(name, func))
			return (int)i;
	}
	return -1;
}

static void print_frames(const uint64_t *ips, size_t n, enum unwind_outcome o)
{
	printf("  %zu frames, %s:\n", n, unwind_outcome_name(o));
	for (size_t i = 0; i < n; i++) {
		const char *name = func_at(ips[i]);

		printf("    #%zu 0x%" PRIx64 " %s\n", i, ips[i], name ? name : "?");
	}
}

static struct unwind_sample sample_of(const struct captured *c, enum unwind_method method)
{
	struct unwind_sample s = {
		.pid = self_pid,
		.regs = c->regs,
		.stack = c->stack,
		.stack_len = c->stack_len,
	};

	s.regs.mask = unwind_regs_mask(method);
	return s;
}

static enum unwind_outcome unwind_with_space(const struct addrspaces *space,
					     enum unwind_method method,
					     const struct unwind_sample *s,
					     uint64_t *ips, size_t *n)
{
	enum unwind_outcome o = UNWIND_FAILED_BAD_FRAME;
	struct unwinder *u;

	*n = 0;
	CHECK(unwinder_new(&u, method, space) == 0);
	if (u) {
		o = unwind(u, s, ips, n);
		unwinder_free(u);
	}
	return o;
}

static enum unwind_outcome unwind_with(enum unwind_method method,
				       const struct unwind_sample *s,
				       uint64_t *ips, size_t *n)
{
	return unwind_with_space(as, method, s, ips, n);
}

static void check_in_order(const uint64_t *ips, size_t n, const char *const *funcs,
			   size_t nr)
{
	int prev = -1;

	for (size_t i = 0; i < nr; i++) {
		int at = frame_of(ips, n, funcs[i]);

		if (at <= prev) {
			printf("  '%s' missing or out of order\n", funcs[i]);
			test_current_failed = 1;
		}
		prev = at;
	}
}

static void test_dwarf(void)
{
	static const char *const chain[] = {
		"unwind_test_c", "unwind_test_b", "unwind_test_a", "main",
	};
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwind_sample s = sample_of(&dwarf_capture, UNWIND_DWARF);
	enum unwind_outcome o;
	size_t n;

	o = unwind_with(UNWIND_DWARF, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_COMPLETE);
	CHECK(frame_of(ips, n, "unwind_test_c") == 0);
	check_in_order(ips, n, chain, 4);
	if (test_current_failed)
		print_frames(ips, n, o);
}

/*
 * Without mmap_data the kernel reports only executable mappings, so the
 * tables (in a read-only segment beside the code) must be found through the
 * ELF layout.
 */
static void test_dwarf_with_code_maps_only(void)
{
	static const char *const chain[] = {
		"unwind_test_c", "unwind_test_b", "unwind_test_a", "main",
	};
	struct addrspaces *code_only;
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwind_sample s = sample_of(&dwarf_capture, UNWIND_DWARF);
	enum unwind_outcome o;
	char line[4096], perms[5], path[4096];
	uint64_t start, end, pgoff;
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n;

	CHECK(f && addrspaces_new(&code_only) == 0);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		path[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %*u %4095s",
			   &start, &end, perms, &pgoff, path) >= 4 && perms[2] == 'x')
			addrspace_mmap(code_only, self_pid, start, end - start, pgoff,
				       PROT_READ | PROT_EXEC, path, NULL, 0);
	}
	fclose(f);
	CHECK(!addrspace_find(code_only, self_pid, (uintptr_t)func_names));

	o = unwind_with_space(code_only, UNWIND_DWARF, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_COMPLETE);
	check_in_order(ips, n, chain, 4);
	if (test_current_failed)
		print_frames(ips, n, o);
	addrspaces_free(code_only);
}

static void test_dwarf_through_frame_without_table(void)
{
	static const char *const chain[] = {
		"unwind_test_c", "unwind_test_trampoline", "main",
	};
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwind_sample s = sample_of(&tramp_capture, UNWIND_DWARF);
	enum unwind_outcome o;
	size_t n;

	o = unwind_with(UNWIND_DWARF, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_COMPLETE);
	check_in_order(ips, n, chain, 3);
	if (test_current_failed)
		print_frames(ips, n, o);
}

static void test_dwarf_truncated_stack(void)
{
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwind_sample s = sample_of(&dwarf_capture, UNWIND_DWARF);
	enum unwind_outcome o;
	size_t n;

	s.stack_len = 256;
	o = unwind_with(UNWIND_DWARF, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_TRUNCATED_STACK);
	CHECK(n >= 1 && frame_of(ips, n, "unwind_test_c") == 0);
	if (test_current_failed)
		print_frames(ips, n, o);
}

static void test_dwarf_unmapped_ip(void)
{
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwind_sample s = sample_of(&dwarf_capture, UNWIND_DWARF);
	enum unwind_outcome o;
	size_t n;

	s.regs.r[PERF_REG_X86_IP] = 0x10;
	s.regs.r[PERF_REG_X86_BP] = 0;
	o = unwind_with(UNWIND_DWARF, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_FAILED_NO_MAP);
	CHECK_EQ_U64(n, 1);
	CHECK_EQ_U64(ips[0], 0x10);
}

/* A frame without a table ends the chain at a zero frame pointer, else fails. */
static void test_dwarf_frame_without_table_or_frame_pointer(void)
{
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwind_sample s = sample_of(&tramp_capture, UNWIND_DWARF);
	enum unwind_outcome o;
	size_t n;

	s.regs.r[PERF_REG_X86_IP] = (uintptr_t)unwind_test_trampoline + 1;
	s.regs.r[PERF_REG_X86_BP] = 0;
	o = unwind_with(UNWIND_DWARF, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_COMPLETE);
	CHECK_EQ_U64(n, 1);

	s.regs.r[PERF_REG_X86_BP] = s.regs.r[PERF_REG_X86_SP] + 4;	/* misaligned */
	o = unwind_with(UNWIND_DWARF, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_FAILED_NO_INFO);
	CHECK_EQ_U64(n, 1);
}

static void test_frame_pointers(void)
{
	static const char *const chain[] = {
		"unwind_test_fp_c", "unwind_test_fp_b", "unwind_test_fp_a",
	};
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwind_sample s = sample_of(&fp_capture, UNWIND_FP);
	enum unwind_outcome o;
	size_t n;

	o = unwind_with(UNWIND_FP, &s, ips, &n);
	CHECK(n >= 3);
	CHECK(frame_of(ips, n, "unwind_test_fp_c") == 0);
	CHECK(frame_of(ips, n, "unwind_test_fp_b") == 1);
	CHECK(frame_of(ips, n, "unwind_test_fp_a") == 2);
	check_in_order(ips, n, chain, 3);
	if (test_current_failed)
		print_frames(ips, n, o);

	s.stack_len = 0;
	o = unwind_with(UNWIND_FP, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_TRUNCATED_STACK);
	CHECK_EQ_U64(n, 1);
}

static void test_kernel_callchain(void)
{
	uint64_t ip = fp_capture.regs.r[PERF_REG_X86_IP];
	uint64_t ret_b = (uint64_t)unwind_test_fp_b + 1, ret_a = (uint64_t)unwind_test_fp_a + 1;
	uint64_t chain[] = {
		PERF_CONTEXT_KERNEL, 0xffffffff81000000ull, PERF_CONTEXT_USER,
		ip, ret_b, ret_a, 0x10,
	};
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwind_sample s = { .pid = self_pid, .callchain = chain, .callchain_len = 6 };
	enum unwind_outcome o;
	size_t n;

	o = unwind_with(UNWIND_FP, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_COMPLETE);
	CHECK_EQ_U64(n, 3);
	CHECK_EQ_U64(ips[0], ip);
	CHECK_EQ_U64(ips[1], ret_b - 1);
	CHECK_EQ_U64(ips[2], ret_a - 1);

	s.callchain_len = 7;	/* ends in an address nothing maps */
	o = unwind_with(UNWIND_FP, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_FAILED_NO_MAP);
	CHECK_EQ_U64(n, 3);

	s.callchain_len = 4;	/* the kernel could not take a single step */
	o = unwind_with(UNWIND_FP, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_FAILED_BAD_FRAME);
	CHECK_EQ_U64(n, 1);
}

/*
 * DWARF on stack copies cut ever shorter, with the kernel's chain (here the
 * frame-pointer walk of the whole copy) in the sample: wherever DWARF runs
 * off the copy after a frame, the chain takes over at the same frame, and
 * the frames are the whole walk's, none lost or repeated.
 */
static void test_dwarf_fp_tail(void)
{
	uint64_t ips[UNWIND_MAX_FRAMES], full[UNWIND_MAX_FRAMES];
	uint64_t chain[UNWIND_MAX_FRAMES + 1] = { PERF_CONTEXT_USER };
	struct unwind_sample s = sample_of(&fp_capture, UNWIND_FP);
	size_t n, nfull, joined = 0;
	enum unwind_outcome o;

	unwind_with(UNWIND_FP, &s, full, &nfull);
	CHECK(nfull >= 3);
	for (size_t i = 0; i < nfull; i++)
		chain[i + 1] = i ? full[i] + 1 : full[i];
	s = sample_of(&fp_capture, UNWIND_DWARF);
	for (size_t len = 512; len >= 16; len -= 8) {
		s.stack_len = len;
		s.callchain = NULL;
		if (unwind_with(UNWIND_DWARF, &s, ips, &n) != UNWIND_TRUNCATED_STACK || n < 2)
			continue;
		s.callchain = chain;
		s.callchain_len = nfull + 1;
		o = unwind_with(UNWIND_DWARF, &s, ips, &n);
		joined++;
		CHECK_EQ_U64(o, UNWIND_COMPLETE_FP_TAIL);
		CHECK_EQ_U64(n, nfull);
		CHECK(!memcmp(ips, full, nfull * sizeof(*ips)));
		if (test_current_failed) {
			printf("  stack copy of %zu bytes:\n", len);
			print_frames(ips, n, o);
			return;
		}
	}
	CHECK(joined > 0);

	/* A chain that disagrees with the copy joins nothing. */
	chain[2] ^= 0x40;
	s.stack_len = 64;
	o = unwind_with(UNWIND_DWARF, &s, ips, &n);
	CHECK(o != UNWIND_COMPLETE_FP_TAIL);
}

/* Two unwinds of one sample gave the same frames and outcome. */
static bool same_unwind(const struct unwind_sample *s, size_t at)
{
	uint64_t ips[UNWIND_MAX_FRAMES], ref_ips[UNWIND_MAX_FRAMES];
	enum unwind_outcome o, ref;
	struct unwinder *u, *r;
	size_t n = 0, ref_n = 0;
	bool same;

	if (unwinder_new(&u, UNWIND_DWARF, as) || unwinder_new(&r, UNWIND_DWARF, as))
		return false;
	unwinder_without_rows(r);
	o = unwind(u, s, ips, &n);
	ref = unwind(r, s, ref_ips, &ref_n);
	same = o == ref && n == ref_n && !memcmp(ips, ref_ips, n * sizeof(*ips));
	if (!same) {
		printf("  sample %zu, by rows:\n", at);
		print_frames(ips, n, o);
		printf("  by libunwind alone:\n");
		print_frames(ref_ips, ref_n, ref);
	}
	unwinder_free(u);
	unwinder_free(r);
	return same;
}

/* After a complete unwind, a thread's copies keep what unwinding reads, no more. */
static void test_stack_needed(void)
{
	struct unwind_sample s = sample_of(&dwarf_capture, UNWIND_DWARF), cut;
	uint64_t ips[UNWIND_MAX_FRAMES], cut_ips[UNWIND_MAX_FRAMES];
	uint64_t sp = s.regs.r[PERF_REG_X86_SP];
	size_t n, cut_n, need;
	struct unwinder *u;

	s.tid = 7;
	CHECK(unwinder_new(&u, UNWIND_DWARF, as) == 0);
	if (!u)
		return;
	CHECK_EQ_U64(unwinder_stack_needed(u, 7, sp, s.stack_len), s.stack_len);
	CHECK_EQ_U64(unwind(u, &s, ips, &n), UNWIND_COMPLETE);
	need = unwinder_stack_needed(u, 7, sp, s.stack_len);
	printf("  %zu of %zu bytes needed\n", need, s.stack_len);
	CHECK(need <= s.stack_len);
	/* However much lies above the outermost frame, no more is needed. */
	CHECK_EQ_U64(unwinder_stack_needed(u, 7, sp, s.stack_len + 65536),
		     unwinder_stack_needed(u, 7, sp, s.stack_len + 4096));
	CHECK(unwinder_stack_needed(u, 7, sp, s.stack_len + 4096) < s.stack_len + 4096);
	CHECK_EQ_U64(unwinder_stack_needed(u, 8, sp, s.stack_len), s.stack_len);
	cut = s;
	cut.stack_len = need;
	CHECK_EQ_U64(unwind(u, &cut, cut_ips, &cut_n), UNWIND_COMPLETE);
	CHECK(cut_n == n && !memcmp(ips, cut_ips, n * sizeof(*ips)));
	/* A copy that falls short has the thread learn afresh. */
	cut.stack_len = 64;
	CHECK_EQ_U64(unwind(u, &cut, cut_ips, &cut_n), UNWIND_TRUNCATED_STACK);
	CHECK_EQ_U64(unwinder_stack_needed(u, 7, sp, s.stack_len), s.stack_len);
	unwind(u, &s, ips, &n);
	unwinder_forget_thread(u, 7);
	CHECK_EQ_U64(unwinder_stack_needed(u, 7, sp, s.stack_len), s.stack_len);
	unwinder_free(u);
}

static void test_dwarf_through_signal_frame(void)
{
	static const char *const chain[] = {
		"unwind_test_c", "unwind_test_on_signal", "unwind_test_raise", "main",
	};
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwind_sample s;
	enum unwind_outcome o;
	size_t n;

	unwind_test_raise(&signal_capture);
	s = sample_of(&signal_capture, UNWIND_DWARF);
	o = unwind_with(UNWIND_DWARF, &s, ips, &n);
	CHECK_EQ_U64(o, UNWIND_COMPLETE);
	check_in_order(ips, n, chain, 4);
	if (test_current_failed)
		print_frames(ips, n, o);
	CHECK(same_unwind(&s, 0));
}

/* Samples at whatever instruction a profiling timer hits, in this program and libc. */
#define TIMER_SAMPLES 200

static struct captured *timer_captures;
static volatile sig_atomic_t timer_taken;

__attribute__((no_sanitize_address))
static void on_profiling_timer(int sig, siginfo_t *si, void *uc_arg)
{
	static const int8_t perf_of_greg[] = {
		[REG_RAX] = PERF_REG_X86_AX, [REG_RBX] = PERF_REG_X86_BX,
		[REG_RCX] = PERF_REG_X86_CX, [REG_RDX] = PERF_REG_X86_DX,
		[REG_RSI] = PERF_REG_X86_SI, [REG_RDI] = PERF_REG_X86_DI,
		[REG_RBP] = PERF_REG_X86_BP, [REG_RSP] = PERF_REG_X86_SP,
		[REG_RIP] = PERF_REG_X86_IP, [REG_R8] = PERF_REG_X86_R8,
		[REG_R9] = PERF_REG_X86_R9, [REG_R10] = PERF_REG_X86_R10,
		[REG_R11] = PERF_REG_X86_R11, [REG_R12] = PERF_REG_X86_R12,
		[REG_R13] = PERF_REG_X86_R13, [REG_R14] = PERF_REG_X86_R14,
		[REG_R15] = PERF_REG_X86_R15,
	};
	const ucontext_t *uc = uc_arg;
	struct captured *c;

	if (timer_taken >= TIMER_SAMPLES)
		return;
	c = &timer_captures[timer_taken];
	for (int g = REG_R8; g <= REG_RIP; g++)
		c->regs.r[perf_of_greg[g]] = (uint64_t)uc->uc_mcontext.gregs[g];
	copy_stack(c);
	timer_taken++;
}

static int by_value(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Work in libc and here: sorting with a callback, formatting, parsing, copying. */
NOFP static void busy_in_libc(void)
{
	char text[64], block[4096];
	int values[64];

	for (int i = 0; i < 64; i++)
		values[i] = (i * 7919) % 64;
	qsort(values, 64, sizeof(values[0]), by_value);
	snprintf(text, sizeof(text), "%f %d", strtod("3.25", NULL) * values[3], values[9]);
	memset(block, text[0], sizeof(block));
	__asm__ volatile("" ::"r"(block) : "memory");
}

/*
 * The rows of cfi.c against libunwind stepping every frame, on samples
 * taken at arbitrary instructions: prologues, epilogues, libc's own
 * hand-written code. Every one must unwind the same both ways.
 */
static void test_rows_agree_with_libunwind(void)
{
	struct sigaction sa = { .sa_sigaction = on_profiling_timer, .sa_flags = SA_SIGINFO };
	struct itimerval every = { .it_interval = { 0, 200 }, .it_value = { 0, 200 } };
	struct itimerval off = {0};
	size_t complete = 0, differ = 0;

	timer_captures = calloc(TIMER_SAMPLES, sizeof(*timer_captures));
	CHECK(timer_captures != NULL);
	if (!timer_captures)
		return;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &every, NULL);
	while (timer_taken < TIMER_SAMPLES)
		busy_in_libc();
	setitimer(ITIMER_PROF, &off, NULL);
	signal(SIGPROF, SIG_IGN);
	for (size_t i = 0; i < TIMER_SAMPLES; i++) {
		struct unwind_sample s = sample_of(&timer_captures[i], UNWIND_DWARF);
		uint64_t ips[UNWIND_MAX_FRAMES];
		size_t n;

		differ += !same_unwind(&s, i);
		complete += unwind_complete(unwind_with(UNWIND_DWARF, &s, ips, &n));
	}
	CHECK_EQ_U64(differ, 0);
	/* The samples are real ones: nearly all reach main. */
	CHECK(complete >= TIMER_SAMPLES * 9 / 10);
	printf("  %zu samples, %zu complete, %zu unwound differently\n", (size_t)TIMER_SAMPLES,
	       complete, differ);
	free(timer_captures);
}

static void test_outcome_names(void)
{
	CHECK_STREQ(unwind_outcome_name(UNWIND_COMPLETE), "complete");
	CHECK_STREQ(unwind_outcome_name(UNWIND_FAILED_NO_MAP), "failed.no-map");
	for (int o = 0; o < UNWIND_OUTCOMES; o++)
		CHECK(strcmp(unwind_outcome_name(o), "unknown"));
}

static double ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Not asserted: the machine is shared and noisy. */
static void report_cost(enum unwind_method method, const struct captured *c)
{
	struct unwind_sample s = sample_of(c, method);
	uint64_t ips[UNWIND_MAX_FRAMES];
	struct unwinder *u;
	size_t n = 0;
	double start;
	int rounds = 20000;

	if (unwinder_new(&u, method, as))
		return;
	unwind(u, &s, ips, &n);	/* warm the caches */
	start = ns_now();
	for (int i = 0; i < rounds; i++)
		unwind(u, &s, ips, &n);
	printf("  %s: %.0f ns per unwind of %zu frames\n",
	       method == UNWIND_DWARF ? "dwarf" : "fp", (ns_now() - start) / rounds, n);
	if (method == UNWIND_DWARF) {
		rounds /= 10;
		start = ns_now();
		for (int i = 0; i < rounds; i++) {
			unwinder_forget_pid(u, self_pid);
			unwind(u, &s, ips, &n);
		}
		printf("  dwarf, cold cache: %.0f ns per unwind\n", (ns_now() - start) / rounds);
	}
	unwinder_free(u);
}

static int find_stack_top(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr))
		return 0;
	if (pthread_attr_getstack(&attr, &addr, &size)) {
		pthread_attr_destroy(&attr);
		return 0;
	}
	pthread_attr_destroy(&attr);
	stack_top = (uintptr_t)addr + size;
	return 1;
}

int main(void)
{
	self_pid = (uint32_t)getpid();
	if (!find_stack_top() || !load_symbols()) {
		printf("FAIL: cannot find the stack or this binary's symbols\n");
		return 1;
	}
	unwind_test_a(&dwarf_capture);
	unwind_test_fp_a(&fp_capture);
	unwind_test_trampoline(unwind_test_c, &tramp_capture);
	if (addrspaces_new(&as) || addrspace_load_proc(as, self_pid)) {
		printf("FAIL: addrspace_load_proc cannot load this process's maps\n");
		return 1;
	}
	RUN(test_dwarf);
	RUN(test_dwarf_with_code_maps_only);
	RUN(test_dwarf_through_frame_without_table);
	RUN(test_dwarf_truncated_stack);
	RUN(test_dwarf_unmapped_ip);
	RUN(test_dwarf_frame_without_table_or_frame_pointer);
	RUN(test_stack_needed);
	/* A signal frame's rules are libunwind's to follow, and it is the reference. */
	if (HAVE_LIBUNWIND) {
		RUN(test_dwarf_through_signal_frame);
		RUN(test_rows_agree_with_libunwind);
	} else {
		printf("  (built without libunwind: signal frames and the reference skipped)\n");
	}
	RUN(test_frame_pointers);
	RUN(test_kernel_callchain);
	RUN(test_dwarf_fp_tail);
	RUN(test_outcome_names);
	report_cost(UNWIND_DWARF, &dwarf_capture);
	report_cost(UNWIND_FP, &fp_capture);
	addrspaces_free(as);
	return test_summary();
}
