/* SPDX-License-Identifier: MIT */
#include "unwind/addrspace.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/tables.h"
#include "unwind/unwind-internal.h"
#include "util/hashmap.h"
#include "util/sorted.h"
#include "util/untrusted.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* x86-64 maps segments in 4 KiB pages. */
#define PAGE_MASK_4K (~(uint64_t)4095)

/* The largest vdso image we are willing to copy; real ones are a few pages. */
#define VDSO_MAX_SIZE (1u << 20)

struct dso {
	struct dso_info info;	/* first: a dso_info pointer is its dso */
	struct dso_elf elf;
	VEC(struct dso_load) loads;	/* elf.loads */
	uint8_t *image;			/* elf.image, owned */
	/* The file as it was found, so a later mapping of it reuses this dso. */
	bool readable;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	uint32_t next_same_path;	/* next dso id whose path hashes alike */
};

struct proc {
	VEC(struct map) maps;	/* sorted by start, disjoint */
};

struct addrspaces {
	struct u64map procs;	/* pid -> struct proc *; 0 once it exited */
	uint64_t generation;	/* changes with any process's maps */
	VEC(struct dso *) dsos;	/* dsos.v[id - 1] */
	struct u64map files;	/* hash of path -> latest dso id with it */
	struct u64map anons;	/* pid -> id of its //anon dso */
	uint32_t vdso;		/* dso id, 0 until a vdso is mapped */
};

static const struct dso *dso_of(const struct dso_info *info)
{
	return (const struct dso *)info;
}

const struct dso_elf *dso_elf(const struct dso_info *dso)
{
	return &dso_of(dso)->elf;
}

const struct dso_load *dso_load_of_vaddr(const struct dso_elf *elf, uint64_t vaddr)
{
	for (size_t i = 0; i < elf->nr_loads; i++) {
		const struct dso_load *l = &elf->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz)
			return l;
	}
	return NULL;
}

/*
 * The segment a map's file offset belongs to. Segments are mapped in whole
 * pages, so two can share a file page (text and read-only data, or data
 * and RELRO); the map's protection picks between them.
 */
static const struct dso_load *load_of_offset(const struct dso_elf *elf,
					     uint64_t off, bool exec)
{
	const struct dso_load *any = NULL;

	for (size_t i = 0; i < elf->nr_loads; i++) {
		const struct dso_load *l = &elf->loads[i];

		if (off < (l->offset & PAGE_MASK_4K) || off >= l->offset + l->filesz)
			continue;
		if (!!(l->flags & PF_X) == exec)
			return l;
		if (!any)
			any = l;
	}
	return any;
}

uint64_t map_to_elf_addr(const struct map *m, uint64_t addr)
{
	const struct dso_load *l;
	uint64_t off;

	if (!m->dso || (m->dso->flags & TR_DSO_ANON))
		return addr;
	off = addr - m->start + m->pgoff;
	l = load_of_offset(dso_elf(m->dso), off, m->prot & PROT_EXEC);
	return l ? off - l->offset + l->vaddr : off;
}

static struct dso *dso_new(struct addrspaces *as, const char *path,
			   uint32_t flags, uint32_t pid)
{
	struct dso *d = xcalloc(1, sizeof(*d));

	d->info.id = (uint32_t)as->dsos.len + 1;
	d->info.path = xstrdup(path);
	d->info.flags = flags;
	d->info.pid = pid;
	*VEC_PUSH(&as->dsos) = d;
	return d;
}

static void dso_free(struct dso *d)
{
	free((char *)d->info.path);
	VEC_FREE(&d->loads);
	free(d->image);
	free(d);
}

static void read_build_id_note(struct dso *d, Elf *elf, const GElf_Phdr *ph)
{
	Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz,
					      ph->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data)
		return;
	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof("GNU") &&
		    !memcmp(name, "GNU", sizeof("GNU")) && nh.n_descsz) {
			d->info.build_id_len = nh.n_descsz < TR_BUILD_ID_MAX ?
					       nh.n_descsz : TR_BUILD_ID_MAX;
			memcpy(d->info.build_id, (const char *)data->d_buf + desc_off,
			       d->info.build_id_len);
			return;
		}
		off = next;
	}
}

