/* SPDX-License-Identifier: MIT */
/*
 * A fake CPython interpreter: its runtime's interpreter, thread states,
 * frames, code objects and the str and bytes objects these point to, laid
 * out at the offsets of CPython 3.12's headers on x86-64 (or of 3.11's or
 * 3.13's: fake_mem.layout), which is where gtrace's Python reader
 * (src/record/python-memory.c) looks for them.
 * Built into a region of memory whose addresses, as the reader sees them,
 * start at base: the region itself in a running fake interpreter
 * (tests/hostile/python3-fake.c), or a fixed address in a memory image,
 * the input of tests/fuzz/fuzz-python.c.
 *
 * A memory image is the whole input, read as if mapped at FAKE_IMAGE_BASE:
 * Py_Version, the sampled thread's id, how many eval frames its native
 * stack holds, how many samples to take and which byte to change between
 * them, then PyCode_Type (its address is all that counts) and _PyRuntime,
 * then the objects.
 */
#ifndef GTRACE_TESTS_FAKE_CPYTHON_H
#define GTRACE_TESTS_FAKE_CPYTHON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_IMAGE_BASE 0x10000000ull
#define FAKE_IMAGE_VERSION 0	/* u32 Py_Version */
#define FAKE_IMAGE_TID 4	/* u32 */
#define FAKE_IMAGE_EVALS 8	/* u8: eval frames in the sample's native stack */
#define FAKE_IMAGE_SAMPLES 9	/* u8: samples taken of the image */
#define FAKE_IMAGE_CHURN 12	/* u32: the byte changed between two samples */
#define FAKE_IMAGE_CODE_TYPE 16
#define FAKE_IMAGE_RUNTIME 64
#define FAKE_IMAGE_HEAP 128

#define FAKE_PY_VERSION 0x030c04f0u	/* 3.12.4 */

/* CPython 3.12's offsets (Py_BUILD_CORE headers, x86-64). */
#define FAKE_RUNTIME_INTERP 40		/* _PyRuntimeState.interpreters.head */
#define FAKE_INTERP_THREADS 72		/* PyInterpreterState.threads.head */
#define FAKE_INTERP_SIZE 128
#define FAKE_TSTATE_NEXT 8
#define FAKE_TSTATE_CFRAME 56
#define FAKE_TSTATE_TID 144		/* native_thread_id */
#define FAKE_TSTATE_SIZE 160
#define FAKE_CFRAME_FRAME 0		/* _PyCFrame.current_frame */
#define FAKE_FRAME_CODE 0
#define FAKE_FRAME_PREVIOUS 8
#define FAKE_FRAME_INSTR 56		/* prev_instr */
#define FAKE_FRAME_OWNER 70
#define FAKE_FRAME_SIZE 80
#define FAKE_OWNED_BY_CSTACK 3
#define FAKE_OBJECT_TYPE 8
#define FAKE_CODE_FIRSTLINENO 68
#define FAKE_CODE_FILENAME 112
#define FAKE_CODE_QUALNAME 128
#define FAKE_CODE_LINETABLE 136
#define FAKE_CODE_UNITS 192		/* co_code_adaptive */
#define FAKE_CODE_SIZE 208
#define FAKE_VAR_SIZE 16		/* ob_size, and a str's length */
#define FAKE_STR_STATE 32
#define FAKE_STR_ASCII_DATA 40		/* sizeof(PyASCIIObject) */
#define FAKE_STR_COMPACT_DATA 56	/* sizeof(PyCompactUnicodeObject) */
#define FAKE_BYTES_DATA 32

/*
 * Where a CPython version keeps what the reader reads (offsetof() and
 * sizeof() against its Py_BUILD_CORE headers, x86-64), written apart from
 * the reader's own table so that a test (tests/unit/test-python-reader.c)
 * holds one against the other.
 */
struct fake_layout {
	unsigned minor;
	uint32_t runtime_interp;	/* _PyRuntimeState.interpreters.head */
	uint32_t interp_threads;	/* PyInterpreterState.threads.head */
	uint32_t interp_size;
	uint32_t tstate_next, tstate_tid;	/* PyThreadState.next, .native_thread_id */
	uint32_t tstate_cframe;		/* .cframe; 0: none (3.13) */
	uint32_t current_frame;		/* in _PyCFrame, else in PyThreadState */
	uint32_t tstate_size;
	uint32_t frame_code;		/* _PyInterpreterFrame.f_code (f_executable) */
	uint32_t frame_previous, frame_instr;	/* .previous, .prev_instr (instr_ptr) */
	uint32_t frame_is_entry;	/* .is_entry (3.11); 0: none */
	uint32_t frame_owner;
	uint32_t code_firstlineno, code_units;	/* PyCodeObject.co_firstlineno, co_code_adaptive */
	uint32_t code_size;
	uint32_t str_ascii_data, str_compact_data;	/* sizeof PyASCIIObject, PyCompactUnicodeObject */
};

