/* SPDX-License-Identifier: MIT */
#include "symbols/cubin.h"

#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"
#include "util/vec.h"
#include "util/xalloc.h"

/*
 * nvcc writes one line program sequence per function, each starting at
 * address 0: its addresses are offsets in the function's own .text.<name>
 * section, and only the relocation of the sequence's DW_LNE_set_address
 * says which section that is. libdw applies no relocations (it has no CUDA
 * backend) and reaches line tables only through the compilation units of
 * .debug_info, which -lineinfo does not write, so the line program is
 * decoded here.
 */

struct cubin_fn {
	size_t scn;		/* its text section */
	uint64_t start, size;	/* its bytes in that section */
};

struct cubin_row {
	size_t scn;		/* the text section of the address */
	uint64_t addr;
	uint32_t file;		/* id in files; 0 with line 0 when unknown */
	uint32_t line;
	bool end;		/* the first address after a sequence */
	size_t order;		/* in the line program: the later row wins */
};

struct cubin {
	struct strtab names;	/* function names: id - 1 indexes fns */
	VEC(struct cubin_fn) fns;
	struct strtab files;
	VEC(struct cubin_row) rows;	/* by section, address, end first, order */
	uint64_t *room;		/* while parsing: what it may still take */
	bool too_big;		/* parsing ran out of room */
};

/* What the allocator adds to each string kept, in bytes. */
#define STRING_OVERHEAD 32

/*
 * Counts bytes that the parse is about to keep or build, or stops it: a
 * line table a few bytes long per row, or many file names joined each to
 * a long directory, would otherwise cost many times the image's size.
 */
static bool grow(struct cubin *c, uint64_t bytes)
{
	if (c->too_big || bytes > *c->room) {
		c->too_big = true;
		return false;
	}
	*c->room -= bytes;
	return true;
}

/* A relocation of .debug_line: what the address at offset refers to. */
struct line_reloc {
	uint64_t offset;
	size_t scn;		/* the section of its symbol */
	uint64_t value;		/* symbol value plus addend */
	bool in_place;		/* SHT_REL: the addend is the address there */
};

typedef VEC(struct line_reloc) reloc_vec;

/* Bytes of a section; a read past their end marks them bad and gives 0. */
struct reader {
	const unsigned char *p, *end;
	bool bad;
};

static void overrun(struct reader *r)
{
	r->bad = true;
	r->p = r->end;
}

static uint64_t read_fixed(struct reader *r, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		overrun(r);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t read_uleb(struct reader *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; r->p < r->end; shift += 7) {
		unsigned char b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	overrun(r);
	return 0;
}

static uint64_t read_sleb(struct reader *r)
{
	uint64_t v = 0;

	for (unsigned shift = 0; r->p < r->end;) {
		unsigned char b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if ((b & 0x40) && shift < 64)
				v |= ~(uint64_t)0 << shift;
			return v;	/* two's complement: add it unsigned */
		}
	}
	overrun(r);
	return 0;
}

static const char *read_str(struct reader *r)
{
	const unsigned char *nul = memchr(r->p, '\0', (size_t)(r->end - r->p));
	const char *s = (const char *)r->p;

	if (!nul) {
		overrun(r);
		return "";
	}
	r->p = nul + 1;
	return s;
}

/* The next n bytes of r, as a reader of their own; r skips them. */
static struct reader sub_reader(struct reader *r, uint64_t n)
{
	struct reader sub = { r->p, r->p, false };

	if ((uint64_t)(r->end - r->p) < n) {
		overrun(r);
		sub.bad = true;
		return sub;
	}
	sub.end = r->p + n;
	r->p += n;
	return sub;
}

/* One line program: its header and the files it names. */
struct unit {
	unsigned min_insn, max_ops, line_range, opcode_base;
	int line_base;
	const unsigned char *arg_counts;	/* of opcodes 1 to opcode_base - 1 */
	VEC(const char *) dirs;
	VEC(uint32_t) files;	/* file i + 1 as an id in the cubin's files */
};

