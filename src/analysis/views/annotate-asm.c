/* SPDX-License-Identifier: MIT */
/* annotate --asm: the function's instructions from the code the recording kept. */
#include "analysis/views/annotate-private.h"

#include <inttypes.h>

#include "analysis/views/disasm.h"
#include "util/text.h"

#define INSN_TEXT_MAX 160

/* The function's samples in [from, to) of dso: addrs are sorted by dso, then address. */
static uint64_t samples_in(const struct annotate *a, uint32_t dso, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = a->addrs.len;
	uint64_t n = 0;

	/* The first at or after (dso, from). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct annotate_addr *x = &a->addrs.v[mid];

		if (x->dso < dso || (x->dso == dso && x->addr < from))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < a->addrs.len && a->addrs.v[i].dso == dso &&
	     a->addrs.v[i].addr < to; i++)
		n += a->addrs.v[i].samples;
	return n;
}

/* The end of a kept block of code, at most UINT64_MAX. */
static uint64_t code_end(const struct tr_code *c)
{
	return c->code.len > UINT64_MAX - c->addr ? UINT64_MAX : c->addr + c->code.len;
}

/*
 * From row *k on, the next block of code that holds a sample of the
 * function, at *k, with a disassembler for it in *d (NULL: none knows its
 * machine; close it); NULL when there is none.
 */
static const struct tr_code *next_block(const struct annotate *a, const struct model *m,
					size_t *k, struct disasm **d)
{
	for (; *k < m->t.codes.len; ++*k) {
		const struct tr_code *c = &m->t.codes.v[*k];

		if (samples_in(a, c->dso, c->addr, code_end(c))) {
			disasm_open(d, c->machine);
			return c;
		}
	}
	return NULL;
}

/* One instruction of a block: its address, length and text, and its samples. */
struct insn {
	uint64_t addr;
	size_t len;
	char text[INSN_TEXT_MAX];
	uint64_t samples;
};

/*
 * Decodes the instruction at offset off of block c: with no disassembler,
 * or where none decodes, one byte as ".byte 0xNN".
 */
static void decode(struct disasm *d, const struct tr_code *c, size_t off, const struct annotate *a,
		   struct insn *in)
{
	in->addr = c->addr + off;
	in->len = d ? disasm_one(d, c->code.data + off, c->code.len - off, in->addr, in->text,
				  sizeof(in->text)) : 0;
	if (!in->len) {
		in->len = 1;
		snprintf(in->text, sizeof(in->text), ".byte 0x%02x", c->code.data[off]);
	}
	in->samples = samples_in(a, c->dso, in->addr, in->addr + in->len);
}

static const char *dso_name(const struct model *m, uint32_t dso)
{
	const char *path = dso && dso <= m->t.dsos.len ? model_str(m, m->t.dsos.v[dso - 1].path)
						       : NULL;

	return path && *path ? path : "[unknown]";
}

/* The samples of the function in no kept block. */
static uint64_t samples_without_code(const struct annotate *a, const struct model *m)
{
	uint64_t in_code = 0, all = 0;

	for (size_t i = 0; i < a->addrs.len; i++)
		all += a->addrs.v[i].samples;
	for (size_t k = 0; k < m->t.codes.len; k++)
		in_code += samples_in(a, m->t.codes.v[k].dso, m->t.codes.v[k].addr,
				      code_end(&m->t.codes.v[k]));
	return in_code < all ? all - in_code : 0;
}

void annotate_print_asm(FILE *out, const struct annotate *a, const struct model *m)
{
	uint64_t missing = samples_without_code(a, m);
	const struct tr_code *c;
	struct disasm *d;
	struct insn in;

	for (size_t k = 0; (c = next_block(a, m, &k, &d)); k++) {
		fprintf(out, "#\n# Code: %s at 0x%" PRIx64 ", %" PRIu64 " bytes",
			text_escape(dso_name(m, c->dso)), c->addr, c->code.len);
		if (c->code.len < c->size)
			fprintf(out, " of %" PRIu64 " (cut)", c->size);
		fprintf(out, "%s\n#\n# Percent  Samples  Address  Instruction\n#\n",
			d ? "" : " (no disassembler for it: bytes only)");
		for (size_t off = 0; off < c->code.len; off += in.len) {
			decode(d, c, off, a, &in);
			if (in.samples)
				fprintf(out, "%8.2f%% %8" PRIu64, annotate_share(in.samples, a->samples),
					in.samples);
			else
				fprintf(out, "%18s", "");
			fprintf(out, "  %7" PRIx64 "  %s\n", in.addr, text_escape(in.text));
		}
		disasm_close(d);
	}
	if (missing || !a->addrs.len)
		fprintf(out, "#\n# %" PRIu64 " samples at addresses of no code the recording kept\n",
			missing);
}

void annotate_json_asm(struct json *j, const struct annotate *a, const struct model *m)
{
	const struct tr_code *c;
	struct disasm *d;
	struct insn in;

	json_begin_array(j, "code", JSON_LINES);
	for (size_t k = 0; (c = next_block(a, m, &k, &d)); k++) {
		json_begin_object(j, NULL, JSON_LINES);
		json_string(j, "dso", dso_name(m, c->dso));
		json_uint(j, "addr", c->addr);
		json_uint(j, "size", c->size);
		json_uint(j, "kept", c->code.len);
		json_bool(j, "disassembled", d != NULL);
		json_begin_array(j, "instructions", JSON_LINES);
		for (size_t off = 0; off < c->code.len; off += in.len) {
			decode(d, c, off, a, &in);
			json_begin_object(j, NULL, JSON_INLINE);
			json_uint(j, "addr", in.addr);
			json_uint(j, "samples", in.samples);
			json_ratio_or_null(j, "percent", 2, 100.0 * (double)in.samples,
					   (double)a->samples);
			json_string(j, "text", in.text);
			json_end(j);
		}
		json_end(j);
		json_end(j);
		disasm_close(d);
	}
	json_end(j);
	json_uint(j, "samples_without_code", samples_without_code(a, m));
}
