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
 * headers); another version is named once and left alone.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What became of one sample of a CPython process: each a "python.<name>" counter. */
enum py_outcome {
	PY_MATCHED,		/* read, and as many groups as eval frames */
	PY_MISMATCH,		/* read, but the groups and eval frames differ */
	PY_NO_THREAD_STATE,	/* no thread state for the tid (not started, or a C thread) */
	PY_READ_FAILED,		/* its memory could not be read: changed under the reader, or denied */
	PY_EXITED,		/* the process had exited when its sample was read */
	PY_UNSUPPORTED,		/* a CPython version without a known layout */
	PY_OUTCOMES,
	PY_NOT_PYTHON = PY_OUTCOMES	/* not a CPython process: no counter */
};

const char *py_outcome_name(enum py_outcome o);

#define PY_MAX_FRAMES 256

/* One Python frame: its function, by its code object, and the line it was at. */
struct py_frame {
	uint32_t code;		/* the code object's id in the reader, from 1 */
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

int pyreader_new(struct pyreader **pr);
void pyreader_free(struct pyreader *pr);

/* The process exec'd, exited, or mapped a Python library: look again. */
void pyreader_forget(struct pyreader *pr, uint32_t pid);

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

/* The function name (co_qualname) and file (co_filename) of a frame's code. */
void pyreader_code(const struct pyreader *pr, uint32_t code, const char **name,
		   const char **file);

#endif
