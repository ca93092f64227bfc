/* SPDX-License-Identifier: MIT */
/*
 * cfi.c against call frame information written by hand: an .eh_frame_hdr
 * and an .eh_frame with a prologue, a frame-pointer body, an epilogue
 * between remember and restore state, a CFA expression, an undefined
 * return address and a signal frame's CIE, each row checked at the
 * addresses where it changes. Then a table of entries, one per call frame
 * instruction, pointer encoding, augmentation and CIE form, each with the
 * rows it must give.
 *
 * test-cfi --emit DIR writes each entry of the table as DIR/NAME.o, an
 * ELF file whose .eh_frame holds its bytes, and DIR/NAME.rows, the rows
 * cfi.c reads of them at every address where they change:
 * tests/e2e/cfi-readelf.sh holds those against what readelf
 * --debug-dump=frames-interp says of the same bytes.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "unwind/cfi.h"

#define IMAGE_SIZE 0x600
#define HDR 0x000
#define EH_FRAME 0x100

struct image {
	uint8_t b[IMAGE_SIZE];
	size_t at;
};

static void put(struct image *im, const void *p, size_t n)
{
	memcpy(im->b + im->at, p, n);
	im->at += n;
}

static void put_u8(struct image *im, uint8_t v)
{
	put(im, &v, 1);
}

static void put_u32(struct image *im, uint32_t v)
{
	put(im, &v, 4);
}

static void put_bytes(struct image *im, const char *bytes, size_t n)
{
	put(im, bytes, n);
}

/* A CIE with augmentation aug ("zR" or "zRS"): CFA = rsp + 8, RA at CFA - 8. */
static size_t put_cie(struct image *im, const char *aug)
{
	size_t start = im->at, len_at;

	len_at = im->at;
	put_u32(im, 0);
	put_u32(im, 0);				/* CIE id */
	put_u8(im, 1);				/* version */
	put(im, aug, strlen(aug) + 1);
	put_u8(im, 1);				/* code alignment */
	put_u8(im, 0x78);			/* data alignment -8 */
	put_u8(im, 16);				/* return address register */
	put_u8(im, 1);				/* augmentation data: the R encoding */
	put_u8(im, 0x1b);			/* pcrel sdata4 */
	put_bytes(im, "\x0c\x07\x08\x90\x01", 5);	/* def_cfa rsp+8; offset r16 cfa-8 */
	while ((im->at - start) % 4)
		put_u8(im, 0);			/* DW_CFA_nop */
	memcpy(im->b + len_at, &(uint32_t){ (uint32_t)(im->at - len_at - 4) }, 4);
	return start;
}

/* An FDE for [begin, begin + range) under the CIE at cie, with insns. */
static size_t put_fde(struct image *im, size_t cie, uint32_t begin, uint32_t range,
		      const char *insns, size_t n)
{
	size_t start = im->at;

	put_u32(im, 0);
	put_u32(im, (uint32_t)(im->at - cie));			/* back to the CIE */
	put_u32(im, (uint32_t)(begin - im->at));		/* pcrel */
	put_u32(im, range);
	put_u8(im, 0);						/* no augmentation data */
	put_bytes(im, insns, n);
	while ((im->at - start) % 4)
		put_u8(im, 0);
	memcpy(im->b + start, &(uint32_t){ (uint32_t)(im->at - start - 4) }, 4);
	return start;
}

static struct image im;
static struct dso_load load = { .vaddr = 0, .offset = 0, .filesz = IMAGE_SIZE, .flags = 4 };
static struct dso_elf elf = { .loads = &load, .nr_loads = 1, .eh_frame_hdr = HDR };
static struct cfi_image cfi;

