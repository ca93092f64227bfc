/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_PYTHON_H
#define GTRACE_RECORD_PYTHON_H

/*
 * The CPython interpreter stack of a sampled thread, read from the process's
 * memory when its sample is drained, and held against the sample's native
 * stack: each C call of _PyEval_EvalFrameDefault runs one group of Python
 * frames, so the number of groups read must equal the number of eval frames
 * unwound. A mismatch means the thread moved on between the sample and the
 * read. CPython 3.11 to 3.13 are read (their layouts are facts of their
 * headers); another version is named once and left alone. The process's
 * memory may say anything: what one sample reads of it is bounded, and so
 * is what the reader keeps of its code objects.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* What became of one sample of a CPython process: each a python.* counter. */
enum py_outcome {
	PY_MATCHED,		/* read, and as many groups as eval frames */
	PY_MISMATCH,		/* read, but the groups and eval frames differ */
	PY_NO_THREAD_STATE,	/* no thread state for the tid (not started, or a C thread) */
	PY_READ_FAILED,		/* its memory could not be read: changed under the reader, or denied */
	PY_EXITED,		/* the process had exited when its sample was read */
	PY_UNSUPPORTED,		/* a CPython version without a known layout */
	PY_OVER_BUDGET,		/* more to read than one sample may: a chain too long or looping */
	PY_OUTCOMES,
	PY_NOT_PYTHON = PY_OUTCOMES	/* not a CPython process: no counter */
};

/* What the reader cut or left out to stay within its bounds: each a python.* counter. */
enum py_counter {
	PY_CODES_EVICTED,	/* code objects dropped from the cache for others */
	PY_NAMES_CUT,		/* function or file names cut to their first characters */
	PY_TABLES_TOO_LONG,	/* code objects read without lines: their table too long */
	PY_COUNTERS
};

#define PY_MAX_FRAMES 256

/*
 * What one sample may read of the process: so many reads and bytes, past
 * which it is PY_OVER_BUDGET. Code objects read before the budget ran out
 * are kept, so a stack of many new ones is read in a few samples.
 */
#define PY_SAMPLE_READS 256
#define PY_SAMPLE_BYTES (128u << 10)

/* One Python frame: its function, as its code object was named, and the line it was at. */
struct py_frame {
	uint64_t func;		/* what py_name_fn gave the code object */
	uint32_t line;		/* 0 unknown */
};

/*
 * A matched sample's Python stack, innermost first, in groups: group g
 * (innermost 0) is frames[group_start[g] .. group_start[g + 1]) and is run
 * by the native frame ips[eval_at[g]]. Frames past PY_MAX_FRAMES (the
 * outermost of a deeper stack) are left out.
 */
struct py_stack {
	struct py_frame frames[PY_MAX_FRAMES];
	uint32_t nframes;
	uint32_t group_start[PY_MAX_FRAMES + 1];
	uint32_t eval_at[PY_MAX_FRAMES];
	uint32_t groups;	/* matched: those with an eval frame in ips */
};

struct pyreader;

/*
 * Names the function (co_qualname) and file (co_filename) of a code object
 * the reader read: what its frames carry as py_frame.func. The names are
 * UTF-8 without NUL, at most 1024 characters, as the process's memory had
 * them (control characters included).
 */
typedef uint64_t py_name_fn(void *arg, const char *func, const char *file);

/* What the reader needs of a process's interpreter, from the file holding it. */
struct py_interpreter {
	char path[4096];
	uint64_t runtime;		/* &_PyRuntime in the process */
	uint64_t version;		/* &Py_Version; 0 when the file has none */
	uint64_t eval_lo, eval_hi;	/* _PyEval_EvalFrameDefault's code */
	uint64_t code_type;		/* &PyCode_Type */
};

/*
 * Where processes' interpreters are found and their memory read: live
 * processes (/proc, process_vm_readv) unless a test hands a memory image.
 */
struct py_memory {
	/* 0 and *in when pid runs CPython, else a negative errno. */
	int (*find)(void *arg, uint32_t pid, struct py_interpreter *in);
	/* As process_vm_readv with n ranges, but a negative errno on failure. */
	ssize_t (*read)(void *arg, uint32_t pid, const struct iovec *local,
			const struct iovec *remote, unsigned long n);
	void *arg;
};

/* A reader naming code objects through name(arg, ...), of live processes when mem is NULL. */
int pyreader_new(struct pyreader **pr, py_name_fn *name, void *arg,
		 const struct py_memory *mem);
void pyreader_free(struct pyreader *pr);

/* Its counters so far, by enum py_counter. */
const uint64_t *pyreader_counts(const struct pyreader *pr);

/* The process exec'd or exited: look again. */
void pyreader_forget(struct pyreader *pr, uint32_t pid);

/*
 * The process mapped a file that may hold an interpreter: look again
 * unless it was found CPython already (it keeps its interpreter, and each
 * look writes its description once more).
 */
void pyreader_mapped(struct pyreader *pr, uint32_t pid);

/* Whether a mapped file may hold an interpreter (python3.X, libpython3.X.so). */
bool pyreader_is_python_path(const char *path);

/*
 * Reads the Python stack of tid in pid for its sample taken at time, as
 * soon as the sample is out of the ring: the sooner the read, the likelier
 * the stack still is the one sampled. When this found the process to be
 * CPython, *found describes it ("CPython 3.11.7 /usr/bin/python3.11"),
 * valid until the next call; else NULL.
 */
void pyreader_snapshot(struct pyreader *pr, uint32_t pid, uint32_t tid, uint64_t time,
		       const char **found);

/*
 * Holds the Python stack of the sample (its snapshot, else read now) against
 * its native stack ips[0 .. n) (innermost first; complete: the unwind
 * reached the outermost frame). When it matched, *st is the stack. *found
 * as for pyreader_snapshot.
 */
enum py_outcome pyreader_sample(struct pyreader *pr, uint32_t pid, uint32_t tid, uint64_t time,
				const uint64_t *ips, size_t n, bool complete,
				struct py_stack *st, const char **found);

#endif
