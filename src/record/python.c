/* SPDX-License-Identifier: MIT */
#include "record/python.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/hashmap.h"
#include "util/untrusted.h"
#include "util/utf8.h"
#include "util/vec.h"
#include "util/xalloc.h"

/* Frames one read walks: a longer chain (one that loops) is over budget. */
#define MAX_FRAMES 4096
/* Thread states noted per process, found on walks of its list. */
#define MAX_THREADS 4096
/* Frames are read a window at a time: a thread's frames lie together, the callers below. */
#define FRAME_WINDOW 1024
#define PAGE_SIZE 4096
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

static const struct py_layout layouts[] = {
	{ .minor = 11, .runtime_interpreters_head = 40, .interp_threads_head = 16,
	  .tstate_next = 8, .tstate_native_thread_id = 160, .tstate_cframe = 56,
	  .current_frame = 8, .frame_code = 32, .frame_previous = 48, .frame_instr = 56,
	  .frame_is_entry = 68, .frame_owner = 69, .code_firstlineno = 72,
	  .code_units = 184, .ascii_size = 48, .compact_size = 72 },
	{ .minor = 12, .runtime_interpreters_head = 40, .interp_threads_head = 72,
	  .tstate_next = 8, .tstate_native_thread_id = 144, .tstate_cframe = 56,
	  .current_frame = 0, .frame_code = 0, .frame_previous = 8, .frame_instr = 56,
	  .frame_owner = 70, .code_firstlineno = 68, .code_units = 192, .ascii_size = 40,
	  .compact_size = 56 },
	{ .minor = 13, .runtime_interpreters_head = 632, .interp_threads_head = 7344,
	  .tstate_next = 8, .tstate_native_thread_id = 160, .current_frame = 72,
	  .frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_owner = 70,
	  .code_firstlineno = 68, .code_units = 200, .ascii_size = 40, .compact_size = 56 },
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
	uint64_t walk_at;		/* where a walk of its threads ran out of budget */
	uint64_t walk_head;		/* the head of the list that walk began at */
	uint32_t walk_steps;		/* the states that walk has met */
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
	uint8_t bytes[FRAME_WINDOW];
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
	struct window window;
	uint8_t table[MAX_LINETABLE];
	struct line_run runs[MAX_LINETABLE];
	char func[MAX_NAME_CHARS * 4 + 1], file[MAX_NAME_CHARS * 4 + 1];
	struct u64map pending_of;	/* tid -> index in pending */
	VEC(struct pending) pending;
	struct py_stack scratch;
	char found[4200];
};

static int find_live(void *arg, uint32_t pid, struct py_interpreter *in);

static ssize_t read_live(void *arg, uint32_t pid, const struct iovec *local,
			 const struct iovec *remote, unsigned long n)
{
	ssize_t got = process_vm_readv((pid_t)pid, local, n, remote, n, 0);

	return got < 0 ? -errno : got;
}

int pyreader_new(struct pyreader **pr, py_name_fn *name, void *arg,
		 const struct py_memory *mem)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	*pr = xcalloc(1, sizeof(**pr));
	(*pr)->mem = mem ? *mem : (struct py_memory){ .find = find_live, .read = read_live };
	(*pr)->name = name;
	(*pr)->name_arg = arg;
	(*pr)->codes = xcalloc(CODE_SETS * CODE_WAYS, sizeof(*(*pr)->codes));
	return 0;
}

const uint64_t *pyreader_counts(const struct pyreader *pr)
{
	return pr->counts;
}

static void snapshot_free(struct snapshot *snap)
{
	free(snap->frames);
	free(snap->group_start);
	free(snap);
}

static void proc_free(struct pyproc *p)
{
	u64map_free(&p->tstates);
	free(p);
}

/* Its code objects stay in the cache under a serial no process has now, till evicted. */
void pyreader_forget(struct pyreader *pr, uint32_t pid)
{
	uint64_t v;

	if (!u64map_get(&pr->procs, pid, &v) || !v)
		return;
	proc_free((struct pyproc *)(uintptr_t)v);
	u64map_put(&pr->procs, pid, 0);
}

void pyreader_mapped(struct pyreader *pr, uint32_t pid)
{
	uint64_t v;

	if (u64map_get(&pr->procs, pid, &v) && v &&
	    ((struct pyproc *)(uintptr_t)v)->state != PROC_PYTHON)
		pyreader_forget(pr, pid);
}