static void build(void)
{
	size_t cie, sig_cie, fde[4];
	uint32_t starts[4] = { 0x1000, 0x2000, 0x3000, 0x4000 };

	im.at = EH_FRAME;
	cie = put_cie(&im, "zR");
	/*
	 * push %rbp; mov %rsp,%rbp; ...; an epilogue at 0x1024 (pop %rbp;
	 * ret) between remember and restore state; the body goes on after.
	 */
	fde[0] = put_fde(&im, cie, 0x1000, 0x40,
			 "\x41\x0e\x10\x86\x02"		/* +1: cfa rsp+16; rbp at cfa-16 */
			 "\x43\x0d\x06"			/* +3: cfa rbp+16 */
			 "\x60\x0a\x0c\x07\x08\xc6"	/* +32: remember; cfa rsp+8; restore rbp */
			 "\x41\x0b",			/* +1: restore state */
			 16);
	fde[1] = put_fde(&im, cie, 0x2000, 0x10, "\x0f\x02\x73\x08", 4);	/* cfa rbx+8 */
	fde[2] = put_fde(&im, cie, 0x3000, 0x10, "\x07\x10", 2);		/* RA undefined */
	sig_cie = put_cie(&im, "zRS");
	fde[3] = put_fde(&im, sig_cie, 0x4000, 0x10, "", 0);

	/* .eh_frame_hdr: version, encodings, eh_frame_ptr, fde_count, the table. */
	im.at = HDR;
	put_bytes(&im, "\x01\x1b\x03\x3b", 4);
	put_u32(&im, (uint32_t)(EH_FRAME - (HDR + 4)));
	put_u32(&im, 4);
	for (int i = 0; i < 4; i++) {
		put_u32(&im, starts[i] - HDR);
		put_u32(&im, (uint32_t)(fde[i] - HDR));
	}
	cfi = (struct cfi_image){
		.data = im.b, .size = IMAGE_SIZE, .elf = &elf, .hdr_vaddr = HDR, .hdr_off = HDR,
		.hdr = { .table = im.b + HDR + 12, .count = 4 },
	};
}

/* The row at addr is a step with these rules (bp_off 0: rbp unchanged). */
static void check_step(uint64_t addr, bool cfa_bp, int32_t cfa_off, int32_t bp_off)
{
	struct cfi_row row;

	cfi_row_at(&cfi, addr, &row);
	if (row.kind != CFI_STEP || row.cfa_bp != cfa_bp || row.cfa_off != cfa_off ||
	    row.ra_off != -8 || row.bp_saved != (bp_off != 0) || (bp_off && row.bp_off != bp_off)) {
		printf("  at 0x%llx: kind %d cfa %s%+d ra %+d bp %s%+d\n", (unsigned long long)addr,
		       row.kind, row.cfa_bp ? "rbp" : "rsp", row.cfa_off, row.ra_off,
		       row.bp_saved ? "at cfa" : "unchanged", row.bp_off);
		test_current_failed = 1;
	}
}

static void test_prologue_body_epilogue(void)
{
	check_step(0x1000, false, 8, 0);
	check_step(0x1001, false, 16, -16);
	check_step(0x1003, false, 16, -16);
	check_step(0x1004, true, 16, -16);
	check_step(0x1023, true, 16, -16);
	check_step(0x1024, false, 8, 0);	/* the epilogue */
	check_step(0x1025, true, 16, -16);	/* restore_state brings the body back */
	check_step(0x103f, true, 16, -16);
}

static void test_kinds(void)
{
	struct cfi_row row;

	cfi_row_at(&cfi, 0xfff, &row);
	CHECK_EQ_U64(row.kind, CFI_NO_ENTRY);		/* before every FDE */
	cfi_row_at(&cfi, 0x1040, &row);
	CHECK_EQ_U64(row.kind, CFI_NO_ENTRY);		/* past the first's range */
	cfi_row_at(&cfi, 0x2004, &row);
	CHECK_EQ_U64(row.kind, CFI_OTHER);		/* a CFA expression */
	cfi_row_at(&cfi, 0x3000, &row);
	CHECK_EQ_U64(row.kind, CFI_OUTERMOST);
	cfi_row_at(&cfi, 0x4008, &row);
	CHECK_EQ_U64(row.kind, CFI_OTHER);		/* signal frames go to libunwind */
	CHECK(row.signal);
	cfi_row_at(&cfi, 0x1010, &row);
	CHECK(!row.signal);
}

/*
 * A file cut anywhere in its entries reads nothing past its end (the copy
 * is exactly that long, for the sanitizer to see): the address's FDE and
 * its CIE whole give its row, else there is none.
 */
static void test_truncated_entries(void)
{
	struct cfi_row row, whole;
	size_t fde_end = EH_FRAME;

	cfi_row_at(&cfi, 0x1010, &whole);
	/* The CIE, then the first FDE: their lengths say where it ends. */
	for (int i = 0; i < 2; i++)
		fde_end += 4 + (uint32_t)(im.b[fde_end] | im.b[fde_end + 1] << 8);

	for (size_t cut = EH_FRAME; cut < IMAGE_SIZE; cut += 3) {
		struct cfi_image short_cfi = cfi;
		uint8_t *copy = malloc(cut);

		CHECK(copy != NULL);
		if (!copy)
			return;
		memcpy(copy, im.b, cut);
		short_cfi.data = copy;
		short_cfi.size = cut;
		short_cfi.hdr.table = copy + HDR + 12;
		load.filesz = cut;
		cfi_row_at(&short_cfi, 0x1010, &row);
		if (cut >= fde_end)
			CHECK(!memcmp(&row, &whole, sizeof(row)));
		else
			CHECK_EQ_U64(row.kind, CFI_NO_ENTRY);
		free(copy);
	}
	load.filesz = IMAGE_SIZE;
}

