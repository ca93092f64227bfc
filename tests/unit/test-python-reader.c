/* SPDX-License-Identifier: MIT */
/*
 * The CPython frame reader (src/record/python.c) on synthetic interpreter
 * memory, for each supported version (3.11, 3.12, 3.13): the memory of a
 * process built by tests/hostile/fake-cpython.h at that version's offsets
 * and handed to the reader through its py_memory seam. Thread states and
 * frames found through each version's own structures, eval calls told
 * apart as each version marks them, the lines of a location table of
 * every entry kind (the expected lines are what CPython 3.11's own
 * co_lines() says of the same table), names of every str kind, and
 * structures that lie or are cut short. (test-python.c tests the views of
 * a recording's Python frames.)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "contract/counters.h"
#include "record/python.h"
#include "test.h"
#include "tests/hostile/fake-cpython.h"
#include "util/utf8.h"

#define PID 4242
#define TID 4243
#define BASE 0x7f1000000000ull
#define REGION (1u << 20)
#define EVAL_LO 0x400000ull
#define EVAL_HI 0x400100ull
#define MAX_NAMES 64
/* More than the reader reads of a thread's frames at once. */
#define STACK_WINDOW_TEST (32u << 10)

/* A process whose memory is a fake_mem: the interpreter's symbols first, then its objects. */
struct proc {
	struct fake_mem m;
	uint64_t runtime, version;
	uint32_t py_version;		/* 0: no Py_Version, the file's name says */
	char path[64];
	uint64_t frame;			/* the eval call being built: its last frame */
	bool entry_next;		/* 3.11: the next frame is an eval call's first */
	unsigned names;
	char func[MAX_NAMES][4200], file[MAX_NAMES][4200];
	unsigned reads;
};

static int find(void *arg, uint32_t pid, struct py_interpreter *in)
{
	struct proc *p = arg;

	if (pid != PID)
		return -ESRCH;
	memset(in, 0, sizeof(*in));
	snprintf(in->path, sizeof(in->path), "%s", p->path);
	in->runtime = p->runtime;
	in->version = p->py_version ? p->version : 0;
	in->eval_lo = EVAL_LO;
	in->eval_hi = EVAL_HI;
	in->code_type = p->m.code_type;
	return 0;
}

/* As process_vm_readv: a range outside the region faults, ending the read there. */
static ssize_t read_mem(void *arg, uint32_t pid, const struct iovec *local,
			const struct iovec *remote, unsigned long n)
{
	struct proc *p = arg;
	ssize_t got = 0;

	p->reads++;
	if (pid != PID)
		return -ESRCH;
	for (unsigned long i = 0; i < n; i++) {
		uint64_t addr = (uintptr_t)remote[i].iov_base, len = remote[i].iov_len;

		if (addr < p->m.base || addr - p->m.base > p->m.len ||
		    p->m.len - (addr - p->m.base) < len)
			return got ? got : -EFAULT;
		memcpy(local[i].iov_base, fake_at(&p->m, addr), len);
		got += (ssize_t)len;
	}
	return got;
}

static uint64_t name_code(void *arg, const char *func, const char *file)
{
	struct proc *p = arg;

	if (p->names == MAX_NAMES)
		abort();
	snprintf(p->func[p->names], sizeof(p->func[0]), "%s", func);
	snprintf(p->file[p->names], sizeof(p->file[0]), "%s", file);
	return ++p->names;
}

static struct proc *proc_new(const struct fake_layout *l)
{
	struct proc *p = calloc(1, sizeof(*p));

	p->m = (struct fake_mem){ .buf = calloc(1, REGION), .base = BASE, .cap = REGION,
				  .layout = l };
	p->version = fake_alloc(&p->m, 8);
	p->py_version = 3u << 24 | l->minor << 16 | 4u << 8 | 0xf0;
	fake_put32(&p->m, p->version, p->py_version);
	p->m.code_type = fake_alloc(&p->m, 16);
	p->runtime = fake_alloc(&p->m, 1024);
	snprintf(p->path, sizeof(p->path), "/fake/bin/python3.%u", l->minor);
	return p;
}

static void proc_free(struct proc *p)
{
	free(p->m.buf);
	free(p);
}

