/* SPDX-License-Identifier: MIT */
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format/tables.h"
#include "test.h"
#include "unwind/addrspace.h"
#include "unwind/unwind-internal.h"

#define RX (PROT_READ | PROT_EXEC)
#define RW (PROT_READ | PROT_WRITE)

static char self_path[PATH_MAX];

int main(void);

static void map_anon(struct addrspaces *as, uint32_t pid, uint64_t start,
		     uint64_t end, uint64_t pgoff, uint32_t prot)
{
	addrspace_mmap(as, pid, start, end - start, pgoff, prot, "//anon", NULL, 0);
}

/* The map holding addr must be [start, end) at pgoff. */
static int map_is(const struct addrspaces *as, uint32_t pid, uint64_t addr,
		  uint64_t start, uint64_t end, uint64_t pgoff)
{
	const struct map *m = addrspace_find(as, pid, addr);

	return m && m->start == start && m->end == end && m->pgoff == pgoff;
}

static void test_mmap_splits_and_replaces(void)
{
	struct addrspaces *as;

	CHECK(addrspaces_new(&as) == 0);
	map_anon(as, 1, 0x10000, 0x90000, 0x100000, RX);
	map_anon(as, 1, 0x30000, 0x50000, 0x200000, RX);
	CHECK(!addrspace_find(as, 1, 0xffff));
	CHECK(map_is(as, 1, 0x10000, 0x10000, 0x30000, 0x100000));
	CHECK(map_is(as, 1, 0x2ffff, 0x10000, 0x30000, 0x100000));
	CHECK(map_is(as, 1, 0x30000, 0x30000, 0x50000, 0x200000));
	CHECK(map_is(as, 1, 0x50000, 0x50000, 0x90000, 0x140000));
	CHECK(!addrspace_find(as, 1, 0x90000));

	/* Data over code only punches a hole. */
	map_anon(as, 1, 0x20000, 0x60000, 0, RW);
	CHECK(map_is(as, 1, 0x1ffff, 0x10000, 0x20000, 0x100000));
	CHECK(!addrspace_find(as, 1, 0x20000));
	CHECK(!addrspace_find(as, 1, 0x5ffff));
	CHECK(map_is(as, 1, 0x60000, 0x60000, 0x90000, 0x150000));

	/* One mapping over everything leaves one map. */
	map_anon(as, 1, 0x1000, 0x100000, 0x7000, RX);
	CHECK(map_is(as, 1, 0x10000, 0x1000, 0x100000, 0x7000));
	CHECK(map_is(as, 1, 0x90000, 0x1000, 0x100000, 0x7000));

	/* Adjacent mappings stay separate. */
	map_anon(as, 1, 0x100000, 0x200000, 0, RX);
	CHECK(map_is(as, 1, 0xfffff, 0x1000, 0x100000, 0x7000));
	CHECK(map_is(as, 1, 0x100000, 0x100000, 0x200000, 0));
	addrspaces_free(as);
}

static void test_fork_exec_exit(void)
{
	struct addrspaces *as;
	const struct map *parent, *child;

	CHECK(addrspaces_new(&as) == 0);
	map_anon(as, 10, 0x10000, 0x20000, 0, RX);
	addrspace_fork(as, 11, 10);
	addrspace_fork(as, 10, 10);	/* a thread: nothing changes */
	parent = addrspace_find(as, 10, 0x10000);
	child = addrspace_find(as, 11, 0x10000);
	CHECK(parent && child);
	if (parent && child) {
		CHECK(parent->dso != child->dso);
		CHECK_EQ_U64(parent->dso->pid, 10);
		CHECK_EQ_U64(child->dso->pid, 11);
		CHECK(child->dso->flags & TR_DSO_ANON);
		CHECK_STREQ(child->dso->path, "//anon");
	}

	/* The copy is the child's own. */
	map_anon(as, 10, 0x30000, 0x40000, 0, RX);
	CHECK(addrspace_find(as, 10, 0x30000));
	CHECK(!addrspace_find(as, 11, 0x30000));

	addrspace_exec(as, 11);
	CHECK(!addrspace_find(as, 11, 0x10000));
	CHECK(addrspace_find(as, 10, 0x10000));
	addrspace_exit(as, 10);
	CHECK(!addrspace_find(as, 10, 0x10000));

	/* A fork from an unknown or gone parent starts empty. */
	addrspace_fork(as, 12, 10);
	CHECK(!addrspace_find(as, 12, 0x10000));
	map_anon(as, 12, 0x10000, 0x20000, 0, RX);
	CHECK(addrspace_find(as, 12, 0x10000));
	addrspaces_free(as);
}

static void test_dso_registry(void)
{
	static const uint8_t other_id[20] = { 1, 2, 3 };
	const struct dso_info *a, *b, *c, *vdso;
	struct addrspaces *as;
	uint32_t count;

	CHECK(addrspaces_new(&as) == 0);
	addrspace_mmap(as, 1, 0x10000, 0x1000, 0x1000, RX, self_path, NULL, 0);
	addrspace_mmap(as, 2, 0x50000, 0x1000, 0x1000, RX, self_path, NULL, 0);
	addrspace_mmap(as, 3, 0x50000, 0x1000, 0x1000, RX, self_path, other_id, 20);
	addrspace_mmap(as, 3, 0x70000, 0x2000, 0, RX, "[vdso]", NULL, 0);
	a = addrspace_find(as, 1, 0x10000)->dso;
	b = addrspace_find(as, 2, 0x50000)->dso;
	c = addrspace_find(as, 3, 0x50000)->dso;
	vdso = addrspace_find(as, 3, 0x70000)->dso;
	CHECK(a == b);
	CHECK(a != c);
	CHECK_STREQ(a->path, self_path);
	CHECK_EQ_U64(a->flags, 0);
	CHECK_EQ_U64(c->build_id_len, 20);
	CHECK(!memcmp(c->build_id, other_id, 20));
	CHECK_STREQ(vdso->path, "[vdso]");
	CHECK_EQ_U64(vdso->flags, TR_DSO_VDSO);

	count = addrspaces_dso_count(as);
	CHECK_EQ_U64(count, 3);
	for (uint32_t id = 1; id <= count; id++)
		CHECK_EQ_U64(addrspaces_dso(as, id)->id, id);
	CHECK(!addrspaces_dso(as, 0));
	CHECK(!addrspaces_dso(as, count + 1));
	addrspaces_free(as);
}

