/* SPDX-License-Identifier: MIT */
/*
 * cubin_lookup over the cubins of tests/cuda/pc-app.cu that the build makes
 * where nvcc exists ($BUILD/tests/cuda): every instruction of pc_hot and
 * pc_cold against the rows readelf decodes from the same file, the marked
 * lines, a cubin without lines, then damaged copies. The sm_80 cubin
 * relocates its line table with SHT_REL, the sm_90 one with SHT_RELA.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/cubin.h"
#include "pcapp.h"
#include "test.h"
#include "util/vec.h"

#define SOURCE PCAPP_SOURCE
#define INSN PCAPP_INSN

static const char *const archs[] = { "sm_80", "sm_90" };
static char paths[2][PATH_MAX], nolines_path[PATH_MAX];
static struct blob cubins[2], nolines;
static char *source_path;	/* SOURCE, resolved */
static volatile size_t sink;

/* What readelf says of one cubin. */
struct ref_row {
	uint64_t addr;
	unsigned line;		/* 0: the end of its sequence */
	char *file;
};

struct ref_seq {
	VEC(struct ref_row) rows;
	const char *function;	/* from the relocation of its address */
};

struct ref_reloc {
	uint64_t offset;
	char *symbol;
	uint64_t value;		/* the symbol's, plus the addend */
};

struct ref_func {
	char *name;
	uint64_t value, size;
};

struct ref {
	VEC(struct ref_seq) seqs;
	VEC(uint64_t) set_address_at;	/* in .debug_line, in order */
	VEC(struct ref_reloc) relocs;	/* of .debug_line */
	VEC(struct ref_func) funcs;
	char *file;		/* of the rows being read */
	bool open_seq, in_line_relocs;
};

/* Runs readelf -W with args on path, handing each line of its output to fn. */
static bool readelf(const char *args, const char *path,
		    void (*fn)(struct ref *r, char *line), struct ref *r)
{
	char cmd[PATH_MAX + 128], *line = NULL;
	size_t cap = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -W %s '%s' 2>/dev/null", args, path);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (getline(&line, &cap, p) > 0) {
		line[strcspn(line, "\n")] = '\0';
		fn(r, line);
	}
	free(line);
	return pclose(p) == 0;
}

/*
 * --debug-dump=decodedline: "DIR/FILE:" when the file changes, then rows
 * "FILE LINE ADDRESS [VIEW] [x]", LINE "-" at the end of a sequence.
 */
static void parse_decoded(struct ref *r, char *line)
{
	char name[256], number[32];
	size_t len = strlen(line);
	struct ref_row *row;
	uint64_t addr;

	if (!strncmp(line, "CU: ", 4)) {
		line += 4;
		len -= 4;
	}
	if (len > 1 && line[len - 1] == ':' && !strchr(line, ' ')) {
		free(r->file);
		r->file = xstrndup(line, len - 1);
		return;
	}
	if (sscanf(line, "%255s %31s %" SCNx64, name, number, &addr) != 3 ||
	    (strcmp(number, "-") && strspn(number, "0123456789") != strlen(number)))
		return;
	if (!r->open_seq)
		VEC_PUSH(&r->seqs);
	row = VEC_PUSH(&r->seqs.v[r->seqs.len - 1].rows);
	row->addr = addr;
	row->line = (unsigned)strtoul(number, NULL, 10);
	row->file = row->line && r->file ? xstrdup(r->file) : NULL;
	r->open_seq = row->line != 0;
}

/* --debug-dump=rawline: "[0xOFFSET]  Extended opcode 2: set Address to ..." */
static void parse_raw(struct ref *r, char *line)
{
	char *op = strstr(line, "Extended opcode 2: set Address"), *at = NULL;

	if (!op)
		return;
	/* After an opcode it cannot decode readelf runs offsets together. */
	for (char *p = line; (p = strstr(p, "[0x")) && p < op; p++)
		at = p;
	if (at)
		*VEC_PUSH(&r->set_address_at) = strtoull(at + 1, NULL, 16);
}