/* The interpreter whose only thread, TID, runs the frames pushed. */
static void proc_thread(struct proc *p)
{
	fake_interp(&p->m, fake_at(&p->m, p->runtime), fake_thread(&p->m, TID, p->frame, 0));
}

/* A new eval call: the frames pushed next are its own (3.12+: above its shim frame). */
static void push_eval(struct proc *p)
{
	const struct fake_layout *l = fake_layout(&p->m);

	if (l->frame_is_entry) {
		p->entry_next = true;
		return;
	}
	p->frame = fake_frame(&p->m, 0, p->frame, 0);
	*fake_at(&p->m, p->frame + l->frame_owner) = FAKE_OWNED_BY_CSTACK;
}

/* A frame of code at its unit-th instruction, called by the frame pushed before. */
static uint64_t push_frame(struct proc *p, uint64_t code, uint32_t unit)
{
	const struct fake_layout *l = fake_layout(&p->m);

	p->frame = fake_frame(&p->m, code, p->frame, unit);
	if (p->entry_next)
		*fake_at(&p->m, p->frame + l->frame_is_entry) = 1;
	p->entry_next = false;
	return p->frame;
}

static uint64_t code_of(struct proc *p, const char *func, const char *file, size_t lines,
			int32_t firstlineno)
{
	return fake_code(&p->m, fake_str(&p->m, func), fake_str(&p->m, file),
			 fake_lines(&p->m, lines), firstlineno);
}

/* Reads the thread's stack against a native stack of evals eval frames (complete or not). */
static enum py_outcome sample(struct pyreader *pr, unsigned evals, bool complete,
			      struct py_stack *st, const char **found)
{
	uint64_t ips[16];
	size_t n = 0;

	/* Innermost first: each eval frame under a C frame of its own. */
	for (unsigned i = 0; i < evals; i++) {
		ips[n++] = EVAL_HI + i;
		ips[n++] = EVAL_LO + i;
	}
	ips[n++] = EVAL_HI + 0x1000;
	return pyreader_sample(pr, PID, TID, 1, ips, n, complete, st, found);
}

static struct pyreader *reader_of(struct proc *p)
{
	struct py_memory mem = { .find = find, .read = read_mem, .arg = p };
	struct pyreader *pr;

	if (pyreader_new(&pr, name_code, p, &mem))
		abort();
	return pr;
}

/* One process of a layout, the reader reading it, and what a sample gives. */
struct run {
	struct proc *p;
	struct pyreader *pr;
	struct py_stack *st;
};

static struct run run_start(const struct fake_layout *l)
{
	struct run r = { .p = proc_new(l), .st = calloc(1, sizeof(struct py_stack)) };

	r.pr = reader_of(r.p);
	return r;
}

static void run_end(struct run *r)
{
	pyreader_free(r->pr);
	free(r->st);
	proc_free(r->p);
}

/* Runs a test on a process of each layout, with a reader of its own. */
static void each_layout(void (*test)(const struct fake_layout *l, struct proc *p,
				     struct pyreader *pr, struct py_stack *st))
{
	for (const struct fake_layout *l = fake_layouts; l < fake_layouts + FAKE_LAYOUTS; l++) {
		struct run r = run_start(l);

		test(l, r.p, r.pr, r.st);
		run_end(&r);
	}
}

#define FOR_EACH_LAYOUT(l)                                                     \
	for (const struct fake_layout *l = fake_layouts; l < fake_layouts + FAKE_LAYOUTS; l++)

/* A failed check names the version it failed at. */
#define CHECK_AT(l, cond)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("  3.%u: ", (l)->minor);                        \
			CHECK(cond);                                           \
		}                                                              \
	} while (0)

/*
 * <module> calls main, which calls back into the interpreter (a second
 * eval call) to run inner: two groups, innermost first, each run by its
 * own eval frame of the native stack.
 */
static void stack_on(const struct fake_layout *l, struct proc *p, struct pyreader *pr,
		     struct py_stack *st)
{
	const char *found;
	char want[128];

