/* SPDX-License-Identifier: MIT */
/*
 * A fake CPython 3.12 for the Python reader of a root recorder to read: an
 * executable named python3-* with the symbols the reader looks for
 * (_PyRuntime, Py_Version, PyCode_Type, _PyEval_EvalFrameDefault), whose
 * memory holds an interpreter of tests/hostile/fake-cpython.h's making
 * while the eval function spins. What it holds is hostile:
 *
 *	plain		three sane frames: fake_work (fake.py:12) under main
 *			under <module>, so that a test sees the reader read it
 *	churn		256 frames whose code objects change at every turn
 *			of the loop: the next of a pool of 6144, at their
 *			own addresses, each with a name and a file name of
 *			its own of 1100 four-byte characters and a location
 *			table of 65536 lines (64 KiB)
 *	churn-inner	the same for the innermost 8 frames only, of 4 lines
 *	planted		plain, and a copy of the program mapped as a
 *			libpython3.12.so that is deleted, a FIFO planted
 *			where its maps say it was; run it under a name
 *			that is not python3*, so that the recorder looks
 *			for its interpreter only once the FIFO is there
 *	hostile		each turn another of the structures below
 *	cycle, huge, ctrl, lines, threads, deep, wild, ends, groups
 *			one of them: a frame chain that loops; lengths of
 *			2^62 characters and 2^40 bytes; names of control
 *			bytes, NULs and code points that are not characters;
 *			absurd location tables; a thread list of 5000 that
 *			loops without the thread; a chain of 2000 frames a
 *			page apart; code pointers to nowhere or to what is
 *			not a code object; a chain through the middle of an
 *			object to the end of memory; 600 eval calls one in
 *			another without a frame
 *
 * usage: python3-fake SCENARIO SECONDS
 *	  python3-fake image SCENARIO FILE	the scenario as a memory image,
 *						an input of tests/fuzz/fuzz-python.c
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/hostile/fake-cpython.h"

/* What the reader finds by symbol. */
uint8_t _PyRuntime[FAKE_IMAGE_HEAP - FAKE_IMAGE_RUNTIME];
uint8_t PyCode_Type[16];
const unsigned long Py_Version = FAKE_PY_VERSION;

#define REGION_BYTES (96ul << 20)
#define CHURN_FRAMES 256
#define CHURN_INNER 8
#define CHURN_POOL 6144
#define CHURN_NAME 1100
#define CHURN_TABLES 4
#define CHURN_LINES 65536
#define DEEP_FRAMES 2000
#define PAGE 4096

enum scenario { PLAIN, CYCLE, HUGE, CTRL, LINES, THREADS, DEEP, WILD, ENDS, GROUPS_, NSCENARIOS,
		CHURN, CHURN_INNER_ };

/* Sizes of the scenarios: a memory image, an input to fuzz, is kept small. */
static size_t table_bytes = 65536, thread_list = 5000, groups = 600;

static const char *const scenario_names[] = {
	[PLAIN] = "plain", [CYCLE] = "cycle", [HUGE] = "huge", [CTRL] = "ctrl",
	[LINES] = "lines", [THREADS] = "threads", [DEEP] = "deep", [WILD] = "wild",
	[ENDS] = "ends", [GROUPS_] = "groups",
};

/* A scenario as built: the innermost frame, and the thread list when its own. */
struct built {
	uint64_t frame;
	uint64_t threads;	/* 0: the sampled thread's own list */
};

/* The churning stack: its frames, the innermost changing ones, and the code objects they run. */
struct churn {
	uint64_t frame[CHURN_FRAMES];
	int changing, lines;
	uint64_t pool[CHURN_POOL];
	uint32_t next;
};

struct run {
	struct fake_mem m;
	uint64_t tstate, cframe, interp;
	uint32_t tid;
	double end;
	bool rotate;
	enum scenario at;
	struct built built[NSCENARIOS];
	struct churn *churn;
	volatile uint64_t spun;
};

