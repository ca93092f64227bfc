/* SPDX-License-Identifier: MIT */
/*
 * The test program is its own fixture: it symbolizes addresses inside its
 * own functions (built with -g), an always_inline helper, libc, the vdso,
 * and a perf-PID.map it writes. The symbol index is held to what
 * dwfl_module_addrinfo says at every symbol's edges, in this program,
 * libc, libdw and a library assembled here with aliases, labels and
 * nested symbols, with and without its .symtab.
 */
#include <dlfcn.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/tables.h"
#include "symbols/demangle.h"
#include "symbols/jitmap.h"
#include "symbols/kallsyms.h"
#include "symbols/symbols.h"
#include "symbols/symindex.h"
#include "test.h"

static volatile int sink;
static void *volatile captured_addr;
static volatile int captured_line, inline_call_line;

/* Remembers where it returns to, a spot inside its caller, and a line there. */
static __attribute__((noinline)) void capture(int line)
{
	captured_addr = __builtin_return_address(0);
	captured_line = line;
}

static inline __attribute__((always_inline)) void inlined_helper(int call_line)
{
	inline_call_line = call_line;
	capture(__LINE__);
	sink++;		/* keeps the call from being a tail call */
}

static __attribute__((noinline)) void outer_function(void)
{
	inlined_helper(__LINE__);
	sink++;
}

static __attribute__((noinline)) void plain_function(void)
{
	capture(__LINE__);
	sink++;
}

static char self_path[4096];

/* The dso (path only) holding p, and p's ELF address in it. */
static char lib_path[PATH_MAX];

static bool locate(const void *p, struct dso_info *dso, uint64_t *addr)
{
	struct link_map *lm;
	Dl_info info;
	ssize_t n;

	if (!dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return false;
	memset(dso, 0, sizeof(*dso));
	*addr = (uint64_t)(uintptr_t)p - lm->l_addr;
	/* As the kernel names a mapped file: its real path, no symbolic link in it. */
	if (lm->l_name && lm->l_name[0]) {
		dso->path = realpath(lm->l_name, lib_path) ? lib_path : lm->l_name;
		return true;
	}
	/* The main program's link map has no name. */
	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (n <= 0)
		return false;
	self_path[n] = '\0';
	dso->path = self_path;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

struct build_id_search {
	uintptr_t addr;
	struct dso_info *dso;
};

static void copy_build_id(const struct dl_phdr_info *info,
			  const ElfW(Phdr) *ph, struct dso_info *dso)
{
	const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
	const char *end = p + ph->p_memsz;

	while (p + sizeof(ElfW(Nhdr)) <= end) {
		const ElfW(Nhdr) *nh = (const void *)p;
		const char *name = p + sizeof(*nh);
		const char *desc = name + ((nh->n_namesz + 3) & ~3u);

		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    !memcmp(name, "GNU", 4) && nh->n_descsz <= TR_BUILD_ID_MAX) {
			memcpy(dso->build_id, desc, nh->n_descsz);
			dso->build_id_len = nh->n_descsz;
			return;
		}
		p = desc + ((nh->n_descsz + 3) & ~3u);
	}
}

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id_search *search = data;
	bool holds = false;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && search->addr >= start &&
		    search->addr < start + ph->p_memsz)
			holds = true;
	}
	if (!holds)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			copy_build_id(info, &info->dlpi_phdr[i], search->dso);
	return 1;
}