	push_eval(p);
	push_frame(p, code_of(p, "<module>", "/app/main.py", 50, 1), 39);
	push_frame(p, code_of(p, "main", "/app/main.py", 20, 30), 4);
	push_eval(p);
	push_frame(p, code_of(p, "Outer.inner", "/app/lib.py", 10, 7), 2);
	proc_thread(p);
	CHECK_AT(l, sample(pr, 2, true, st, &found) == PY_MATCHED);
	snprintf(want, sizeof(want), "CPython 3.%u.4 /fake/bin/python3.%u", l->minor,
		 l->minor);
	CHECK_AT(l, found && !strcmp(found, want));
	CHECK_AT(l, st->nframes == 3 && st->groups == 2);
	CHECK_AT(l, st->group_start[0] == 0 && st->group_start[1] == 1 &&
		    st->group_start[2] == 3);
	/* ips: C, eval, C, eval, main: the groups' eval frames are ips[1] and ips[3]. */
	CHECK_AT(l, st->eval_at[0] == 1 && st->eval_at[1] == 3);
	CHECK_AT(l, p->names == 3);
	if (st->nframes == 3 && p->names == 3) {
		/* Innermost first; named innermost first too. */
		CHECK_AT(l, !strcmp(p->func[st->frames[0].func - 1], "Outer.inner"));
		CHECK_AT(l, !strcmp(p->file[st->frames[0].func - 1], "/app/lib.py"));
		CHECK_AT(l, !strcmp(p->func[st->frames[1].func - 1], "main"));
		CHECK_AT(l, !strcmp(p->func[st->frames[2].func - 1], "<module>"));
		CHECK_AT(l, st->frames[0].line == 9 && st->frames[1].line == 34 &&
			    st->frames[2].line == 40);
	}
	/* Known now: read again, nothing named anew. */
	CHECK_AT(l, sample(pr, 2, true, st, &found) == PY_MATCHED && !found);
	CHECK_AT(l, p->names == 3 && st->nframes == 3);
}

static void test_stack(void)
{
	each_layout(stack_on);
}

/*
 * A native stack that holds another number of eval frames: a mismatch
 * when it is whole; when it was cut, the innermost groups it holds.
 */
static void eval_frames_on(const struct fake_layout *l, struct proc *p, struct pyreader *pr,
			   struct py_stack *st)
{
	const char *found;

	for (int i = 0; i < 3; i++) {
		push_eval(p);
		push_frame(p, code_of(p, "f", "/app/f.py", 4, 1), 1);
	}
	proc_thread(p);
	CHECK_AT(l, sample(pr, 3, true, st, &found) == PY_MATCHED && st->groups == 3);
	CHECK_AT(l, sample(pr, 2, true, st, &found) == PY_MISMATCH);
	CHECK_AT(l, sample(pr, 4, true, st, &found) == PY_MISMATCH);
	CHECK_AT(l, sample(pr, 4, false, st, &found) == PY_MISMATCH);
	CHECK_AT(l, sample(pr, 2, false, st, &found) == PY_MATCHED && st->groups == 2);
}

static void test_eval_frames(void)
{
	each_layout(eval_frames_on);
}

/*
 * A location table of every entry kind, and the line of each instruction
 * as CPython 3.11's co_lines() gives it for the same table (0 where it
 * gives None; the first line before the first instruction).
 */
static const uint8_t linetable[] = {
	0xd0, 0x01, 0x05,		/* 10: +0, 1 unit */
	0xd9, 0x01, 0x05,		/* 11: +1, 2 units */
	0x98, 0x07,			/* 3 (short form): +0, 1 unit */
	0xe0, 0x01, 0x05,		/* 12: +2, 1 unit */
	0xea, 0x4c, 0x02,		/* 13: +70 in a two-byte varint, 3 units */
	0xf8,				/* 15: no line, 1 unit */
	0xf7, 0x57, 0x02, 0x00, 0x05, 0x09,	/* 14: -75, end line, columns; 8 units */
	0xe8, 0x3d,			/* 13: -30, below the first line: none, 1 unit */
	0xd0, 0x01, 0x05,		/* 10: +0, still below: none, 1 unit */
	0xe8, 0x50, 0x06,		/* 13: +200, 1 unit */
};

