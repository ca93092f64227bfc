/* SPDX-License-Identifier: MIT */
/*
 * The Python reader's code objects: read at their first frame, their
 * location tables made line runs, kept in a bounded cache by address and
 * checked again at each frame.
 */
#include <stdlib.h>
#include <string.h>

#include "record/python-internal.h"
#include "util/xalloc.h"

/* A location table varint: six bits a byte, low group first, bit 6 set when more follow. */
static uint32_t table_varint(const uint8_t **p, const uint8_t *end)
{
	uint32_t v = 0;

	for (unsigned shift = 0; *p < end && shift < 32; shift += 6) {
		uint8_t b = *(*p)++;

		v |= (uint32_t)(b & 63) << shift;
		if (!(b & 64))
			break;
	}
	return v;
}

/*
 * The lines of a code object's location table (3.11+), as runs into
 * pr->runs: entries of a head byte (bit 7 set, a kind in bits 3-6, code
 * units covered less one in bits 0-2) and the bytes of their kind; kinds
 * 10-12 move the line by kind - 10, 13 and 14 by a signed varint, 15 has
 * no line. Read once, so that a frame's line is a search, however long
 * the table.
 */
static uint32_t table_runs(struct pyreader *pr, uint32_t len, int32_t firstlineno)
{
	const uint8_t *p = pr->table, *end = p + len;
	int64_t line = firstlineno;
	uint32_t unit_end = 0, n = 0;

	while (p < end) {
		uint8_t head = *p++;
		unsigned kind = head >> 3 & 15;
		uint32_t at;

		if (!(head & 0x80))
			continue;
		if (kind >= 10 && kind <= 12) {
			line += kind - 10;
		} else if (kind == 13 || kind == 14) {
			uint32_t v = table_varint(&p, end);

			line += v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
		}
		unit_end += ((head & 7) + 1) * 2;
		at = kind == 15 || line <= 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
		if (n && pr->runs[n - 1].line == at)
			pr->runs[n - 1].end = unit_end;
		else
			pr->runs[n++] = (struct line_run){ .end = unit_end, .line = at };
		while (p < end && !(*p & 0x80))
			p++;
	}
	return n;
}

/* The line of the instruction at byte offset at of code; 0 when unknown. */
static uint32_t code_line(const struct py_code *code, int64_t at)
{
	uint32_t lo = 0, hi = code->nruns;

	if (at < 0)
		return code->firstlineno > 0 ? (uint32_t)code->firstlineno : 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (code->runs[mid].end > at)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < code->nruns ? code->runs[lo].line : 0;
}

static size_t code_set(uint64_t proc, uint64_t addr)
{
	return (size_t)(hash_u64(addr ^ hash_u64(proc)) % CODE_SETS) * CODE_WAYS;
}

static struct py_code *code_find(struct pyreader *pr, uint64_t proc, uint64_t addr)
{
	struct py_code *set = &pr->codes[code_set(proc, addr)];

	for (int w = 0; w < CODE_WAYS; w++)
		if (set[w].proc == proc && set[w].addr == addr)
			return &set[w];
	return NULL;
}

static void code_drop(struct pyreader *pr, struct py_code *c)
{
	pr->code_bytes -= c->nruns * sizeof(*c->runs);
	free(c->runs);
	memset(c, 0, sizeof(*c));
}

static void code_evict(struct pyreader *pr, struct py_code *c)
{
	if (!c->proc)
		return;
	code_drop(pr, c);
	pr->counts[PY_CODES_EVICTED]++;
}

/*
 * A slot for a code object of nruns runs: room made first by evicting
 * slots in turn, each used since the hand last passed given another turn
 * (so the code a program runs all the time stays), then the set's free or
 * least recently used one.
 */
static struct py_code *code_slot(struct pyreader *pr, uint64_t proc, uint64_t addr,
				 uint32_t nruns)
{
	size_t slots = CODE_SETS * CODE_WAYS, need = nruns * sizeof(struct line_run);
	struct py_code *set = &pr->codes[code_set(proc, addr)], *victim = set;

	for (size_t i = 0; pr->code_bytes + need > CODE_BYTES && i < 2 * slots; i++) {
		struct py_code *c = &pr->codes[pr->hand];

		pr->hand = (pr->hand + 1) % slots;
		if (c->referenced)
			c->referenced = false;
		else
			code_evict(pr, c);
	}
	for (int w = 0; w < CODE_WAYS; w++) {
		if (!set[w].proc) {
			victim = &set[w];
			break;
		}
		if (pr->read - set[w].used > pr->read - victim->used)
			victim = &set[w];
	}
	code_evict(pr, victim);
	return victim;
}