/* ---- the table ---- */

#define MAX_ROWS 6

/*
 * One FDE and its CIE. Unless said: CIE version 1, augmentation "zR",
 * code alignment 1, data alignment -8, FDE addresses pcrel sdata4, the CIE
 * saying CFA = rsp + 8 and the return address at CFA - 8, the function at
 * [0x1000, 0x1040). rows: from each offset in the function on (the first
 * at 0), the row as row_text writes it.
 */
struct cfi_case {
	const char *name;
	const char *aug;
	uint8_t version;
	bool len64;			/* 64-bit lengths */
	uint8_t code_align;
	int8_t data_align;
	uint8_t fde_enc;		/* R */
	uint8_t personality_enc;	/* P; L is pcrel sdata4 */
	const char *cie_insns, *insns;
	size_t ncie, ninsns;
	uint32_t begin, range;
	/* Why tests/e2e/cfi-readelf.sh cannot hold the case against readelf; NULL: it can. */
	const char *not_readelf;
	struct {
		uint32_t at;
		const char *row;
	} rows[MAX_ROWS];
};

#define INSNS(s) .insns = s, .ninsns = sizeof(s) - 1
#define CIE_INSNS(s) .cie_insns = s, .ncie = sizeof(s) - 1
#define ENTRY "step rsp+8 c-8 s"
#define GIVES_UP "readelf reports it and reads on; cfi.c gives up"
#define LEB128 "readelf reads a LEB128 address as 8 bytes"
#define EXPR "readelf shows an expression's CFA as exp, without its value"
/* The function's first instruction, then what the one at offset 1 changes. */
#define AT1(row) { { 0, ENTRY }, { 1, row } }

