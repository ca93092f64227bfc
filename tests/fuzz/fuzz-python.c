/* SPDX-License-Identifier: MIT */
/*
 * Feeds arbitrary bytes to the Python frame reader as the memory of a
 * CPython 3.12 process: the input is a memory image of
 * tests/hostile/fake-cpython.h's format, read as if mapped at
 * FAKE_IMAGE_BASE, with the interpreter's symbols at its fixed places. The
 * reader takes the samples the image asks for, one byte of it changed
 * between two, each held against a native stack of as many eval frames as
 * it says. Beyond crashes and sanitizer reports, a bug is: a sample that
 * reads more than its budget, a name that is not bounded UTF-8 without
 * NUL, a frame named by no code object, groups out of order, a process
 * found CPython looked for anew when it maps a file again. The corpus
 * is python3-fake's scenarios as images:
 *	build/tests/hostile/python3-fake image SCENARIO tests/fuzz/corpus/python/SCENARIO
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/python.h"
#include "tests/hostile/fake-cpython.h"
#include "util/utf8.h"

#define PID 4242
#define EVAL_LO 0x400000ull
#define EVAL_HI 0x400100ull
#define MAX_SAMPLES 4
#define MAX_EVALS 8
#define MAX_NAME_BYTES (1024 * 4)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct image {
	uint8_t *mem;
	size_t size;
	uint32_t reads;
	uint64_t bytes;
	uint64_t names;		/* handles given so far: 1 .. names */
};

static int find_image(void *arg, uint32_t pid, struct py_interpreter *in)
{
	memset(in, 0, sizeof(*in));
	strcpy(in->path, "/fuzz/python3.12");
	in->runtime = FAKE_IMAGE_BASE + FAKE_IMAGE_RUNTIME;
	in->version = FAKE_IMAGE_BASE + FAKE_IMAGE_VERSION;
	in->eval_lo = EVAL_LO;
	in->eval_hi = EVAL_HI;
	in->code_type = FAKE_IMAGE_BASE + FAKE_IMAGE_CODE_TYPE;
	return 0;
}

/* As process_vm_readv: ranges outside the image fault, ending the read there. */
static ssize_t read_image(void *arg, uint32_t pid, const struct iovec *local,
			  const struct iovec *remote, unsigned long n)
{
	struct image *im = arg;
	ssize_t got = 0;

	if (pid != PID || n > 1024)
		abort();
	im->reads++;
	for (unsigned long i = 0; i < n; i++) {
		uint64_t addr = (uintptr_t)remote[i].iov_base;
		size_t len = remote[i].iov_len;

		if (local[i].iov_len != len)
			abort();
		im->bytes += len;
		if (addr < FAKE_IMAGE_BASE || addr - FAKE_IMAGE_BASE > im->size ||
		    im->size - (addr - FAKE_IMAGE_BASE) < len)
			return got ? got : -EFAULT;
		memcpy(local[i].iov_base, im->mem + (addr - FAKE_IMAGE_BASE), len);
		got += (ssize_t)len;
	}
	return got;
}

static uint64_t name_code(void *arg, const char *func, const char *file)
{
	struct image *im = arg;

	for (const char *s = func; s; s = s == func ? file : NULL) {
		size_t len = strlen(s);

		if (len > MAX_NAME_BYTES)
			abort();
		for (size_t at = 0, n; at < len; at += n)
			if (!(n = utf8_len(s + at)))
				abort();
	}
	return ++im->names;
}

static void check_stack(const struct image *im, const struct py_stack *st, size_t nips)
{
	if (st->groups > PY_MAX_FRAMES || st->group_start[0] != 0)
		abort();
	for (uint32_t g = 0; g < st->groups; g++)
		if (st->group_start[g] > st->group_start[g + 1] || st->eval_at[g] >= nips ||
		    (g && st->eval_at[g] <= st->eval_at[g - 1]))
			abort();
	if (st->group_start[st->groups] > PY_MAX_FRAMES)
		abort();
	for (uint32_t k = 0; k < st->group_start[st->groups]; k++)
		if (!st->frames[k].func || st->frames[k].func > im->names)
			abort();
}

/*
 * Whether the process is known CPython, found or not by this read: once
 * it is, it is not looked for again until forgotten.
 */
static bool found_python(bool python, const char *found, bool forgotten)
{
	if (!found)
		return python;
	if (python && !forgotten)
		abort();
	return strncmp(found, "unsupported: ", 13) != 0;
}

static uint8_t header_byte(const uint8_t *data, size_t size, size_t at)
{
	return at < size ? data[at] : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct py_memory mem = { .find = find_image, .read = read_image };
	struct image im = { .mem = malloc(size ? size : 1), .size = size };
	unsigned samples = header_byte(data, size, FAKE_IMAGE_SAMPLES) % MAX_SAMPLES + 1;
	unsigned evals = header_byte(data, size, FAKE_IMAGE_EVALS) % (MAX_EVALS + 1);
	uint32_t tid = 0, churn = 0;
	uint64_t ips[2 * MAX_EVALS + 1];
	struct py_stack *st = malloc(sizeof(*st));
	struct pyreader *pr;
	const char *found;
	bool python = false;
	size_t nips = 0;

	memcpy(im.mem, data, size);
	if (size >= FAKE_IMAGE_TID + 4)
		memcpy(&tid, data + FAKE_IMAGE_TID, sizeof(tid));
	if (size >= FAKE_IMAGE_CHURN + 4)
		memcpy(&churn, data + FAKE_IMAGE_CHURN, sizeof(churn));
	/* Eval frames between others, innermost first, the outermost not one. */
	for (unsigned i = 0; i < evals; i++) {
		ips[nips++] = EVAL_HI + i;
		ips[nips++] = EVAL_LO + i;
	}
	ips[nips++] = EVAL_HI + 0x1000;
	mem.arg = &im;
	if (pyreader_new(&pr, name_code, &im, &mem))
		abort();
	for (unsigned s = 0; s <= samples; s++) {
		enum py_outcome outcome;

		/* The last sample after the process was forgotten: found anew. */
		if (s == samples)
			pyreader_forget(pr, PID);
		im.reads = 0;
		im.bytes = 0;
		/* Half the samples read as they arrive, half when matched. */
		if (s % 2) {
			pyreader_snapshot(pr, PID, tid, s, &found);
			python = found_python(python, found, s == samples);
		}
		outcome = pyreader_sample(pr, PID, tid, s, ips, nips, s % 3 != 2, st, &found);
		python = found_python(python, found, s == samples);
		if (im.reads > PY_SAMPLE_READS || im.bytes > PY_SAMPLE_BYTES ||
		    outcome > PY_OUTCOMES)
			abort();
		if (outcome == PY_MATCHED)
			check_stack(&im, st, nips);
		if (size)
			im.mem[churn % size] ^= (uint8_t)(s + 1);
		pyreader_mapped(pr, PID);
	}
	pyreader_free(pr);
	free(st);
	free(im.mem);
	return 0;
}
