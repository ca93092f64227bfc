/* SPDX-License-Identifier: MIT */
/*
 * A reader of .eh_frame for the rules of one address: the FDE that covers
 * it (found through .eh_frame_hdr's search table), its CIE, and the call
 * frame instructions of both run up to the address. Only the CFA, rbp and
 * the return address are followed; any instruction this reader does not
 * know makes the row CFI_OTHER, never a guess. Expressions are evaluated
 * at the address where they come to a register plus a constant, or the
 * word stored there: linkers describe every PLT entry so, and gcc a
 * function that realigns its stack.
 */
#include "unwind/cfi.h"

#include <string.h>

/* DWARF register numbers of x86-64. */
#define DWARF_RBP 6
#define DWARF_RSP 7
#define DWARF_RIP 16	/* the return address column, which x86-64 names rip */

/* Pointer encodings (DW_EH_PE_*): the format in the low nibble, how to apply it above. */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_PCREL 0x10

/* Call frame instructions (DW_CFA_*). */
enum {
	CFA_ADVANCE_LOC = 0x40, CFA_OFFSET = 0x80, CFA_RESTORE = 0xc0,
	CFA_NOP = 0x00, CFA_ADVANCE_LOC1 = 0x02, CFA_ADVANCE_LOC2 = 0x03,
	CFA_ADVANCE_LOC4 = 0x04, CFA_OFFSET_EXTENDED = 0x05,
	CFA_RESTORE_EXTENDED = 0x06, CFA_UNDEFINED = 0x07, CFA_SAME_VALUE = 0x08,
	CFA_REGISTER = 0x09, CFA_REMEMBER_STATE = 0x0a, CFA_RESTORE_STATE = 0x0b,
	CFA_DEF_CFA = 0x0c, CFA_DEF_CFA_REGISTER = 0x0d, CFA_DEF_CFA_OFFSET = 0x0e,
	CFA_DEF_CFA_EXPRESSION = 0x0f, CFA_EXPRESSION = 0x10,
	CFA_OFFSET_EXTENDED_SF = 0x11, CFA_DEF_CFA_SF = 0x12,
	CFA_DEF_CFA_OFFSET_SF = 0x13, CFA_VAL_OFFSET = 0x14,
	CFA_VAL_OFFSET_SF = 0x15, CFA_VAL_EXPRESSION = 0x16,
	CFA_GNU_ARGS_SIZE = 0x2e, CFA_GNU_NEGATIVE_OFFSET_EXTENDED = 0x2f,
};

/* Deeper DW_CFA_remember_state nesting than compilers write is CFI_OTHER. */
#define STATE_STACK 8

/* DWARF expression operations (DW_OP_*) of the CFA expressions evaluated here. */
enum {
	OP_CONST1U = 0x08, OP_CONSTU = 0x10, OP_AND = 0x1a, OP_MINUS = 0x1c,
	OP_PLUS = 0x22, OP_PLUS_UCONST = 0x23, OP_SHL = 0x24, OP_GE = 0x2a,
	OP_DEREF = 0x06, OP_LIT0 = 0x30, OP_LIT31 = 0x4f, OP_BREG0 = 0x70, OP_BREGX = 0x92,
};

/* A PLT entry's expression needs 3; deeper ones are not evaluated. */
#define EXPR_STACK 8

/* A bounds-checked cursor over the file's bytes. */
struct reader {
	const uint8_t *p, *end;
	bool err;
};

static bool take(struct reader *r, void *to, size_t n)
{
	if (r->err || (size_t)(r->end - r->p) < n) {
		r->err = true;
		memset(to, 0, n);
		return false;
	}
	memcpy(to, r->p, n);
	r->p += n;
	return true;
}

static uint64_t read_u(struct reader *r, size_t n)
{
	uint64_t v = 0;

	take(r, &v, n);
	return v;
}

static int64_t read_s(struct reader *r, size_t n)
{
	uint64_t v = read_u(r, n);
	unsigned shift = 64 - 8 * (unsigned)n;

	return (int64_t)(v << shift) >> shift;
}