/* -r: "OFFSET INFO TYPE... SYMVALUE NAME [+ ADDEND]" under .rel(a).debug_line */
static void parse_relocs(struct ref *r, char *line)
{
	char *tok[16], *save = NULL;
	size_t n = 0, name;
	struct ref_reloc *rel;
	uint64_t offset, info;

	if (!strncmp(line, "Relocation section '", 20)) {
		r->in_line_relocs = strstr(line, "'.rela.debug_line'") ||
				    strstr(line, "'.rel.debug_line'");
		return;
	}
	if (!r->in_line_relocs ||
	    sscanf(line, "%" SCNx64 " %" SCNx64, &offset, &info) != 2)
		return;
	for (char *t = strtok_r(line, " ", &save); t && n < 16; t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	name = n >= 3 && (!strcmp(tok[n - 2], "+") || !strcmp(tok[n - 2], "-")) ? n - 3 : n - 1;
	if (name < 3)
		return;
	rel = VEC_PUSH(&r->relocs);
	rel->offset = offset;
	rel->symbol = xstrdup(tok[name]);
	rel->value = strtoull(tok[name - 1], NULL, 16);
	if (name == n - 3)
		rel->value += strtoull(tok[n - 1], NULL, 0) * (tok[n - 2][0] == '-' ? -1ULL : 1);
}

/* -s: "NUM: VALUE SIZE FUNC BIND VIS... NDX NAME" */
static void parse_symbols(struct ref *r, char *line)
{
	char value[32], size[32], type[16];
	struct ref_func *f;
	const char *name = strrchr(line, ' ');

	if (sscanf(line, "%*u: %31s %31s %15s", value, size, type) != 3 ||
	    strcmp(type, "FUNC") || !name)
		return;
	f = VEC_PUSH(&r->funcs);
	f->name = xstrdup(name + 1);
	f->value = strtoull(value, NULL, 16);
	f->size = strtoull(size, NULL, 0);
}

static bool load_ref(struct ref *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	if (!readelf("--debug-dump=decodedline", path, parse_decoded, r) ||
	    !readelf("--debug-dump=rawline", path, parse_raw, r) ||
	    !readelf("-r", path, parse_relocs, r) ||
	    !readelf("-s", path, parse_symbols, r))
		return false;
	/* Each sequence's function: the relocation inside its set_address. */
	if (r->seqs.len != r->set_address_at.len)
		return false;
	for (size_t i = 0; i < r->seqs.len; i++) {
		uint64_t from = r->set_address_at.v[i];
		uint64_t to = i + 1 < r->seqs.len ? r->set_address_at.v[i + 1] : UINT64_MAX;

		for (size_t j = 0; j < r->relocs.len; j++)
			if (r->relocs.v[j].offset > from && r->relocs.v[j].offset < to)
				r->seqs.v[i].function = r->relocs.v[j].symbol;
	}
	return true;
}

static void free_ref(struct ref *r)
{
	for (size_t i = 0; i < r->seqs.len; i++) {
		for (size_t j = 0; j < r->seqs.v[i].rows.len; j++)
			free(r->seqs.v[i].rows.v[j].file);
		VEC_FREE(&r->seqs.v[i].rows);
	}
	VEC_FREE(&r->seqs);
	VEC_FREE(&r->set_address_at);
	for (size_t i = 0; i < r->relocs.len; i++)
		free(r->relocs.v[i].symbol);
	VEC_FREE(&r->relocs);
	for (size_t i = 0; i < r->funcs.len; i++)
		free(r->funcs.v[i].name);
	VEC_FREE(&r->funcs);
	free(r->file);
}

static const struct ref_func *ref_func(const struct ref *r, const char *name)
{
	for (size_t i = 0; i < r->funcs.len; i++)
		if (!strcmp(r->funcs.v[i].name, name))
			return &r->funcs.v[i];
	return NULL;
}

/*
 * readelf's line of the instruction offset bytes into function: its row of
 * the greatest address at or before it, the later one of equal addresses.
 * readelf shows addresses as the line program has them, relative to the
 * symbol a sequence is relocated against: the function, at the start of
 * its section.
 */
static struct cubin_line ref_line(const struct ref *r, const char *function,
				  uint64_t offset)
{
	const struct ref_row *best = NULL;
	struct cubin_line l = { NULL, 0 };

	for (size_t i = 0; i < r->seqs.len; i++) {
		const struct ref_seq *s = &r->seqs.v[i];

		if (!s->function || strcmp(s->function, function))
			continue;
		for (size_t j = 0; j < s->rows.len; j++)
			if (s->rows.v[j].addr <= offset &&
			    (!best || s->rows.v[j].addr >= best->addr))
				best = &s->rows.v[j];
	}
	if (best && best->line) {
		l.file = best->file;
		l.line = best->line;
	}
	return l;
}

/*
 * Whether readelf's addresses are offsets into function: a sequence is
 * relocated against its symbol, with no addend, and it starts its section.
 */
static bool ref_rows_of(const struct ref *r, const char *function)
{
	const struct ref_func *f = ref_func(r, function);
	bool found = false;

	for (size_t i = 0; i < r->relocs.len; i++)
		if (!strcmp(r->relocs.v[i].symbol, function))
			found = r->relocs.v[i].value == 0;
	return f && f->value == 0 && found;
}

/* Opens a read-only copy of b and unmaps it: bytes written or kept fault. */
static int open_read_only(const struct blob *b, struct cubin **c)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (b->len + page - 1) / page * page;
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err;

	if (map == MAP_FAILED)
		return -errno;
	memcpy(map, b->bytes, b->len);
	mprotect(map, len, PROT_READ);
	err = cubin_open(c, map, b->len, &(uint64_t){ UINT64_MAX });
	munmap(map, len);
	return err;
}