static const struct fake_layout fake_layouts[] = {
	{ .minor = 11, .runtime_interp = 40, .interp_threads = 16, .interp_size = 128,
	  .tstate_next = 8, .tstate_tid = 160, .tstate_cframe = 56, .current_frame = 8,
	  .tstate_size = 176, .frame_code = 32, .frame_previous = 48, .frame_instr = 56,
	  .frame_is_entry = 68, .frame_owner = 69, .code_firstlineno = 72, .code_units = 184,
	  .code_size = 200, .str_ascii_data = 48, .str_compact_data = 72 },
	{ .minor = 12, .runtime_interp = FAKE_RUNTIME_INTERP, .interp_threads = FAKE_INTERP_THREADS,
	  .interp_size = FAKE_INTERP_SIZE, .tstate_next = FAKE_TSTATE_NEXT,
	  .tstate_tid = FAKE_TSTATE_TID, .tstate_cframe = FAKE_TSTATE_CFRAME,
	  .current_frame = FAKE_CFRAME_FRAME, .tstate_size = FAKE_TSTATE_SIZE,
	  .frame_code = FAKE_FRAME_CODE, .frame_previous = FAKE_FRAME_PREVIOUS,
	  .frame_instr = FAKE_FRAME_INSTR, .frame_owner = FAKE_FRAME_OWNER,
	  .code_firstlineno = FAKE_CODE_FIRSTLINENO, .code_units = FAKE_CODE_UNITS,
	  .code_size = FAKE_CODE_SIZE, .str_ascii_data = FAKE_STR_ASCII_DATA,
	  .str_compact_data = FAKE_STR_COMPACT_DATA },
	{ .minor = 13, .runtime_interp = 632, .interp_threads = 7344, .interp_size = 7360,
	  .tstate_next = 8, .tstate_tid = 160, .current_frame = 72, .tstate_size = 176,
	  .frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_owner = 70,
	  .code_firstlineno = 68, .code_units = 200, .code_size = 216, .str_ascii_data = 40,
	  .str_compact_data = 56 },
};

#define FAKE_LAYOUTS (sizeof(fake_layouts) / sizeof(fake_layouts[0]))

/* The region the objects go in; addresses are base + offset. */
struct fake_mem {
	uint8_t *buf;
	uint64_t base;
	size_t len, cap;
	uint64_t code_type;	/* &PyCode_Type */
	const struct fake_layout *layout;	/* NULL: 3.12's */
};

static inline const struct fake_layout *fake_layout(const struct fake_mem *m)
{
	return m->layout ? m->layout : &fake_layouts[1];
}

static inline uint8_t *fake_at(struct fake_mem *m, uint64_t addr)
{
	return m->buf + (addr - m->base);
}

static inline void fake_put64(struct fake_mem *m, uint64_t addr, uint64_t v)
{
	memcpy(fake_at(m, addr), &v, sizeof(v));
}

static inline void fake_put32(struct fake_mem *m, uint64_t addr, uint32_t v)
{
	memcpy(fake_at(m, addr), &v, sizeof(v));
}

/* size zeroed bytes aligned to align (a power of two); their address. */
static inline uint64_t fake_alloc_aligned(struct fake_mem *m, size_t size, size_t align)
{
	size_t at = (m->len + align - 1) & ~(align - 1);

	if (at + size > m->cap) {
		fprintf(stderr, "fake-cpython: region of %zu bytes full\n", m->cap);
		exit(2);
	}
	memset(m->buf + at, 0, size);
	m->len = at + size;
	return m->base + at;
}

static inline uint64_t fake_alloc(struct fake_mem *m, size_t size)
{
	return fake_alloc_aligned(m, size, 16);
}

/*
 * A compact str of n characters of kind bytes each (1, 2 or 4), ASCII
 * (data right after PyASCIIObject) or not, its length field saying
 * claimed characters; room for room characters.
 */
static inline uint64_t fake_str_kind(struct fake_mem *m, const void *chars, size_t n,
				     unsigned kind, int ascii, int64_t claimed, size_t room)
{
	const struct fake_layout *l = fake_layout(m);
	size_t data = ascii ? l->str_ascii_data : l->str_compact_data;
	uint64_t s = fake_alloc(m, data + (room + 1) * kind);

	fake_put64(m, s + FAKE_VAR_SIZE, (uint64_t)claimed);
	fake_put32(m, s + FAKE_STR_STATE, kind << 2 | 1u << 5 | (ascii ? 1u : 0u) << 6);
	memcpy(fake_at(m, s + data), chars, n * kind);
	return s;
}