/* A file entry of the header or of DW_LNE_define_file. */
static void add_file(struct cubin *c, struct unit *u, struct reader *r,
		     const char *name)
{
	uint64_t dir = read_uleb(r);
	const char *dname;
	size_t dlen, nlen = strlen(name);
	char *path;

	read_uleb(r);	/* modification time */
	read_uleb(r);	/* size */
	/* Directory 0 is the compilation's, which only .debug_info knows. */
	if (name[0] == '/' || !dir || dir > u->dirs.len) {
		if (grow(c, sizeof(uint32_t) + nlen + 1 + STRING_OVERHEAD))
			*VEC_PUSH(&u->files) = strtab_intern(&c->files, name);
		return;
	}
	dname = u->dirs.v[dir - 1];
	dlen = strlen(dname);
	if (!grow(c, sizeof(uint32_t) + dlen + nlen + 2 + STRING_OVERHEAD))
		return;
	path = xmalloc(dlen + nlen + 2);
	memcpy(path, dname, dlen);
	path[dlen] = '/';
	memcpy(path + dlen + 1, name, nlen + 1);
	*VEC_PUSH(&u->files) = strtab_intern(&c->files, path);
	free(path);
}

/* Reads a DWARF 2 to 4 header, which is all of hdr. */
static int read_header(struct cubin *c, struct unit *u, struct reader *hdr,
		       unsigned version)
{
	const char *s;

	u->min_insn = (unsigned)read_fixed(hdr, 1);
	u->max_ops = version >= 4 ? (unsigned)read_fixed(hdr, 1) : 1;
	read_fixed(hdr, 1);	/* default_is_stmt */
	u->line_base = (int)(signed char)read_fixed(hdr, 1);
	u->line_range = (unsigned)read_fixed(hdr, 1);
	u->opcode_base = (unsigned)read_fixed(hdr, 1);
	if (!u->max_ops || !u->line_range || !u->opcode_base)
		return -EINVAL;
	u->arg_counts = sub_reader(hdr, u->opcode_base - 1).p;
	while (*(s = read_str(hdr)) && grow(c, sizeof(s)))
		*VEC_PUSH(&u->dirs) = s;
	while (!c->too_big && *(s = read_str(hdr)))
		add_file(c, u, hdr, s);
	return c->too_big ? -EFBIG : hdr->bad ? -EINVAL : 0;
}

