/* SPDX-License-Identifier: MIT */
#include "symbols/symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/tables.h"
#include "symbols/debugcache.h"
#include "symbols/demangle.h"
#include "symbols/rust-demangle.h"
#include "symbols/jitmap.h"
#include "contract/symbols.h"
#include "symbols/kallsyms.h"
#include "symbols/symindex.h"
#include "util/cachedir.h"
#include "util/eh-hdr.h"
#include "util/hashmap.h"
#include "util/untrusted.h"
#include "util/vec.h"
#include "util/xalloc.h"

/*
 * One ELF file read for naming: a Dwfl holding a single module placed at
 * bias 0, its symbol index and its DWARF (libdw inflates compressed
 * sections once, when the DWARF is first asked, and keeps them). One for
 * every build-id, however many paths and processes map it (file_of).
 */
struct sym_file {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	bool no_dwarf;		/* its DWARF names another file: symbols only */
	bool hdr_read;
	struct eh_hdr hdr;	/* its .eh_frame_hdr's table of unwind entries */
	uint64_t hdr_vaddr;
	struct sym_index symbols;	/* built at the first name it is asked */
};

/* A dso as recorded (path and build-id): the file that names it, or why none does. */
struct sym_dso {
	struct sym_file *file;
	int err;		/* negative errno when the file cannot be used */
};

struct symbolizer {
	struct strtab strs;		/* every string handed out */
	struct strtab dso_keys;		/* path + build-id; id - 1 indexes dsos */
	VEC(struct sym_dso) dsos;
	VEC(struct sym_file *) files;	/* every file read, once each */
	struct strtab file_keys;	/* build-id + size; id - 1 indexes by_build_id */
	VEC(struct sym_file *) by_build_id;
	struct u64map jit_index;	/* pid -> index into jits and jit_errs */
	VEC(struct jitmap) jits;
	VEC(int) jit_errs;		/* what loading each map gave */
	uint64_t jit_maps_cut;
	struct cachedir cache;		/* opened at the first file read */
	bool cache_opened;
	struct kallsyms kernel;		/* read at the first kernel address */
	int kernel_err;			/* 1 before then; what reading it gave */
	struct demangler demangler;
};

/*
 * Separate debuginfo is found the way distributions install it: by build-id
 * under /usr/lib/debug/.build-id, root's. Not by .gnu_debuglink, whose
 * search opens a name the file chose in the file's own directory with a
 * plain open(2), which a FIFO there holds for ever.
 */
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = debugcache_find,
	.section_address = dwfl_offline_section_address,
};

int symbolizer_new(struct symbolizer **s)
{
	*s = xcalloc(1, sizeof(**s));
	(*s)->kernel_err = 1;
	(*s)->cache.fd = -1;
	return 0;
}

static const struct cachedir *sym_cache(struct symbolizer *s)
{
	if (!s->cache_opened)
		cachedir_open(&s->cache);
	s->cache_opened = true;
	return &s->cache;
}

static void file_free(struct sym_file *f)
{
	if (f->dwfl)
		dwfl_end(f->dwfl);
	sym_index_free(&f->symbols);
	free(f);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->files.len; i++)
		file_free(s->files.v[i]);
	VEC_FREE(&s->files);
	VEC_FREE(&s->by_build_id);
	strtab_free(&s->file_keys);
	VEC_FREE(&s->dsos);
	for (size_t i = 0; i < s->jits.len; i++)
		jitmap_free(&s->jits.v[i]);
	VEC_FREE(&s->jits);
	VEC_FREE(&s->jit_errs);
	kallsyms_free(&s->kernel);
	cachedir_close(&s->cache);
	u64map_free(&s->jit_index);
	strtab_free(&s->dso_keys);
	strtab_free(&s->strs);
	demangler_free(&s->demangler);
	free(s);
}

static const char *intern(struct symbolizer *s, const char *str)
{
	return str ? strtab_get(&s->strs, strtab_intern(&s->strs, str)) : NULL;
}

static const char *intern_func(struct symbolizer *s, const char *raw)
{
	char *plain;
	const char *name;

	if (!raw)
		return NULL;
	plain = demangle(&s->demangler, raw);
	if (!plain)
		return intern(s, raw);
	name = intern(s, plain);
	free(plain);
	return name;
}

/*
 * The vdso is not a file: copy this process's image (the same kernel made
 * the recorded processes' one) into a memfd that libdwfl can read.
 */