void _PyEval_EvalFrameDefault(struct run *r);

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A code object named qualname in file, lines from first on. */
static uint64_t code_named(struct fake_mem *m, const char *qualname, const char *file,
			   int32_t first, size_t lines)
{
	return fake_code(m, fake_str(m, qualname), fake_str(m, file), fake_lines(m, lines), first);
}

static uint64_t build_plain(struct fake_mem *m)
{
	uint64_t module = code_named(m, "<module>", "/fake/fake.py", 1, 40);
	uint64_t main_ = code_named(m, "main", "/fake/fake.py", 20, 10);
	uint64_t work = code_named(m, "fake_work", "/fake/fake.py", 10, 10);
	uint64_t f = fake_frame(m, module, 0, 39);

	f = fake_frame(m, main_, f, 5);
	return fake_frame(m, work, f, 2);
}

/* A frame that is its own caller, under one that calls back and forth with another. */
static uint64_t build_cycle(struct fake_mem *m)
{
	uint64_t code = code_named(m, "loop", "/fake/cycle.py", 1, 4);
	uint64_t a = fake_frame(m, code, 0, 1), b = fake_frame(m, code, a, 2);
	uint64_t self = fake_frame(m, code, 0, 3);

	fake_put64(m, a + FAKE_FRAME_PREVIOUS, b);
	fake_put64(m, self + FAKE_FRAME_PREVIOUS, self);
	return fake_frame(m, code, self, 0);
}

/* Lengths past all bounds: names of 2^62 characters and 2^40, a location table of 2^40 bytes. */
static uint64_t build_huge(struct fake_mem *m)
{
	uint64_t lines = fake_lines(m, 4), file = fake_str(m, "/fake/huge.py");
	uint64_t long_name = fake_str_kind(m, "huge", 4, 1, 1, INT64_MAX / 2, 4);
	uint64_t long_file = fake_str_kind(m, "huge.py", 7, 1, 1, 1ll << 40, 7);
	uint64_t long_table = fake_bytes(m, "\x80", 1, 1ll << 40);
	uint64_t f = fake_frame(m, fake_code(m, fake_str(m, "g"), file, long_table, 5), 0, 1);

	f = fake_frame(m, fake_code(m, fake_str(m, "f"), long_file, lines, 1), f, 1);
	return fake_frame(m, fake_code(m, long_name, file, lines, 1), f, 0);
}

static uint64_t build_ctrl(struct fake_mem *m)
{
	static const char escapes[] = "\x1b]0;PWN\x07\x1b[2J\nmain;fake (x.py:1) 99\r\t\x7f";
	static const char nul[] = "a\0b";
	static const uint32_t wide[] = { 0x41, 0xd800, 0x110000, 0xffffffff, 0, 0x1b, 0xffff, 0x263a };
	static const uint16_t two[] = { 0x263a, 0, 0xdfff, 0x0a, 0xfffe };
	uint64_t lines = fake_lines(m, 4), file = fake_str(m, "/fake/\x1b[31mctrl\n.py");
	uint64_t f = fake_frame(m, fake_code(m, fake_str(m, escapes), file, lines, 1), 0, 0);

	f = fake_frame(m, fake_code(m, fake_str_kind(m, nul, 3, 1, 1, 3, 3), file, lines, 1), f, 1);
	f = fake_frame(m, fake_code(m, fake_str_kind(m, wide, 8, 4, 0, 8, 8), file, lines, 1), f,
		       1);
	return fake_frame(m, fake_code(m, fake_str_kind(m, two, 5, 2, 0, 5, 5),
				       fake_str_kind(m, wide, 8, 4, 0, 8, 8), lines, 1), f, 2);
}

