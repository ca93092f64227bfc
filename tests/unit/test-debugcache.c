/* SPDX-License-Identifier: MIT */
/*
 * System debuginfo kept inflated in the cache (symbols/debugcache.h):
 * libc's, from Debian's libc6-dbg, must name every 61st address of libc
 * as the compressed file does, with the copy made and with it read, and
 * be passed over when the copy is damaged.
 */
#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols.h"
#include "unwind/addrspace.h"
#include "test.h"

static char top[64];

/* A path under this test's directory. */
static const char *in_top(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", top, name);
	return path;
}

/* libc: its path, build-id and executable segment. */
struct libc_text {
	char path[PATH_MAX];
	uint64_t lo, hi;
	bool found;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
	struct libc_text *t = data;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libc.so.6"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			t->lo = ph->p_vaddr;
			t->hi = ph->p_vaddr + ph->p_memsz;
			t->found = realpath(info->dlpi_name, t->path) != NULL;
		}
	}
	return 1;
}

/* The system debug file of path, by its build-id, in debug; false when it has none. */
static bool system_debug_file(const char *path, char *debug, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), len;
	Elf *elf;
	const unsigned char *id;
	char *at;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	len = elf ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : 0;
	at = debug + snprintf(debug, size, "/usr/lib/debug/.build-id/");
	for (int i = 0; i < len && at + 8 < debug + size; i++)
		at += sprintf(at, i == 1 ? "/%02x" : "%02x", id[i]);
	strcpy(at, ".debug");
	elf_end(elf);
	close(fd);
	return len > 1 && access(debug, R_OK) == 0;
}

/* The sections of the ELF file path that are compressed; -1 when it is no ELF file. */
static int compressed_sections(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		n = -1;
	while (n >= 0 && (scn = elf_nextscn(elf, scn)))
		n += gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return n;
}

/* Whether frames a[0 .. n) and b[0 .. m) say the same. */
static bool same_frames(const struct sym_frame *a, int n, const struct sym_frame *b, int m)
{
	if (n != m)
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(a[i].func ? a[i].func : "", b[i].func ? b[i].func : "") ||
		    strcmp(a[i].file ? a[i].file : "", b[i].file ? b[i].file : "") ||
		    a[i].line != b[i].line || a[i].inlined != b[i].inlined)
			return false;
	return true;
}

/* Whether this process maps the file path (libdw maps the DWARF it reads). */
static bool mapped(const char *path)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, path) != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * Names every 61st address of libc's code with a symbolizer whose cache
 * GTRACE_CACHE_DIR=dir gives, against frames (where counts[i] < 0: fills
 * them); the addresses that named anything inlined or a line, in *rich;
 * false too when the DWARF read was not from the file read_from.
 */
static bool name_libc(const struct libc_text *t, const char *dir, struct sym_frame (*frames)[8],
		      int *counts, size_t n, size_t *rich, const char *read_from)
{
	struct dso_info dso = { .id = 1, .path = t->path };
	struct sym_frame got[8];
	struct symbolizer *s;
	bool same = true;

	setenv("GTRACE_CACHE_DIR", dir, 1);
	if (symbolizer_new(&s))
		return false;
	*rich = 0;
	for (size_t i = 0; i < n; i++) {
		int m = symbolize(s, &dso, t->lo + 61 * i, got, 8);

		*rich += m > 1 || (m == 1 && got[0].line);
		if (counts[i] < 0) {
			counts[i] = m;
			for (int k = 0; k < m; k++)
				frames[i][k] = (struct sym_frame){
					.func = got[k].func ? strdup(got[k].func) : NULL,
					.file = got[k].file ? strdup(got[k].file) : NULL,
					.line = got[k].line, .inlined = got[k].inlined,
				};
		} else if (!same_frames(frames[i], counts[i], got, m)) {
			same = false;
		}
	}
	same = same && mapped(read_from);
	symbolizer_free(s);
	return same;
}

static struct libc_text libc;
static char debug[PATH_MAX];

static void test_debug_cached(void)
{
	const struct libc_text t = libc;
	char copy[PATH_MAX + 64], real[PATH_MAX];
	struct stat made, again;
	struct sym_frame (*frames)[8];
	int *counts;
	size_t n = (size_t)(t.hi - t.lo) / 61, rich;
	const char *slash;

	frames = calloc(n, sizeof(*frames));
	counts = malloc(n * sizeof(*counts));
	CHECK(frames && counts);
	if (!frames || !counts)
		return;
	memset(counts, 0xff, n * sizeof(*counts));
	/* Without a cache, as the compressed file names them (mapped where its links lead). */
	CHECK(realpath(debug, real) != NULL);
	CHECK(name_libc(&t, "", frames, counts, n, &rich, real));
	CHECK(rich > n / 4);
	/* Cold: the copy made and read; warm: read, not made again. */
	slash = strrchr(debug, '/');
	snprintf(copy, sizeof(copy), "%s/%.2s%s", in_top("dcache"), slash - 2, slash + 1);
	CHECK(name_libc(&t, in_top("dcache"), frames, counts, n, &rich, copy));
	CHECK(compressed_sections(copy) == 0);
	CHECK(stat(copy, &made) == 0);
	CHECK(name_libc(&t, in_top("dcache"), frames, counts, n, &rich, copy));
	CHECK(stat(copy, &again) == 0 && again.st_ino == made.st_ino);
	/* A copy cut short is made again, and names the same. */
	CHECK(truncate(copy, 4096) == 0);
	CHECK(name_libc(&t, in_top("dcache"), frames, counts, n, &rich, copy));
	CHECK(stat(copy, &again) == 0 && again.st_size == made.st_size);
	CHECK(compressed_sections(copy) == 0);
	CHECK(rich > n / 4);
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < counts[i]; k++) {
			free((char *)frames[i][k].func);
			free((char *)frames[i][k].file);
		}
	free(frames);
	free(counts);
}

int main(void)
{
	char cmd[128];

	dl_iterate_phdr(find_text, &libc);
	if (!libc.found)
		return test_skip("libc6-dbg", "libc.so.6 is not mapped by that name here");
	if (!system_debug_file(libc.path, debug, sizeof(debug)))
		return test_skip("libc6-dbg", "no debug file of %s under /usr/lib/debug", libc.path);
	if (compressed_sections(debug) <= 0)
		return test_skip("libc6-dbg", "%s has no compressed section to keep inflated", debug);
	snprintf(top, sizeof(top), "/tmp/gtrace-test-debugcache-%d", (int)getpid());
	if (mkdir(top, 0700)) {
		perror(top);
		return 1;
	}
	RUN(test_debug_cached);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd))
		printf("  note: %s left behind\n", top);
	return test_summary();
}