static const struct {
	int32_t unit;			/* -1: before the first instruction */
	uint32_t line;
} lines_at[] = {
	{ -1, 20 }, { 0, 20 }, { 1, 21 }, { 2, 21 }, { 3, 21 }, { 4, 23 }, { 5, 93 }, { 7, 93 },
	{ 8, 0 }, { 9, 18 }, { 16, 18 }, { 17, 0 }, { 18, 0 }, { 19, 188 }, { 20, 0 },
	{ 1000, 0 },
};

#define NLINES (sizeof(lines_at) / sizeof(lines_at[0]))

static void lines_on(const struct fake_layout *l, struct proc *p, struct pyreader *pr,
		     struct py_stack *st)
{
	uint64_t code = fake_code(&p->m, fake_str(&p->m, "lines"), fake_str(&p->m, "/l.py"),
				  fake_bytes(&p->m, linetable, sizeof(linetable),
					     sizeof(linetable)), 20);
	const char *found;

	/* One eval call, a frame of the code at each instruction, the first outermost. */
	push_eval(p);
	for (size_t i = 0; i < NLINES; i++) {
		int32_t unit = lines_at[i].unit;
		uint64_t f = push_frame(p, code, unit < 0 ? 0 : (uint32_t)unit);

		if (unit < 0)
			fake_put64(&p->m, f + l->frame_instr, code + l->code_units - 2);
	}
	proc_thread(p);
	CHECK_AT(l, sample(pr, 1, true, st, &found) == PY_MATCHED);
	CHECK_AT(l, st->nframes == NLINES && p->names == 1);
	for (size_t i = 0; i < NLINES && st->nframes == NLINES; i++) {
		uint32_t got = st->frames[NLINES - 1 - i].line;

		if (got != lines_at[i].line) {
			printf("  3.%u: unit %d at line %u, expected %u\n", l->minor,
			       lines_at[i].unit, got, lines_at[i].line);
			test_current_failed = 1;
		}
	}
}

static void test_lines(void)
{
	each_layout(lines_on);
}

/* A name and the UTF-8 it must read as. */
struct name_case {
	const void *chars;
	size_t n;
	unsigned kind;
	int ascii;
	const char *utf8;
};

static void names_on(const struct fake_layout *l, struct proc *p, struct pyreader *pr,
		     struct py_stack *st)
{
	static const uint8_t latin1[] = { 'c', 'a', 'f', 0xe9 };
	static const uint16_t two[] = { 0x3c0, '_', 0x20ac, 0, 0xfffe, 0xd800 };
	static const uint32_t four[] = { 0x1d518, 'n', 0xffff, 0x110000, 0x263a };
	static const struct name_case names[] = {
		{ "plain_ascii", 11, 1, 1, "plain_ascii" },
		{ latin1, 4, 1, 0, "caf\xc3\xa9" },
		/* pi, _, euro; NUL, U+FFFE and a lone surrogate are no characters of a name */
		{ two, 6, 2, 0, "\xcf\x80_\xe2\x82\xac" UTF8_REPLACEMENT UTF8_REPLACEMENT
				UTF8_REPLACEMENT },
		/* a mathematical U, n, U+FFFF, past U+10FFFF, a smiley */
		{ four, 5, 4, 0, "\xf0\x9d\x94\x98n" UTF8_REPLACEMENT UTF8_REPLACEMENT
				 "\xe2\x98\xba" },
	};
	uint64_t lines = fake_lines(&p->m, 4), file = fake_str(&p->m, "/n.py");
	size_t n = sizeof(names) / sizeof(names[0]);
	char *big = malloc(1501);
	const char *found;