void pyreader_free(struct pyreader *pr)
{
	size_t pos = 0;
	uint64_t pid, v;

	if (!pr)
		return;
	while (u64map_next(&pr->procs, &pos, &pid, &v))
		if (v)
			proc_free((struct pyproc *)(uintptr_t)v);
	u64map_free(&pr->procs);
	for (size_t i = 0; i < pr->pending.len; i++) {
		for (size_t k = 0; k < pr->pending.v[i].snaps.len; k++)
			snapshot_free(pr->pending.v[i].snaps.v[k]);
		VEC_FREE(&pr->pending.v[i].snaps);
	}
	VEC_FREE(&pr->pending);
	u64map_free(&pr->pending_of);
	for (size_t i = 0; i < CODE_SETS * CODE_WAYS; i++)
		free(pr->codes[i].runs);
	free(pr->codes);
	free(pr);
}

bool pyreader_is_python_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libpython3.", 11) || !strncmp(base, "python3", 7);
}

/* n ranges of pid's memory of len bytes in all, within the read's budget; 0 or a negative errno. */
static int read_ranges(struct pyreader *pr, uint32_t pid, const struct iovec *local,
		       const struct iovec *remote, unsigned long n, size_t len)
{
	ssize_t got;

	if (!pr->reads_left || len > pr->bytes_left)
		return OVER_BUDGET;
	pr->reads_left--;
	pr->bytes_left -= (uint32_t)len;
	got = pr->mem.read(pr->mem.arg, pid, local, remote, n);
	if (got < 0)
		return (int)got;
	return (size_t)got == len ? 0 : -EFAULT;
}

/* len bytes at addr in pid's memory; 0 or a negative errno. */
static int peek(struct pyreader *pr, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (!addr || addr > UINT64_MAX - len)
		return -EFAULT;
	return read_ranges(pr, pid, &local, &remote, 1, len);
}

static int peek_u64(struct pyreader *pr, uint32_t pid, uint64_t addr, uint64_t *v)
{
	return peek(pr, pid, addr, v, sizeof(*v));
}

struct py_symbols {
	uint64_t runtime, version, eval, eval_size, code_type;
	uint64_t first_load;		/* page-aligned vaddr of the segment at offset 0 */
};

/* The symbols the reader needs from the ELF file open at fd, by ELF address. */
static int read_symbols(int fd, struct py_symbols *sy)
{
	Elf_Scn *scn = NULL;
	int err = -ENOENT;
	size_t phnum;
	Elf *elf;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum)) {
		err = -ENOEXEC;
		goto out;
	}
	memset(sy, 0, sizeof(*sy));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && !ph.p_offset) {
			sy->first_load = ph.p_vaddr & ~(ph.p_align ? ph.p_align - 1 : 0);
			break;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		/* As many as the data holds, not as the header claims. */
		n = data->d_size / sh.sh_entsize;
		for (size_t k = 0; k < n && k < MAX_SYMBOLS; k++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)k, &sym) || !sym.st_value ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(name, "_PyRuntime")) {
				sy->runtime = sym.st_value;
			} else if (!strcmp(name, "Py_Version")) {
				sy->version = sym.st_value;
			} else if (!strcmp(name, "PyCode_Type")) {
				sy->code_type = sym.st_value;
			} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
				sy->eval = sym.st_value;
				sy->eval_size = sym.st_size;
			}
		}
	}
	err = sy->runtime && sy->eval && sy->code_type ? 0 : -ENOENT;
out:
	if (elf)
		elf_end(elf);
	return err;
}

/*
 * The file mapped at [lo, hi) in pid as named path: through the map's own
 * link where /proc lets us (the very file mapped, even deleted since), else
 * by its name, which the process may have put anything at since; under the
 * rules for the files a process maps either way.
 */
static int open_mapped(uint32_t pid, unsigned long long lo, unsigned long long hi,
		       const char *path)
{
	struct untrusted_rules by_link = untrusted_mapped_file;
	char link[96];
	int fd;

	/* The link is the kernel's own, to the file mapped. */
	by_link.follow = true;
	snprintf(link, sizeof(link), "/proc/%u/map_files/%llx-%llx", pid, lo, hi);
	fd = untrusted_open(link, &by_link, NULL);
	return fd >= 0 ? fd : untrusted_open(path, &untrusted_mapped_file, NULL);
}

/*
 * The interpreter of pid, from the file holding it (libpython3.X.so if
 * mapped, else the python3.X executable) and where its offset 0 is mapped.
 */