/* A LEB128 number's bits, with what sign-extends a signed one: its length and last byte. */
static uint64_t read_leb(struct reader *r, unsigned *shift, uint8_t *last)
{
	uint64_t v = 0;
	uint8_t b;

	*shift = 0;
	do {
		b = (uint8_t)read_u(r, 1);
		if (*shift < 64)
			v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
	} while ((b & 0x80) && !r->err);
	*last = b;
	return v;
}

static uint64_t read_uleb(struct reader *r)
{
	unsigned shift;
	uint8_t last;

	return read_leb(r, &shift, &last);
}

static int64_t read_sleb(struct reader *r)
{
	unsigned shift;
	uint8_t last;
	uint64_t v = read_leb(r, &shift, &last);

	if (shift < 64 && (last & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/*
 * A pointer of encoding enc; pcrel ones are relative to the field's ELF
 * address, which is its file offset plus delta. Other applications
 * (datarel, textrel, aligned) do not occur in .eh_frame entries that
 * matter here, so they fail the read.
 */
static uint64_t read_encoded(struct reader *r, const uint8_t *data, uint8_t enc,
			     uint64_t delta)
{
	uint64_t here = (uint64_t)(r->p - data) + delta, v;

	switch (enc & PE_FORMAT) {
	case 0x00: case 0x04: case 0x0c: v = read_u(r, 8); break;
	case 0x01: v = read_uleb(r); break;
	case 0x02: v = read_u(r, 2); break;
	case 0x03: v = read_u(r, 4); break;
	case 0x09: v = (uint64_t)read_sleb(r); break;
	case 0x0a: v = (uint64_t)read_s(r, 2); break;
	case 0x0b: v = (uint64_t)read_s(r, 4); break;
	default: r->err = true; return 0;
	}
	switch (enc & PE_APPLY) {
	case 0x00: return v;
	case PE_PCREL: return v + here;
	default: r->err = true; return 0;
	}
}

/*
 * The length that starts a CIE or FDE; the reader then ends with the
 * entry. *id_size: the size of the CIE id or pointer that follows, 8 after
 * a 64-bit length (as libunwind and gdb read it; readelf disagrees with
 * itself there).
 */
static bool read_entry(struct reader *r, size_t *id_size)
{
	uint64_t len = read_u(r, 4);

	*id_size = 4;
	if (len == 0xffffffff) {
		len = read_u(r, 8);
		*id_size = 8;
	}
	if (r->err || !len || len > (uint64_t)(r->end - r->p))
		return false;
	r->end = r->p + len;
	return true;
}

/* What a value on an expression's stack is relative to. */
enum expr_base { BASE_NONE, BASE_RSP, BASE_RBP, BASE_CFA };

/* A value on an expression's stack: base's value plus v, or the word stored there. */
struct expr_value {
	uint64_t v;
	uint8_t base;		/* enum expr_base */
	bool deref;
};

/*
 * The value of register reg plus off at the address pc: rsp's and rbp's
 * stay relative to them, the instruction pointer's (the return address
 * column) is pc, an ELF address whose low bits are the running one's (a
 * load moves a file by whole pages). Only a PLT entry's expression reads
 * it, and a PLT entry is never a caller, where pc would be a return
 * address less one. False for another register.
 */
static bool breg_value(uint64_t reg, int64_t off, uint64_t pc, struct expr_value *to)
{
	if (reg == DWARF_RSP || reg == DWARF_RBP)
		*to = (struct expr_value){ .v = (uint64_t)off,
					   .base = reg == DWARF_RSP ? BASE_RSP : BASE_RBP };
	else if (reg == DWARF_RIP)
		*to = (struct expr_value){ .v = pc + (uint64_t)off };
	else
		return false;
	return true;
}

/* Applies binary operation op to a and b, into a; false where it is not a base plus a constant. */
static bool binary_op(uint8_t op, struct expr_value *a, const struct expr_value *b)
{
	if (a->deref || b->deref)
		return false;
	if (op == OP_PLUS && !(a->base && b->base)) {
		a->base = a->base ? a->base : b->base;
		a->v += b->v;
		return true;
	}
	if (op == OP_MINUS && !b->base) {
		a->v -= b->v;
		return true;
	}
	if (a->base || b->base)
		return false;
	switch (op) {
	case OP_AND: a->v &= b->v; return true;
	case OP_SHL: a->v = b->v < 64 ? a->v << b->v : 0; return true;
	case OP_GE: a->v = (int64_t)a->v >= (int64_t)b->v; return true;
	default: return false;
	}
}

/*
 * Evaluates the expression in r at the address pc, from a stack holding
 * the CFA when cfa_pushed (as for a register's DW_CFA_expression): its
 * value, when that is a base plus a constant or the word stored at one.
 * Such are the x86-64 linkers' expressions for PLT entries (rsp + 8, plus
 * 8 once the entry's push ran, which pc's low bits tell) and gcc's for a
 * function that realigns its stack (the CFA stored below rbp, rbp saved
 * at rbp).
 */
static bool evaluate(struct reader r, uint64_t pc, bool cfa_pushed, struct expr_value *result)
{
	struct expr_value stack[EXPR_STACK] = { { .base = BASE_CFA } };
	unsigned n = cfa_pushed;

	while (r.p < r.end && !r.err) {
		uint8_t op = (uint8_t)read_u(&r, 1);
		struct expr_value v = {0};
		uint64_t reg;

		if (op >= OP_LIT0 && op <= OP_LIT31) {
			v.v = op - OP_LIT0;
		} else if (op >= OP_BREG0 && op < OP_BREG0 + 32) {
			if (!breg_value(op - OP_BREG0, read_sleb(&r), pc, &v))
				return false;
		} else if (op == OP_BREGX) {
			reg = read_uleb(&r);
			if (!breg_value(reg, read_sleb(&r), pc, &v))
				return false;
		} else if (op == OP_CONST1U) {
			v.v = read_u(&r, 1);
		} else if (op == OP_CONSTU) {
			v.v = read_uleb(&r);
		} else if (op == OP_PLUS_UCONST) {
			if (!n || stack[n - 1].deref)
				return false;
			stack[n - 1].v += read_uleb(&r);
			continue;
		} else if (op == OP_DEREF) {
			/* Only a word at a base: the walk reads it from the stack copy. */
			if (!n || !stack[n - 1].base || stack[n - 1].deref)
				return false;
			stack[n - 1].deref = true;
			continue;
		} else {
			if (n < 2 || !binary_op(op, &stack[n - 2], &stack[n - 1]))
				return false;
			n--;
			continue;
		}
		if (n == EXPR_STACK)
			return false;
		stack[n++] = v;
	}
	if (r.err || !n)
		return false;
	*result = stack[n - 1];
	return true;
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool has_aug_data;	/* 'z': FDEs carry augmentation data too */
	bool signal;
	struct reader insns;
};

static bool parse_cie(struct reader r, const uint8_t *data, uint64_t delta, struct cie *c)
{
	const char *aug;
	uint8_t version;
	uint64_t aug_len;
	size_t id_size;
	struct reader a;

	memset(c, 0, sizeof(*c));
	c->fde_enc = 0;
	if (!read_entry(&r, &id_size) || read_u(&r, id_size) != 0)
		return false;
	version = (uint8_t)read_u(&r, 1);
	aug = (const char *)r.p;
	while (!r.err && read_u(&r, 1))
		;
	if (r.err || (version != 1 && version != 3 && version != 4))
		return false;
	if (version == 4 && (read_u(&r, 1) != 8 || read_u(&r, 1) != 0))
		return false;	/* address and segment selector sizes */
	c->code_align = read_uleb(&r);
	c->data_align = read_sleb(&r);
	c->ra_reg = version == 1 ? read_u(&r, 1) : read_uleb(&r);
	if (aug[0] != 'z')
		goto done;
	c->has_aug_data = true;
	aug_len = read_uleb(&r);
	if (r.err || aug_len > (uint64_t)(r.end - r.p))
		return false;
	a = (struct reader){ .p = r.p, .end = r.p + aug_len };
	r.p += aug_len;
	for (const char *ch = aug + 1; *ch && !a.err; ch++) {
		switch (*ch) {
		case 'R':
			c->fde_enc = (uint8_t)read_u(&a, 1);
			break;
		case 'L':
			read_u(&a, 1);
			break;
		case 'P':
			/* Its value does not matter, only its size. */
			read_encoded(&a, data, (uint8_t)read_u(&a, 1) & PE_FORMAT, delta);
			break;
		case 'S':
			c->signal = true;
			break;
		default:
			/* Not known: what the augmentation data holds is; stop reading it. */
			goto aug_done;
		}
	}
aug_done:
	if (a.err)
		return false;
done:
	c->insns = r;
	return !r.err;
}

/* RULE_OFFSET: saved at CFA + off; RULE_AT_BP: at rbp + off (rbp's alone). */
enum rule_how { RULE_SAME, RULE_UNDEFINED, RULE_OFFSET, RULE_AT_BP, RULE_OTHER };

struct rule {
	uint8_t how;
	int64_t off;
};

struct cfi_state {
	uint64_t cfa_reg;
	int64_t cfa_off;
	bool cfa_deref;		/* the CFA is the word stored at cfa_reg + cfa_off */
	bool cfa_other;		/* an expression evaluate() cannot reduce */
	struct rule bp, ra;
	bool sp_rule;		/* a rule for rsp itself, which this reduction does not follow */
};

/* The rule of register reg in st, or NULL for one that is not followed. */
static struct rule *rule_of(struct cfi_state *st, const struct cie *c, uint64_t reg)
{
	if (reg == DWARF_RBP)
		return &st->bp;
	if (reg == c->ra_reg)
		return &st->ra;
	if (reg == DWARF_RSP)
		st->sp_rule = true;
	return NULL;
}

static void set_rule(struct cfi_state *st, const struct cie *c, uint64_t reg,
		     uint8_t how, int64_t off)
{
	struct rule *rule = rule_of(st, c, reg);

	if (rule)
		*rule = (struct rule){ .how = how, .off = off };
}

static void restore_rule(struct cfi_state *st, const struct cfi_state *init,
			 const struct cie *c, uint64_t reg)
{
	if (reg == DWARF_RBP)
		st->bp = init->bp;
	else if (reg == c->ra_reg)
		st->ra = init->ra;
	else if (reg == DWARF_RSP)
		st->sp_rule = init->sp_rule;
}

/* DW_CFA_def_cfa_expression of r, evaluated at addr. */
static void cfa_expression(struct cfi_state *st, struct reader r, uint64_t addr)
{
	struct expr_value v = {0};

	st->cfa_other = !evaluate(r, addr, false, &v) ||
			(v.base != BASE_RSP && v.base != BASE_RBP);
	st->cfa_reg = v.base == BASE_RBP ? DWARF_RBP : DWARF_RSP;
	st->cfa_off = (int64_t)v.v;
	st->cfa_deref = v.deref;
}

/* DW_CFA_expression of r for register reg: where it is saved, evaluated at addr. */
static void expression_rule(struct cfi_state *st, const struct cie *c, uint64_t reg,
			    struct reader r, uint64_t addr)
{
	struct expr_value v = {0};
	uint8_t how = RULE_OTHER;

	if (evaluate(r, addr, true, &v) && !v.deref) {
		if (v.base == BASE_CFA)
			how = RULE_OFFSET;
		else if (v.base == BASE_RBP && reg == DWARF_RBP)
			how = RULE_AT_BP;
	}
	set_rule(st, c, reg, how, (int64_t)v.v);
}

/*
 * Runs instructions while the location stays at or below until, for the
 * row at addr. Returns false on an instruction it does not know or a
 * malformed one.
 */
static bool run(struct reader r, const struct cie *c, struct cfi_state *st,
		const struct cfi_state *init, uint64_t loc, uint64_t until, uint64_t addr)
{
	struct cfi_state saved[STATE_STACK];
	unsigned depth = 0;

	while (r.p < r.end && !r.err) {
		uint8_t op = (uint8_t)read_u(&r, 1), low = op & 0x3f;
		uint64_t reg, delta = 0;
		int64_t off;

		switch (op & 0xc0) {
		case CFA_ADVANCE_LOC:
			delta = low;
			goto advance;
		case CFA_OFFSET:
			set_rule(st, c, low, RULE_OFFSET, (int64_t)read_uleb(&r) * c->data_align);
			continue;
		case CFA_RESTORE:
			restore_rule(st, init, c, low);
			continue;
		}
		switch (op) {
		case CFA_NOP:
			break;
		case CFA_ADVANCE_LOC1:
			delta = read_u(&r, 1);
			goto advance;
		case CFA_ADVANCE_LOC2:
			delta = read_u(&r, 2);
			goto advance;
		case CFA_ADVANCE_LOC4:
			delta = read_u(&r, 4);
			goto advance;
		case CFA_OFFSET_EXTENDED:
			reg = read_uleb(&r);
			set_rule(st, c, reg, RULE_OFFSET, (int64_t)read_uleb(&r) * c->data_align);
			break;
		case CFA_OFFSET_EXTENDED_SF:
			reg = read_uleb(&r);
			set_rule(st, c, reg, RULE_OFFSET, read_sleb(&r) * c->data_align);
			break;
		case CFA_GNU_NEGATIVE_OFFSET_EXTENDED:
			reg = read_uleb(&r);
			set_rule(st, c, reg, RULE_OFFSET, -(int64_t)read_uleb(&r) * c->data_align);
			break;
		case CFA_RESTORE_EXTENDED:
			restore_rule(st, init, c, read_uleb(&r));
			break;
		case CFA_UNDEFINED:
			set_rule(st, c, read_uleb(&r), RULE_UNDEFINED, 0);
			break;
		case CFA_SAME_VALUE:
			set_rule(st, c, read_uleb(&r), RULE_SAME, 0);
			break;
		case CFA_REGISTER:
		case CFA_VAL_OFFSET:
			reg = read_uleb(&r);
			read_uleb(&r);
			set_rule(st, c, reg, RULE_OTHER, 0);
			break;
		case CFA_VAL_OFFSET_SF:
			reg = read_uleb(&r);
			read_sleb(&r);
			set_rule(st, c, reg, RULE_OTHER, 0);
			break;
		case CFA_EXPRESSION:
			reg = read_uleb(&r);
			off = (int64_t)read_uleb(&r);
			if ((uint64_t)off > (uint64_t)(r.end - r.p))
				return false;
			expression_rule(st, c, reg, (struct reader){ .p = r.p, .end = r.p + off },
					addr);
			r.p += off;
			break;
		case CFA_VAL_EXPRESSION:
			reg = read_uleb(&r);
			off = (int64_t)read_uleb(&r);
			if ((uint64_t)off > (uint64_t)(r.end - r.p))
				return false;
			r.p += off;
			set_rule(st, c, reg, RULE_OTHER, 0);
			break;
		case CFA_REMEMBER_STATE:
			if (depth == STATE_STACK)
				return false;
			saved[depth++] = *st;
			break;
		case CFA_RESTORE_STATE:
			if (!depth)
				return false;
			/* The CFA is part of the state that DW_CFA_restore_state brings back. */
			*st = saved[--depth];
			break;
		case CFA_DEF_CFA:
			st->cfa_reg = read_uleb(&r);
			st->cfa_off = (int64_t)read_uleb(&r);
			st->cfa_other = st->cfa_deref = false;
			break;
		case CFA_DEF_CFA_SF:
			st->cfa_reg = read_uleb(&r);
			st->cfa_off = read_sleb(&r) * c->data_align;
			st->cfa_other = st->cfa_deref = false;
			break;
		/* These change a register and offset rule only, not an expression's. */
		case CFA_DEF_CFA_REGISTER:
			st->cfa_reg = read_uleb(&r);
			st->cfa_other |= st->cfa_deref;
			break;
		case CFA_DEF_CFA_OFFSET:
			st->cfa_off = (int64_t)read_uleb(&r);
			st->cfa_other |= st->cfa_deref;
			break;
		case CFA_DEF_CFA_OFFSET_SF:
			st->cfa_off = read_sleb(&r) * c->data_align;
			st->cfa_other |= st->cfa_deref;
			break;
		case CFA_DEF_CFA_EXPRESSION:
			off = (int64_t)read_uleb(&r);
			if ((uint64_t)off > (uint64_t)(r.end - r.p))
				return false;
			cfa_expression(st, (struct reader){ .p = r.p, .end = r.p + off }, addr);
			r.p += off;
			break;
		case CFA_GNU_ARGS_SIZE:
			read_uleb(&r);
			break;
		default:
			return false;
		}
		continue;
advance:
		loc += delta * c->code_align;
		if (loc > until)
			return !r.err;
	}
	return !r.err;
}

/* The search table's last entry that starts at or below addr: its FDE's address. */
static bool find_fde(const struct cfi_image *img, uint64_t addr, uint64_t *fde)
{
	int32_t start, fde_rel;

	if (!eh_hdr_find(&img->hdr, (int64_t)(addr - img->hdr_vaddr), &start, &fde_rel))
		return false;
	*fde = img->hdr_vaddr + (uint64_t)(int64_t)fde_rel;
	return true;
}

static void row_of_state(const struct cfi_state *st, struct cfi_row *row)
{
	row->kind = CFI_OTHER;
	if (st->ra.how == RULE_UNDEFINED) {
		row->kind = CFI_OUTERMOST;
		return;
	}
	if (st->cfa_other || st->sp_rule || st->ra.how != RULE_OFFSET ||
	    (st->cfa_reg != DWARF_RSP && st->cfa_reg != DWARF_RBP) ||
	    (st->bp.how != RULE_SAME && st->bp.how != RULE_OFFSET && st->bp.how != RULE_AT_BP) ||
	    st->cfa_off != (int32_t)st->cfa_off || st->ra.off != (int32_t)st->ra.off ||
	    st->bp.off != (int32_t)st->bp.off)
		return;
	row->kind = CFI_STEP;
	row->cfa_bp = st->cfa_reg == DWARF_RBP;
	row->cfa_deref = st->cfa_deref;
	row->cfa_off = (int32_t)st->cfa_off;
	row->ra_off = (int32_t)st->ra.off;
	row->bp_saved = st->bp.how == RULE_OFFSET || st->bp.how == RULE_AT_BP;
	row->bp_at_bp = st->bp.how == RULE_AT_BP;
	row->bp_off = (int32_t)st->bp.off;
}

void cfi_row_at(const struct cfi_image *img, uint64_t addr, struct cfi_row *row)
{
	struct cfi_state st = { .cfa_reg = DWARF_RSP }, init;
	uint64_t fde_vaddr, fde_off, delta, cie_field, cie_rel, begin, range;
	const struct dso_load *l;
	struct reader r;
	size_t id_size;
	struct cie c;

	memset(row, 0, sizeof(*row));
	row->kind = CFI_NO_ENTRY;
	if (!find_fde(img, addr, &fde_vaddr) ||
	    !(l = dso_load_of_vaddr(img->elf, fde_vaddr)))
		return;
	/* The FDE and its CIE lie in one segment: offsets and addresses differ by one delta. */
	delta = l->vaddr - l->offset;
	fde_off = fde_vaddr - delta;
	if (fde_off >= img->size)
		return;
	r = (struct reader){ .p = img->data + fde_off, .end = img->data + img->size };
	if (!read_entry(&r, &id_size))
		return;
	cie_field = (uint64_t)(r.p - img->data);
	cie_rel = read_u(&r, id_size);
	if (r.err || !cie_rel || cie_rel > cie_field)
		return;
	if (!parse_cie((struct reader){ .p = img->data + cie_field - cie_rel,
					.end = img->data + img->size },
		       img->data, delta, &c))
		return;
	begin = read_encoded(&r, img->data, c.fde_enc, delta);
	range = read_encoded(&r, img->data, c.fde_enc & PE_FORMAT, 0);
	if (r.err || addr < begin || addr - begin >= range)
		return;
	if (c.has_aug_data) {
		uint64_t len = read_uleb(&r);

		if (r.err || len > (uint64_t)(r.end - r.p))
			return;
		r.p += len;
	}
	row->kind = CFI_OTHER;
	row->signal = c.signal;
	if (!run(c.insns, &c, &st, &st, begin, UINT64_MAX, addr))
		return;
	init = st;
	if (!run(r, &c, &st, &init, begin, addr, addr) || c.signal)
		return;
	row_of_state(&st, row);
}