/* Location tables no compiler writes; frames past their ends. */
static uint64_t build_lines(struct fake_mem *m)
{
	size_t n = table_bytes;
	uint8_t *t = malloc(n);
	uint64_t name = fake_str(m, "lines"), file = fake_str(m, "/fake/lines.py"), f = 0;

	/* Each byte an entry moving the line by one: 65536 lines. */
	memset(t, 0x80 | 11 << 3, n);
	f = fake_frame(m, fake_code(m, name, file, fake_bytes(m, t, n, (int64_t)n), 1), f,
		       (uint32_t)n - 1);
	/* A varint that never ends. */
	memset(t, 0x7f, n);
	t[0] = 0x80 | 13 << 3;
	f = fake_frame(m, fake_code(m, name, file, fake_bytes(m, t, n, (int64_t)n), 1), f, 3);
	/* No entry at all. */
	memset(t, 0, n);
	f = fake_frame(m, fake_code(m, name, file, fake_bytes(m, t, n, (int64_t)n), 1), f, 3);
	/* Lines past 2^32 and below 1. */
	memcpy(t, "\xf0\x3e\x3f\x3f\x3f\x3f\x0f\xf0\x3f\x3f\x3f\x3f\x3f\x1f\xd0\xd0", 16);
	f = fake_frame(m, fake_code(m, name, file, fake_bytes(m, t, 16, 16), INT32_MAX), f, 1);
	f = fake_frame(m, fake_code(m, name, file, fake_bytes(m, t, 16, 16), INT32_MIN), f, 2);
	/* An instruction before the code's first. */
	f = fake_frame(m, fake_code(m, name, file, fake_lines(m, 4), 7), f, 0);
	fake_put64(m, f + FAKE_FRAME_INSTR, 16);
	free(t);
	return f;
}

/* A thread list of thread_list states, none the sampled thread's, ending in a loop. */
static uint64_t build_threads(struct fake_mem *m, uint32_t tid, uint64_t frame)
{
	uint64_t head = 0, loop_to = 0, last = 0;

	for (size_t i = 0; i < thread_list; i++) {
		head = fake_thread(m, tid + 1 + (uint32_t)i, frame, head);
		if (!i)
			last = head;
		if (i == thread_list / 2)
			loop_to = head;
	}
	fake_put64(m, last + FAKE_TSTATE_NEXT, loop_to);
	return head;
}

/* A chain of frames a page apart: a read each. */
static uint64_t build_deep(struct fake_mem *m)
{
	uint64_t code = code_named(m, "deep", "/fake/deep.py", 1, 4), f = 0;

	for (int i = 0; i < DEEP_FRAMES; i++) {
		uint64_t at = fake_alloc_aligned(m, FAKE_FRAME_SIZE, PAGE);

		fake_frame_at(m, at, code, f, 1);
		f = at;
	}
	return f;
}

/*
 * Code objects that are not, innermost first: of another type, unmapped,
 * none, misaligned; then names that are no str: of kind 3, not compact,
 * of a negative length; a table of a negative length; wild pointers.
 */
static uint64_t build_wild(struct fake_mem *m)
{
	uint64_t code = code_named(m, "wild", "/fake/wild.py", 1, 4), lines = fake_lines(m, 1);
	uint64_t not_code = fake_code(m, fake_str(m, "x"), fake_str(m, "/fake/x.py"), lines, 1);
	uint64_t loose = fake_str(m, "loose"), file = fake_str(m, "/fake/wild.py");
	uint64_t f = fake_frame(m, fake_code(m, 0xbad000, 8, 0xfffffffffffff000ull, 1), 0, 1);

	fake_put32(m, loose + FAKE_STR_STATE, 1u << 2);
	f = fake_frame(m, fake_code(m, fake_str(m, "negative"), file,
				    fake_bytes(m, "\x80", 1, -1), 1), f, 0);
	f = fake_frame(m, fake_code(m, fake_str_kind(m, "neg", 3, 1, 1, -5, 3), file, lines, 1),
		       f, 0);
	f = fake_frame(m, fake_code(m, loose, file, lines, 1), f, 0);
	f = fake_frame(m, fake_code(m, fake_str_kind(m, "abc", 1, 3, 0, 1, 1), file, lines, 1), f,
		       0);
	fake_put64(m, not_code + FAKE_OBJECT_TYPE, not_code);
	f = fake_frame(m, code + 3, f, 1);
	f = fake_frame(m, 0, f, 1);
	f = fake_frame(m, 0xdead0000, f, 1);
	return fake_frame(m, not_code, f, 1);
}