static void test_lines_match_readelf(void)
{
	static const char *const functions[] = { "pc_hot", "pc_cold" };

	for (size_t a = 0; a < 2; a++) {
		struct cubin *c = NULL;
		struct ref r;
		int shown = 0;

		CHECK(load_ref(&r, paths[a]));
		CHECK(open_read_only(&cubins[a], &c) == 0);
		if (test_current_failed) {
			free_ref(&r);
			cubin_close(c);
			return;
		}
		CHECK(cubin_has_lines(c));
		for (size_t i = 0; i < 2; i++) {
			const char *fn = functions[i];
			const struct ref_func *f = ref_func(&r, fn);
			size_t known = 0;

			CHECK(ref_rows_of(&r, fn));
			if (!f)
				continue;
			for (uint64_t off = 0; off < f->size; off += INSN) {
				struct cubin_line got, want = ref_line(&r, fn, off);
				int err = cubin_lookup(c, fn, off, &got);

				known += want.line != 0;
				if (!err && got.line == want.line &&
				    (got.file == want.file ||
				     (got.file && want.file && !strcmp(got.file, want.file))))
					continue;
				if (shown++ < 8)
					printf("  %s %s+%#" PRIx64 ": %d %s:%u, readelf %s:%u\n",
					       archs[a], fn, off, err,
					       got.file ? got.file : "(null)", got.line,
					       want.file ? want.file : "(null)", want.line);
				test_current_failed = 1;
			}
			/* Not vacuous: readelf knows the lines of most of it. */
			CHECK(known > f->size / INSN / 2);
		}
		cubin_close(c);
		free_ref(&r);
	}
}

/* How many instructions of function are on line of SOURCE. */
static unsigned on_line(const struct cubin *c, const char *function, unsigned line)
{
	struct cubin_line l;
	unsigned n = 0;

	for (uint64_t off = 0; !cubin_lookup(c, function, off, &l); off += INSN) {
		char *real = l.file ? realpath(l.file, NULL) : NULL;

		n += l.line == line && real && !strcmp(real, source_path);
		free(real);
	}
	return n;
}

static void test_marked_lines(void)
{
	unsigned hot = marked_line("/* PC-HOT-LINE */"),
		 cold = marked_line("/* PC-COLD-LINE */");

	CHECK(hot && cold && source_path);
	for (size_t a = 0; a < 2 && !test_current_failed; a++) {
		struct cubin *c = NULL;

		CHECK(open_read_only(&cubins[a], &c) == 0);
		if (test_current_failed)
			return;
		CHECK(on_line(c, "pc_hot", hot) > 0);
		CHECK(on_line(c, "pc_cold", cold) > 0);
		CHECK(on_line(c, "pc_cold", hot) == 0);
		cubin_close(c);
	}
}