	memset(big, 'x', 1500);
	big[1500] = '\0';
	push_eval(p);
	/* The longest name first (outermost): cut to its first 1024 characters. */
	push_frame(p, fake_code(&p->m, fake_str(&p->m, big), file, lines, 1), 0);
	for (size_t i = 0; i < n; i++) {
		const struct name_case *c = &names[i];
		uint64_t s = fake_str_kind(&p->m, c->chars, c->n, c->kind, c->ascii,
					   (int64_t)c->n, c->n);

		/* As the file too: names and file names are read alike. */
		push_frame(p, fake_code(&p->m, s, s, lines, 1), 0);
	}
	/* The innermost's name ends memory: its head is shorter than a non-ASCII str's. */
	push_frame(p, fake_code(&p->m, p->m.base + p->m.cap - l->str_ascii_data - 4,
				file, lines, 1), 0);
	proc_thread(p);
	fake_put64(&p->m, p->m.base + p->m.cap - l->str_ascii_data - 4 + FAKE_VAR_SIZE, 3);
	fake_put32(&p->m, p->m.base + p->m.cap - l->str_ascii_data - 4 + FAKE_STR_STATE,
		   1u << 2 | 1u << 5 | 1u << 6);
	memcpy(fake_at(&p->m, p->m.base + p->m.cap - 4), "end", 4);
	p->m.len = p->m.cap;
	CHECK_AT(l, sample(pr, 1, true, st, &found) == PY_MATCHED);
	/* Innermost first: "end", the names from the last, the longest. */
	CHECK_AT(l, p->names == n + 2 && st->nframes == n + 2);
	for (size_t i = 0; i < n && p->names == n + 2; i++) {
		const char *got = p->func[st->frames[n - i].func - 1];

		CHECK_AT(l, !strcmp(got, names[i].utf8));
		CHECK_AT(l, !strcmp(p->file[st->frames[n - i].func - 1], names[i].utf8));
	}
	if (p->names == n + 2) {
		CHECK_AT(l, !strcmp(p->func[st->frames[0].func - 1], "end"));
		CHECK_AT(l, strlen(p->func[st->frames[n + 1].func - 1]) == 1024);
	}
	CHECK_AT(l, pyreader_counts(pr)[PY_NAMES_CUT] == 1);
	free(big);
}

static void test_names(void)
{
	each_layout(names_on);
}

/* What a thread's innermost frame is made to say, and what its sample must come to. */
enum lie {
	LIE_NOT_CODE,		/* a code object of another type */
	LIE_UNMAPPED_CODE,
	LIE_STR_NOT_COMPACT,
	LIE_STR_KIND_3,
	LIE_STR_NEGATIVE,
	LIE_STR_LONGER,		/* a length past the end of memory */
	LIE_TABLE_NEGATIVE,
	LIE_TABLE_LONG,		/* a location table of 2^40 bytes: read without lines */
	LIE_FRAME_UNMAPPED,	/* its caller is nowhere */
	LIE_FRAME_CUT,		/* its caller lies across the end of memory */
	LIE_FRAME_LOOP,		/* its caller is itself */
	LIE_OTHER_THREADS,	/* a thread list without the thread */
	LIE_THREADS_LOOP,	/* a thread list that loops without it */
	LIE_NO_INTERPRETER,
	LIES
};

static const enum py_outcome lie_outcome[LIES] = {
	[LIE_NOT_CODE] = PY_READ_FAILED, [LIE_UNMAPPED_CODE] = PY_READ_FAILED,
	[LIE_STR_NOT_COMPACT] = PY_READ_FAILED, [LIE_STR_KIND_3] = PY_READ_FAILED,
	[LIE_STR_NEGATIVE] = PY_READ_FAILED, [LIE_STR_LONGER] = PY_READ_FAILED,
	[LIE_TABLE_NEGATIVE] = PY_READ_FAILED, [LIE_TABLE_LONG] = PY_MATCHED,
	[LIE_FRAME_UNMAPPED] = PY_READ_FAILED, [LIE_FRAME_CUT] = PY_READ_FAILED,
	[LIE_FRAME_LOOP] = PY_OVER_BUDGET, [LIE_OTHER_THREADS] = PY_NO_THREAD_STATE,
	[LIE_THREADS_LOOP] = PY_OVER_BUDGET, [LIE_NO_INTERPRETER] = PY_NO_THREAD_STATE,
};