/* A chain through the middle of an object to the end of memory. */
static uint64_t build_ends(struct fake_mem *m)
{
	uint64_t code = code_named(m, "ends", "/fake/ends.py", 1, 4);
	uint64_t blob = fake_alloc(m, 64);

	fake_put64(m, blob + 5 + FAKE_FRAME_PREVIOUS, UINT64_MAX - 16);
	return fake_frame(m, code, blob + 5, 1);
}

/* Eval calls one inside another, each without a frame: more groups than stacks hold. */
static uint64_t build_groups(struct fake_mem *m)
{
	uint64_t code = code_named(m, "group", "/fake/group.py", 1, 4);
	uint64_t f = fake_frame(m, code, 0, 1);

	for (size_t i = 0; i < groups; i++) {
		f = fake_frame(m, 0, f, 0);
		*fake_at(m, f + FAKE_FRAME_OWNER) = FAKE_OWNED_BY_CSTACK;
	}
	return fake_frame(m, code, f, 2);
}

static struct built build(struct fake_mem *m, enum scenario s, uint32_t tid)
{
	struct built b = {0};

	switch (s) {
	case PLAIN: b.frame = build_plain(m); break;
	case CYCLE: b.frame = build_cycle(m); break;
	case HUGE: b.frame = build_huge(m); break;
	case CTRL: b.frame = build_ctrl(m); break;
	case LINES: b.frame = build_lines(m); break;
	case THREADS:
		b.frame = build_plain(m);
		b.threads = build_threads(m, tid, b.frame);
		break;
	case DEEP: b.frame = build_deep(m); break;
	case WILD: b.frame = build_wild(m); break;
	case ENDS: b.frame = build_ends(m); break;
	case GROUPS_: b.frame = build_groups(m); break;
	default: break;
	}
	return b;
}

/*
 * The pool of code objects the churning frames take their next from: each
 * named, and of a file named, by CHURN_NAME characters of four bytes (past
 * what the reader copies) of its own, with a table of lines lines.
 */
static void build_churn(struct run *r, int changing, int lines)
{
	struct fake_mem *m = &r->m;
	struct churn *c = calloc(1, sizeof(*c));
	uint8_t *table = malloc(CHURN_LINES);
	uint32_t *name = malloc(CHURN_NAME * sizeof(*name));
	uint64_t tables[CHURN_TABLES], previous = 0, func;

	memset(table, 0x80 | 11 << 3, CHURN_LINES);
	for (int i = 0; i < CHURN_TABLES; i++)
		tables[i] = fake_bytes(m, table, (size_t)lines, lines);
	for (int k = 0; k < CHURN_NAME; k++)
		name[k] = 0x1f600 + (uint32_t)k % 64;
	for (int i = 0; i < CHURN_POOL; i++) {
		/* The first characters tell the names apart, the one after a file from a function. */
		for (int k = 0; k < 4; k++)
			name[k] = 'a' + (uint32_t)(i >> (4 * k) & 15);
		name[4] = 'f';
		func = fake_str_kind(m, name, CHURN_NAME, 4, 0, CHURN_NAME, CHURN_NAME);
		name[4] = '/';
		c->pool[i] = fake_code(m, func,
				       fake_str_kind(m, name, CHURN_NAME, 4, 0, CHURN_NAME, CHURN_NAME),
				       tables[i % CHURN_TABLES], 1);
	}
	for (int i = 0; i < CHURN_FRAMES; i++)
		c->frame[i] = i >= CHURN_FRAMES - changing
				      ? c->pool[i % CHURN_POOL]
				      : code_named(m, "steady", "/fake/steady.py", 1, 4);
	/* The frames together, as in CPython's data stack, each caller below. */
	for (int i = 0; i < CHURN_FRAMES; i++)
		c->frame[i] = previous = fake_frame(m, c->frame[i], previous, 1);
	c->changing = changing;
	c->lines = lines;
	free(table);
	free(name);
	r->churn = c;
}