/* The code object at addr, read at its first frame (within the read's budget). */
static int code_at(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint64_t addr,
		   const struct py_code **out)
{
	const struct py_layout *l = p->layout;
	uint8_t obj[CODE_LINETABLE + 8];
	uint64_t type, filename, qualname, linetable, func;
	int32_t firstlineno;
	int64_t table_len;
	uint32_t nruns = 0;
	struct py_code *code = code_find(pr, p->serial, addr);
	int err;

	if (code) {
		code->used = pr->read;
		code->referenced = true;
		*out = code;
		return 0;
	}
	if ((err = py_peek(pr, pid, addr, obj, sizeof(obj))))
		return err;
	memcpy(&type, obj + OBJECT_TYPE, sizeof(type));
	memcpy(&filename, obj + CODE_FILENAME, sizeof(filename));
	memcpy(&qualname, obj + CODE_QUALNAME, sizeof(qualname));
	memcpy(&linetable, obj + CODE_LINETABLE, sizeof(linetable));
	memcpy(&firstlineno, obj + l->code_firstlineno, sizeof(firstlineno));
	if (type != p->code_type)
		return -EFAULT;
	if ((err = py_peek(pr, pid, linetable + VAR_SIZE, &table_len, sizeof(table_len))) ||
	    (err = py_read_str(pr, l, pid, qualname, pr->func)) ||
	    (err = py_read_str(pr, l, pid, filename, pr->file)))
		return err;
	if (table_len < 0)
		return -EFAULT;
	if (table_len > MAX_LINETABLE) {
		pr->counts[PY_TABLES_TOO_LONG]++;
	} else {
		if (table_len &&
		    (err = py_peek(pr, pid, linetable + BYTES_DATA, pr->table, (size_t)table_len)))
			return err;
		nruns = table_runs(pr, (uint32_t)table_len, firstlineno);
	}
	func = pr->name(pr->name_arg, pr->func, pr->file);
	code = code_slot(pr, p->serial, addr, nruns);
	*code = (struct py_code){
		.proc = p->serial, .addr = addr, .units = addr + l->code_units, .func = func,
		.used = pr->read, .firstlineno = firstlineno, .nruns = nruns,
		.runs = xmemdup(pr->runs, nruns * sizeof(*pr->runs)),
	};
	memcpy(code->fingerprint, obj + CODE_FINGERPRINT, FINGERPRINT_LEN);
	pr->code_bytes += nruns * sizeof(*pr->runs);
	*out = code;
	return 0;
}

/* The fingerprint of the code object at addr read with the thread state, NULL when none was. */
static const uint8_t *print_read(const struct pyreader *pr, uint64_t addr)
{
	for (uint32_t i = 0; i < pr->prints; i++)
		if (pr->print_addr[i] == addr)
			return pr->print[i];
	return NULL;
}

/*
 * Drops the code objects of frames whose address now holds another one,
 * checking them all in one read, but for those whose fingerprints came
 * with the thread state.
 */
static int check_codes(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint32_t n)
{
	struct iovec local[PY_MAX_FRAMES], remote[PY_MAX_FRAMES];
	uint8_t now[PY_MAX_FRAMES][FINGERPRINT_LEN];
	struct py_code *known[PY_MAX_FRAMES];
	uint32_t nknown = 0;
	int err;

	for (uint32_t k = 0; k < n; k++) {
		struct py_code *c = code_find(pr, p->serial, pr->raw[k].code);
		const uint8_t *print = c ? print_read(pr, c->addr) : NULL;

		if (print && memcmp(print, c->fingerprint, FINGERPRINT_LEN))
			code_drop(pr, c);
		if (!c || print)
			continue;
		known[nknown] = c;
		local[nknown] = (struct iovec){ now[nknown], FINGERPRINT_LEN };
		remote[nknown] = (struct iovec){
			(void *)(uintptr_t)(c->addr + CODE_FINGERPRINT), FINGERPRINT_LEN };
		nknown++;
	}
	if (!nknown)
		return 0;
	err = py_read_ranges(pr, pid, local, remote, nknown, nknown * FINGERPRINT_LEN);
	/* A code object met twice was dropped at the first. */
	for (uint32_t i = 0; !err && i < nknown; i++)
		if (known[i]->proc && memcmp(now[i], known[i]->fingerprint, FINGERPRINT_LEN))
			code_drop(pr, known[i]);
	return err;
}

/* The frames walked into pr->raw, checked and named into st->frames. */
int py_name_frames(struct pyreader *pr, struct pyproc *p, uint32_t pid, struct py_stack *st)
{
	int err = check_codes(pr, p, pid, st->nframes);

	for (uint32_t k = 0; !err && k < st->nframes; k++) {
		const struct py_code *c;

		err = code_at(pr, p, pid, pr->raw[k].code, &c);
		if (!err) {
			st->frames[k].func = c->func;
			st->frames[k].line = code_line(c, (int64_t)(pr->raw[k].instr - c->units));
		}
	}
	return err;
}

/* The code objects of the frames walked that the cache holds, for h: the next read checks them. */
void py_note_codes(struct pyreader *pr, const struct pyproc *p, struct thread_hint *h,
		   uint32_t n)
{
	h->ncodes = 0;
	for (uint32_t k = 0; k < n && h->ncodes < HINT_CODES; k++) {
		uint64_t code = pr->raw[k].code;
		bool noted = false;

		for (uint32_t i = 0; i < h->ncodes && !noted; i++)
			noted = h->codes[i] == code;
		if (!noted && code_find(pr, p->serial, code))
			h->codes[h->ncodes++] = code;
	}
}