static int vdso_fd(void)
{
	size_t size;
	const void *image = addrspace_own_vdso(&size);
	int fd;

	if (!image)
		return -ENOENT;
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, image, size) != (ssize_t)size) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* Whether a file whose build-id is bits (len <= 0: none) is not the recorded dso's. */
static bool build_id_differs(const void *bits, ssize_t len, const struct dso_info *dso)
{
	/* Recorded with one, the file has none: another file. */
	if (!dso->build_id_len)
		return false;
	if (len <= 0)
		return true;
	return (uint32_t)len != dso->build_id_len ||
	       memcmp(bits, dso->build_id, dso->build_id_len);
}

static bool has_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t names;
	GElf_Shdr sh;

	if (!elf || elf_getshdrstrndx(elf, &names))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *it = gelf_getshdr(scn, &sh) ? elf_strptr(elf, names, sh.sh_name) : NULL;

		if (it && !strcmp(it, name))
			return true;
	}
	return false;
}

/*
 * Whether the DWARF of mod may be read. DWARF in the mapped file itself,
 * which its owner wrote, may keep its strings in a supplementary file that
 * .gnu_debugaltlink names (as dwz makes them), and libdw opens that name
 * with a plain open(2), which a FIFO holds for ever. Separate debuginfo
 * comes from /usr/lib/debug, root's.
 */
static bool dwarf_usable(Dwfl_Module *mod)
{
	const char *main_file, *debug_file;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);

	if (!dw)
		return true;	/* nothing to read: the symbol table names */
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug_file);
	if (debug_file && main_file && strcmp(debug_file, main_file))
		return true;
	return !has_section(dwarf_getelf(dw), ".gnu_debugaltlink");
}

/* Reads the file fd (which it takes) as dso's; 0, or a negative errno and f not usable. */
static int read_file(struct symbolizer *s, struct sym_file *f, int fd,
		     const struct dso_info *dso)
{
	bool vdso = dso->flags & TR_DSO_VDSO;
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	void **userdata;
	int len;

	f->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!f->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	/*
	 * Files are placed so that module addresses are ELF addresses; the
	 * vdso's addresses are offsets from its start instead.
	 */
	f->mod = dwfl_report_elf(f->dwfl, dso->path, dso->path, fd, 0, !vdso);
	if (!f->mod) {
		close(fd);	/* the Dwfl owns fd only once reported */
		return -ENOEXEC;
	}
	dwfl_report_end(f->dwfl, NULL, NULL);
	/* What debugcache_find is given. */
	dwfl_module_info(f->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = (void *)sym_cache(s);
	len = dwfl_module_build_id(f->mod, &bits, &vaddr);
	if (build_id_differs(bits, len, dso))
		return -ESTALE;
	f->no_dwarf = !dwarf_usable(f->mod);
	return 0;
}

/*
 * Whether the file fd carries dso's build-id: 0, -ESTALE, or -ENOEXEC for
 * no ELF. Only its notes are read. (libelf was set up by dwfl_begin.)
 */
static int check_build_id(int fd, const struct dso_info *dso)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits = NULL;
	ssize_t len;
	int err = -ENOEXEC;

	if (elf && elf_kind(elf) == ELF_K_ELF) {
		len = dwelf_elf_gnu_build_id(elf, &bits);
		err = build_id_differs(bits, len, dso) ? -ESTALE : 0;
	}
	elf_end(elf);
	return err;
}

/* The hex digits of dso's build-id at out (2 * TR_BUILD_ID_MAX + 1 bytes); returns its end. */
static char *build_id_hex(const struct dso_info *dso, char *out)
{
	uint32_t n = dso->build_id_len;

	if (n > sizeof(dso->build_id))
		n = sizeof(dso->build_id);
	for (uint32_t i = 0; i < n; i++)
		out += sprintf(out, "%02x", dso->build_id[i]);
	*out = '\0';
	return out;
}

/*
 * The file that names dso, read once per build-id: another path (a copy, a
 * hard link, another mount) or another process with the same build-id
 * shares what the first one read, once its own file was opened under the
 * same rules and found to carry that build-id. The size must match too, so
 * that a stripped copy and the unstripped file, which share a build-id but
 * not their symbols, stay apart. Without a build-id nothing tells two files
 * alike: each path is read. The vdso, placed differently, is its own.
 */