static int cmp_reloc(const void *a, const void *b)
{
	const struct line_reloc *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static const struct line_reloc *find_reloc(const reloc_vec *relocs,
					   uint64_t offset)
{
	struct line_reloc key = { .offset = offset };

	if (!relocs->len)
		return NULL;
	return bsearch(&key, relocs->v, relocs->len, sizeof(key), cmp_reloc);
}

/* The line number state machine, less the registers no row here needs. */
struct state {
	size_t scn;		/* 0 until a relocated DW_LNE_set_address */
	uint64_t addr, file, line;
	unsigned op_index;
};

static void reset(struct state *s)
{
	memset(s, 0, sizeof(*s));
	s->file = 1;
	s->line = 1;
}

static void advance(struct state *s, const struct unit *u, uint64_t ops)
{
	uint64_t total = s->op_index + ops;

	s->addr += u->min_insn * (total / u->max_ops);
	s->op_index = (unsigned)(total % u->max_ops);
}

static void emit(struct cubin *c, const struct unit *u,
		 const struct state *s, bool end)
{
	struct cubin_row *row;

	/* A sequence of no known section cannot be looked up. */
	if (!s->scn || !grow(c, sizeof(*row)))
		return;
	row = VEC_PUSH(&c->rows);
	row->scn = s->scn;
	row->addr = s->addr;
	row->end = end;
	row->order = c->rows.len;
	if (!end && s->file && s->file <= u->files.len && s->line &&
	    s->line <= UINT32_MAX) {
		row->file = u->files.v[s->file - 1];
		row->line = (uint32_t)s->line;
	}
}

static void set_address(struct state *s, struct reader *ext,
			const unsigned char *section, const reloc_vec *relocs)
{
	size_t n = (size_t)(ext->end - ext->p);
	const struct line_reloc *rel =
		find_reloc(relocs, (uint64_t)(ext->p - section));
	uint64_t v;

	if (!n || n > 8) {
		overrun(ext);
		return;
	}
	v = read_fixed(ext, n);
	s->scn = rel ? rel->scn : 0;
	s->addr = rel ? rel->value + (rel->in_place ? v : 0) : 0;
	s->op_index = 0;
}

static int run_program(struct cubin *c, struct unit *u, struct reader *r,
		       const unsigned char *section, const reloc_vec *relocs)
{
	struct state s;
	struct reader ext;

	reset(&s);
	while (r->p < r->end && !r->bad && !c->too_big) {
		unsigned op = (unsigned)read_fixed(r, 1);

		if (op >= u->opcode_base) {
			op -= u->opcode_base;
			advance(&s, u, op / u->line_range);
			s.line += (uint64_t)(u->line_base + (int)(op % u->line_range));
			emit(c, u, &s, false);
			continue;
		}
		switch (op) {
		case 0:
			ext = sub_reader(r, read_uleb(r));
			switch (read_fixed(&ext, 1)) {
			case DW_LNE_end_sequence:
				emit(c, u, &s, true);
				reset(&s);
				break;
			case DW_LNE_set_address:
				set_address(&s, &ext, section, relocs);
				break;
			case DW_LNE_define_file:
				add_file(c, u, &ext, read_str(&ext));
				break;
			}
			if (ext.bad)
				return -EINVAL;
			break;
		case DW_LNS_copy:
			emit(c, u, &s, false);
			break;
		case DW_LNS_advance_pc:
			advance(&s, u, read_uleb(r));
			break;
		case DW_LNS_advance_line:
			s.line += read_sleb(r);
			break;
		case DW_LNS_set_file:
			s.file = read_uleb(r);
			break;
		case DW_LNS_const_add_pc:
			advance(&s, u, (255 - u->opcode_base) / u->line_range);
			break;
		case DW_LNS_fixed_advance_pc:
			s.addr += read_fixed(r, 2);
			s.op_index = 0;
			break;
		default:
			/* Column, flags, ISA: nothing a row here keeps. */
			for (unsigned i = 0; i < u->arg_counts[op - 1]; i++)
				read_uleb(r);
			break;
		}
	}
	return c->too_big ? -EFBIG : r->bad ? -EINVAL : 0;
}

/* Reads the line program at r->p and moves r past it. */
static int read_unit(struct cubin *c, struct reader *r,
		     const unsigned char *section, const reloc_vec *relocs)
{
	uint64_t length = read_fixed(r, 4);
	size_t offset_size = 4;
	struct reader unit, hdr;
	struct unit u = { 0 };
	unsigned version;
	int err;

	if (length == 0xffffffff) {
		length = read_fixed(r, 8);
		offset_size = 8;
	} else if (length >= 0xfffffff0) {
		return -EINVAL;
	}
	unit = sub_reader(r, length);
	version = (unsigned)read_fixed(&unit, 2);
	/* nvcc writes version 2; other versions' units are skipped whole. */
	if (version < 2 || version > 4)
		return r->bad || unit.bad ? -EINVAL : 0;
	hdr = sub_reader(&unit, read_fixed(&unit, offset_size));
	err = unit.bad ? -EINVAL : read_header(c, &u, &hdr, version);
	if (!err)
		err = run_program(c, &u, &unit, section, relocs);
	VEC_FREE(&u.dirs);
	VEC_FREE(&u.files);
	return err;
}

static int read_functions(struct cubin *c, Elf *elf, Elf_Scn *symtab)
{
	Elf_Data *data = elf_getdata(symtab, NULL);
	GElf_Shdr symtab_sh, sh;
	GElf_Sym sym;
	const char *name;
	struct cubin_fn *fn;

	if (!data || !gelf_getshdr(symtab, &symtab_sh))
		return -EINVAL;
	for (int i = 0; gelf_getsym(data, i, &sym); i++) {
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		name = elf_strptr(elf, symtab_sh.sh_link, sym.st_name);
		if (!name || !gelf_getshdr(elf_getscn(elf, sym.st_shndx), &sh) ||
		    sym.st_value > sh.sh_size ||
		    sym.st_size > sh.sh_size - sym.st_value)
			return -EINVAL;
		if (!grow(c, sizeof(*fn) + strlen(name) + 1 + STRING_OVERHEAD))
			return -EFBIG;
		/* The first symbol of a name is the function. */
		if (strtab_intern(&c->names, name) <= c->fns.len)
			continue;
		fn = VEC_PUSH(&c->fns);
		fn->scn = sym.st_shndx;
		fn->start = sym.st_value;
		fn->size = sym.st_size ? sym.st_size : sh.sh_size - sym.st_value;
	}
	return 0;
}

/* The relocations of section target (.debug_line) in scn, into relocs. */
static int read_relocs(struct cubin *c, reloc_vec *relocs, Elf *elf, Elf_Scn *scn,
		       const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Data *syms = elf_getdata(elf_getscn(elf, sh->sh_link), NULL);
	bool in_place = sh->sh_type == SHT_REL;
	struct line_reloc *rel;
	GElf_Rela rela;
	GElf_Rel r;
	GElf_Sym sym;

	if (!data || !syms)
		return -EINVAL;
	for (int i = 0;; i++) {
		if (in_place) {
			if (!gelf_getrel(data, i, &r))
				break;
			rela = (GElf_Rela){ r.r_offset, r.r_info, 0 };
		} else if (!gelf_getrela(data, i, &rela)) {
			break;
		}
		if (!gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym))
			return -EINVAL;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		if (!grow(c, sizeof(*rel)))
			return -EFBIG;
		rel = VEC_PUSH(relocs);
		rel->offset = rela.r_offset;
		rel->scn = sym.st_shndx;
		rel->value = sym.st_value + (uint64_t)rela.r_addend;
		rel->in_place = in_place;
	}
	if (relocs->len)
		qsort(relocs->v, relocs->len, sizeof(*relocs->v), cmp_reloc);
	return 0;
}