/* The innermost changing frames run the pool's next code objects. */
static void churn_turn(struct run *r)
{
	struct churn *c = r->churn;

	for (int i = CHURN_FRAMES - c->changing; i < CHURN_FRAMES; i++) {
		uint64_t code = c->pool[c->next++ % CHURN_POOL];

		fake_put64(&r->m, c->frame[i] + FAKE_FRAME_CODE, code);
		fake_put64(&r->m, c->frame[i] + FAKE_FRAME_INSTR,
			   code + FAKE_CODE_UNITS + 2ull * (c->next * 7 % (uint32_t)c->lines));
	}
}

/* The sampled thread runs scenario s. */
static void show(struct run *r, enum scenario s)
{
	const struct built *b = &r->built[s];

	fake_put64(&r->m, r->cframe + FAKE_CFRAME_FRAME, b->frame);
	fake_put64(&r->m, r->interp + FAKE_INTERP_THREADS, b->threads ? b->threads : r->tstate);
	/* Away from its own list, the thread is found only by walking the other. */
	fake_put64(&r->m, r->tstate + FAKE_TSTATE_TID, b->threads ? 0 : r->tid);
}

void _PyEval_EvalFrameDefault(struct run *r)
{
	uint32_t turn = 1;

	while (now() < r->end) {
		if (r->churn) {
			churn_turn(r);
		} else if (r->rotate) {
			/*
			 * The next scenario at a turn of no fixed length: turns
			 * of one length would let the sampling period alias
			 * with the rotation and meet the same few scenarios.
			 */
			turn ^= turn << 13;
			turn ^= turn >> 17;
			turn ^= turn << 5;
			r->at = (enum scenario)(turn % NSCENARIOS);
			show(r, r->at);
		}
		for (int i = 0; i < 20000; i++)
			r->spun += (uint64_t)i;
	}
}

static enum scenario scenario_named(const char *name)
{
	for (int s = 0; s < NSCENARIOS; s++)
		if (!strcmp(name, scenario_names[s]))
			return (enum scenario)s;
	if (!strcmp(name, "churn"))
		return CHURN;
	if (!strcmp(name, "churn-inner"))
		return CHURN_INNER_;
	fprintf(stderr, "python3-fake: no scenario '%s'\n", name);
	exit(2);
}

/* Copies this program to path and maps the whole copy with prot; exits when it cannot. */
static void map_copy(const char *path, int prot)
{
	char buf[1 << 16];
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int out = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	ssize_t n = 0;
	size_t size = 0;

	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n)
			n = -1;
		size += (size_t)n;
	}
	if (in < 0 || out < 0 || n < 0 || mmap(NULL, size, prot, MAP_PRIVATE, out, 0) == MAP_FAILED) {
		perror(path);
		exit(1);
	}
	close(in);
	close(out);
}

/*
 * Maps a copy of this program as DIR/libpython3.12.so, which the reader
 * prefers to any python3* file, deletes it, and plants a FIFO under the
 * name the maps now give it, "DIR/libpython3.12.so (deleted)": a reader
 * that opens what the maps name waits on the FIFO for ever. Only readable,
 * the copy is no code for the recorder's other readers to open. Then maps
 * another copy as code, DIR/python3-trigger, which tells the recorder to
 * look for an interpreter again.
 */