/* An ASCII str of text, with room for room characters. */
static inline uint64_t fake_str_room(struct fake_mem *m, const char *text, size_t room)
{
	size_t n = strlen(text);

	return fake_str_kind(m, text, n, 1, 1, (int64_t)n, n > room ? n : room);
}

static inline uint64_t fake_str(struct fake_mem *m, const char *text)
{
	return fake_str_room(m, text, 0);
}

/* Rewrites an ASCII str made by fake_str_room, within its room. */
static inline void fake_str_set(struct fake_mem *m, uint64_t s, const char *text)
{
	size_t n = strlen(text);

	memcpy(fake_at(m, s + fake_layout(m)->str_ascii_data), text, n + 1);
	fake_put64(m, s + FAKE_VAR_SIZE, n);
}

/* A bytes object of n bytes whose size field says claimed. */
static inline uint64_t fake_bytes(struct fake_mem *m, const void *data, size_t n, int64_t claimed)
{
	uint64_t b = fake_alloc(m, FAKE_BYTES_DATA + n + 1);

	fake_put64(m, b + FAKE_VAR_SIZE, (uint64_t)claimed);
	memcpy(fake_at(m, b + FAKE_BYTES_DATA), data, n);
	return b;
}

/*
 * A location table of n lines from the first line on, one code unit
 * each: the one-line form (kind 11: the next line) with its two column
 * bytes.
 */
static inline uint64_t fake_lines(struct fake_mem *m, size_t n)
{
	uint8_t *t = calloc(n ? 3 * n : 1, 1);
	uint64_t b;

	for (size_t i = 0; i < n; i++) {
		t[3 * i] = (uint8_t)(0x80 | 11 << 3);
		t[3 * i + 1] = 1;
		t[3 * i + 2] = 8;
	}
	/* The first entry stays on the first line. */
	if (n)
		t[0] = (uint8_t)(0x80 | 10 << 3);
	b = fake_bytes(m, t, 3 * n, (int64_t)(3 * n));
	free(t);
	return b;
}

static inline uint64_t fake_code(struct fake_mem *m, uint64_t qualname, uint64_t filename,
				 uint64_t linetable, int32_t firstlineno)
{
	const struct fake_layout *l = fake_layout(m);
	uint64_t c = fake_alloc(m, l->code_size);

	fake_put64(m, c + FAKE_OBJECT_TYPE, m->code_type);
	fake_put32(m, c + l->code_firstlineno, (uint32_t)firstlineno);
	fake_put64(m, c + FAKE_CODE_QUALNAME, qualname);
	fake_put64(m, c + FAKE_CODE_FILENAME, filename);
	fake_put64(m, c + FAKE_CODE_LINETABLE, linetable);
	return c;
}

/* A frame of code at its unit-th instruction, called from previous. */
static inline void fake_frame_at(struct fake_mem *m, uint64_t f, uint64_t code,
				 uint64_t previous, uint32_t unit)
{
	const struct fake_layout *l = fake_layout(m);

	fake_put64(m, f + l->frame_code, code);
	fake_put64(m, f + l->frame_previous, previous);
	fake_put64(m, f + l->frame_instr, code + l->code_units + 2ull * unit);
}

static inline uint64_t fake_frame(struct fake_mem *m, uint64_t code, uint64_t previous,
				  uint32_t unit)
{
	uint64_t f = fake_alloc(m, FAKE_FRAME_SIZE);

	fake_frame_at(m, f, code, previous, unit);
	return f;
}

/* A thread state of tid running frame (through its _PyCFrame before 3.13), before next. */
static inline uint64_t fake_thread(struct fake_mem *m, uint32_t tid, uint64_t frame,
				   uint64_t next)
{
	const struct fake_layout *l = fake_layout(m);
	uint64_t ts = fake_alloc(m, l->tstate_size), holder = ts;

	fake_put64(m, ts + l->tstate_next, next);
	fake_put64(m, ts + l->tstate_tid, tid);
	if (l->tstate_cframe) {
		holder = fake_alloc(m, 16);
		fake_put64(m, ts + l->tstate_cframe, holder);
	}
	fake_put64(m, holder + l->current_frame, frame);
	return ts;
}

/*
 * The interpreter whose thread list starts at threads, made the first of
 * the runtime whose bytes are at runtime.
 */
static inline uint64_t fake_interp(struct fake_mem *m, uint8_t *runtime, uint64_t threads)
{
	const struct fake_layout *l = fake_layout(m);
	uint64_t interp = fake_alloc(m, l->interp_size);

	fake_put64(m, interp + l->interp_threads, threads);
	memcpy(runtime + l->runtime_interp, &interp, sizeof(interp));
	return interp;
}

#endif
