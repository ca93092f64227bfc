/* SPDX-License-Identifier: MIT */
#include "symbols/symindex.h"

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "util/sorted.h"
#include "util/vec.h"

struct sym_entry {
	uint64_t value;		/* the address libdwfl gives the symbol */
	uint64_t size;
	/*
	 * The furthest end (value + size, at most UINT64_MAX; value when
	 * sizeless) of the entries up to this one: of the globals', of all.
	 * What addrinfo calls min_label, and where a search for the symbols
	 * containing an address can stop.
	 */
	uint64_t reach_global, reach_all;
	const char *name;	/* in the ELF file's string table, which libdwfl keeps */
	uint32_t order;		/* addrinfo's search order: globals, then locals, each by table index */
	uint8_t binding;	/* addrinfo's preference: global 3, weak 2, local 1, others 0 */
	bool local;		/* searched only when no global names the address */
};

/* More symbols than one address has inside it are left to addrinfo. */
#define CONTAINING_MAX 64

static uint8_t binding_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

static int by_address(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static uint64_t entry_end(const struct sym_entry *e)
{
	return e->size > UINT64_MAX - e->value ? UINT64_MAX : e->value + e->size;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void sym_index_build(struct sym_index *ix, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	int first_global = dwfl_module_getsymtab_first_global(mod);
	uint64_t reach_global = 0, reach_all = 0;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;

	/* ppc64's function descriptors give addrinfo a second address per symbol. */
	ix->usable = -1;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine == EM_PPC64 ||
	    n > (int)SYM_INDEX_MAX)
		return;
	ix->usable = 1;
	if (n < 2 || first_global < 0)
		return;		/* addrinfo names nothing: neither does the empty index */
	ix->first_global = first_global;
	/*
	 * n is the table's size over the entry size it claims; entries are
	 * added as libelf reads them from the file, so the index grows with
	 * the symbols the file holds.
	 */
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL);
		struct sym_entry *e;
		int type;

		/* The symbols addrinfo considers (search_table). */
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		e = VEC_PUSH(&ix->entries);
		e->value = value;
		e->size = sym.st_size;
		e->name = name;
		e->local = i < first_global;
		e->order = (uint32_t)(e->local ? n + i : i);
		e->binding = binding_rank(&sym);
	}
	qsort(ix->entries.v, ix->entries.len, sizeof(*ix->entries.v), by_address);
	for (size_t i = 0; i < ix->entries.len; i++) {
		struct sym_entry *e = &ix->entries.v[i];

		reach_all = max_u64(reach_all, entry_end(e));
		if (!e->local)
			reach_global = max_u64(reach_global, entry_end(e));
		e->reach_all = reach_all;
		e->reach_global = reach_global;
	}
}

void sym_index_free(struct sym_index *ix)
{
	VEC_FREE(&ix->entries);
	ix->usable = 0;
}

/* The last entry at or below addr, or -1. */
static ptrdiff_t last_at_or_below(const struct sym_index *ix, uint64_t addr)
{
	return (ptrdiff_t)sorted_at_or_below(ix->entries.v, ix->entries.len, sizeof(*ix->entries.v),
					     offsetof(struct sym_entry, value), addr) - 1;
}

/* Whether a symbol without a size, of the searched passes, starts at value. */
static bool sizeless_at(const struct sym_index *ix, uint64_t value, bool locals_searched)
{
	for (ptrdiff_t i = last_at_or_below(ix, value); i >= 0 && ix->entries.v[i].value == value; i--) {
		if (!ix->entries.v[i].size && (!ix->entries.v[i].local || locals_searched))
			return true;
	}
	return false;
}

static int by_order(const void *a, const void *b)
{
	const struct sym_entry *x = *(const struct sym_entry *const *)a;
	const struct sym_entry *y = *(const struct sym_entry *const *)b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Of the sized symbols of one pass that contain the address, the one
 * addrinfo keeps, trying them in table order: a later start, a stronger
 * binding, or the same start with a smaller size and no weaker binding
 * replaces the one kept (try_sym_value).
 */
static const struct sym_entry *preferred(const struct sym_entry **in, size_t n)
{
	const struct sym_entry *best = NULL;

	qsort(in, n, sizeof(*in), by_order);
	for (size_t i = 0; i < n; i++) {
		const struct sym_entry *e = in[i];

		if (!best || best->value < e->value || best->binding < e->binding ||
		    (best->value == e->value && best->size > e->size &&
		     best->binding <= e->binding))
			best = e;
	}
	return best;
}

static const char *addrinfo(Dwfl_Module *mod, uint64_t addr, struct sym_extent *ext)
{
	GElf_Off offset;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(mod, addr, &offset, &sym, NULL, NULL, NULL);

	ext->start = addr - offset;
	ext->size = name ? sym.st_size : 0;
	return name;
}

static const char *entry_name(const struct sym_entry *e, struct sym_extent *ext)
{
	ext->start = e->value;
	ext->size = e->size;
	return e->name;
}

const char *sym_index_lookup(const struct sym_index *ix, Dwfl_Module *mod, uint64_t addr,
			     struct sym_extent *ext)
{
	const struct sym_entry *globals[CONTAINING_MAX], *locals[CONTAINING_MAX];
	ptrdiff_t last = last_at_or_below(ix, addr);
	size_t nglobals = 0, nlocals = 0;
	bool locals_searched = ix->first_global > 1;
	uint64_t reach;

	if (ix->usable < 0)
		return addrinfo(mod, addr, ext);
	for (ptrdiff_t i = last; i >= 0; i--) {
		const struct sym_entry *e = &ix->entries.v[i];

		if (e->reach_all <= addr && e->reach_all != UINT64_MAX)
			break;	/* nothing at or below i reaches addr */
		if (!e->size || addr - e->value >= e->size)
			continue;
		if ((e->local ? nlocals : nglobals) == CONTAINING_MAX)
			return addrinfo(mod, addr, ext);
		if (e->local)
			locals[nlocals++] = e;
		else
			globals[nglobals++] = e;
	}
	if (nglobals)
		return entry_name(preferred(globals, nglobals), ext);
	/* A global label at addr names it if it is in addr's section, which addrinfo knows. */
	if (sizeless_at(ix, addr, false))
		return addrinfo(mod, addr, ext);
	if (locals_searched && nlocals)
		return entry_name(preferred(locals, nlocals), ext);
	/*
	 * No sized symbol contains addr: only a label at the furthest end
	 * below it (min_label) may name it, again by its section.
	 */
	ext->size = 0;
	if (last < 0)
		return NULL;
	reach = locals_searched ? ix->entries.v[last].reach_all : ix->entries.v[last].reach_global;
	return sizeless_at(ix, reach, locals_searched) ? addrinfo(mod, addr, ext) : NULL;
}

const char *sym_index_name(const struct sym_index *ix, Dwfl_Module *mod, uint64_t addr)
{
	struct sym_extent ext;

	return sym_index_lookup(ix, mod, addr, &ext);
}