static void build_lie(struct proc *p, enum lie lie)
{
	const struct fake_layout *l = fake_layout(&p->m);
	uint64_t lines = fake_lines(&p->m, 4), file = fake_str(&p->m, "/lie.py");
	uint64_t name = fake_str(&p->m, "lie"), table = lines, code, f, a, b;
	uint64_t end = p->m.base + p->m.cap;	/* memory ends there: all of it is mapped */

	push_eval(p);
	push_frame(p, code_of(p, "outer", "/lie.py", 4, 1), 1);
	switch (lie) {
	case LIE_STR_NOT_COMPACT:
		fake_put32(&p->m, name + FAKE_STR_STATE, 1u << 2 | 1u << 6);
		break;
	case LIE_STR_KIND_3:
		fake_put32(&p->m, name + FAKE_STR_STATE, 3u << 2 | 1u << 5 | 1u << 6);
		break;
	case LIE_STR_NEGATIVE:
		fake_put64(&p->m, name + FAKE_VAR_SIZE, (uint64_t)-3);
		break;
	case LIE_TABLE_NEGATIVE:
		table = fake_bytes(&p->m, "\x80", 1, -1);
		break;
	case LIE_TABLE_LONG:
		table = fake_bytes(&p->m, "\x80", 1, 1ll << 40);
		break;
	default:
		break;
	}
	code = fake_code(&p->m, name, file, table, 1);
	f = push_frame(p, code, 1);
	switch (lie) {
	case LIE_NOT_CODE:
		fake_put64(&p->m, code + FAKE_OBJECT_TYPE, code);
		break;
	case LIE_UNMAPPED_CODE:
		fake_put64(&p->m, f + l->frame_code, 0xdead0000);
		break;
	case LIE_FRAME_UNMAPPED:
		fake_put64(&p->m, f + l->frame_previous, 0xdead0000);
		break;
	case LIE_FRAME_CUT:
		/* A frame whose last bytes are past the end of memory. */
		fake_put64(&p->m, f + l->frame_previous, end - 16);
		break;
	case LIE_STR_LONGER:
		/* A str of 1000 characters whose head ends memory: the read of its text faults. */
		fake_put64(&p->m, end - l->str_ascii_data + FAKE_VAR_SIZE, 1000);
		fake_put32(&p->m, end - l->str_ascii_data + FAKE_STR_STATE,
			   1u << 2 | 1u << 5 | 1u << 6);
		fake_put64(&p->m, code + FAKE_CODE_QUALNAME, end - l->str_ascii_data);
		break;
	case LIE_FRAME_LOOP:
		fake_put64(&p->m, f + l->frame_previous, f);
		break;
	default:
		break;
	}
	if (lie == LIE_OTHER_THREADS || lie == LIE_THREADS_LOOP) {
		a = fake_thread(&p->m, TID + 1, f, 0);
		b = fake_thread(&p->m, TID + 2, f, a);
		if (lie == LIE_THREADS_LOOP)
			fake_put64(&p->m, a + l->tstate_next, b);
		fake_interp(&p->m, fake_at(&p->m, p->runtime), b);
	} else if (lie != LIE_NO_INTERPRETER) {
		proc_thread(p);
	}
	p->m.len = p->m.cap;
}

static void test_lies(void)
{
	FOR_EACH_LAYOUT(l) {
		for (int lie = 0; lie < LIES; lie++) {
			struct run r = run_start(l);
			struct proc *p = r.p;
			struct py_stack *st = r.st;
			struct pyreader *pr = r.pr;
			const char *found;
			enum py_outcome got;

			build_lie(p, lie);
			got = sample(pr, 1, true, st, &found);
			if (got != lie_outcome[lie]) {
				printf("  3.%u: lie %d came to %s, expected %s\n", l->minor, lie,
				       python_counters[got].name,
				       python_counters[lie_outcome[lie]].name);
				test_current_failed = 1;
			}
			/* No read past a sample's budget, whatever memory says. */
			CHECK_AT(l, p->reads <= PY_SAMPLE_READS + 1);
			if (lie == LIE_TABLE_LONG && got == PY_MATCHED) {
				CHECK_AT(l, st->nframes == 2 && st->frames[0].line == 0);
				CHECK_AT(l, pyreader_counts(pr)[PY_TABLES_TOO_LONG] == 1);
			}
			run_end(&r);
		}
	}
}