static void test_plain_function(void)
{
	struct sym_frame frames[SYM_MAX_INLINE];
	struct symbolizer *s;
	struct dso_info dso;
	uint64_t addr;
	int n;

	plain_function();
	CHECK(locate(captured_addr, &dso, &addr));
	CHECK(symbolizer_new(&s) == 0);
	n = symbolize(s, &dso, addr - 1, frames, SYM_MAX_INLINE);
	CHECK(n == 1);
	if (n == 1) {
		CHECK_STREQ(frames[0].func, "plain_function");
		CHECK(ends_with(frames[0].file, "test-symbols.c"));
		CHECK_EQ_U64(frames[0].line, captured_line);
		CHECK(!frames[0].inlined);
	}
	/* The entry point names the function too. */
	CHECK(locate((const void *)plain_function, &dso, &addr));
	n = symbolize(s, &dso, addr, frames, SYM_MAX_INLINE);
	CHECK(n >= 1);
	if (n >= 1)
		CHECK_STREQ(frames[n - 1].func, "plain_function");
	symbolizer_free(s);
}

static void test_inline_chain(void)
{
	struct sym_frame frames[SYM_MAX_INLINE];
	struct symbolizer *s;
	struct dso_info dso;
	uint64_t addr;
	int n;

	outer_function();
	CHECK(locate(captured_addr, &dso, &addr));
	CHECK(symbolizer_new(&s) == 0);
	n = symbolize(s, &dso, addr - 1, frames, SYM_MAX_INLINE);
	CHECK(n == 2);
	if (n == 2) {
		CHECK_STREQ(frames[0].func, "inlined_helper");
		CHECK(frames[0].inlined);
		CHECK(ends_with(frames[0].file, "test-symbols.c"));
		CHECK_EQ_U64(frames[0].line, captured_line);
		CHECK_STREQ(frames[1].func, "outer_function");
		CHECK(!frames[1].inlined);
		CHECK(ends_with(frames[1].file, "test-symbols.c"));
		CHECK_EQ_U64(frames[1].line, inline_call_line);
	}
	/* Room for one frame: the innermost. */
	n = symbolize(s, &dso, addr - 1, frames, 1);
	CHECK(n == 1);
	if (n == 1)
		CHECK_STREQ(frames[0].func, "inlined_helper");
	CHECK(symbolize(s, &dso, addr - 1, frames, 0) == -EINVAL);
	symbolizer_free(s);
}

static void test_libc_symtab(void)
{
	struct sym_frame first, again;
	struct symbolizer *s;
	struct dso_info dso;
	uint64_t addr;

	CHECK(locate((const void *)write, &dso, &addr));
	CHECK(symbolizer_new(&s) == 0);
	CHECK(symbolize(s, &dso, addr, &first, 1) == 1);
	CHECK(first.func && strstr(first.func, "write"));
	/* Cached: the same interned strings come back. */
	CHECK(symbolize(s, &dso, addr, &again, 1) == 1);
	CHECK(first.func == again.func);
	symbolizer_free(s);
}

/* A copy of this program without DWARF still names its functions. */
static void test_stripped_symtab(void)
{
	char stripped[64], cmd[4300];
	struct sym_frame frame;
	struct symbolizer *s;
	struct dso_info dso;
	uint64_t addr;

	CHECK(locate((const void *)plain_function, &dso, &addr));
	snprintf(stripped, sizeof(stripped), "/tmp/gtrace-test-symbols-%d",
		 (int)getpid());
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug '%s' %s 2>/dev/null",
		 dso.path, stripped);
	if (system(cmd)) {
		printf("  note: no objcopy, stripped binaries not checked\n");
		return;
	}
	dso.path = stripped;
	CHECK(symbolizer_new(&s) == 0);
	CHECK(symbolize(s, &dso, addr, &frame, 1) == 1);
	CHECK(frame.func && !strncmp(frame.func, "plain_function", 14));
	CHECK(frame.file == NULL && frame.line == 0 && !frame.inlined);
	symbolizer_free(s);
	unlink(stripped);
}

/*
 * A copy of dso's file whose build-id note is another note: recorded with
 * a build-id, a file with none is another file, also where s has read a
 * file of that build-id and size, which it would share.
 */