static const struct cfi_case cases[] = {
	/* The instructions. */
	{ "advance_loc", INSNS("\x44\x0e\x10"), .rows = { { 0, ENTRY }, { 4, "step rsp+16 c-8 s" } } },
	{ "advance_loc1", INSNS("\x02\xc8\x0e\x10"), .range = 0x100,
	  .rows = { { 0, ENTRY }, { 200, "step rsp+16 c-8 s" } } },
	{ "advance_loc2", INSNS("\x03\x34\x12\x0e\x10"), .range = 0x2000,
	  .rows = { { 0, ENTRY }, { 0x1234, "step rsp+16 c-8 s" } } },
	{ "advance_loc4", INSNS("\x04\x78\x56\x03\x00\x0e\x10"), .range = 0x40000,
	  .rows = { { 0, ENTRY }, { 0x35678, "step rsp+16 c-8 s" } } },
	{ "offset", INSNS("\x41\x86\x02"), .rows = AT1("step rsp+8 c-8 c-16") },
	{ "offset_extended", INSNS("\x41\x05\x06\x02\x41\x05\x10\x03"),
	  .rows = { { 0, ENTRY }, { 1, "step rsp+8 c-8 c-16" }, { 2, "step rsp+8 c-24 c-16" } } },
	{ "offset_extended_sf", INSNS("\x41\x11\x06\x7e\x41\x11\x10\x03"),
	  .rows = { { 0, ENTRY }, { 1, "step rsp+8 c-8 c+16" }, { 2, "step rsp+8 c-24 c+16" } } },
	{ "GNU_negative_offset_extended", INSNS("\x41\x2f\x06\x02"),
	  .rows = AT1("step rsp+8 c-8 c+16") },
	{ "offset of another register", INSNS("\x41\x83\x03"), .rows = AT1(ENTRY) },
	{ "offset of rsp", INSNS("\x41\x87\x01\x41\xc7"),
	  .rows = { { 0, ENTRY }, { 1, "other" }, { 2, ENTRY } } },
	{ "restore", INSNS("\x41\x86\x02\x90\x03\x41\xc6\xd0"),
	  .rows = { { 0, ENTRY }, { 1, "step rsp+8 c-24 c-16" }, { 2, ENTRY } } },
	{ "restore_extended", INSNS("\x41\x86\x02\x41\x06\x06"),
	  .rows = { { 0, ENTRY }, { 1, "step rsp+8 c-8 c-16" }, { 2, ENTRY } } },
	{ "undefined return address", INSNS("\x41\x07\x10"), .rows = AT1("outermost") },
	{ "undefined rbp", INSNS("\x41\x07\x06"), .rows = AT1("other"),
	  .not_readelf = "readelf shows DW_CFA_undefined as no rule" },
	{ "same_value", INSNS("\x41\x86\x02\x41\x08\x06"),
	  .rows = { { 0, ENTRY }, { 1, "step rsp+8 c-8 c-16" }, { 2, ENTRY } } },
	{ "same_value return address", INSNS("\x41\x08\x10"), .rows = AT1("other") },
	{ "register", INSNS("\x41\x09\x06\x03"), .rows = AT1("other") },
	{ "def_cfa", INSNS("\x41\x0c\x06\x10"), .rows = AT1("step rbp+16 c-8 s") },
	{ "def_cfa of another register", INSNS("\x41\x0c\x00\x08"), .rows = AT1("other") },
	{ "def_cfa_sf", INSNS("\x41\x12\x07\x7e"), .rows = AT1("step rsp+16 c-8 s") },
	{ "def_cfa_register", INSNS("\x41\x0d\x06"), .rows = AT1("step rbp+8 c-8 s") },
	{ "def_cfa_offset", INSNS("\x41\x0e\x20"), .rows = AT1("step rsp+32 c-8 s") },
	{ "def_cfa_offset_sf", INSNS("\x41\x13\x7c"), .rows = AT1("step rsp+32 c-8 s") },
	{ "def_cfa_expression", INSNS("\x41\x0f\x02\x73\x08\x41\x0c\x07\x10"),
	  .rows = { { 0, ENTRY }, { 1, "other" }, { 2, "step rsp+16 c-8 s" } } },
	/*
	 * The expressions of ld's PLT entries, rsp + 8 plus 8 once the entry's
	 * push ran: at offset 11 of each 16 bytes, or 10 (an IBT .plt's);
	 * and others, which come to something else than rsp plus what the
	 * address decides.
	 */
	{ "def_cfa_expression of a PLT", .not_readelf = EXPR, .range = 0x20,
	  INSNS("\x0f\x0b\x77\x08\x80\x00\x3f\x1a\x3b\x2a\x33\x24\x22"),
	  .rows = { { 0, "step rsp+8 c-8 s" }, { 11, "step rsp+16 c-8 s" },
		    { 16, "step rsp+8 c-8 s" }, { 27, "step rsp+16 c-8 s" } } },
	{ "def_cfa_expression of an IBT PLT", .not_readelf = EXPR, .range = 0x10,
	  INSNS("\x0f\x0e\x92\x07\x08\x92\x10\x00\x08\x0f\x1a\x3a\x2a\x33\x24\x22"),
	  .rows = { { 0, "step rsp+8 c-8 s" }, { 10, "step rsp+16 c-8 s" } } },
	{ "def_cfa_expression minus and plus_uconst", .not_readelf = EXPR,
	  INSNS("\x41\x0f\x06\x77\x20\x38\x1c\x23\x04"), .rows = AT1("step rsp+28 c-8 s") },
	{ "def_cfa_expression constu", .not_readelf = EXPR,
	  INSNS("\x41\x0f\x05\x77\x00\x10\x10\x22"), .rows = AT1("step rsp+16 c-8 s") },
	{ "def_cfa_expression shl by 64", .not_readelf = EXPR,
	  INSNS("\x41\x0f\x07\x77\x08\x31\x08\x40\x24\x22"), .rows = AT1("step rsp+8 c-8 s") },
	{ "def_cfa_expression too deep",
	  INSNS("\x41\x0f\x0a\x30\x30\x30\x30\x30\x30\x30\x30\x77\x00"),
	  .rows = AT1("other") },
	{ "def_cfa_expression of rbp", .not_readelf = EXPR, INSNS("\x41\x0f\x02\x76\x10"),
	  .rows = AT1("step rbp+16 c-8 s") },
	{ "def_cfa_expression of another register", INSNS("\x41\x0f\x02\x73\x10"),
	  .rows = AT1("other") },
	/*
	 * gcc's for a function that realigns its stack: the CFA in r10, rbp
	 * saved at rbp, then the CFA stored 24 bytes below rbp; and back.
	 */
	{ "realigned stack", .not_readelf = EXPR,
	  INSNS("\x41\x0c\x0a\x00\x41\x10\x06\x02\x76\x00\x41\x0f\x03\x76\x68\x06"
		"\x41\x0c\x07\x08"),
	  .rows = { { 0, ENTRY }, { 1, "other" }, { 3, "step *rbp-24 c-8 b+0" },
		    { 4, "step rsp+8 c-8 b+0" } } },
	{ "expression of rbp from the CFA", .not_readelf = EXPR, INSNS("\x41\x10\x06\x02\x23\x10"),
	  .rows = AT1("step rsp+8 c-8 c+16") },
	{ "expression of rbp from rsp", INSNS("\x41\x10\x06\x02\x77\x10"), .rows = AT1("other") },
	{ "def_cfa_expression deref twice", INSNS("\x41\x0f\x04\x76\x68\x06\x06"),
	  .rows = AT1("other") },
	{ "def_cfa_expression deref then plus", INSNS("\x41\x0f\x05\x76\x68\x06\x23\x08"),
	  .rows = AT1("other") },
	{ "def_cfa_expression rsp twice", INSNS("\x41\x0f\x05\x77\x00\x77\x08\x22"),
	  .rows = AT1("other") },
	{ "def_cfa_expression rsp and", INSNS("\x41\x0f\x04\x77\x00\x3f\x1a"),
	  .rows = AT1("other") },
	{ "def_cfa_expression without rsp", INSNS("\x41\x0f\x02\x80\x00"),
	  .rows = AT1("other") },
	{ "def_cfa_expression left two", .not_readelf = EXPR,
	  INSNS("\x41\x0f\x04\x77\x00\x77\x08"), .rows = AT1("step rsp+8 c-8 s") },
	{ "def_cfa_expression cut short", .not_readelf = GIVES_UP,
	  INSNS("\x41\x0f\x02\x77\x80"), .rows = AT1("other") },
	{ "expression", INSNS("\x41\x10\x06\x02\x77\x00"), .rows = AT1("other") },
	{ "val_offset", INSNS("\x41\x14\x06\x02"), .rows = AT1("other") },
	{ "val_offset_sf", INSNS("\x41\x15\x06\x7e"), .rows = AT1("other") },
	{ "val_expression", INSNS("\x41\x16\x06\x01\x30"), .rows = AT1("other") },
	{ "remember and restore state", INSNS("\x41\x0e\x10\x86\x02\x0a\x41\x0e\x08\xc6\x0a"
					      "\x41\x0e\x30\x41\x0b\x41\x0b"),
	  .rows = { { 0, ENTRY }, { 1, "step rsp+16 c-8 c-16" }, { 2, ENTRY },
		    { 3, "step rsp+48 c-8 s" }, { 4, ENTRY }, { 5, "step rsp+16 c-8 c-16" } } },
	{ "restore_state without remember", INSNS("\x41\x0b"), .not_readelf = GIVES_UP,
	  .rows = AT1("other") },
	{ "GNU_args_size", INSNS("\x41\x2e\x10\x41\x0e\x10"),
	  .rows = { { 0, ENTRY }, { 2, "step rsp+16 c-8 s" } } },
	{ "nop", INSNS("\x00\x00\x41\x00\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "unknown instruction", INSNS("\x41\x3f"), .not_readelf = GIVES_UP,
	  .rows = AT1("other") },
	/* The CIE's forms. */
	{ "code and data alignment", .code_align = 4, .data_align = -4,
	  CIE_INSNS("\x0c\x07\x08\x90\x02"), INSNS("\x41\x0e\x10\x86\x04"),
	  .rows = { { 0, ENTRY }, { 4, "step rsp+16 c-8 c-16" } } },
	{ "version 3", .version = 3, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "version 4", .version = 4, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	/* The CIE pointer as libunwind and gdb read it, 8 bytes from its own place. */
	{ "64-bit lengths", .len64 = true,
	  .not_readelf = "readelf reads the CIE pointer as 8 bytes but from 4 bytes on",
	  INSNS("\x41\x0e\x10"),
	  .rows = AT1("step rsp+16 c-8 s") },
	{ "no augmentation", .aug = "", .fde_enc = 0x00, INSNS("\x41\x0e\x10"),
	  .rows = AT1("step rsp+16 c-8 s") },
	{ "P and L, personality indirect pcrel sdata4", .aug = "zPLR", .personality_enc = 0x9b,
	  INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "P and L, personality absptr", .aug = "zPLR", .personality_enc = 0x00,
	  INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "signal frame", .aug = "zRS", INSNS("\x41\x0e\x10"),
	  .rows = { { 0, "other signal" } } },
	/* The FDE's address encodings: absolute, and pcrel (backwards for the signed ones). */
	{ "absptr", .fde_enc = 0x00, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "uleb128", .not_readelf = LEB128, .fde_enc = 0x01, INSNS("\x41\x0e\x10"),
	  .rows = AT1("step rsp+16 c-8 s") },
	{ "udata2", .fde_enc = 0x02, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "udata4", .fde_enc = 0x03, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "udata8", .fde_enc = 0x04, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "sleb128", .not_readelf = LEB128, .fde_enc = 0x09, INSNS("\x41\x0e\x10"),
	  .rows = AT1("step rsp+16 c-8 s") },
	{ "sdata2", .fde_enc = 0x0a, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "sdata8", .fde_enc = 0x0c, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "pcrel uleb128", .not_readelf = LEB128, .fde_enc = 0x11, INSNS("\x41\x0e\x10"),
	  .rows = AT1("step rsp+16 c-8 s") },
	{ "pcrel udata2", .fde_enc = 0x12, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "pcrel udata4", .fde_enc = 0x13, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "pcrel udata8", .fde_enc = 0x14, INSNS("\x41\x0e\x10"), .rows = AT1("step rsp+16 c-8 s") },
	{ "pcrel sleb128 backwards", .not_readelf = LEB128, .fde_enc = 0x19, .begin = 0x40,
	  INSNS("\x41\x0e\x10"),
	  .rows = AT1("step rsp+16 c-8 s") },
	{ "pcrel sdata2 backwards", .fde_enc = 0x1a, .begin = 0x40, INSNS("\x41\x0e\x10"),
	  .rows = AT1("step rsp+16 c-8 s") },
	{ "pcrel sdata4 backwards", .fde_enc = 0x1b, .begin = 0x40, INSNS("\x41\x0e\x10"),
	  .rows = AT1("step rsp+16 c-8 s") },
	{ "pcrel sdata8 backwards", .fde_enc = 0x1c, .begin = 0x40, INSNS("\x41\x0e\x10"),
	  .rows = AT1("step rsp+16 c-8 s") },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void put_u64(struct image *t, uint64_t v)
{
	put(t, &v, 8);
}

static void put_uleb(struct image *t, uint64_t v)
{
	do {
		put_u8(t, (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

static void put_sleb(struct image *t, int64_t v)
{
	bool more;

	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
		put_u8(t, (uint8_t)(b | (more ? 0x80 : 0)));
	} while (more);
}

/* value in encoding enc, at the field's place (its ELF address is its offset). */
static void put_encoded(struct image *t, uint8_t enc, uint64_t value)
{
	if (enc & 0x10)
		value -= t->at;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: put_u64(t, value); break;
	case 0x01: put_uleb(t, value); break;
	case 0x09: put_sleb(t, (int64_t)value); break;
	case 0x02: case 0x0a: put(t, &(uint16_t){ (uint16_t)value }, 2); break;
	default: put_u32(t, (uint32_t)value); break;
	}
}

/* The length that starts an entry (32 or 64 bits), its offset and its size; then the id. */
static size_t put_length(struct image *t, bool len64)
{
	size_t at;

	if (len64)
		put_u32(t, 0xffffffff);
	at = t->at;
	if (len64)
		put_u64(t, 0);
	else
		put_u32(t, 0);
	return at;
}

static void put_id(struct image *t, bool len64, uint64_t id)
{
	if (len64)
		put_u64(t, id);
	else
		put_u32(t, (uint32_t)id);
}

/* Pads the entry to 8 bytes with DW_CFA_nop and writes its length. */
static void end_entry(struct image *t, size_t len_at, bool len64)
{
	size_t after = len_at + (len64 ? 8 : 4);
	uint64_t len;

	while ((t->at - after) % 8)
		put_u8(t, 0);
	len = t->at - after;
	memcpy(t->b + len_at, &len, len64 ? 8 : 4);
}

/* The case's defaults filled in. */
static struct cfi_case defaults(const struct cfi_case *c)
{
	struct cfi_case d = *c;

	d.aug = d.aug ? d.aug : "zR";
	d.version = d.version ? d.version : 1;
	d.code_align = d.code_align ? d.code_align : 1;
	d.data_align = d.data_align ? d.data_align : -8;
	d.fde_enc = c->fde_enc || (c->aug && !strchr(c->aug, 'R')) ? c->fde_enc : 0x1b;
	if (!d.cie_insns) {
		d.cie_insns = "\x0c\x07\x08\x90\x01";	/* def_cfa rsp+8; offset r16 cfa-8 */
		d.ncie = 5;
	}
	d.begin = d.begin ? d.begin : 0x1000;
	d.range = d.range ? d.range : 0x40;
	return d;
}

/* The case's CIE and FDE at EH_FRAME, its .eh_frame_hdr at HDR; the end of its FDE. */
static size_t build_case(struct image *t, const struct cfi_case *c)
{
	size_t len_at, cie, fde, id_at;

	memset(t, 0, sizeof(*t));
	t->at = EH_FRAME;
	cie = t->at;
	len_at = put_length(t, c->len64);
	put_id(t, c->len64, 0);
	put_u8(t, c->version);
	put(t, c->aug, strlen(c->aug) + 1);
	if (c->version == 4) {
		put_u8(t, 8);				/* address size */
		put_u8(t, 0);				/* segment selector size */
	}
	put_uleb(t, c->code_align);
	put_sleb(t, c->data_align);
	if (c->version == 1)
		put_u8(t, 16);
	else
		put_uleb(t, 16);
	if (c->aug[0] == 'z') {
		struct image data = { .at = 0 };
		size_t len_pos;

		put_u8(t, 0);				/* its length, below */
		len_pos = t->at - 1;
		data.at = t->at;
		for (const char *ch = c->aug + 1; *ch; ch++) {
			if (*ch == 'R') {
				put_u8(t, c->fde_enc);
			} else if (*ch == 'L') {
				put_u8(t, 0x1b);
			} else if (*ch == 'P') {
				put_u8(t, c->personality_enc);
				put_encoded(t, c->personality_enc & 0x7f, 0x5000);
			}
		}
		t->b[len_pos] = (uint8_t)(t->at - data.at);
	}
	put(t, c->cie_insns, c->ncie);
	end_entry(t, len_at, c->len64);

	fde = t->at;
	len_at = put_length(t, c->len64);
	id_at = t->at;
	put_id(t, c->len64, id_at - cie);
	put_encoded(t, c->fde_enc, c->begin);
	put_encoded(t, c->fde_enc & 0x0f, c->range);
	if (c->aug[0] == 'z') {
		bool lsda = strchr(c->aug, 'L') != NULL;

		put_uleb(t, lsda ? 4 : 0);
		if (lsda)
			put_encoded(t, 0x1b, 0x6000);
	}
	put(t, c->insns, c->ninsns);
	end_entry(t, len_at, c->len64);

	/* .eh_frame_hdr: version, encodings, eh_frame_ptr, fde_count, the table. */
	{
		size_t end = t->at;

		t->at = HDR;
		put_bytes(t, "\x01\x1b\x03\x3b", 4);
		put_u32(t, (uint32_t)(EH_FRAME - (HDR + 4)));
		put_u32(t, 1);
		put_u32(t, c->begin - HDR);
		put_u32(t, (uint32_t)(fde - HDR));
		t->at = end;
	}
	return t->at;
}

static struct image case_image;

static struct cfi_image case_cfi(const struct image *t)
{
	return (struct cfi_image){
		.data = t->b, .size = IMAGE_SIZE, .elf = &elf, .hdr_vaddr = HDR, .hdr_off = HDR,
		.hdr = { .table = t->b + HDR + 12, .count = 1 },
	};
}

/*
 * A row as text: "none", "outermost", "other", or "step CFA RA RBP" with
 * the CFA as rsp+N or rbp+N (*rbp+N: the word stored there), the return
 * address as c+N (at CFA + N) and rbp as c+N, b+N (at rbp + N) or s
 * (unchanged); " signal" after a signal frame's.
 */
static void row_text(const struct cfi_row *row, char *buf, size_t size)
{
	static const char *const kinds[] = {
		[CFI_NO_ENTRY] = "none", [CFI_STEP] = "step", [CFI_OUTERMOST] = "outermost",
		[CFI_OTHER] = "other",
	};
	int n = snprintf(buf, size, "%s", kinds[row->kind]);

	if (row->kind == CFI_STEP && row->bp_saved)
		n += snprintf(buf + n, size - (size_t)n, " %s%s%+d c%+d %c%+d",
			      row->cfa_deref ? "*" : "", row->cfa_bp ? "rbp" : "rsp", row->cfa_off,
			      row->ra_off, row->bp_at_bp ? 'b' : 'c', row->bp_off);
	else if (row->kind == CFI_STEP)
		n += snprintf(buf + n, size - (size_t)n, " %s%s%+d c%+d s",
			      row->cfa_deref ? "*" : "", row->cfa_bp ? "rbp" : "rsp", row->cfa_off,
			      row->ra_off);
	if (row->signal)
		snprintf(buf + n, size - (size_t)n, " signal");
}

static void row_at(const struct cfi_image *img, uint64_t addr, char *buf, size_t size)
{
	struct cfi_row row;

	cfi_row_at(img, addr, &row);
	row_text(&row, buf, size);
}

/* Each case's rows at the ends of each of its intervals, and none past its function. */
static void test_table(void)
{
	for (size_t i = 0; i < NCASES; i++) {
		struct cfi_case c = defaults(&cases[i]);
		struct cfi_image img;
		size_t nrows = 0;

		build_case(&case_image, &c);
		img = case_cfi(&case_image);
		while (nrows < MAX_ROWS && c.rows[nrows].row)
			nrows++;
		for (size_t k = 0; k < nrows; k++) {
			uint32_t from = c.rows[k].at;
			uint32_t to = k + 1 < nrows ? c.rows[k + 1].at : c.range;
			uint64_t probe[2] = { c.begin + from, c.begin + (to > from ? to - 1 : from) };

			for (int e = 0; e < 2; e++) {
				char got[64];

				row_at(&img, probe[e], got, sizeof(got));
				if (strcmp(got, c.rows[k].row)) {
					printf("  %s at +0x%llx: '%s', expected '%s'\n", c.name,
					       (unsigned long long)(probe[e] - c.begin), got,
					       c.rows[k].row);
					test_current_failed = 1;
				}
			}
		}
		{
			char got[64];

			row_at(&img, c.begin + c.range, got, sizeof(got));
			if (strcmp(got, "none")) {
				printf("  %s past its end: '%s'\n", c.name, got);
				test_current_failed = 1;
			}
		}
	}
}

/* ---- --emit: the table for readelf ---- */

/* An ELF file of one section, .eh_frame, holding the case's bytes at their addresses. */
static int write_elf(const char *path, const struct image *t, size_t end)
{
	static const char names[] = "\0.eh_frame\0.shstrtab";
	size_t data_at = sizeof(Elf64_Ehdr), len = end - EH_FRAME;
	size_t names_at = data_at + len, sh_at = (names_at + sizeof(names) + 7) & ~(size_t)7;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_REL, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_shoff = sh_at, .e_ehsize = sizeof(Elf64_Ehdr), .e_shentsize = sizeof(Elf64_Shdr),
		.e_shnum = 3, .e_shstrndx = 2,
	};
	Elf64_Shdr sh[3] = {
		{ 0 },
		{ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC, .sh_addr = EH_FRAME,
		  .sh_offset = data_at, .sh_size = len, .sh_addralign = 8 },
		{ .sh_name = 11, .sh_type = SHT_STRTAB, .sh_offset = names_at,
		  .sh_size = sizeof(names), .sh_addralign = 1 },
	};
	static const uint8_t zeros[8];
	FILE *f = fopen(path, "wb");
	bool ok;

	if (!f)
		return -1;
	ok = fwrite(&eh, sizeof(eh), 1, f) == 1 && fwrite(t->b + EH_FRAME, len, 1, f) == 1 &&
	     fwrite(names, sizeof(names), 1, f) == 1 &&
	     fwrite(zeros, sh_at - names_at - sizeof(names), 1, f) <= 1 &&
	     fwrite(sh, sizeof(sh), 1, f) == 1;
	return fclose(f) || !ok ? -1 : 0;
}

/* The file name of a case: its name with '_' for what is not a letter or digit. */
static void case_file(char *buf, size_t size, const char *dir, const char *name,
		      const char *ext)
{
	size_t n = (size_t)snprintf(buf, size, "%s/", dir);

	for (const char *p = name; *p && n + 1 < size; p++)
		buf[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				   (*p >= '0' && *p <= '9') ? *p : '_';
	snprintf(buf + n, size - n, "%s", ext);
}

/* Writes DIR/NAME.o and DIR/NAME.rows ("ADDR ROW" where the row changes) for each case. */
static int emit(const char *dir)
{
	for (size_t i = 0; i < NCASES; i++) {
		struct cfi_case c = defaults(&cases[i]);
		struct cfi_image img;
		char path[4096], last[64] = "", row[64];
		size_t end;
		FILE *f;

		if (c.not_readelf)
			continue;
		end = build_case(&case_image, &c);
		img = case_cfi(&case_image);
		case_file(path, sizeof(path), dir, c.name, ".o");
		if (write_elf(path, &case_image, end))
			return 1;
		case_file(path, sizeof(path), dir, c.name, ".rows");
		if (!(f = fopen(path, "w")))
			return 1;
		for (uint64_t addr = c.begin; addr <= (uint64_t)c.begin + c.range; addr++) {
			row_at(&img, addr, row, sizeof(row));
			if (strcmp(row, last))
				fprintf(f, "%llx %s\n", (unsigned long long)addr, row);
			snprintf(last, sizeof(last), "%s", row);
		}
		if (fclose(f))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--emit"))
		return emit(argv[2]);
	build();
	RUN(test_prologue_body_epilogue);
	RUN(test_kinds);
	RUN(test_truncated_entries);
	RUN(test_table);
	return test_summary();
}