static int read_lines(struct cubin *c, Elf_Scn *scn, const reloc_vec *relocs)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	struct reader r;
	int err = 0;

	if (!data)
		return -EINVAL;
	if (!data->d_size)
		return 0;
	r.p = data->d_buf;
	r.end = r.p + data->d_size;
	r.bad = false;
	while (!err && r.p < r.end)
		err = read_unit(c, &r, data->d_buf, relocs);
	return err;
}

static bool fits(uint64_t offset, uint64_t size, size_t len)
{
	return offset <= len && size <= len - offset;
}

/* Every header and section must lie inside the bytes. */
static int check_layout(Elf *elf, const GElf_Ehdr *eh, size_t len)
{
	GElf_Shdr sh;
	size_t shnum;

	/* libelf reads headers that do not fit as no headers at all. */
	if (elf_getshdrnum(elf, &shnum) || !shnum ||
	    (eh->e_shnum && shnum != eh->e_shnum) ||
	    !fits(eh->e_shoff, gelf_fsize(elf, ELF_T_SHDR, shnum, EV_CURRENT), len) ||
	    (eh->e_phnum &&
	     !fits(eh->e_phoff, gelf_fsize(elf, ELF_T_PHDR, eh->e_phnum, EV_CURRENT), len)))
		return -EINVAL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		if (sh.sh_type != SHT_NOBITS && !fits(sh.sh_offset, sh.sh_size, len))
			return -EINVAL;
	}
	return 0;
}