static int file_of(struct symbolizer *s, const struct dso_info *dso, struct sym_file **file)
{
	bool vdso = dso->flags & TR_DSO_VDSO;
	bool shared = !vdso && dso->build_id_len;
	char key[2 * sizeof(dso->build_id) + 24];
	struct sym_file *f;
	struct stat st;
	uint32_t id = 0;
	int fd = vdso ? vdso_fd() : untrusted_open(dso->path, &untrusted_mapped_file, &st);
	int err;

	if (fd < 0)
		return fd;
	if (shared) {
		sprintf(build_id_hex(dso, key), " %jd", (intmax_t)st.st_size);
		id = strtab_find(&s->file_keys, key);
	}
	if (id) {
		err = check_build_id(fd, dso);
		close(fd);
		if (!err)
			*file = s->by_build_id.v[id - 1];
		return err;
	}
	f = xcalloc(1, sizeof(*f));
	err = read_file(s, f, fd, dso);
	if (err) {
		file_free(f);
		return err;
	}
	*VEC_PUSH(&s->files) = f;
	if (shared) {
		strtab_intern(&s->file_keys, key);
		*VEC_PUSH(&s->by_build_id) = f;
	}
	*file = f;
	return 0;
}

static struct sym_dso *lookup_dso(struct symbolizer *s,
				  const struct dso_info *dso)
{
	size_t path_len = strlen(dso->path);
	char *key = xmalloc(path_len + 2 + 2 * sizeof(dso->build_id));
	uint32_t id;
	struct sym_dso *d;

	/* The same path may be two files over a recording: key by build-id too. */
	memcpy(key, dso->path, path_len);
	key[path_len] = '\n';
	build_id_hex(dso, key + path_len + 1);
	id = strtab_intern(&s->dso_keys, key);
	free(key);
	if (id <= s->dsos.len)
		return &s->dsos.v[id - 1];
	d = VEC_PUSH(&s->dsos);
	d->file = NULL;
	d->err = file_of(s, dso, &d->file);
	return d;
}

static void src_at(struct symbolizer *s, Dwfl_Module *mod, uint64_t addr,
		   struct sym_frame *f)
{
	Dwfl_Line *src = dwfl_module_getsrc(mod, addr);
	int line = 0;

	f->file = src ? intern(s, dwfl_lineinfo(src, NULL, &line, NULL,
						NULL, NULL)) : NULL;
	f->line = f->file && line > 0 ? (uint32_t)line : 0;
}

static const char *symtab_name(struct sym_file *file, uint64_t addr)
{
	if (!file->symbols.usable)
		sym_index_build(&file->symbols, file->mod);
	return sym_index_name(&file->symbols, file->mod, addr);
}

static const char *die_string(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

/*
 * C++ linkage names demangle to qualified names with parameters, Rust ones
 * (legacy _ZN, v0 _R) to paths with generics; other linkage names are
 * assembler labels (glibc's __GI_ aliases), so C keeps the plain name.
 */
static const char *die_name(Dwarf_Die *die)
{
	const char *linkage = die_string(die, DW_AT_linkage_name);
	const char *name;

	if (!linkage)
		linkage = die_string(die, DW_AT_MIPS_linkage_name);
	if (linkage && (!strncmp(linkage, "_Z", 2) || rust_mangled(linkage)))
		return linkage;
	name = die_string(die, DW_AT_name);
	return name ? name : linkage;
}

/* Where an inlined subroutine was called from, in the function around it. */
static void call_site(struct symbolizer *s, Dwarf_Die *inlined,
		      Dwarf_Files *files, struct sym_frame *f)
{
	Dwarf_Attribute attr;
	Dwarf_Word val;

	f->file = NULL;
	f->line = 0;
	if (files && !dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file,
						  &attr), &val))
		f->file = intern(s, dwarf_filesrc(files, val, NULL, NULL));
	if (f->file && !dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line,
						    &attr), &val))
		f->line = (uint32_t)val;
}

/* Deeper nesting than this is cut off at its outer levels' side. */
#define SCOPE_DEPTH_MAX 64

/*
 * Appends to chain the functions and inlined calls under parent that contain
 * pc, outermost first, and returns the new depth. This walks the physical
 * nesting itself: dwarf_getscopes follows abstract origins, which LTO places
 * in other units, and then finds nothing.
 */