static void test_unknown_function_and_offset(void)
{
	struct cubin *c = NULL;
	struct cubin_line l;
	struct ref r;
	const struct ref_func *f;

	CHECK(load_ref(&r, paths[1]));
	f = ref_func(&r, "pc_hot");
	CHECK(f != NULL);
	CHECK(open_read_only(&cubins[1], &c) == 0);
	if (!test_current_failed) {
		CHECK(cubin_lookup(c, "pc_none", 0, &l) == -ENOENT);
		CHECK(!l.file && !l.line);
		CHECK(cubin_lookup(c, "pc_ho", 0, &l) == -ENOENT);
		CHECK(cubin_lookup(c, "pc_hot", f->size - INSN, &l) == 0);
		CHECK(cubin_lookup(c, "pc_hot", f->size, &l) == -ERANGE);
		CHECK(!l.file && !l.line);
		CHECK(cubin_lookup(c, "pc_hot", UINT64_MAX, &l) == -ERANGE);
		cubin_close(c);
	}
	free_ref(&r);
}

static void test_no_line_table(void)
{
	struct cubin *c = NULL;
	struct cubin_line l = { "x", 1 };
	struct ref r;
	const struct ref_func *f;

	CHECK(load_ref(&r, nolines_path));
	f = ref_func(&r, "pc_hot");
	CHECK(f != NULL && r.seqs.len == 0);
	CHECK(open_read_only(&nolines, &c) == 0);
	if (!test_current_failed) {
		CHECK(!cubin_has_lines(c));
		for (uint64_t off = 0; off < f->size; off += INSN) {
			CHECK(cubin_lookup(c, "pc_hot", off, &l) == 0);
			CHECK(!l.file && !l.line);
		}
		CHECK(cubin_lookup(c, "pc_hot", f->size, &l) == -ERANGE);
		CHECK(cubin_lookup(c, "pc_none", 0, &l) == -ENOENT);
		cubin_close(c);
	}
	free_ref(&r);
}

/* Looks up enough of a cubin that opened from damaged bytes to reach its rows. */
static void exercise(const struct cubin *c)
{
	static const char *const functions[] = { "pc_hot", "pc_cold", "pc_none" };
	struct cubin_line l;

	cubin_has_lines(c);
	for (size_t i = 0; i < 3; i++)
		for (uint64_t off = 0; off < 0xc00; off += 4 * INSN)
			if (!cubin_lookup(c, functions[i], off, &l) && l.file)
				sink += strlen(l.file);
}

/* Opens a copy of exactly len bytes, freed before its lookups; the error. */
static int open_copy(const unsigned char *bytes, size_t len)
{
	unsigned char *copy = xmalloc(len ? len : 1);
	struct cubin *c = NULL;
	int err;

	memcpy(copy, bytes, len);
	err = cubin_open(&c, copy, len, &(uint64_t){ UINT64_MAX });
	free(copy);
	CHECK(err ? !c : c != NULL);
	if (!err) {
		exercise(c);
		cubin_close(c);
	}
	return err;
}

static void test_not_a_cubin(void)
{
	unsigned char *copy = xmemdup(cubins[1].bytes, cubins[1].len);
	Elf64_Ehdr eh;

	CHECK(open_copy((const unsigned char *)"hello", 5) == -ENOEXEC);
	CHECK(open_copy(copy, 0) == -ENOEXEC);
	memcpy(&eh, copy, sizeof(eh));
	eh.e_machine = EM_X86_64;
	memcpy(copy, &eh, sizeof(eh));
	CHECK(open_copy(copy, cubins[1].len) == -ENOEXEC);
	free(copy);
}

static void test_truncated(void)
{
	for (size_t a = 0; a < 2; a++) {
		size_t len = cubins[a].len;
		size_t cuts[] = { 4, 63, 64, len / 4, len / 2, 3 * len / 4, len - 8, len - 1 };

		for (size_t i = 0; i < sizeof(cuts) / sizeof(*cuts); i++)
			CHECK(open_copy(cubins[a].bytes, cuts[i]) < 0);
	}
}