static void plant_fifo(char *dir)
{
	char path[64], fifo[80];

	if (!mkdtemp(dir)) {
		perror("python3-fake: planted");
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/libpython3.12.so", dir);
	snprintf(fifo, sizeof(fifo), "%s (deleted)", path);
	map_copy(path, PROT_READ);
	if (unlink(path) || mkfifo(fifo, 0600)) {
		perror(fifo);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/python3-trigger", dir);
	map_copy(path, PROT_READ | PROT_EXEC);
}

/* Takes away what plant_fifo left in dir. */
static void unplant(const char *dir)
{
	char path[80];

	snprintf(path, sizeof(path), "%s/libpython3.12.so (deleted)", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/python3-trigger", dir);
	unlink(path);
	rmdir(dir);
}

/* Writes scenario s as a memory image of one sample of thread 1000. */
static int write_image(enum scenario s, const char *path)
{
	static uint8_t buf[1 << 20];
	struct fake_mem m = { .buf = buf, .base = FAKE_IMAGE_BASE, .cap = sizeof(buf),
			      .code_type = FAKE_IMAGE_BASE + FAKE_IMAGE_CODE_TYPE };
	uint32_t tid = 1000, version = FAKE_PY_VERSION, churn = 0;
	struct built b;
	uint64_t ts, code;
	FILE *f;

	if (s == DEEP || s >= CHURN) {
		fprintf(stderr, "python3-fake: no image of '%s'\n", s == DEEP ? "deep" : "churn");
		return 2;
	}
	table_bytes = 2048;
	thread_list = 100;
	groups = 300;
	fake_alloc(&m, FAKE_IMAGE_HEAP);
	memcpy(buf + FAKE_IMAGE_VERSION, &version, sizeof(version));
	memcpy(buf + FAKE_IMAGE_TID, &tid, sizeof(tid));
	buf[FAKE_IMAGE_EVALS] = s == GROUPS_ ? 8 : 1;
	buf[FAKE_IMAGE_SAMPLES] = 2;
	b = build(&m, s, tid);
	/* Between samples, the innermost code object's name moves. */
	memcpy(&code, fake_at(&m, b.frame + FAKE_FRAME_CODE), sizeof(code));
	if (code >= m.base && code - m.base < m.len)
		churn = (uint32_t)(code - m.base + FAKE_CODE_QUALNAME);
	memcpy(buf + FAKE_IMAGE_CHURN, &churn, sizeof(churn));
	ts = fake_thread(&m, b.threads ? 0 : tid, b.frame, 0);
	fake_interp(&m, buf + FAKE_IMAGE_RUNTIME, b.threads ? b.threads : ts);
	if (!(f = fopen(path, "wb")) || fwrite(buf, 1, m.len, f) != m.len || fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/python3-fake.XXXXXX";
	struct run r = {0};
	bool planted;
	enum scenario s;

	if (argc == 4 && !strcmp(argv[1], "image"))
		return write_image(scenario_named(argv[2]), argv[3]);
	if (argc != 3) {
		fprintf(stderr, "usage: python3-fake SCENARIO SECONDS | image SCENARIO FILE\n");
		return 2;
	}
	planted = !strcmp(argv[1], "planted");
	if (planted)
		plant_fifo(dir);
	s = !strcmp(argv[1], "hostile") ? NSCENARIOS : planted ? PLAIN : scenario_named(argv[1]);
	r.m.buf = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r.m.buf == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	r.m.base = (uintptr_t)r.m.buf;
	r.m.cap = REGION_BYTES;
	r.m.code_type = (uintptr_t)PyCode_Type;
	r.tid = (uint32_t)syscall(SYS_gettid);
	r.tstate = fake_thread(&r.m, r.tid, 0, 0);
	memcpy(&r.cframe, fake_at(&r.m, r.tstate + FAKE_TSTATE_CFRAME), sizeof(r.cframe));
	r.interp = fake_interp(&r.m, _PyRuntime, r.tstate);
	if (s >= CHURN) {
		build_churn(&r, s == CHURN ? CHURN_FRAMES : CHURN_INNER,
			    s == CHURN ? CHURN_LINES : 4);
		fake_put64(&r.m, r.cframe + FAKE_CFRAME_FRAME, r.churn->frame[CHURN_FRAMES - 1]);
	} else {
		for (int k = 0; k < NSCENARIOS; k++)
			if (s == NSCENARIOS || s == (enum scenario)k)
				r.built[k] = build(&r.m, (enum scenario)k, r.tid);
		r.rotate = s == NSCENARIOS;
		show(&r, s == NSCENARIOS ? PLAIN : s);
	}
	r.end = now() + atof(argv[2]);
	_PyEval_EvalFrameDefault(&r);
	free(r.churn);
	if (planted)
		unplant(dir);
	return 0;
}
