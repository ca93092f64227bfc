/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_RECORD_PYTHON_INTERNAL_H
#define GTRACE_RECORD_PYTHON_INTERNAL_H

/*
 * What the Python reader's files share inside src/record/: python.c walks
 * a thread's frames, python-memory.c reads the process's memory and knows
 * where each CPython version keeps things, python-code.c reads and keeps
 * code objects.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "record/python.h"
#include "util/hashmap.h"
#include "util/vec.h"

/* Frames one read walks: a longer chain (one that loops) is over budget. */
#define MAX_FRAMES 4096
/* Thread states noted per process, found on walks of its list. */
#define MAX_THREADS 4096
/* Frames are read a window at a time: a thread's frames lie together, the callers below. */
#define FRAME_WINDOW 1024
/* The most read at once of a thread's data stack below its current frame. */
#define STACK_WINDOW (16u << 10)
#define PAGE_SIZE 4096
/* The code objects a thread's last walk met whose fingerprints its next read takes along. */
#define HINT_CODES 64
/* Bounds on what is copied of a code object's name, file and line table. */
#define MAX_NAME_CHARS 1024
#define MAX_LINETABLE (64u << 10)
/* The code objects kept: CODE_SETS sets of CODE_WAYS, their lines within CODE_BYTES. */
#define CODE_SETS 1024
#define CODE_WAYS 4
#define CODE_BYTES (16u << 20)
/* Symbols looked at in one symbol table of an interpreter's file. */
#define MAX_SYMBOLS (1u << 20)
/* _PyInterpreterFrame.owner of the shim frame each eval call pushes (3.12+). */
#define FRAME_OWNED_BY_CSTACK 3
/* The reader's own error: the sample's budget is spent. */
#define OVER_BUDGET (-E2BIG)

/* Offsets the same in 3.11 to 3.13: the code object's strings, str and bytes objects. */
#define CODE_FILENAME 112	/* PyCodeObject.co_filename */
#define CODE_QUALNAME 128	/* .co_qualname */
#define CODE_LINETABLE 136	/* .co_linetable */
#define OBJECT_TYPE 8		/* PyObject.ob_type */
#define VAR_SIZE 16		/* PyVarObject.ob_size, PyASCIIObject.length */
#define STR_STATE 32		/* PyASCIIObject.state: kind bits 2-4, compact 5, ascii 6 */
#define BYTES_DATA 32		/* PyBytesObject.ob_sval */
/*
 * A code object's co_filename .. co_linetable pointers: read again at each
 * of its frames, as a code object freed and another made at its address
 * would otherwise keep the first one's name.
 */
#define CODE_FINGERPRINT CODE_FILENAME
#define FINGERPRINT_LEN (CODE_LINETABLE + 8 - CODE_FINGERPRINT)

/*
 * Where the interpreter keeps what the walk needs, per minor version, from
 * offsetof() against that version's internal headers (Py_BUILD_CORE) on
 * x86-64. A version keeps its layout across its micro releases.
 */
struct py_layout {
	unsigned minor;
	uint32_t runtime_interpreters_head;	/* _PyRuntimeState.interpreters.head */
	uint32_t interp_threads_head;		/* PyInterpreterState.threads.head */
	uint32_t tstate_next;
	uint32_t tstate_native_thread_id;
	uint32_t tstate_cframe;			/* 0: the frame is in the thread state */
	uint32_t current_frame;			/* in _PyCFrame, else in PyThreadState */
	uint32_t frame_code;			/* f_code; f_executable in 3.13 */
	uint32_t frame_previous;
	uint32_t frame_instr;			/* prev_instr; instr_ptr in 3.13 */
	uint32_t frame_is_entry;		/* 0: entries are owner CSTACK shims */
	uint32_t frame_owner;
	uint32_t code_firstlineno;
	uint32_t code_units;			/* co_code_adaptive: the instructions */
	uint32_t ascii_size;			/* sizeof(PyASCIIObject) */
	uint32_t compact_size;			/* sizeof(PyCompactUnicodeObject) */
};


/* Instructions before byte offset end (from the previous run's) are at line; 0 unknown. */
struct line_run {
	uint32_t end;
	uint32_t line;
};

/*
 * A code object as read at its first frame: a slot of the cache, kept
 * while its process's frames still use it and others do not need the room.
 */
struct py_code {
	uint64_t proc;			/* its process's serial; 0: a free slot */
	uint64_t addr;
	uint64_t units;			/* where its instructions are in the process */
	uint64_t func;			/* what py_name_fn named it */
	uint32_t used;			/* the read that last used it */
	bool referenced;		/* used since the hand last passed it */
	int32_t firstlineno;
	uint32_t nruns;
	struct line_run *runs;		/* by end, from its location table */
	uint8_t fingerprint[FINGERPRINT_LEN];
};