static void check_without_build_id(struct symbolizer *s, const struct dso_info *dso,
				   uint64_t addr)
{
	uint32_t note[4] = { 4, dso->build_id_len, NT_GNU_BUILD_ID, 0 };
	struct sym_frame frame;
	struct dso_info copy = *dso;
	char path[64], *bytes, *at;
	size_t size;
	FILE *f = fopen(dso->path, "rb");

	memcpy(&note[3], "GNU", 4);
	snprintf(path, sizeof(path), "/tmp/gtrace-no-build-id-%u.so", (unsigned)getpid());
	CHECK(f != NULL);
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = (size_t)ftell(f);
	rewind(f);
	bytes = malloc(size);
	CHECK(bytes && fread(bytes, 1, size, f) == size);
	fclose(f);
	at = bytes ? memmem(bytes, size, note, sizeof(note)) : NULL;
	CHECK(at != NULL);
	if (at) {
		((uint32_t *)(void *)at)[2] = 0x7fff;
		f = fopen(path, "wb");
		CHECK(f && fwrite(bytes, 1, size, f) == size);
		if (f)
			fclose(f);
		copy.path = path;
		CHECK_EQ_U64(symbolize(s, &copy, addr, &frame, 1), -ESTALE);
		unlink(path);
	}
	free(bytes);
}

static void test_build_id(void)
{
	struct build_id_search search = { 0 };
	struct sym_frame frame;
	struct symbolizer *s;
	struct dso_info dso;
	uint64_t addr;

	CHECK(locate((const void *)write, &dso, &addr));
	search.addr = (uintptr_t)write;
	search.dso = &dso;
	dl_iterate_phdr(find_build_id, &search);
	if (!dso.build_id_len) {
		printf("  note: libc has no build-id, build-id checks skipped\n");
		return;
	}
	CHECK(symbolizer_new(&s) == 0);
	CHECK(symbolize(s, &dso, addr, &frame, 1) == 1);
	dso.build_id[0] ^= 0xff;
	CHECK(symbolize(s, &dso, addr, &frame, 1) == -ESTALE);
	/* A shorter recorded id is a different one too. */
	dso.build_id[0] ^= 0xff;
	dso.build_id_len--;
	CHECK(symbolize(s, &dso, addr, &frame, 1) == -ESTALE);
	dso.build_id_len++;
	check_without_build_id(s, &dso, addr);
	symbolizer_free(s);
	CHECK(symbolizer_new(&s) == 0);
	check_without_build_id(s, &dso, addr);
	symbolizer_free(s);
}

/* Copies from to to with cmd ("cp", "objcopy --strip-debug"); false where that fails. */
static bool copy_file(const char *cmd, const char *from, const char *to)
{
	char line[PATH_MAX + 256];

	snprintf(line, sizeof(line), "%s '%s' '%s' 2>/dev/null", cmd, from, to);
	return !system(line);
}

/*
 * Copies of one file at other paths (as another mount or a container shows
 * it) are read once: the same names, one file read. A stripped copy has
 * the same build-id but other symbols: read on its own.
 */
