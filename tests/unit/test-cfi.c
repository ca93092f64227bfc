/* SPDX-License-Identifier: MIT */
/*
 * cfi.c against call frame information written by hand: an .eh_frame_hdr
 * and an .eh_frame with a prologue, a frame-pointer body, an epilogue
 * between remember and restore state, a CFA expression, an undefined
 * return address and a signal frame's CIE, each row checked at the
 * addresses where it changes.
 */
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
	fde[1] = put_fde(&im, cie, 0x2000, 0x10, "\x0f\x02\x77\x08", 4);	/* cfa expression */
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
 * A file cut anywhere in its entries gives some row and reads nothing past
 * its end (the copy is exactly that long, for the sanitizer to see).
 */
static void test_truncated_entries(void)
{
	struct cfi_row row;

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
		CHECK(row.kind <= CFI_OTHER);
		free(copy);
	}
	load.filesz = IMAGE_SIZE;
}

int main(void)
{
	build();
	RUN(test_prologue_body_epilogue);
	RUN(test_kinds);
	RUN(test_truncated_entries);
	return test_summary();
}
