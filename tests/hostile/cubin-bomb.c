/* SPDX-License-Identifier: MIT */
/*
 * cubin-bomb: writes a recording of GPU PC samples whose cubins, a few
 * bytes of zstd each, cost many times their size to parse, as a CUDA
 * program can make the recorder keep them: CUBINS cubins (default 6), each
 * a CUDA ELF file of one function "kern" with a line table of KIB KiB
 * (default 1024) of KIND:
 *
 *   rows    one instruction after another on the same line: a row of the
 *           line table for each of its bytes
 *   paths   a directory of half its bytes, then file names in it: each
 *           name a path as long as the directory
 *
 * then a PC sample in kern of each cubin, and, with PAD_KIB, the random
 * bytes of tests/hostile/bomb.h that make the file larger.
 *
 * usage: cubin-bomb rows|paths OUT [CUBINS [KIB [PAD_KIB]]]
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/hostile/bomb.h"

#ifndef EM_CUDA
#define EM_CUDA 190
#endif

#define TEXT_SIZE 256	/* kern's code */
#define STALL "smsp__pcsamp_warps_issue_stalled_selected"

/* The sections of the cubin, in order; index 0 is the null section. */
enum { SEC_SHSTRTAB = 1, SEC_STRTAB, SEC_SYMTAB, SEC_TEXT, SEC_LINES, SEC_REL, SECTIONS };

static const char shstrtab[] = "\0.shstrtab\0.strtab\0.symtab\0.text.kern\0.debug_line\0"
			       ".rel.debug_line";
static const uint32_t sec_names[SECTIONS] = { 0, 1, 11, 19, 27, 38, 50 };
static const char strtab[] = "\0kern";

static void put_le(struct gbuf *b, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		gbuf_put(b, &(uint8_t){ (uint8_t)(v >> (8 * i)) }, 1);
}

/*
 * A DWARF 2 line program of about kib KiB: its header, with what paths
 * puts in it, then one sequence in kern's section (its address relocated
 * at *reloc_at), with what rows puts in it.
 */
static void line_table(struct gbuf *b, bool paths, size_t kib, uint64_t *reloc_at)
{
	static const uint8_t opcode_lengths[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	size_t size = kib << 10, length_at, header_at, program_at;

	length_at = b->len;
	put_le(b, 0, 4);		/* unit length, set below */
	put_le(b, 2, 2);		/* version */
	header_at = b->len;
	put_le(b, 0, 4);		/* header length, set below */
	gbuf_put(b, (uint8_t[]){ 1, 1, (uint8_t)-5, 14, 13 }, 5);
	gbuf_put(b, opcode_lengths, sizeof(opcode_lengths));
	if (paths) {
		/* One directory of half the size, then names "f0", "f1"... in it. */
		for (size_t i = 0; i < size / 2; i++)
			gbuf_put(b, "d", 1);
		gbuf_put(b, "", 1);
	}
	gbuf_put(b, "", 1);		/* end of the directories */
	for (size_t i = 0; paths && b->len - length_at < size; i++) {
		char name[24];

		snprintf(name, sizeof(name), "f%zx", i);
		gbuf_put(b, name, strlen(name) + 1);
		gbuf_put(b, (uint8_t[]){ 1, 0, 0 }, 3);	/* directory 1, no time, no size */
	}
	gbuf_put(b, "k.cu", 5);
	gbuf_put(b, (uint8_t[]){ 0, 0, 0 }, 3);
	gbuf_put(b, "", 1);		/* end of the files */
	program_at = b->len;
	gbuf_put(b, (uint8_t[]){ 0, 9, 2 }, 3);	/* DW_LNE_set_address */
	*reloc_at = b->len;
	put_le(b, 0, 8);
	while (!paths && b->len - length_at < size)
		gbuf_put(b, (uint8_t[]){ 1 }, 1);		/* DW_LNS_copy */
	gbuf_put(b, (uint8_t[]){ 0, 1, 1 }, 3);	/* DW_LNE_end_sequence */
	for (int i = 0; i < 4; i++) {
		b->data[length_at + i] = (uint8_t)((b->len - length_at - 4) >> (8 * i));
		b->data[header_at + i] = (uint8_t)((program_at - header_at - 4) >> (8 * i));
	}
}

static void section_header(struct gbuf *b, int index, uint32_t type, uint64_t offset,
			   uint64_t size, uint32_t link, uint32_t info, uint64_t entsize)
{
	Elf64_Shdr sh = {
		.sh_name = sec_names[index], .sh_type = type, .sh_offset = offset,
		.sh_size = size, .sh_link = link, .sh_info = info, .sh_addralign = 1,
		.sh_entsize = entsize,
	};

	gbuf_put(b, &sh, sizeof(sh));
}

/* The cubin: its ELF header, the sections' bytes, then their headers. */
static void cubin(struct gbuf *b, bool paths, size_t kib)
{
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_EXEC, .e_machine = EM_CUDA, .e_version = EV_CURRENT,
		.e_ehsize = sizeof(Elf64_Ehdr), .e_shentsize = sizeof(Elf64_Shdr),
		.e_shnum = SECTIONS, .e_shstrndx = SEC_SHSTRTAB,
	};
	Elf64_Sym syms[2] = {
		{ 0 },
		{ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		  .st_shndx = SEC_TEXT, .st_size = TEXT_SIZE },
	};
	Elf64_Rel rel = { 0, ELF64_R_INFO(1, 1) };
	uint64_t at[SECTIONS + 1], reloc_at;

	gbuf_put(b, &eh, sizeof(eh));
	at[SEC_SHSTRTAB] = b->len;
	gbuf_put(b, shstrtab, sizeof(shstrtab));
	at[SEC_STRTAB] = b->len;
	gbuf_put(b, strtab, sizeof(strtab));
	at[SEC_SYMTAB] = b->len;
	gbuf_put(b, syms, sizeof(syms));
	at[SEC_TEXT] = b->len;
	for (int i = 0; i < TEXT_SIZE; i++)
		gbuf_put(b, "", 1);
	at[SEC_LINES] = b->len;
	line_table(b, paths, kib, &reloc_at);
	at[SEC_REL] = b->len;
	rel.r_offset = reloc_at - at[SEC_LINES];
	gbuf_put(b, &rel, sizeof(rel));
	at[SECTIONS] = b->len;
	eh.e_shoff = b->len;
	memcpy(b->data, &eh, sizeof(eh));
	section_header(b, 0, SHT_NULL, 0, 0, 0, 0, 0);
	section_header(b, SEC_SHSTRTAB, SHT_STRTAB, at[SEC_SHSTRTAB], sizeof(shstrtab), 0, 0, 0);
	section_header(b, SEC_STRTAB, SHT_STRTAB, at[SEC_STRTAB], sizeof(strtab), 0, 0, 0);
	section_header(b, SEC_SYMTAB, SHT_SYMTAB, at[SEC_SYMTAB], sizeof(syms), SEC_STRTAB, 1,
		       sizeof(Elf64_Sym));
	section_header(b, SEC_TEXT, SHT_PROGBITS, at[SEC_TEXT], TEXT_SIZE, 0, 0, 0);
	section_header(b, SEC_LINES, SHT_PROGBITS, at[SEC_LINES], at[SEC_REL] - at[SEC_LINES],
		       0, 0, 0);
	section_header(b, SEC_REL, SHT_REL, at[SEC_REL], sizeof(rel), SEC_SYMTAB, SEC_LINES,
		       sizeof(Elf64_Rel));
}