static void test_shared_by_build_id(void)
{
	struct build_id_search search = { .addr = (uintptr_t)plain_function };
	struct sym_frame frame, other;
	char copies[2][64], stripped[64];
	struct symbolizer *s;
	struct dso_info dso, copy;
	uint64_t addr;

	CHECK(locate((const void *)plain_function, &dso, &addr));
	search.dso = &dso;
	dl_iterate_phdr(find_build_id, &search);
	if (!dso.build_id_len) {
		printf("  note: this program has no build-id, sharing not checked\n");
		return;
	}
	CHECK(symbolizer_new(&s) == 0);
	CHECK(symbolize(s, &dso, addr, &frame, 1) == 1);
	CHECK_STREQ(frame.func, "plain_function");
	CHECK(frame.file != NULL);
	for (int i = 0; i < 2; i++) {
		snprintf(copies[i], sizeof(copies[i]), "/tmp/gtrace-test-shared-%d.%d",
			 (int)getpid(), i);
		CHECK(copy_file("cp", dso.path, copies[i]));
		copy = dso;
		copy.path = copies[i];
		CHECK(symbolize(s, &copy, addr, &other, 1) == 1);
		CHECK(other.func == frame.func && other.file == frame.file &&
		      other.line == frame.line);
	}
	CHECK_EQ_U64(symbolizer_files_read(s), 1);
	snprintf(stripped, sizeof(stripped), "/tmp/gtrace-test-shared-%d.stripped", (int)getpid());
	if (copy_file("objcopy --strip-debug", dso.path, stripped)) {
		copy.path = stripped;
		CHECK(symbolize(s, &copy, addr, &other, 1) == 1);
		CHECK(other.func == frame.func && other.file == NULL);
		CHECK_EQ_U64(symbolizer_files_read(s), 2);
	} else {
		printf("  note: no objcopy, the stripped copy not checked\n");
	}
	symbolizer_free(s);
	unlink(stripped);
	unlink(copies[0]);
	unlink(copies[1]);
}

static void test_missing_file(void)
{
	struct dso_info dso = { .path = "/nonexistent/gtrace/libgone.so" };
	struct sym_frame frame;
	struct symbolizer *s;

	CHECK(symbolizer_new(&s) == 0);
	CHECK(symbolize(s, &dso, 0x1000, &frame, 1) == -ENOENT);
	CHECK(symbolize(s, &dso, 0x2000, &frame, 1) == -ENOENT);
	dso.path = "/proc/self/status";		/* there, but not ELF */
	CHECK(symbolize(s, &dso, 0x1000, &frame, 1) == -ENOEXEC);
	symbolizer_free(s);
}

static void test_unknown_address(void)
{
	struct dso_info dso = { .flags = TR_DSO_KERNEL, .path = "[kernel]" };
	struct sym_frame frame;
	struct symbolizer *s;
	uint64_t addr;

	CHECK(symbolizer_new(&s) == 0);
	/* Below every kernel symbol, or with none read (kallsyms hidden): no name. */
	CHECK(symbolize(s, &dso, 0x1000, &frame, 1) == 0);
	CHECK(locate((const void *)plain_function, &dso, &addr));
	CHECK(symbolize(s, &dso, 0, &frame, 1) == 0);
	symbolizer_free(s);
}

static void test_jit_map(void)
{
	/* Above PID_MAX_LIMIT: no real process has this pid. */
	uint32_t pid = (1u << 22) + (uint32_t)getpid();
	struct dso_info dso = { .path = "//anon", .flags = TR_DSO_ANON, .pid = pid };
	struct demangler d = { 0 };
	struct sym_frame frame;
	struct symbolizer *s;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "7f0000002000 10 _ZN6gtrace4test3fooEi\n"
		   "not a symbol line\n"
		   "7f0000001000 100 jit_alpha\n"
		   "0x7f0000001100 80 LazyCompile:*beta script.js:12\n");
	fclose(f);

	CHECK(symbolizer_new(&s) == 0);
	CHECK(symbolize(s, &dso, 0x7f0000001000, &frame, 1) == 1);
	CHECK_STREQ(frame.func, "jit_alpha");
	CHECK(frame.file == NULL && frame.line == 0 && !frame.inlined);
	CHECK(symbolize(s, &dso, 0x7f00000010ff, &frame, 1) == 1);
	CHECK_STREQ(frame.func, "jit_alpha");
	CHECK(symbolize(s, &dso, 0x7f000000117f, &frame, 1) == 1);
	CHECK_STREQ(frame.func, "LazyCompile:*beta script.js:12");
	CHECK(symbolize(s, &dso, 0x7f0000001180, &frame, 1) == 0);
	CHECK(symbolize(s, &dso, 0x7f0000000fff, &frame, 1) == 0);
	CHECK(symbolize(s, &dso, 0x7f0000002008, &frame, 1) == 1);
	if (demangler_available(&d))
		CHECK_STREQ(frame.func, "gtrace::test::foo(int)");
	else
		printf("  note: no libstdc++, demangling not checked\n");
	/* Read once per pid: later changes to the file are not seen. */
	unlink(path);
	CHECK(symbolize(s, &dso, 0x7f0000001000, &frame, 1) == 1);
	dso.pid = pid + 1;
	CHECK(symbolize(s, &dso, 0x7f0000001000, &frame, 1) == 0);
	symbolizer_free(s);
	demangler_free(&d);
}