struct note_search {
	const uint8_t *id;
	uint32_t len;
};

/* The build-id of the running executable, from its loaded notes. */
static int find_own_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct note_search *ns = arg;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_filesz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			size_t name = (nh->n_namesz + 3) & ~3u, desc = (nh->n_descsz + 3) & ~3u;

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4) {
				ns->id = p + sizeof(*nh) + name;
				ns->len = nh->n_descsz;
			}
			p += sizeof(*nh) + name + desc;
		}
	}
	return 1;	/* the executable comes first */
}

static void test_build_id_from_file(void)
{
	struct note_search own = { 0 };
	const struct dso_info *d;
	struct addrspaces *as;

	dl_iterate_phdr(find_own_build_id, &own);
	if (!own.len) {
		printf("  (the test binary has no build-id; skipped)\n");
		return;
	}
	CHECK(addrspaces_new(&as) == 0);
	addrspace_mmap(as, 1, 0x10000, 0x1000, 0x1000, RX, self_path, NULL, 0);
	d = addrspace_find(as, 1, 0x10000)->dso;
	CHECK_EQ_U64(d->build_id_len, own.len < 20 ? own.len : 20);
	CHECK(!memcmp(d->build_id, own.id, d->build_id_len));
	addrspaces_free(as);
}

struct bias_search {
	uintptr_t addr;
	uintptr_t bias;
	int found;
};

/* The load bias of the object whose segment holds addr. */
static int find_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct bias_search *bs = arg;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && bs->addr >= lo && bs->addr < lo + ph->p_memsz) {
			bs->bias = info->dlpi_addr;
			bs->found = 1;
			return 1;
		}
	}
	return 0;
}

static void check_elf_addr(const struct addrspaces *as, uintptr_t addr)
{
	struct bias_search bs = { .addr = addr };
	const struct map *m = addrspace_find(as, (uint32_t)getpid(), addr);

	dl_iterate_phdr(find_bias, &bs);
	CHECK(bs.found);
	CHECK(m);
	if (m && bs.found)
		CHECK_EQ_U64(map_to_elf_addr(m, addr), addr - bs.bias);
}

static void test_load_proc_and_elf_addr(void)
{
	uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	uint32_t pid = (uint32_t)getpid();
	struct addrspaces *as;
	const struct map *m;
	int on_stack;

	CHECK(addrspaces_new(&as) == 0);
	CHECK(addrspace_load_proc(as, pid) == 0);
	m = addrspace_find(as, pid, (uintptr_t)main);
	CHECK(m && (m->prot & PROT_EXEC));
	if (m)
		CHECK_STREQ(m->dso->path, self_path);
	CHECK(!addrspace_find(as, pid, (uintptr_t)&on_stack));

	check_elf_addr(as, (uintptr_t)main);
	check_elf_addr(as, (uintptr_t)test_mmap_splits_and_replaces);
	check_elf_addr(as, (uintptr_t)getpid);		/* in libc */
	check_elf_addr(as, (uintptr_t)dl_iterate_phdr);

	if (vdso) {
		m = addrspace_find(as, pid, vdso + 0x100);
		CHECK(m && (m->dso->flags & TR_DSO_VDSO));
		if (m) {
			const struct dso_elf *elf = dso_elf(m->dso);

			CHECK_EQ_U64(map_to_elf_addr(m, vdso + 0x100), 0x100);
			/* Our own image stands in, unwind tables and all. */
			CHECK(elf->image && elf->nr_loads && elf->eh_frame_hdr);
			CHECK(elf->image && !memcmp(elf->image, (const void *)vdso, elf->image_size));
			CHECK(m->dso->build_id_len > 0);
		}
	}
	/* Anonymous code keeps absolute addresses. */
	map_anon(as, pid, 0x10000, 0x20000, 0, RX);
	m = addrspace_find(as, pid, 0x10010);
	CHECK(m && map_to_elf_addr(m, 0x10010) == 0x10010);

	CHECK(addrspace_load_proc(as, 0) < 0);	/* no such process */
	addrspaces_free(as);
}

/* The own vdso image covers its section headers and every segment. */
static void test_own_vdso(void)
{
	const ElfW(Ehdr) *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Phdr) *ph;
	const void *image;
	size_t size = 0;

	image = addrspace_own_vdso(&size);
	if (!eh) {
		CHECK(image == NULL);
		return;
	}
	CHECK(image == (const void *)eh);
	CHECK(size >= eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize);
	ph = (const void *)((const char *)eh + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		CHECK(size >= ph[i].p_offset + ph[i].p_filesz);
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

	if (n <= 0) {
		printf("FAIL: cannot read /proc/self/exe\n");
		return 1;
	}
	self_path[n] = '\0';
	RUN(test_mmap_splits_and_replaces);
	RUN(test_fork_exec_exit);
	RUN(test_dso_registry);
	RUN(test_build_id_from_file);
	RUN(test_load_proc_and_elf_addr);
	RUN(test_own_vdso);
	return test_summary();
}