enum py_state { PROC_NOT_PYTHON, PROC_PYTHON, PROC_UNSUPPORTED };

struct pyproc {
	enum py_state state;
	const struct py_layout *layout;
	uint64_t serial;		/* its code objects' key in the cache */
	uint64_t runtime;		/* &_PyRuntime in the process */
	uint64_t eval_lo, eval_hi;	/* _PyEval_EvalFrameDefault's code */
	uint64_t code_type;		/* &PyCode_Type */
	struct u64map tstates;		/* tid -> its PyThreadState */
	struct u64map hints;		/* tid -> its struct thread_hint */
	struct u64map cframes;		/* tid -> the _PyCFrame its last read met (before 3.13) */
	uint64_t walk_at;		/* where a walk of its threads ran out of budget */
	uint64_t walk_head;		/* the head of the list that walk began at */
	uint32_t walk_steps;		/* the states that walk has met */
};

/*
 * What a thread's last walk met, so that the next read of its state takes
 * along what the walk will need: the pages of its frames and the
 * fingerprints of its code objects.
 */
struct thread_hint {
	uint64_t low;			/* the lowest frame the stack window should hold */
	uint64_t top;			/* the end of the current frame */
	uint32_t ncodes;
	uint64_t codes[HINT_CODES];	/* distinct */
};

/* A sample's Python stack as read when the sample arrived, until it is matched. */
struct snapshot {
	uint64_t time;
	enum py_outcome outcome;
	uint64_t eval_lo, eval_hi;	/* of the process when read */
	struct py_frame *frames;
	uint32_t *group_start;		/* groups + 1 of them */
	uint32_t groups;
};

/* One thread's snapshots not matched yet: a few drains' worth. */
struct pending {
	VEC(struct snapshot *) snaps;
};

/* A Python frame as walked, before its code object is known. */
struct raw_frame {
	uint64_t code;			/* the code object's address */
	uint64_t instr;
};

/* The bytes of the process last read for a frame walk. */
struct window {
	uint64_t lo, len;
	uint8_t bytes[STACK_WINDOW];
};

struct pyreader {
	struct py_memory mem;
	py_name_fn *name;
	void *name_arg;
	struct u64map procs;		/* pid -> struct pyproc * */
	uint64_t procs_seen;
	struct py_code *codes;		/* CODE_SETS * CODE_WAYS slots */
	size_t code_bytes;		/* of their runs */
	size_t hand;			/* the next slot to free for room */
	uint32_t read;			/* the read under way, counted */
	uint32_t reads_left, bytes_left;	/* its budget */
	uint64_t counts[PY_COUNTERS];
	struct raw_frame raw[PY_MAX_FRAMES];
	struct window stack;		/* a walk's first read, at its current frame */
	uint32_t prints;		/* fingerprints read with the thread state */
	uint64_t print_addr[HINT_CODES];	/* of the code objects at */
	uint8_t print[HINT_CODES][FINGERPRINT_LEN];
	struct window window;		/* the last read at another frame */
	uint8_t table[MAX_LINETABLE];
	struct line_run runs[MAX_LINETABLE];
	char func[MAX_NAME_CHARS * 4 + 1], file[MAX_NAME_CHARS * 4 + 1];
	struct u64map pending_of;	/* tid -> index in pending */
	VEC(struct pending) pending;
	struct py_stack scratch;
	char found[4200];
};

/* python-memory.c */
ssize_t py_read_live(void *arg, uint32_t pid, const struct iovec *local,
		     const struct iovec *remote, unsigned long n);
int py_find_live(void *arg, uint32_t pid, struct py_interpreter *in);
ssize_t py_read_some(struct pyreader *pr, uint32_t pid, const struct iovec *local,
		     const struct iovec *remote, unsigned long n, size_t len);
int py_read_ranges(struct pyreader *pr, uint32_t pid, const struct iovec *local,
		   const struct iovec *remote, unsigned long n, size_t len);
int py_peek(struct pyreader *pr, uint32_t pid, uint64_t addr, void *buf, size_t len);
int py_peek_u64(struct pyreader *pr, uint32_t pid, uint64_t addr, uint64_t *v);
struct pyproc *py_proc_detect(struct pyreader *pr, uint32_t pid, const char **found);
int py_read_str(struct pyreader *pr, const struct py_layout *l, uint32_t pid, uint64_t addr,
		char *text);

/* python-code.c */
int py_name_frames(struct pyreader *pr, struct pyproc *p, uint32_t pid, struct py_stack *st);
void py_note_codes(struct pyreader *pr, const struct pyproc *p, struct thread_hint *h,
		   uint32_t n);

#endif