/* A map of one line naming 0x7f0000001000..+0x100 "jit_alpha" at path; false if not made. */
static bool write_jit_map(const char *path)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return false;
	fprintf(f, "7f0000001000 100 jit_alpha\n");
	return fclose(f) == 0;
}

/*
 * A JIT map is read only when it is a regular file of its own, not reached
 * through a symbolic link, of the process's user, root or ours; a refused
 * one gives -EPERM for each of its addresses.
 */
static void test_jit_map_refused(void)
{
	uint32_t pid = (1u << 22) + 2 * (uint32_t)getpid();
	struct dso_info dso = { .path = "//anon", .flags = TR_DSO_ANON, .pid = pid };
	char path[64], real[64];
	struct sym_frame frame;
	struct symbolizer *s;

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	snprintf(real, sizeof(real), "/tmp/perf-%u.real", pid);
	if (!write_jit_map(real))
		return;
	CHECK(symlink(real, path) == 0);
	CHECK(symbolizer_new(&s) == 0);
	CHECK_EQ_U64(symbolize(s, &dso, 0x7f0000001000, &frame, 1), -EPERM);
	CHECK_EQ_U64(symbolize(s, &dso, 0x7f0000001080, &frame, 1), -EPERM);
	symbolizer_free(s);
	unlink(path);

	/* A second name of a file is a hard link to someone else's, maybe. */
	CHECK(link(real, path) == 0);
	CHECK(symbolizer_new(&s) == 0);
	CHECK_EQ_U64(symbolize(s, &dso, 0x7f0000001000, &frame, 1), -EPERM);
	symbolizer_free(s);
	unlink(path);
	unlink(real);

	if (geteuid()) {
		printf("  note: not root, maps of other users not checked\n");
		return;
	}
	if (!write_jit_map(path))
		return;
	CHECK(chown(path, 1, (gid_t)-1) == 0);
	dso.uid = 65534;
	CHECK(symbolizer_new(&s) == 0);
	CHECK_EQ_U64(symbolize(s, &dso, 0x7f0000001000, &frame, 1), -EPERM);
	symbolizer_free(s);
	dso.uid = 1;
	CHECK(symbolizer_new(&s) == 0);
	CHECK_EQ_U64(symbolize(s, &dso, 0x7f0000001000, &frame, 1), 1);
	CHECK_STREQ(frame.func, "jit_alpha");
	CHECK_EQ_U64(symbolizer_jit_maps_cut(s), 0);
	symbolizer_free(s);
	unlink(path);
}

/* Past JITMAP_MAX_BYTES a map is not read, the line the cap cuts neither; long lines are skipped. */
static void test_jit_map_cut(void)
{
	char path[64], *long_line = malloc(JITMAP_MAX_LINE + 64);
	struct strtab names = { 0 };
	struct jitmap m = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-cut-%u.map", (unsigned)getpid());
	f = fopen(path, "w");
	CHECK(f != NULL && long_line != NULL);
	if (!f || !long_line) {
		free(long_line);
		return;
	}
	memset(long_line, 'x', JITMAP_MAX_LINE + 63);
	memcpy(long_line, "3000 10 ", 8);
	long_line[JITMAP_MAX_LINE + 63] = '\0';
	fprintf(f, "1000 10 first\n%s\n", long_line);
	/* Sparse: NULs up to the line that crosses the cap. */
	fseek(f, JITMAP_MAX_BYTES - 8, SEEK_SET);
	fprintf(f, "\n2000 10 crossing\n");
	CHECK(fclose(f) == 0);
	CHECK_EQ_U64(jitmap_load(&m, path, 0, &names), 1);
	CHECK_EQ_U64(m.syms.len, 1);
	CHECK_STREQ(strtab_get(&names, jitmap_find(&m, 0x1008)), "first");
	CHECK_EQ_U64(jitmap_find(&m, 0x2000), 0);
	CHECK_EQ_U64(jitmap_find(&m, 0x3000), 0);
	jitmap_free(&m);
	strtab_free(&names);
	unlink(path);
	free(long_line);
}