/* The segments, .eh_frame_hdr and, unless the mapping gave it, the build-id. */
static void dso_read_elf(struct dso *d, Elf *elf)
{
	size_t phnum;

	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum))
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_LOAD) {
			struct dso_load *l = VEC_PUSH(&d->loads);

			l->vaddr = ph.p_vaddr;
			l->offset = ph.p_offset;
			l->filesz = ph.p_filesz;
			l->flags = ph.p_flags;
		} else if (ph.p_type == PT_GNU_EH_FRAME) {
			d->elf.eh_frame_hdr = ph.p_vaddr;
		} else if (ph.p_type == PT_NOTE && !d->info.build_id_len) {
			read_build_id_note(d, elf, &ph);
		}
	}
	d->elf.loads = d->loads.v;
	d->elf.nr_loads = d->loads.len;
}

static void dso_read_file(struct dso *d)
{
	int fd = untrusted_open(d->info.path, &untrusted_mapped_file, NULL);
	Elf *elf;

	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		dso_read_elf(d, elf);
		elf_end(elf);
	}
	close(fd);
}

const void *addrspace_own_vdso(size_t *size)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	uint64_t end;

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	/* The section headers end the image; the segments are within it. */
	end = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	ph = (const Elf64_Phdr *)((const uint8_t *)eh + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	if (end > VDSO_MAX_SIZE)
		return NULL;
	*size = (size_t)end;
	return eh;
}

/* The recorder's own vdso gives the target's vdso layout and unwind tables. */
static void dso_read_own_vdso(struct dso *d)
{
	size_t size;
	const void *image = addrspace_own_vdso(&size);
	Elf *elf;

	if (!image)
		return;
	d->image = xmalloc(size);
	memcpy(d->image, image, size);
	elf = elf_memory((char *)d->image, size);
	if (elf) {
		dso_read_elf(d, elf);
		elf_end(elf);
	}
	d->elf.image = d->image;
	d->elf.image_size = size;
}

/* The registry's key for a path: its hash, kept off the map's reserved key. */
static uint64_t path_key(const char *path)
{
	uint64_t h = hash_bytes(path, strlen(path));

	return h == U64MAP_EMPTY ? 0 : h;
}