/* Samples until the thread's stack is read, at most max: how many it took, max + 1 when never. */
static unsigned samples_to_read(struct pyreader *pr, struct py_stack *st, unsigned max)
{
	const char *found;
	unsigned n = 1;

	while (n <= max && sample(pr, 1, true, st, &found) != PY_MATCHED)
		n++;
	return n;
}

/* The thread behind 1000 others: a walk that runs out of budget goes on at the next sample. */
static void thread_list_long_on(const struct fake_layout *l, struct proc *p, struct pyreader *pr,
				struct py_stack *st)
{
	uint64_t head;

	push_eval(p);
	push_frame(p, code_of(p, "f", "/f.py", 4, 1), 1);
	head = fake_thread(&p->m, TID, p->frame, 0);
	for (uint32_t i = 1; i <= 1000; i++)
		head = fake_thread(&p->m, TID + i, p->frame, head);
	fake_interp(&p->m, fake_at(&p->m, p->runtime), head);
	CHECK_AT(l, samples_to_read(pr, st, 8) <= 5);
}

/* A frame, and two other threads' states that loop: the one the loop is entered at. */
static uint64_t thread_loop(const struct fake_layout *l, struct proc *p)
{
	uint64_t a, b;

	push_eval(p);
	push_frame(p, code_of(p, "f", "/f.py", 4, 1), 1);
	a = fake_thread(&p->m, TID + 1, p->frame, 0);
	b = fake_thread(&p->m, TID + 2, p->frame, a);
	fake_put64(&p->m, a + l->tstate_next, b);
	return b;
}

/* A list that loops without the thread, then another that holds it: read at the next sample. */
static void thread_list_replaced_on(const struct fake_layout *l, struct proc *p,
				    struct pyreader *pr, struct py_stack *st)
{
	const char *found;

	fake_interp(&p->m, fake_at(&p->m, p->runtime), thread_loop(l, p));
	CHECK_AT(l, sample(pr, 1, true, st, &found) == PY_OVER_BUDGET);
	proc_thread(p);
	CHECK_AT(l, sample(pr, 1, true, st, &found) == PY_MATCHED);
}

/*
 * The same head, and a loop behind it that the head leaves for the
 * thread: the walk, gone round the loop more times than a list may hold
 * threads, starts again at the head and finds it.
 */
static void thread_list_loop_left_on(const struct fake_layout *l, struct proc *p,
				     struct pyreader *pr, struct py_stack *st)
{
	uint64_t loop = thread_loop(l, p), head = fake_thread(&p->m, TID + 3, p->frame, loop);
	const char *found;

	fake_interp(&p->m, fake_at(&p->m, p->runtime), head);
	CHECK_AT(l, sample(pr, 1, true, st, &found) == PY_OVER_BUDGET);
	fake_put64(&p->m, head + l->tstate_next, fake_thread(&p->m, TID, p->frame, 0));
	CHECK_AT(l, samples_to_read(pr, st, 64) <= 64);
}

static void test_thread_walks(void)
{
	each_layout(thread_list_long_on);
	each_layout(thread_list_replaced_on);
	each_layout(thread_list_loop_left_on);
}

/* Versions without a layout are named and left alone; without Py_Version, the file names it. */
static void test_versions(void)
{
	static const struct {
		uint32_t py_version;
		const char *path, *found;
		enum py_outcome outcome;
	} versions[] = {
		{ 0x030a08f0, "/usr/bin/python3.10", "unsupported: CPython 3.10.8 /usr/bin/python3.10",
		  PY_UNSUPPORTED },
		{ 0x030e00f0, "/usr/bin/python3.14", "unsupported: CPython 3.14.0 /usr/bin/python3.14",
		  PY_UNSUPPORTED },
		{ 0x040000f0, "/usr/bin/python3.12", "unsupported: CPython 4.0.0 /usr/bin/python3.12",
		  PY_UNSUPPORTED },
		{ 0, "/usr/lib/libpython3.13.so.1.0", "CPython 3.13.0 /usr/lib/libpython3.13.so.1.0",
		  PY_MATCHED },
		{ 0, "/usr/bin/python3.9", "unsupported: CPython 3.9.0 /usr/bin/python3.9",
		  PY_UNSUPPORTED },
	};

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		struct run r = run_start(&fake_layouts[2]);
		struct proc *p = r.p;
		const char *found;

		p->py_version = versions[i].py_version;
		fake_put32(&p->m, p->version, p->py_version);
		snprintf(p->path, sizeof(p->path), "%s", versions[i].path);
		push_eval(p);
		push_frame(p, code_of(p, "f", "/f.py", 4, 1), 1);
		proc_thread(p);
		CHECK(sample(r.pr, 1, true, r.st, &found) == versions[i].outcome);
		CHECK_STREQ(found, versions[i].found);
		run_end(&r);
	}
}