/* /proc/kallsyms' lines: code kept, the rest skipped, hostile lines survived. */
static void test_kallsyms_parse(void)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 t do_nanosleep\n"
		"ffffffff81000200 D some_data\n"
		"ffffffff81000300 W weak_one\t[some_module]\n"
		"not a line at all\n"
		"ffffffff81000400 T\n"
		"\n"
		"ffffffff81000500 T last_without_newline";
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 t x\n";
	static const char odd[] = "1ffffffff81000000 T too_long\nffffffff81000700 T cut\0tail\n";
	struct kallsyms k = { 0 };

	/* Not final: the last line, without its newline, waits. */
	CHECK_EQ_U64(kallsyms_parse(&k, text, sizeof(text) - 1, false),
		     strrchr(text, '\n') + 1 - text);
	CHECK_EQ_U64(k.syms.len, 3);
	CHECK_EQ_U64(kallsyms_parse(&k, text, sizeof(text) - 1, true), sizeof(text) - 1);
	CHECK_EQ_U64(k.syms.len, 3 + 4);
	CHECK_STREQ(kallsyms_find(&k, 0xffffffff81000350), "weak_one");
	kallsyms_free(&k);

	/* Seventeen digits are no address; a NUL ends its line. */
	CHECK_EQ_U64(kallsyms_parse(&k, odd, sizeof(odd) - 1, true), sizeof(odd) - 1);
	CHECK_EQ_U64(k.syms.len, 1);
	CHECK_STREQ(kallsyms_find(&k, 0xffffffff81000700), "cut");
	kallsyms_free(&k);

	/* Hidden: every address 0, as kptr_restrict shows them. */
	CHECK_EQ_U64(kallsyms_parse(&k, hidden, sizeof(hidden) - 1, true),
		     sizeof(hidden) - 1);
	CHECK(kallsyms_hidden(&k));
	CHECK(kallsyms_find(&k, 0xffffffff81000000) == NULL);
	kallsyms_free(&k);
}

/* A file read whole: sorted, found at or below, a line too long to be a symbol skipped. */
static void test_kallsyms_load(void)
{
	char path[64], *long_line = malloc(3 * KALLSYMS_MAX_LINE);
	struct kallsyms k = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/gtrace-kallsyms-%u", (unsigned)getpid());
	f = fopen(path, "w");
	CHECK(f != NULL && long_line != NULL);
	if (!f || !long_line) {
		free(long_line);
		return;
	}
	memset(long_line, 'x', 3 * KALLSYMS_MAX_LINE - 1);
	memcpy(long_line, "ffffffff81000050 T ", 19);
	long_line[3 * KALLSYMS_MAX_LINE - 1] = '\0';
	fprintf(f, "ffffffff81000100 T second\n%s\nffffffff81000000 T first\n"
		"ffffffff81000200 t third", long_line);
	CHECK(fclose(f) == 0);
	CHECK_EQ_U64(kallsyms_load(&k, path), 0);
	CHECK_EQ_U64(k.syms.len, 3);
	CHECK(!kallsyms_hidden(&k));
	CHECK_STREQ(kallsyms_find(&k, 0xffffffff81000010), "first");
	CHECK_STREQ(kallsyms_find(&k, 0xffffffff81000100), "second");
	CHECK_STREQ(kallsyms_find(&k, 0xffffffff81000fff), "third");
	CHECK(kallsyms_find(&k, 0xffffffff80000000) == NULL);
	CHECK(kallsyms_load(&k, "/nonexistent/kallsyms") == -ENOENT);
	kallsyms_free(&k);
	unlink(path);
	free(long_line);
}