static int function_scopes(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *chain,
			   int depth)
{
	Dwarf_Die child;
	int inner;

	if (depth == SCOPE_DEPTH_MAX || dwarf_child(parent, &child))
		return depth;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
			if (dwarf_haspc(&child, pc) != 1)
				break;
			chain[depth] = child;
			return function_scopes(&child, pc, chain, depth + 1);
		case DW_TAG_lexical_block:
			if (dwarf_haspc(&child, pc) != 1)
				break;
			return function_scopes(&child, pc, chain, depth);
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			/* No pc ranges of their own, but may hold functions. */
			inner = function_scopes(&child, pc, chain, depth);
			if (inner > depth)
				return inner;
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return depth;
}

/*
 * The function at addr and the functions inlined into it there, innermost
 * first. Each frame's file:line is where the frame inside it was called
 * (for the innermost, the line of addr itself).
 */
static int dwarf_frames(struct symbolizer *s, struct sym_file *file, uint64_t addr,
			struct sym_frame *frames, int max)
{
	Dwfl_Module *mod = file->mod;
	Dwarf_Die chain[SCOPE_DEPTH_MAX];
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
	Dwarf_Files *files;
	struct sym_frame where;
	int depth, n = 0;

	if (!cu)
		return 0;
	depth = function_scopes(cu, addr - bias, chain, 0);
	if (dwarf_getsrcfiles(cu, &files, NULL))
		files = NULL;
	src_at(s, mod, addr, &where);
	for (int i = depth - 1; i >= 0 && n < max; i--) {
		int tag = dwarf_tag(&chain[i]);
		const char *name = die_name(&chain[i]);

		if (!name && tag == DW_TAG_subprogram)
			name = symtab_name(file, addr);
		if (name) {
			frames[n] = where;
			frames[n].func = intern_func(s, name);
			frames[n].inlined = tag == DW_TAG_inlined_subroutine;
			n++;
		}
		if (tag == DW_TAG_subprogram)
			break;
		call_site(s, &chain[i], files, &where);
	}
	return n;
}

/* Without DWARF functions: the ELF symbol, and file:line if lines may be read. */
static int symtab_frame(struct symbolizer *s, struct sym_file *file, uint64_t addr,
			struct sym_frame *f)
{
	const char *name = symtab_name(file, addr);

	if (!name)
		return 0;
	f->file = NULL;
	f->line = 0;
	if (!file->no_dwarf)
		src_at(s, file->mod, addr, f);
	f->func = intern_func(s, name);
	f->inlined = 0;
	return 1;
}

/* The table of .eh_frame_hdr (PT_GNU_EH_FRAME), where the unwind entries start. */
static void read_hdr(struct sym_file *file)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(file->mod, &bias);
	size_t nphdr;
	GElf_Phdr ph;

	file->hdr_read = true;
	if (!elf || elf_getphdrnum(elf, &nphdr))
		return;
	for (size_t i = 0; i < nphdr; i++) {
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME ||
		    !(data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE)))
			continue;
		if (!eh_hdr_read(data->d_buf, data->d_size, &file->hdr))
			file->hdr_vaddr = ph.p_vaddr;
		return;
	}
}

/*
 * Stripped code: the function whose unwind entry covers addr, named after
 * its dso and its first address ("libcuda.so.1@0x4585a0"), so that the
 * samples of one function are one row, not one row per address.
 */
static int fde_frame(struct symbolizer *s, const struct dso_info *dso, struct sym_file *file,
		     uint64_t addr, struct sym_frame *f)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(file->mod, &bias);
	const char *base = strrchr(dso->path, '/');
	int32_t start, fde;
	Dwarf_Frame *frame;
	char name[256];

	/* An entry covers addr; the table's last start at or below it is that entry's. */
	if (!cfi || dwarf_cfi_addrframe(cfi, addr - bias, &frame))
		return 0;
	free(frame);
	if (!file->hdr_read)
		read_hdr(file);
	if (!eh_hdr_find(&file->hdr, (int64_t)(addr - file->hdr_vaddr), &start, &fde))
		return 0;
	snprintf(name, sizeof(name), "%s" SYMBOL_UNWIND_ENTRY_MARK "%" PRIx64, base ? base + 1 : dso->path,
		 file->hdr_vaddr + (uint64_t)(int64_t)start);
	f->func = intern(s, name);
	f->file = NULL;
	f->line = 0;
	f->inlined = 0;
	return 1;
}

static int symbolize_jit(struct symbolizer *s, const struct dso_info *dso, uint64_t addr,
			 struct sym_frame *f)
{
	uint64_t index;
	uint32_t name;