static bool same_file(const struct dso *d, bool readable, const struct stat *st)
{
	if (!readable || !d->readable)
		return readable == d->readable;
	return d->dev == st->st_dev && d->ino == st->st_ino &&
	       d->mtime.tv_sec == st->st_mtim.tv_sec &&
	       d->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/*
 * One dso per (path, build-id). A mapping without a build-id reuses the dso
 * of the same unchanged file (by inode and mtime) instead of reading it again.
 */
static struct dso *file_dso(struct addrspaces *as, const char *path,
			    const uint8_t *build_id, uint32_t build_id_len)
{
	uint64_t key = path_key(path), id = 0;
	struct stat st = { 0 };
	/* What dso_read_file would open: not through a symbolic link. */
	bool readable = !lstat(path, &st) && S_ISREG(st.st_mode);
	struct dso *d;

	if (build_id_len > TR_BUILD_ID_MAX)
		build_id_len = TR_BUILD_ID_MAX;
	for (u64map_get(&as->files, key, &id); id; id = d->next_same_path) {
		d = as->dsos.v[id - 1];
		if (strcmp(d->info.path, path))
			continue;
		if (build_id_len ? d->info.build_id_len == build_id_len &&
				   !memcmp(d->info.build_id, build_id, build_id_len)
				 : same_file(d, readable, &st))
			return d;
	}
	d = dso_new(as, path, 0, 0);
	if (build_id_len)
		memcpy(d->info.build_id, build_id, build_id_len);
	d->info.build_id_len = build_id_len;
	d->readable = readable;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->mtime = st.st_mtim;
	dso_read_file(d);
	id = 0;
	u64map_get(&as->files, key, &id);
	d->next_same_path = (uint32_t)id;
	u64map_put(&as->files, key, d->info.id);
	return d;
}

/*
 * The user a process runs as, whose JIT map is its own: the owner of
 * /proc/PID (root for a process that is not dumpable); 0 once it is gone.
 */
static uint32_t process_uid(uint32_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%" PRIu32, pid);
	return stat(path, &st) ? 0 : (uint32_t)st.st_uid;
}

static struct dso *anon_dso(struct addrspaces *as, uint32_t pid)
{
	uint64_t id;
	struct dso *d;

	if (u64map_get(&as->anons, pid, &id))
		return as->dsos.v[id - 1];
	d = dso_new(as, "//anon", TR_DSO_ANON, pid);
	d->info.uid = process_uid(pid);
	u64map_put(&as->anons, pid, d->info.id);
	return d;
}

static struct dso *vdso_dso(struct addrspaces *as)
{
	struct dso *d;

	if (as->vdso)
		return as->dsos.v[as->vdso - 1];
	d = dso_new(as, "[vdso]", TR_DSO_VDSO, 0);
	dso_read_own_vdso(d);
	as->vdso = d->info.id;
	return d;
}

/*
 * "[heap]", "[stack]", "//anon", "" and memfd (JIT double mappings) hold
 * code only the process knows: addresses stay absolute.
 */
static bool is_file_path(const char *path)
{
	return path[0] == '/' && strcmp(path, "//anon") &&
	       strncmp(path, "/memfd:", strlen("/memfd:"));
}

static struct proc *proc_get(const struct addrspaces *as, uint32_t pid)
{
	uint64_t p;

	if (!u64map_get(&as->procs, pid, &p))
		return NULL;
	return (struct proc *)(uintptr_t)p;
}

static struct proc *proc_get_or_new(struct addrspaces *as, uint32_t pid)
{
	struct proc *p = proc_get(as, pid);

	if (!p) {
		p = xcalloc(1, sizeof(*p));
		u64map_put(&as->procs, pid, (uintptr_t)p);
	}
	return p;
}

static void proc_free(struct proc *p)
{
	VEC_FREE(&p->maps);
	free(p);
}

/* Index of the first map that ends after addr. */
static size_t first_ending_after(const struct proc *p, uint64_t addr)
{
	return sorted_at_or_below(p->maps.v, p->maps.len, sizeof(*p->maps.v),
				  offsetof(struct map, end), addr);
}

/*
 * Puts m (or, when NULL, nothing) in place of [start, end), trimming or
 * splitting the maps it overlaps.
 */
static void maps_replace(struct proc *p, uint64_t start, uint64_t end,
			 const struct map *m)
{
	size_t lo = first_ending_after(p, start), hi = lo, n = 0;
	struct map pieces[3];

	while (hi < p->maps.len && p->maps.v[hi].start < end)
		hi++;
	if (lo < hi && p->maps.v[lo].start < start) {
		pieces[n] = p->maps.v[lo];
		pieces[n++].end = start;
	}
	if (m)
		pieces[n++] = *m;
	if (lo < hi && p->maps.v[hi - 1].end > end) {
		struct map *tail = &pieces[n++];

		*tail = p->maps.v[hi - 1];
		tail->pgoff += end - tail->start;
		tail->start = end;
	}
	if (!n && lo == hi)
		return;
	if (n > hi - lo)
		VEC_RESERVE(&p->maps, n - (hi - lo));
	memmove(&p->maps.v[lo + n], &p->maps.v[hi],
		(p->maps.len - hi) * sizeof(*p->maps.v));
	memcpy(&p->maps.v[lo], pieces, n * sizeof(*pieces));
	p->maps.len = p->maps.len - (hi - lo) + n;
}

int addrspaces_new(struct addrspaces **as)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	*as = xcalloc(1, sizeof(**as));
	return 0;
}

void addrspaces_free(struct addrspaces *as)
{
	uint64_t proc;

	if (!as)
		return;
	for (size_t pos = 0; u64map_next(&as->procs, &pos, NULL, &proc);)
		if (proc)
			proc_free((struct proc *)(uintptr_t)proc);
	for (size_t i = 0; i < as->dsos.len; i++)
		dso_free(as->dsos.v[i]);
	VEC_FREE(&as->dsos);
	u64map_free(&as->procs);
	u64map_free(&as->files);
	u64map_free(&as->anons);
	free(as);
}

void addrspace_fork(struct addrspaces *as, uint32_t pid, uint32_t ppid)
{
	struct proc *parent, *child;

	if (pid == ppid)	/* a new thread shares its process's maps */
		return;
	as->generation++;
	parent = ppid ? proc_get(as, ppid) : NULL;
	child = proc_get_or_new(as, pid);
	child->maps.len = 0;
	if (!parent)
		return;
	VEC_RESERVE(&child->maps, parent->maps.len);
	for (size_t i = 0; i < parent->maps.len; i++) {
		struct map *m = &child->maps.v[child->maps.len++];

		*m = parent->maps.v[i];
		if (m->dso && (m->dso->flags & TR_DSO_ANON))
			m->dso = &anon_dso(as, pid)->info;
	}
}