static void test_demangle(void)
{
	struct demangler d = { 0 };
	char *name;

	CHECK(demangle(&d, "plain_c_name") == NULL);
	if (!demangler_available(&d)) {
		printf("  note: no libstdc++, demangling not checked\n");
		return;
	}
	name = demangle(&d, "_ZNSt6vectorIiSaIiEE9push_backERKi");
	CHECK_STREQ(name, "std::vector<int, std::allocator<int> >::push_back(int const&)");
	free(name);
	CHECK(demangle(&d, "_Znot really mangled") == NULL);
	demangler_free(&d);
}

static void test_vdso(void)
{
	struct dso_info dso = { .path = "[vdso]", .flags = TR_DSO_VDSO };
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	struct sym_frame frame;
	struct symbolizer *s;
	void *vdso, *fn;

	vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	fn = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
	if (!base || !fn) {
		printf("  note: no vdso symbol to look up, vdso not checked\n");
		return;
	}
	CHECK(symbolizer_new(&s) == 0);
	CHECK(symbolize(s, &dso, (uintptr_t)fn - base, &frame, 1) == 1);
	CHECK(frame.func && strstr(frame.func, "clock_gettime"));
	symbolizer_free(s);
	dlclose(vdso);
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_build_id_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* Whether the index and addrinfo name addr alike; says where they differ. */
static bool same_name(const struct sym_index *ix, Dwfl_Module *mod, uint64_t addr,
		      const char *path)
{
	const char *indexed = sym_index_name(ix, mod, addr), *scanned;
	GElf_Off offset;
	GElf_Sym sym;

	scanned = dwfl_module_addrinfo(mod, addr, &offset, &sym, NULL, NULL, NULL);
	if (indexed == scanned || (indexed && scanned && !strcmp(indexed, scanned)))
		return true;
	printf("  %s at 0x%llx: index %s, addrinfo %s\n", path, (unsigned long long)addr,
	       indexed ? indexed : "(none)", scanned ? scanned : "(none)");
	return false;
}

/*
 * Compares the index with addrinfo at and around each symbol's start and
 * end, where the names change; returns the number of addresses compared.
 */
static size_t compare_with_addrinfo(const char *path)
{
	Dwfl *dwfl = dwfl_begin(&offline_callbacks);
	struct sym_index ix = { 0 };
	size_t compared = 0, differ = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwfl_Module *mod;
	int n;

	CHECK(dwfl && fd >= 0);
	if (!dwfl || fd < 0)
		return 0;
	mod = dwfl_report_elf(dwfl, path, path, fd, 0, true);
	CHECK(mod != NULL);
	dwfl_report_end(dwfl, NULL, NULL);
	sym_index_build(&ix, mod);
	CHECK(ix.usable == 1);
	n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n && differ < 5; i++) {
		GElf_Sym sym;
		GElf_Addr value;

		if (!dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL))
			continue;
		uint64_t probes[] = { value - 1, value, value + 1, value + sym.st_size / 2,
				      value + sym.st_size - 1, value + sym.st_size,
				      value + sym.st_size + 1 };

		for (size_t p = 0; p < sizeof(probes) / sizeof(probes[0]); p++) {
			differ += !same_name(&ix, mod, probes[p], path);
			compared++;
		}
	}
	CHECK(differ == 0);
	sym_index_free(&ix);
	dwfl_end(dwfl);
	return compared;
}