/* A code object freed and another made at its address: named anew, not as the first. */
static void code_reused_on(const struct fake_layout *l, struct proc *p, struct pyreader *pr,
			   struct py_stack *st)
{
	uint64_t code = code_of(p, "first", "/a.py", 4, 1);
	const char *found;

	push_eval(p);
	push_frame(p, code, 1);
	proc_thread(p);
	CHECK_AT(l, sample(pr, 1, true, st, &found) == PY_MATCHED);
	fake_put64(&p->m, code + FAKE_CODE_QUALNAME, fake_str(&p->m, "second"));
	CHECK_AT(l, sample(pr, 1, true, st, &found) == PY_MATCHED);
	CHECK_AT(l, p->names == 2 && st->nframes == 1);
	if (p->names == 2 && st->nframes == 1)
		CHECK_AT(l, !strcmp(p->func[st->frames[0].func - 1], "second"));
}

static void test_code_reused(void)
{
	each_layout(code_reused_on);
}

/*
 * A deep stack of one eval call, its frames together as in a data-stack
 * chunk: once its code objects are known, a sample reads in one read the
 * thread state, the frame its _PyCFrame held at the last read (before
 * 3.13), the code objects' fingerprints and the pages of the frames the
 * last walk met. A thread state that points elsewhere since is read
 * through what it points to, a frame outside those pages read anew.
 */
static void reads_on(const struct fake_layout *l, struct proc *p, struct pyreader *pr,
		     struct py_stack *st)
{
	uint64_t codes[40], frames[40], ts, holder;
	enum py_outcome outcome;
	const char *found;
	unsigned before;

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		codes[i] = code_of(p, "f", "/app/f.py", 4, 1);
	push_eval(p);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		frames[i] = push_frame(p, codes[i], 1);
	/* The chunk's room above its frames, as mapped as they are. */
	fake_alloc(&p->m, 4096);
	ts = fake_thread(&p->m, TID, p->frame, 0);
	fake_interp(&p->m, fake_at(&p->m, p->runtime), ts);
	/* Its code objects are more than one sample may read: a few samples read them. */
	for (int i = 0; i < 4 && sample(pr, 1, true, st, &found) != PY_MATCHED; i++)
		continue;
	before = p->reads;
	outcome = sample(pr, 1, true, st, &found);
	CHECK_AT(l, outcome == PY_MATCHED && st->nframes == 40);
	CHECK_AT(l, p->reads - before == 1);

	holder = ts;
	if (l->tstate_cframe) {
		holder = fake_alloc(&p->m, 16);
		fake_put64(&p->m, ts + l->tstate_cframe, holder);
	}
	fake_put64(&p->m, holder + l->current_frame, frames[19]);
	CHECK_AT(l, sample(pr, 1, true, st, &found) == PY_MATCHED && st->nframes == 20);

	/* A frame above the pages the last walk met: read where it is. */
	fake_alloc(&p->m, STACK_WINDOW_TEST);
	fake_put64(&p->m, holder + l->current_frame, fake_frame(&p->m, codes[0], frames[9], 1));
	fake_alloc(&p->m, 4096);
	CHECK_AT(l, sample(pr, 1, true, st, &found) == PY_MATCHED && st->nframes == 11);
}

static void test_reads(void)
{
	each_layout(reads_on);
}

int main(void)
{
	RUN(test_stack);
	RUN(test_eval_frames);
	RUN(test_lines);
	RUN(test_names);
	RUN(test_lies);
	RUN(test_thread_walks);
	RUN(test_versions);
	RUN(test_code_reused);
	RUN(test_reads);
	return test_summary();
}