static int read_cubin(struct cubin *c, Elf *elf, const GElf_Ehdr *eh, size_t len)
{
	Elf_Scn *scn, *symtab = NULL, *lines = NULL;
	GElf_Shdr sh;
	size_t shstrndx, lines_index = 0;
	reloc_vec relocs = { 0 };
	const char *name;
	int err = check_layout(elf, eh, len);

	if (err)
		return err;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	for (scn = NULL; (scn = elf_nextscn(elf, scn)) && gelf_getshdr(scn, &sh);) {
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
		} else if (name && !strcmp(name, ".debug_line") &&
			   sh.sh_type == SHT_PROGBITS) {
			lines = scn;
			lines_index = elf_ndxscn(scn);
		}
	}
	if (!symtab)
		return 0;
	err = read_functions(c, elf, symtab);
	if (err || !lines)
		return err;
	for (scn = NULL; !err && (scn = elf_nextscn(elf, scn)) && gelf_getshdr(scn, &sh);)
		if ((sh.sh_type == SHT_REL || sh.sh_type == SHT_RELA) &&
		    sh.sh_info == lines_index)
			err = read_relocs(c, &relocs, elf, scn, &sh);
	if (!err)
		err = read_lines(c, lines, &relocs);
	VEC_FREE(&relocs);
	return err;
}

static int cmp_row(const void *a, const void *b)
{
	const struct cubin_row *x = a, *y = b;

	if (x->scn != y->scn)
		return x->scn < y->scn ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* A sequence that starts where another ends wins the address. */
	if (x->end != y->end)
		return x->end ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int cubin_open(struct cubin **out, const void *bytes, size_t len, uint64_t *room)
{
	struct cubin *c;
	GElf_Ehdr eh;
	Elf *elf;
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	/* libelf only reads an image from memory: the const stays true. */
	elf = elf_memory((char *)bytes, len);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_machine != EM_CUDA) {
		elf_end(elf);
		return -ENOEXEC;
	}
	c = xcalloc(1, sizeof(*c));
	c->room = room;
	err = grow(c, sizeof(*c)) ? read_cubin(c, elf, &eh, len) : -EFBIG;
	c->room = NULL;
	elf_end(elf);
	if (err) {
		cubin_close(c);
		return err;
	}
	if (c->rows.len)	/* qsort must not be given NULL */
		qsort(c->rows.v, c->rows.len, sizeof(*c->rows.v), cmp_row);
	*out = c;
	return 0;
}

void cubin_close(struct cubin *c)
{
	if (!c)
		return;
	strtab_free(&c->names);
	VEC_FREE(&c->fns);
	strtab_free(&c->files);
	VEC_FREE(&c->rows);
	free(c);
}

bool cubin_has_lines(const struct cubin *c)
{
	for (size_t i = 0; i < c->rows.len; i++)
		if (c->rows.v[i].line)
			return true;
	return false;
}

int cubin_lookup(const struct cubin *c, const char *function, uint64_t pc_offset,
		 struct cubin_line *out)
{
	uint32_t id = strtab_find(&c->names, function);
	const struct cubin_fn *fn;
	const struct cubin_row *row;
	size_t lo = 0, hi = c->rows.len;
	uint64_t addr;

	out->file = NULL;
	out->line = 0;
	if (!id)
		return -ENOENT;
	fn = &c->fns.v[id - 1];
	if (pc_offset >= fn->size)
		return -ERANGE;
	addr = fn->start + pc_offset;
	/* The last row at or before addr, in the function's section. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		row = &c->rows.v[mid];
		if (row->scn < fn->scn || (row->scn == fn->scn && row->addr <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	row = &c->rows.v[lo - 1];
	if (row->scn == fn->scn && row->line) {
		out->file = strtab_get(&c->files, row->file);
		out->line = row->line;
	}
	return 0;
}