/* Functions that share a start, nest, have no size, and a gap after the last. */
static const char edge_symbols_asm[] =
	"\t.text\n"
	"\t.globl outer\n\t.type outer, @function\n"
	"outer:\n\t.skip 16\n"
	"inner:\n\t.skip 16\n\t.size inner, 16\n\t.type inner, @function\n"
	"\t.skip 32\n\t.size outer, 64\n"
	"\t.globl alias_global\n\t.type alias_global, @function\n"
	"\t.set alias_global, outer\n\t.size alias_global, 64\n"
	"\t.weak alias_weak\n\t.type alias_weak, @function\n"
	"\t.set alias_weak, outer\n\t.size alias_weak, 32\n"
	"\t.type local_alias, @function\n"
	"\t.set local_alias, outer\n\t.size local_alias, 48\n"
	"local_label:\n\t.skip 16\n"
	"\t.globl global_label\n"
	"global_label:\n\t.skip 16\n"
	"\t.globl zero_size\n\t.type zero_size, @function\n"
	"zero_size:\n\t.skip 16\n"
	"\t.globl overlapping\n\t.type overlapping, @function\n"
	"overlapping:\n\t.skip 8\n"
	"\t.globl overlapped\n\t.type overlapped, @function\n"
	"overlapped:\n\t.skip 16\n\t.size overlapped, 16\n"
	"\t.size overlapping, 16\n"
	"\t.globl last\n\t.type last, @function\n"
	"last:\n\t.skip 8\n\t.size last, 8\n"
	"\t.skip 24\n";

/* Builds the library of edge_symbols_asm as path; false without a compiler. */
static bool build_edge_library(const char *path)
{
	char src[80], cmd[400];
	FILE *f;
	bool built;

	snprintf(src, sizeof(src), "/tmp/gtrace-test-symindex-%d.s", (int)getpid());
	f = fopen(src, "w");
	if (!f)
		return false;
	fputs(edge_symbols_asm, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -shared -nostdlib -o %s %s 2>/dev/null", path, src);
	built = !system(cmd);
	unlink(src);
	return built;
}

static void test_index_like_addrinfo(void)
{
	char lib[80], stripped[96], cmd[256];
	struct dso_info dso;
	uint64_t addr;

	CHECK(locate((const void *)plain_function, &dso, &addr));
	CHECK(compare_with_addrinfo(dso.path) > 100);
	CHECK(locate((const void *)write, &dso, &addr));
	CHECK(compare_with_addrinfo(dso.path) > 1000);
	CHECK(locate((const void *)dwfl_begin, &dso, &addr));
	CHECK(compare_with_addrinfo(dso.path) > 1000);

	snprintf(lib, sizeof(lib), "/tmp/gtrace-test-symindex-%d.so", (int)getpid());
	snprintf(stripped, sizeof(stripped), "%s.stripped", lib);
	if (!build_edge_library(lib)) {
		printf("  note: no cc, the assembled library not checked\n");
		return;
	}
	CHECK(compare_with_addrinfo(lib) > 50);
	/* Without .symtab: .dynsym's globals. */
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all %s %s 2>/dev/null", lib, stripped);
	if (!system(cmd))
		CHECK(compare_with_addrinfo(stripped) > 20);
	else
		printf("  note: no objcopy, the stripped library not checked\n");
	unlink(stripped);
	unlink(lib);
}

int main(void)
{
	RUN(test_plain_function);
	RUN(test_inline_chain);
	RUN(test_libc_symtab);
	RUN(test_stripped_symtab);
	RUN(test_build_id);
	RUN(test_shared_by_build_id);
	RUN(test_missing_file);
	RUN(test_unknown_address);
	RUN(test_jit_map);
	RUN(test_jit_map_refused);
	RUN(test_jit_map_cut);
	RUN(test_kallsyms_parse);
	RUN(test_kallsyms_load);
	RUN(test_demangle);
	RUN(test_vdso);
	RUN(test_index_like_addrinfo);
	return test_summary();
}