	if (!u64map_get(&s->jit_index, dso->pid, &index)) {
		char path[64];
		int err;

		index = s->jits.len;
		u64map_put(&s->jit_index, dso->pid, index);
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", dso->pid);
		err = jitmap_load(VEC_PUSH(&s->jits), path, (uid_t)dso->uid, &s->strs);
		s->jit_maps_cut += err == 1;
		/* Most anonymous memory has no map: a missing one is normal. */
		*VEC_PUSH(&s->jit_errs) = err == -EPERM ? err : 0;
	}
	if (s->jit_errs.v[index])
		return s->jit_errs.v[index];
	name = jitmap_find(&s->jits.v[index], addr);
	if (!name)
		return 0;
	f->func = intern_func(s, strtab_get(&s->strs, name));
	f->file = NULL;
	f->line = 0;
	f->inlined = 0;
	return 1;
}

uint64_t symbolizer_jit_maps_cut(const struct symbolizer *s)
{
	return s->jit_maps_cut;
}

/* A kernel address by /proc/kallsyms, read once: the function only. */
static int symbolize_kernel(struct symbolizer *s, uint64_t addr, struct sym_frame *f)
{
	const char *name;

	if (s->kernel_err == 1)
		s->kernel_err = kallsyms_load_cached(&s->kernel, sym_cache(s));
	if (s->kernel_err)
		return s->kernel_err;
	name = kallsyms_find(&s->kernel, addr);
	if (!name)
		return 0;
	*f = (struct sym_frame){ .func = name };
	return 1;
}

bool symbolizer_kernel_hidden(const struct symbolizer *s)
{
	return !s->kernel_err && kallsyms_hidden(&s->kernel);
}

int symbolize(struct symbolizer *s, const struct dso_info *dso, uint64_t addr,
	      struct sym_frame *frames, int max)
{
	struct sym_file *file;
	struct sym_dso *d;
	int n;

	if (max < 1)
		return -EINVAL;
	if (dso->flags & TR_DSO_ANON)
		return symbolize_jit(s, dso, addr, frames);
	if (dso->flags & TR_DSO_KERNEL)
		return symbolize_kernel(s, addr, frames);
	d = lookup_dso(s, dso);
	if (d->err)
		return d->err;
	file = d->file;
	n = file->no_dwarf ? 0 : dwarf_frames(s, file, addr, frames, max);
	if (!n)
		n = symtab_frame(s, file, addr, frames);
	return n ? n : fde_frame(s, dso, file, addr, frames);
}

/* The bytes at [start, start + size) of an executable section of elf, cut at its end. */
static bool section_bytes(Elf *elf, uint64_t start, uint64_t size, struct sym_code *code)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || start < sh.sh_addr ||
		    start - sh.sh_addr >= sh.sh_size)
			continue;
		data = elf_getdata(scn, NULL);
		/* One data block of the section's size: anything else is not the file's code. */
		if (!data || !data->d_buf || data->d_size != sh.sh_size)
			return false;
		code->bytes = (const uint8_t *)data->d_buf + (start - sh.sh_addr);
		code->len = size < sh.sh_size - (start - sh.sh_addr) ? size :
			    sh.sh_size - (start - sh.sh_addr);
		return true;
	}
	return false;
}

int symbolizer_code(struct symbolizer *s, const struct dso_info *dso, uint64_t addr,
		    struct sym_code *code)
{
	struct sym_extent ext;
	struct sym_file *file;
	struct sym_dso *d;
	GElf_Addr bias;
	GElf_Ehdr eh;
	Elf *elf;

	if (dso->flags & (TR_DSO_ANON | TR_DSO_KERNEL | TR_DSO_VDSO | TR_DSO_PYTHON))
		return 0;
	d = lookup_dso(s, dso);
	if (d->err)
		return d->err;
	file = d->file;
	if (!file->symbols.usable)
		sym_index_build(&file->symbols, file->mod);
	if (!sym_index_lookup(&file->symbols, file->mod, addr, &ext) || !ext.size ||
	    !(elf = dwfl_module_getelf(file->mod, &bias)) || !gelf_getehdr(elf, &eh))
		return 0;
	code->machine = eh.e_machine;
	code->start = ext.start;
	code->size = ext.size;
	return section_bytes(elf, ext.start - bias, ext.size, code);
}

uint64_t symbolizer_files_read(const struct symbolizer *s)
{
	return s->files.len;
}