/* The section header of the section called name in an ELF64 image, by offset. */
static size_t shdr_of(const unsigned char *image, const char *name, Elf64_Shdr *sh)
{
	Elf64_Ehdr eh;
	Elf64_Shdr names;

	memcpy(&eh, image, sizeof(eh));
	memcpy(&names, image + eh.e_shoff + eh.e_shstrndx * sizeof(names), sizeof(names));
	for (size_t i = 1; i < eh.e_shnum; i++) {
		size_t at = eh.e_shoff + i * sizeof(*sh);

		memcpy(sh, image + at, sizeof(*sh));
		if (!strcmp((const char *)image + names.sh_offset + sh->sh_name, name))
			return at;
	}
	return 0;
}

/* The symbol table entry of name, by offset. */
static size_t sym_of(const unsigned char *image, const char *name, Elf64_Sym *sym)
{
	Elf64_Shdr symtab, strtab;

	if (!shdr_of(image, ".symtab", &symtab) || !shdr_of(image, ".strtab", &strtab))
		return 0;
	for (size_t at = symtab.sh_offset; at + sizeof(*sym) <= symtab.sh_offset + symtab.sh_size;
	     at += sizeof(*sym)) {
		memcpy(sym, image + at, sizeof(*sym));
		if (!strcmp((const char *)image + strtab.sh_offset + sym->st_name, name))
			return at;
	}
	return 0;
}

/* Where a field of a copy of the sm_90 cubin is, and what to write there. */
struct damage {
	const char *what;
	size_t at, size;
	uint64_t value;
};

static void test_corrupted(void)
{
	const struct blob *b = &cubins[1];
	Elf64_Ehdr eh;
	Elf64_Shdr lines, symtab;
	Elf64_Sym hot;
	size_t lines_at = shdr_of(b->bytes, ".debug_line", &lines);
	size_t symtab_at = shdr_of(b->bytes, ".symtab", &symtab);
	size_t hot_at = sym_of(b->bytes, "pc_hot", &hot);
	size_t unit = lines.sh_offset;
	uint16_t version;

	memcpy(&eh, b->bytes, sizeof(eh));
	CHECK(lines_at && symtab_at && hot_at);
	if (test_current_failed)
		return;
	memcpy(&version, b->bytes + unit + 4, sizeof(version));
	CHECK(version >= 2 && version <= 4);

	const struct damage damages[] = {
		{ "section headers past the end", offsetof(Elf64_Ehdr, e_shoff), 8, b->len },
		{ "too many sections", offsetof(Elf64_Ehdr, e_shnum), 2, 0x4000 },
		{ "program headers past the end", offsetof(Elf64_Ehdr, e_phoff), 8, b->len - 8 },
		{ ".debug_line past the end", lines_at + offsetof(Elf64_Shdr, sh_size), 8,
		  b->len },
		{ ".debug_line starts past the end", lines_at + offsetof(Elf64_Shdr, sh_offset),
		  8, b->len + 1 },
		{ ".debug_line cut short", lines_at + offsetof(Elf64_Shdr, sh_size), 8,
		  lines.sh_size / 2 },
		{ ".debug_line cut by one", lines_at + offsetof(Elf64_Shdr, sh_size), 8,
		  lines.sh_size - 1 },
		{ ".symtab past the end", symtab_at + offsetof(Elf64_Shdr, sh_size), 8,
		  symtab.sh_size + 1000 * sizeof(Elf64_Sym) },
		{ "pc_hot past its section", hot_at + offsetof(Elf64_Sym, st_size), 8,
		  hot.st_size + INSN * 1000 },
		{ "pc_hot starts past its section", hot_at + offsetof(Elf64_Sym, st_value), 8,
		  0x100000 },
		{ "unit longer than .debug_line", unit, 4, lines.sh_size },
		{ "reserved unit length", unit, 4, 0xfffffff0 },
		{ "header longer than its unit", unit + 6, 4, lines.sh_size },
		{ "line_range 0", unit + (version >= 4 ? 14 : 13), 1, 0 },
	};

	for (size_t i = 0; i < sizeof(damages) / sizeof(*damages); i++) {
		const struct damage *d = &damages[i];
		unsigned char *copy = xmemdup(b->bytes, b->len);
		uint64_t v = d->value;
		int err;

		memcpy(copy + d->at, &v, d->size);	/* little-endian host and file */
		err = open_copy(copy, b->len);
		if (err >= 0) {
			printf("  %s: %d\n", d->what, err);
			test_current_failed = 1;
		}
		free(copy);
	}
}