static int find_live(void *arg, uint32_t pid, struct py_interpreter *in)
{
	char maps[64], line[4096], file[4096];
	unsigned long long start = 0, end = 0;
	struct py_symbols sy;
	bool found = false;
	uint64_t bias;
	int fd, err;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%u/maps", pid);
	if (!(f = fopen(maps, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		bool lib;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095[^\n]", &lo, &hi, &off, file) != 4 ||
		    off || file[0] != '/' || !pyreader_is_python_path(file))
			continue;
		lib = strstr(file, "/libpython3.") != NULL;
		/* A libpython beats the executable that loads it. */
		if (!found || lib) {
			snprintf(in->path, sizeof(in->path), "%s", file);
			start = lo;
			end = hi;
			found = true;
		}
		if (lib)
			break;
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	fd = open_mapped(pid, start, end, in->path);
	if (fd < 0)
		return fd;
	err = read_symbols(fd, &sy);
	close(fd);
	if (err)
		return err;
	bias = start - sy.first_load;
	in->runtime = bias + sy.runtime;
	in->version = sy.version ? bias + sy.version : 0;
	in->eval_lo = bias + sy.eval;
	in->eval_hi = in->eval_lo + (sy.eval_size ? sy.eval_size : 1);
	in->code_type = bias + sy.code_type;
	return 0;
}

/* What a first sample learns of pid; the description goes to *found. */
static struct pyproc *proc_detect(struct pyreader *pr, uint32_t pid, const char **found)
{
	struct pyproc *p = xcalloc(1, sizeof(*p));
	struct py_interpreter in;
	uint64_t version = 0;
	unsigned major, minor, micro;

	u64map_put(&pr->procs, pid, (uintptr_t)p);
	if (pr->mem.find(pr->mem.arg, pid, &in))
		return p;
	/* Py_Version (3.11+); before it, the file name says the version. */
	if (!in.version || peek_u64(pr, pid, in.version, &version)) {
		const char *v = strstr(in.path, "python3.");

		if (!v || sscanf(v, "python3.%u", &minor) != 1)
			return p;
		version = 3ull << 24 | (uint64_t)(minor & 0xff) << 16;
	}
	major = (unsigned)(version >> 24 & 0xff);
	minor = (unsigned)(version >> 16 & 0xff);
	micro = (unsigned)(version >> 8 & 0xff);
	p->state = PROC_UNSUPPORTED;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (major == 3 && layouts[i].minor == minor)
			p->layout = &layouts[i];
	if (p->layout)
		p->state = PROC_PYTHON;
	p->serial = ++pr->procs_seen;
	p->runtime = in.runtime;
	p->eval_lo = in.eval_lo;
	p->eval_hi = in.eval_hi;
	p->code_type = in.code_type;
	snprintf(pr->found, sizeof(pr->found), "%sCPython %u.%u.%u %s",
		 p->layout ? "" : "unsupported: ", major, minor, micro, in.path);
	*found = pr->found;
	return p;
}

/*
 * The PyThreadState of tid: the one noted for it if it still says so, else
 * from a walk of the list, noting each state met. A walk that runs out of
 * budget goes on from there at the next read, while the list has the same
 * head and the walk has met no more states than are noted: else (a list
 * replaced, or one that loops) it starts again at the head.
 */
static int thread_state(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint32_t tid,
			uint64_t *ts)
{
	const struct py_layout *l = p->layout;
	uint32_t next = l->tstate_next, id_at = l->tstate_native_thread_id;
	uint32_t lo = next < id_at ? next : id_at, hi = (next > id_at ? next : id_at) + 8;
	uint8_t buf[256];
	uint64_t at = 0, head = 0, interp, id, known;
	uint32_t steps = 0;
	int err;

	if (u64map_get(&p->tstates, tid, ts) && *ts &&
	    !peek_u64(pr, pid, *ts + l->tstate_native_thread_id, &id) && id == tid)
		return 0;
	err = peek_u64(pr, pid, p->runtime + l->runtime_interpreters_head, &interp);
	if (!err)
		err = interp ? peek_u64(pr, pid, interp + l->interp_threads_head, &head) : -ENOENT;
	if (!err) {
		at = head;
		if (p->walk_at && p->walk_head == head && p->walk_steps < MAX_THREADS) {
			at = p->walk_at;
			steps = p->walk_steps;
		}
	}
	for (; !err && at; steps++) {
		err = peek(pr, pid, at + lo, buf, hi - lo);
		if (err)
			break;
		memcpy(&id, buf + id_at - lo, sizeof(id));
		if (id && id <= UINT32_MAX &&
		    (p->tstates.len < MAX_THREADS || u64map_get(&p->tstates, id, &known)))
			u64map_put(&p->tstates, id, at);
		if (id == tid) {
			p->walk_at = 0;
			*ts = at;
			return 0;
		}
		memcpy(&at, buf + next - lo, sizeof(at));
	}
	p->walk_at = err == OVER_BUDGET ? at : 0;
	p->walk_head = head;
	p->walk_steps = steps;
	return err ? err : -ENOENT;
}

/* The innermost frame tid is running, 0 when none. */
static int current_frame(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint64_t ts,
			 uint64_t *frame)
{
	const struct py_layout *l = p->layout;
	uint64_t holder = ts;
	int err = 0;

	if (l->tstate_cframe)
		err = peek_u64(pr, pid, ts + l->tstate_cframe, &holder);
	if (!err)
		err = peek_u64(pr, pid, holder + l->current_frame, frame);
	return err;
}

/*
 * A str object's text as UTF-8 into text (compact strings only: every str
 * the interpreter makes for code objects is one), its first MAX_NAME_CHARS
 * characters.
 */
static int read_str(struct pyreader *pr, const struct py_layout *l, uint32_t pid,
		    uint64_t addr, char *text)
{
	uint8_t head[STR_STATE + 4], chars[MAX_NAME_CHARS * 4];
	uint32_t state, kind;
	int64_t len;
	int err;

	/* Its length and state only: a short ASCII str may end where memory does. */
	if ((err = peek(pr, pid, addr, head, sizeof(head))))
		return err;
	memcpy(&len, head + VAR_SIZE, sizeof(len));
	memcpy(&state, head + STR_STATE, sizeof(state));
	kind = state >> 2 & 7;
	if (!(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4) || len < 0)
		return -EFAULT;
	if (len > MAX_NAME_CHARS) {
		len = MAX_NAME_CHARS;
		pr->counts[PY_NAMES_CUT]++;
	}
	if (len && (err = peek(pr, pid, addr + (state >> 6 & 1 ? l->ascii_size : l->compact_size),
			       chars, (size_t)len * kind)))
		return err;
	for (int64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? chars[i]
			   : kind == 2 ? (uint32_t)chars[2 * i] | (uint32_t)chars[2 * i + 1] << 8
			   : (uint32_t)chars[4 * i] | (uint32_t)chars[4 * i + 1] << 8 |
			     (uint32_t)chars[4 * i + 2] << 16 | (uint32_t)chars[4 * i + 3] << 24;

		/* A NUL cannot be in a trace's string, and U+FFFE and U+FFFF read as no UTF-8. */
		text += utf8_encode(c && c != 0xfffe && c != 0xffff ? c : 0xfffd, text);
	}
	*text = '\0';
	return 0;
}

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
	if ((err = peek(pr, pid, addr, obj, sizeof(obj))))
		return err;
	memcpy(&type, obj + OBJECT_TYPE, sizeof(type));
	memcpy(&filename, obj + CODE_FILENAME, sizeof(filename));
	memcpy(&qualname, obj + CODE_QUALNAME, sizeof(qualname));
	memcpy(&linetable, obj + CODE_LINETABLE, sizeof(linetable));
	memcpy(&firstlineno, obj + l->code_firstlineno, sizeof(firstlineno));
	if (type != p->code_type)
		return -EFAULT;
	if ((err = peek(pr, pid, linetable + VAR_SIZE, &table_len, sizeof(table_len))) ||
	    (err = read_str(pr, l, pid, qualname, pr->func)) ||
	    (err = read_str(pr, l, pid, filename, pr->file)))
		return err;
	if (table_len < 0)
		return -EFAULT;
	if (table_len > MAX_LINETABLE) {
		pr->counts[PY_TABLES_TOO_LONG]++;
	} else {
		if (table_len &&
		    (err = peek(pr, pid, linetable + BYTES_DATA, pr->table, (size_t)table_len)))
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

/*
 * Drops the code objects of frames whose address now holds another one,
 * checking them all in one read.
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

		if (!c)
			continue;
		known[nknown] = c;
		local[nknown] = (struct iovec){ now[nknown], FINGERPRINT_LEN };
		remote[nknown] = (struct iovec){
			(void *)(uintptr_t)(c->addr + CODE_FINGERPRINT), FINGERPRINT_LEN };
		nknown++;
	}
	if (!nknown)
		return 0;
	err = read_ranges(pr, pid, local, remote, nknown, nknown * FINGERPRINT_LEN);
	/* A code object met twice was dropped at the first. */
	for (uint32_t i = 0; !err && i < nknown; i++)
		if (known[i]->proc && memcmp(now[i], known[i]->fingerprint, FINGERPRINT_LEN))
			code_drop(pr, known[i]);
	return err;
}

/* The frames walked into pr->raw, checked and named into st->frames. */
static int name_frames(struct pyreader *pr, struct pyproc *p, uint32_t pid,
		       struct py_stack *st)
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

/*
 * len bytes of the frame at addr: from the window of the last read when
 * there, else read anew with what lies below it in its page (its callers'
 * frames, most often) up to FRAME_WINDOW bytes.
 */
static int frame_bytes(struct pyreader *pr, uint32_t pid, uint64_t addr, uint8_t *buf,
		       size_t len)
{
	struct window *w = &pr->window;
	uint64_t end, lo;
	int err;

	if (addr >= w->lo && addr - w->lo <= w->len && w->len - (addr - w->lo) >= len) {
		memcpy(buf, w->bytes + (addr - w->lo), len);
		return 0;
	}
	if (!addr || addr > UINT64_MAX - len)
		return -EFAULT;
	end = addr + len;
	lo = addr & ~(uint64_t)(PAGE_SIZE - 1);
	if (end - lo > FRAME_WINDOW)
		lo = end - FRAME_WINDOW;
	w->len = 0;
	if ((err = peek(pr, pid, lo, w->bytes, end - lo)))
		return err;
	w->lo = lo;
	w->len = end - lo;
	memcpy(buf, w->bytes + (addr - lo), len);
	return 0;
}

/*
 * Walks the frame chain from frame into st, in groups, one per eval call
 * (3.11: a group ends with its entry frame; 3.12+: with the shim frame the
 * eval call pushed, which is not a Python frame).
 */
static int walk_frames(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint64_t frame,
		       struct py_stack *st)
{
	const struct py_layout *l = p->layout;
	uint32_t len = (l->frame_is_entry > l->frame_owner ? l->frame_is_entry : l->frame_owner) + 1;
	uint8_t buf[80];
	bool open = false;

	st->nframes = st->groups = 0;
	st->group_start[0] = 0;
	pr->window.len = 0;
	for (int i = 0; frame; i++) {
		int err;

		if (i == MAX_FRAMES || st->groups == PY_MAX_FRAMES)
			return -ELOOP;
		err = frame_bytes(pr, pid, frame, buf, len);
		if (err)
			return err;
		memcpy(&frame, buf + l->frame_previous, sizeof(frame));
		if (!l->frame_is_entry && buf[l->frame_owner] == FRAME_OWNED_BY_CSTACK) {
			st->group_start[++st->groups] = st->nframes;
			open = false;
			continue;
		}
		if (st->nframes < PY_MAX_FRAMES) {
			struct raw_frame *raw = &pr->raw[st->nframes++];

			memcpy(&raw->code, buf + l->frame_code, sizeof(raw->code));
			memcpy(&raw->instr, buf + l->frame_instr, sizeof(raw->instr));
		}
		open = !(l->frame_is_entry && buf[l->frame_is_entry]);
		if (!open)
			st->group_start[++st->groups] = st->nframes;
	}
	/* The outermost frames of a thread belong to its first eval call too. */
	if (open)
		st->group_start[++st->groups] = st->nframes;
	return name_frames(pr, p, pid, st);
}

/*
 * Holds st's groups against the eval frames of the native stack, each
 * innermost first; on a match, notes which native frame runs each group.
 */
static enum py_outcome match_native(uint64_t eval_lo, uint64_t eval_hi, struct py_stack *st,
				    const uint64_t *ips, size_t n, bool complete)
{
	uint32_t evals = 0;

	for (size_t i = 0; i < n; i++) {
		if (ips[i] < eval_lo || ips[i] >= eval_hi)
			continue;
		if (evals < st->groups)
			st->eval_at[evals] = (uint32_t)i;
		evals++;
	}
	/* A cut native stack holds the innermost eval calls only. */
	if (evals == st->groups || (!complete && evals < st->groups)) {
		st->groups = evals;
		return PY_MATCHED;
	}
	return PY_MISMATCH;
}

/*
 * Reads tid's Python stack into st: PY_MATCHED when read, to be matched
 * yet against the native frames in [eval[0], eval[1]).
 */
static enum py_outcome read_stack(struct pyreader *pr, uint32_t pid, uint32_t tid,
				  struct py_stack *st, uint64_t eval[2], const char **found)
{
	struct pyproc *p = NULL;
	uint64_t v, ts, frame;
	int err;

	st->nframes = st->groups = 0;
	*found = NULL;
	pr->read++;
	pr->reads_left = PY_SAMPLE_READS;
	pr->bytes_left = PY_SAMPLE_BYTES;
	if (u64map_get(&pr->procs, pid, &v) && v)
		p = (struct pyproc *)(uintptr_t)v;
	else
		p = proc_detect(pr, pid, found);
	if (p->state == PROC_NOT_PYTHON)
		return PY_NOT_PYTHON;
	if (p->state == PROC_UNSUPPORTED)
		return PY_UNSUPPORTED;
	eval[0] = p->eval_lo;
	eval[1] = p->eval_hi;
	err = thread_state(pr, p, pid, tid, &ts);
	if (err == -ENOENT)
		return PY_NO_THREAD_STATE;
	if (!err)
		err = current_frame(pr, p, pid, ts, &frame);
	if (!err)
		err = walk_frames(pr, p, pid, frame, st);
	if (err == -ESRCH)
		return PY_EXITED;
	if (err == OVER_BUDGET || err == -ELOOP)
		return PY_OVER_BUDGET;
	return err ? PY_READ_FAILED : PY_MATCHED;
}

static struct pending *pending_of(struct pyreader *pr, uint32_t tid)
{
	uint64_t i;

	if (!u64map_get(&pr->pending_of, tid, &i)) {
		i = pr->pending.len;
		VEC_PUSH(&pr->pending);
		u64map_put(&pr->pending_of, tid, i);
	}
	return &pr->pending.v[i];
}

void pyreader_snapshot(struct pyreader *pr, uint32_t pid, uint32_t tid, uint64_t time,
		       const char **found)
{
	struct py_stack *st = &pr->scratch;
	uint64_t eval[2];
	enum py_outcome outcome = read_stack(pr, pid, tid, st, eval, found);
	struct snapshot *snap;

	if (outcome == PY_NOT_PYTHON)
		return;
	snap = xcalloc(1, sizeof(*snap));
	snap->time = time;
	snap->outcome = outcome;
	snap->eval_lo = eval[0];
	snap->eval_hi = eval[1];
	snap->groups = st->groups;
	snap->frames = xmemdup(st->frames, st->nframes * sizeof(*st->frames));
	snap->group_start = xmemdup(st->group_start, (st->groups + 1) * sizeof(*st->group_start));
	*VEC_PUSH(&pending_of(pr, tid)->snaps) = snap;
}

/* The snapshot of the sample, taken out of the reader; NULL when there is none. */
static struct snapshot *take_snapshot(struct pyreader *pr, uint32_t tid, uint64_t time)
{
	struct pending *p = pending_of(pr, tid);

	for (size_t i = 0; i < p->snaps.len; i++) {
		struct snapshot *snap = p->snaps.v[i];

		if (snap->time == time) {
			p->snaps.v[i] = p->snaps.v[--p->snaps.len];
			/* A thread's room goes with its last snapshot: tids come and go. */
			if (!p->snaps.len)
				VEC_FREE(&p->snaps);
			return snap;
		}
	}
	return NULL;
}

enum py_outcome pyreader_sample(struct pyreader *pr, uint32_t pid, uint32_t tid, uint64_t time,
				const uint64_t *ips, size_t n, bool complete,
				struct py_stack *st, const char **found)
{
	struct snapshot *snap = take_snapshot(pr, tid, time);
	enum py_outcome outcome;
	uint64_t eval[2];

	*found = NULL;
	if (snap) {
		outcome = snap->outcome;
		eval[0] = snap->eval_lo;
		eval[1] = snap->eval_hi;
		st->groups = snap->groups;
		st->nframes = snap->group_start[snap->groups];
		memcpy(st->frames, snap->frames, st->nframes * sizeof(*st->frames));
		memcpy(st->group_start, snap->group_start,
		       (snap->groups + 1) * sizeof(*st->group_start));
		snapshot_free(snap);
	} else {
		outcome = read_stack(pr, pid, tid, st, eval, found);
	}
	return outcome == PY_MATCHED ? match_native(eval[0], eval[1], st, ips, n, complete)
				     : outcome;
}