/* The cubins, each in a chunk of its own as the recorder writes them, and a sample in each. */
static int put_cubins(struct synth *s, struct tr_writer *w, bool paths, long cubins,
		      size_t kib)
{
	struct gbuf image = {0};
	int err = 0;

	cubin(&image, paths, kib);
	for (long i = 0; !err && i < cubins; i++) {
		struct tr_cubin *c = VEC_PUSH(&s->t.cubins);
		struct tr_pc_sample *b = VEC_PUSH(&s->t.pc_samples);

		c->crc = (uint64_t)i + 1;
		c->image.data = xmemdup(image.data, image.len);
		c->image.len = image.len;
		b->pid = 1;
		b->cubin = (uint32_t)i + 1;
		b->function = synth_str(s, "kern");
		b->stall = synth_str(s, STALL);
		b->count = 1;
		err = synth_put_chunk(s, w);
	}
	gbuf_free(&image);
	return err;
}

int main(int argc, char **argv)
{
	long cubins = argc > 3 ? strtol(argv[3], NULL, 10) : 6;
	long kib = argc > 4 ? strtol(argv[4], NULL, 10) : 1024;
	long pad_kib = argc > 5 ? strtol(argv[5], NULL, 10) : 0;
	bool paths = argc > 1 && !strcmp(argv[1], "paths");
	struct synth s = {0};
	struct tr_writer *w;
	int err;

	if (argc < 3 || argc > 6 || (!paths && strcmp(argv[1], "rows")) || cubins < 1 ||
	    kib < 1 || kib > 64 << 10 || pad_kib < 0 || pad_kib > 64 << 10) {
		fprintf(stderr, "usage: cubin-bomb rows|paths OUT [CUBINS [KIB [PAD_KIB]]]\n");
		return 2;
	}
	err = tr_writer_open(&w, argv[2], TR_FEAT_CPU_SAMPLES | TR_FEAT_SYMBOLS | TR_FEAT_GPU_PC);
	if (!err)
		err = bomb_put_ordinary(&s, w, "cubin-bomb");
	if (!err)
		err = put_cubins(&s, w, paths, cubins, (size_t)kib);
	if (!err)
		err = bomb_put_end(w, (size_t)pad_kib);
	if (w && tr_writer_close(w) && !err)
		err = -EIO;
	synth_free(&s);
	if (err) {
		fprintf(stderr, "cubin-bomb: cannot write '%s': %s\n", argv[2], tr_strerror(err));
		return 1;
	}
	return 0;
}