/* Random bytes changed anywhere, then in .debug_line only: no crash, no leak. */
static void test_random_damage(void)
{
	uint64_t x = 0x9e3779b97f4a7c15;
	unsigned opened = 0, failed = 0;

	for (size_t a = 0; a < 2; a++) {
		const struct blob *b = &cubins[a];
		Elf64_Shdr lines;
		unsigned char *copy = xmalloc(b->len);

		CHECK(shdr_of(b->bytes, ".debug_line", &lines));
		for (int i = 0; i < 4000 && !test_current_failed; i++) {
			size_t from = i % 2 ? lines.sh_offset : 0;
			size_t span = i % 2 ? lines.sh_size : b->len;

			memcpy(copy, b->bytes, b->len);
			for (int n = 1 + i % 4; n > 0; n--) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				copy[from + x % span] = (unsigned char)(x >> 56);
			}
			if (open_copy(copy, b->len))
				failed++;
			else
				opened++;
		}
		free(copy);
	}
	printf("  %u damaged copies opened, %u refused\n", opened, failed);
	CHECK(opened > 0 && failed > 0);
}

/*
 * What a cubin builds is taken from the room it is given, whether it opens
 * or not: with room for all of it, it opens and leaves none; with a byte
 * less, it stops (-EFBIG), and what it built until then is gone from the room.
 */
static void test_room(void)
{
	uint64_t room = UINT64_MAX, needs;
	struct cubin *c = NULL;

	CHECK_EQ_U64(cubin_open(&c, cubins[1].bytes, cubins[1].len, &room), 0);
	needs = UINT64_MAX - room;
	CHECK(needs > 0);
	cubin_close(c);
	room = needs;
	CHECK_EQ_U64(cubin_open(&c, cubins[1].bytes, cubins[1].len, &room), 0);
	CHECK_EQ_U64(room, 0);
	exercise(c);
	cubin_close(c);
	room = needs - 1;
	c = NULL;
	CHECK(cubin_open(&c, cubins[1].bytes, cubins[1].len, &room) == -EFBIG);
	CHECK(c == NULL);
	CHECK(room < needs - 1);
	/* No room: the next cubin does not even start. */
	room = 0;
	CHECK(cubin_open(&c, cubins[0].bytes, cubins[0].len, &room) == -EFBIG);
}

int main(void)
{
	const char *build = getenv("BUILD");

	if (!build || !*build)
		build = "build";
	for (size_t a = 0; a < 2; a++)
		snprintf(paths[a], sizeof(paths[a]), "%s/tests/cuda/pc-app.%s.cubin", build,
			 archs[a]);
	snprintf(nolines_path, sizeof(nolines_path), "%s/tests/cuda/pc-app.nolines.sm_90.cubin",
		 build);
	if (!read_blob(paths[0], &cubins[0]) || !read_blob(paths[1], &cubins[1]) ||
	    !read_blob(nolines_path, &nolines)) {
		return test_skip("nvcc", "no cubins in %s/tests/cuda (they are built where nvcc exists)",
				 build);
	}
	if (system("readelf --version >/dev/null 2>&1"))
		return test_skip("tools", "no readelf to compare with");
	source_path = realpath(SOURCE, NULL);
	RUN(test_lines_match_readelf);
	RUN(test_marked_lines);
	RUN(test_unknown_function_and_offset);
	RUN(test_no_line_table);
	RUN(test_not_a_cubin);
	RUN(test_truncated);
	RUN(test_corrupted);
	RUN(test_random_damage);
	RUN(test_room);
	for (size_t a = 0; a < 2; a++)
		free(cubins[a].bytes);
	free(nolines.bytes);
	free(source_path);
	return test_summary();
}