void addrspace_exec(struct addrspaces *as, uint32_t pid)
{
	struct proc *p = proc_get(as, pid);
	uint64_t anon;

	as->generation++;
	if (p)
		p->maps.len = 0;
	/* A set-user-ID program runs as another user. */
	if (u64map_get(&as->anons, pid, &anon))
		as->dsos.v[anon - 1]->info.uid = process_uid(pid);
}

void addrspace_exit(struct addrspaces *as, uint32_t pid)
{
	struct proc *p = proc_get(as, pid);

	as->generation++;
	if (p) {
		proc_free(p);
		u64map_put(&as->procs, pid, 0);
	}
}

void addrspace_mmap(struct addrspaces *as, uint32_t pid, uint64_t start,
		    uint64_t len, uint64_t pgoff, uint32_t prot,
		    const char *path, const uint8_t *build_id, uint32_t build_id_len)
{
	struct proc *p;
	struct map m = { .start = start, .end = start + len, .pgoff = pgoff, .prot = prot };
	bool file = is_file_path(path);

	if (!len || m.end < start)
		return;
	as->generation++;
	p = proc_get_or_new(as, pid);
	/*
	 * Unwinding and symbols need code and the read-only parts of files
	 * (.eh_frame); any other mapping only takes away what it covers.
	 */
	if (!(prot & PROT_EXEC) && !(file && !(prot & PROT_WRITE))) {
		maps_replace(p, m.start, m.end, NULL);
		return;
	}
	if (!strcmp(path, "[vdso]"))
		m.dso = &vdso_dso(as)->info;
	else if (file)
		m.dso = &file_dso(as, path, build_id, build_id_len)->info;
	else
		m.dso = &anon_dso(as, pid)->info;
	maps_replace(p, m.start, m.end, &m);
}

static uint32_t prot_of_perms(const char *perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) |
	       (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

int addrspace_load_proc(struct addrspaces *as, uint32_t pid)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	addrspace_exec(as, pid);
	while ((len = getline(&line, &cap, f)) > 0) {
		uint64_t start, end, pgoff;
		char perms[5];
		int name_at = 0;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*x:%*x %*u %n",
			   &start, &end, perms, &pgoff, &name_at) < 4 || !name_at ||
		    end <= start)
			continue;
		addrspace_mmap(as, pid, start, end - start, pgoff, prot_of_perms(perms),
			       line + name_at, NULL, 0);
	}
	if (ferror(f))
		err = -EIO;
	free(line);
	fclose(f);
	return err;
}

const struct map *addrspace_find(const struct addrspaces *as, uint32_t pid, uint64_t addr)
{
	const struct proc *p = proc_get(as, pid);
	size_t i;

	if (!p)
		return NULL;
	i = first_ending_after(p, addr);
	if (i < p->maps.len && p->maps.v[i].start <= addr)
		return &p->maps.v[i];
	return NULL;
}

uint64_t addrspaces_generation(const struct addrspaces *as)
{
	return as->generation;
}

void addrspace_neighbours(const struct addrspaces *as, uint32_t pid, uint64_t addr,
			  const struct map **below, const struct map **above)
{
	const struct proc *p = proc_get(as, pid);
	size_t i;

	*below = *above = NULL;
	if (!p)
		return;
	i = first_ending_after(p, addr);
	if (i > 0)
		*below = &p->maps.v[i - 1];
	if (i < p->maps.len)
		*above = &p->maps.v[i];
}

uint32_t addrspaces_dso_count(const struct addrspaces *as)
{
	return (uint32_t)as->dsos.len;
}

uint32_t addrspaces_add_dso(struct addrspaces *as, const char *path, uint32_t flags)
{
	return dso_new(as, path, flags, 0)->info.id;
}

const struct dso_info *addrspaces_dso(const struct addrspaces *as, uint32_t id)
{
	return id && id <= as->dsos.len ? &as->dsos.v[id - 1]->info : NULL;
}
