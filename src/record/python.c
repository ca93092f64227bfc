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

/* Bounds on what one read walks: a longer chain is taken as corrupt. */
#define MAX_FRAMES 4096
#define MAX_THREADS 4096
/* Bounds on what is copied of a code object's name, file and line table. */
#define MAX_NAME_CHARS 1024
#define MAX_LINETABLE (64u << 10)
/* _PyInterpreterFrame.owner of the shim frame each eval call pushes (3.12+). */
#define FRAME_OWNED_BY_CSTACK 3

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

/*
 * What the reader keeps of a code object: read once, at its first frame,
 * and kept until the reader is freed, as frames read earlier refer to it.
 */
struct py_code {
	uint8_t fingerprint[FINGERPRINT_LEN];
	int32_t firstlineno;
	uint64_t units;			/* where its instructions are in the process */
	char *name, *file;
	uint8_t *linetable;
	uint32_t linetable_len;
};

enum py_state { PROC_NOT_PYTHON, PROC_PYTHON, PROC_UNSUPPORTED };

struct pyproc {
	enum py_state state;
	const struct py_layout *layout;
	uint64_t runtime;		/* &_PyRuntime in the process */
	uint64_t eval_lo, eval_hi;	/* _PyEval_EvalFrameDefault's code */
	uint64_t code_type;		/* &PyCode_Type */
	struct u64map tstates;		/* tid -> its PyThreadState */
	struct u64map codes;		/* code object address -> py_frame.code */
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

struct pyreader {
	struct u64map procs;		/* pid -> struct pyproc * */
	struct raw_frame raw[PY_MAX_FRAMES];
	VEC(struct py_code *) codes;	/* by py_frame.code - 1 */
	struct u64map pending_of;	/* tid -> index in pending */
	VEC(struct pending) pending;
	struct py_stack scratch;
	char found[4200];
};

static const char *const outcome_names[PY_OUTCOMES] = {
	[PY_MATCHED] = "matched",
	[PY_MISMATCH] = "mismatch",
	[PY_NO_THREAD_STATE] = "no-thread-state",
	[PY_READ_FAILED] = "read-failed",
	[PY_EXITED] = "exited",
	[PY_UNSUPPORTED] = "unsupported",
};

const char *py_outcome_name(enum py_outcome o)
{
	return o < PY_OUTCOMES ? outcome_names[o] : "not-python";
}

int pyreader_new(struct pyreader **pr)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	*pr = xcalloc(1, sizeof(**pr));
	return 0;
}

static void code_free(struct py_code *code)
{
	free(code->name);
	free(code->file);
	free(code->linetable);
	free(code);
}

static void snapshot_free(struct snapshot *snap)
{
	free(snap->frames);
	free(snap->group_start);
	free(snap);
}

static void proc_free(struct pyproc *p)
{
	u64map_free(&p->codes);
	u64map_free(&p->tstates);
	free(p);
}

void pyreader_forget(struct pyreader *pr, uint32_t pid)
{
	uint64_t v;

	if (!u64map_get(&pr->procs, pid, &v) || !v)
		return;
	proc_free((struct pyproc *)(uintptr_t)v);
	u64map_put(&pr->procs, pid, 0);
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
	for (size_t i = 0; i < pr->codes.len; i++)
		code_free(pr->codes.v[i]);
	VEC_FREE(&pr->codes);
	free(pr);
}

bool pyreader_is_python_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libpython3.", 11) || !strncmp(base, "python3", 7);
}

/* len bytes at addr in pid's memory; 0 or a negative errno. */
static int peek(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t got = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got == len ? 0 : -EFAULT;
}

static int peek_u64(uint32_t pid, uint64_t addr, uint64_t *v)
{
	return addr ? peek(pid, addr, v, sizeof(*v)) : -EFAULT;
}

struct py_symbols {
	uint64_t runtime, version, eval, eval_size, code_type;
	uint64_t first_load;		/* page-aligned vaddr of the segment at offset 0 */
};

/* The symbols the reader needs from the ELF file at path, by ELF address. */
static int read_symbols(const char *path, struct py_symbols *sy)
{
	int fd = untrusted_open(path, &untrusted_mapped_file, NULL), err = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t phnum;
	Elf *elf;

	if (fd < 0)
		return fd;
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

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
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
	close(fd);
	return err;
}

/*
 * The file holding the interpreter in pid (libpython3.X.so if mapped, else
 * the python3.X executable) and where its offset 0 is mapped.
 */
static bool find_interpreter(uint32_t pid, char *path, size_t size, uint64_t *start)
{
	char maps[64], line[4096], file[4096];
	bool found = false;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%u/maps", pid);
	if (!(f = fopen(maps, "re")))
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		bool lib;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %4095[^\n]", &lo, &hi, &off, file) != 4 ||
		    off || file[0] != '/' || !pyreader_is_python_path(file))
			continue;
		lib = strstr(file, "/libpython3.") != NULL;
		/* A libpython beats the executable that loads it. */
		if (!found || lib) {
			snprintf(path, size, "%s", file);
			*start = lo;
			found = true;
		}
		if (lib)
			break;
	}
	fclose(f);
	return found;
}

/* What a first sample learns of pid; the description goes to *found. */
static struct pyproc *proc_detect(struct pyreader *pr, uint32_t pid, const char **found)
{
	struct pyproc *p = xcalloc(1, sizeof(*p));
	char path[4096];
	struct py_symbols sy;
	uint64_t start, bias, version = 0;
	unsigned major, minor, micro;

	u64map_put(&pr->procs, pid, (uintptr_t)p);
	if (!find_interpreter(pid, path, sizeof(path), &start) || read_symbols(path, &sy))
		return p;
	bias = start - sy.first_load;
	/* Py_Version (3.11+); before it, the file name says the version. */
	if (!sy.version || peek_u64(pid, bias + sy.version, &version)) {
		const char *v = strstr(path, "python3.");

		if (!v || sscanf(v, "python3.%u", &minor) != 1)
			return p;
		version = 3ull << 24 | (uint64_t)minor << 16;
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
	p->runtime = bias + sy.runtime;
	p->eval_lo = bias + sy.eval;
	p->eval_hi = p->eval_lo + (sy.eval_size ? sy.eval_size : 1);
	p->code_type = bias + sy.code_type;
	snprintf(pr->found, sizeof(pr->found), "%sCPython %u.%u.%u %s",
		 p->layout ? "" : "unsupported: ", major, minor, micro, path);
	*found = pr->found;
	return p;
}

/* The PyThreadState of tid: the cached one if it still says so, else a walk of the list. */
static int thread_state(struct pyproc *p, uint32_t pid, uint32_t tid, uint64_t *ts)
{
	const struct py_layout *l = p->layout;
	uint64_t interp, id;
	int err;

	if (u64map_get(&p->tstates, tid, ts) &&
	    !peek_u64(pid, *ts + l->tstate_native_thread_id, &id) && id == tid)
		return 0;
	err = peek_u64(pid, p->runtime + l->runtime_interpreters_head, &interp);
	if (!err)
		err = interp ? peek_u64(pid, interp + l->interp_threads_head, ts) : -ENOENT;
	for (int i = 0; !err && *ts && i < MAX_THREADS; i++) {
		err = peek_u64(pid, *ts + l->tstate_native_thread_id, &id);
		if (!err && id == tid) {
			u64map_put(&p->tstates, tid, *ts);
			return 0;
		}
		if (!err)
			err = peek_u64(pid, *ts + l->tstate_next, ts);
	}
	return err ? err : -ENOENT;
}

/* The innermost frame tid is running, 0 when none. */
static int current_frame(struct pyproc *p, uint32_t pid, uint64_t ts, uint64_t *frame)
{
	const struct py_layout *l = p->layout;
	uint64_t holder = ts;
	int err = 0;

	if (l->tstate_cframe)
		err = peek_u64(pid, ts + l->tstate_cframe, &holder);
	if (!err)
		err = peek_u64(pid, holder + l->current_frame, frame);
	return err;
}

/*
 * A str object's text as UTF-8 (compact strings only: every str the
 * interpreter makes for code objects is one); NULL when it is not readable.
 */
static char *read_str(const struct py_layout *l, uint32_t pid, uint64_t addr)
{
	uint8_t head[80], chars[MAX_NAME_CHARS * 4];
	uint32_t state, kind;
	int64_t len;
	char *text, *out;

	if (!addr || peek(pid, addr, head, l->compact_size))
		return NULL;
	memcpy(&len, head + VAR_SIZE, sizeof(len));
	memcpy(&state, head + STR_STATE, sizeof(state));
	kind = state >> 2 & 7;
	if (!(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4) || len < 0)
		return NULL;
	if (len > MAX_NAME_CHARS)
		len = MAX_NAME_CHARS;
	if (peek(pid, addr + (state >> 6 & 1 ? l->ascii_size : l->compact_size), chars,
		 (size_t)len * kind))
		return NULL;
	out = text = xmalloc((size_t)len * 4 + 1);
	for (int64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? chars[i]
			   : kind == 2 ? (uint32_t)chars[2 * i] | (uint32_t)chars[2 * i + 1] << 8
			   : (uint32_t)chars[4 * i] | (uint32_t)chars[4 * i + 1] << 8 |
			     (uint32_t)chars[4 * i + 2] << 16 | (uint32_t)chars[4 * i + 3] << 24;

		/* A NUL cannot be in a trace's string. */
		out += utf8_encode(c ? c : 0xfffd, out);
	}
	*out = '\0';
	return text;
}

/* The id of the code object at addr, read at its first frame; 0 when unreadable. */
static uint32_t code_at(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint64_t addr)
{
	const struct py_layout *l = p->layout;
	uint8_t obj[CODE_LINETABLE + 8];
	uint64_t type, filename, qualname, linetable, id;
	int64_t table_len;
	struct py_code *code;

	if (u64map_get(&p->codes, addr, &id) && id)
		return (uint32_t)id;
	if (!addr || peek(pid, addr, obj, sizeof(obj)))
		return 0;
	memcpy(&type, obj + OBJECT_TYPE, sizeof(type));
	memcpy(&filename, obj + CODE_FILENAME, sizeof(filename));
	memcpy(&qualname, obj + CODE_QUALNAME, sizeof(qualname));
	memcpy(&linetable, obj + CODE_LINETABLE, sizeof(linetable));
	if (type != p->code_type || peek(pid, linetable + VAR_SIZE, &table_len, sizeof(table_len)) ||
	    table_len < 0 || table_len > MAX_LINETABLE)
		return 0;
	code = xcalloc(1, sizeof(*code));
	memcpy(code->fingerprint, obj + CODE_FINGERPRINT, FINGERPRINT_LEN);
	memcpy(&code->firstlineno, obj + l->code_firstlineno, sizeof(code->firstlineno));
	code->units = addr + l->code_units;
	code->name = read_str(l, pid, qualname);
	code->file = read_str(l, pid, filename);
	code->linetable_len = (uint32_t)table_len;
	code->linetable = xmalloc(code->linetable_len + 1);
	if (!code->name || !code->file ||
	    peek(pid, linetable + BYTES_DATA, code->linetable, code->linetable_len)) {
		code_free(code);
		return 0;
	}
	*VEC_PUSH(&pr->codes) = code;
	u64map_put(&p->codes, addr, pr->codes.len);
	return (uint32_t)pr->codes.len;
}

void pyreader_code(const struct pyreader *pr, uint32_t code, const char **name,
		   const char **file)
{
	const struct py_code *c = pr->codes.v[code - 1];

	*name = c->name;
	*file = c->file;
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
 * The line of the instruction at byte offset at of code, from its location
 * table (3.11+): entries of a head byte (bit 7 set, a kind in bits 3-6,
 * code units covered less one in bits 0-2) and the bytes of their kind;
 * kinds 10-12 move the line by kind - 10, 13 and 14 by a signed varint,
 * 15 has no line. 0 when unknown.
 */
static uint32_t code_line(const struct py_code *code, int64_t at)
{
	const uint8_t *p = code->linetable, *end = p + code->linetable_len;
	int64_t line = code->firstlineno, unit_end = 0;

	if (at < 0)
		return code->firstlineno > 0 ? (uint32_t)code->firstlineno : 0;
	while (p < end) {
		uint8_t head = *p++;
		unsigned kind = head >> 3 & 15;

		if (!(head & 0x80))
			continue;
		if (kind >= 10 && kind <= 12) {
			line += kind - 10;
		} else if (kind == 13 || kind == 14) {
			uint32_t v = table_varint(&p, end);

			line += v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
		}
		unit_end += ((head & 7) + 1) * 2;
		if (at < unit_end)
			return kind == 15 || line <= 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
		while (p < end && !(*p & 0x80))
			p++;
	}
	return 0;
}

/*
 * Forgets the code objects of frames whose address now holds another one,
 * checking them all in one read.
 */
static int check_codes(struct pyreader *pr, struct pyproc *p, uint32_t pid, uint32_t n)
{
	struct iovec local[PY_MAX_FRAMES], remote[PY_MAX_FRAMES];
	uint8_t now[PY_MAX_FRAMES][FINGERPRINT_LEN];
	uint32_t ids[PY_MAX_FRAMES], known = 0;
	ssize_t got;

	for (uint32_t k = 0; k < n; k++) {
		uint64_t id;

		if (!u64map_get(&p->codes, pr->raw[k].code, &id) || !id)
			continue;
		ids[known] = (uint32_t)id;
		local[known] = (struct iovec){ now[known], FINGERPRINT_LEN };
		remote[known] = (struct iovec){
			(void *)(uintptr_t)(pr->raw[k].code + CODE_FINGERPRINT), FINGERPRINT_LEN };
		known++;
	}
	if (!known)
		return 0;
	got = process_vm_readv((pid_t)pid, local, known, remote, known, 0);
	if (got < 0)
		return -errno;
	if ((size_t)got != known * FINGERPRINT_LEN)
		return -EFAULT;
	for (uint32_t k = 0, i = 0; k < n && i < known; k++) {
		uint64_t id;

		if (!u64map_get(&p->codes, pr->raw[k].code, &id) || id != ids[i])
			continue;
		if (memcmp(now[i], pr->codes.v[id - 1]->fingerprint, FINGERPRINT_LEN))
			u64map_put(&p->codes, pr->raw[k].code, 0);
		i++;
	}
	return 0;
}

/* The frames walked into pr->raw, checked and named into st->frames. */
static int name_frames(struct pyreader *pr, struct pyproc *p, uint32_t pid,
		       struct py_stack *st)
{
	int err = check_codes(pr, p, pid, st->nframes);

	for (uint32_t k = 0; !err && k < st->nframes; k++) {
		uint32_t code = code_at(pr, p, pid, pr->raw[k].code);
		const struct py_code *c;

		if (!code)
			return -EFAULT;
		c = pr->codes.v[code - 1];
		st->frames[k].code = code;
		st->frames[k].line = code_line(c, (int64_t)(pr->raw[k].instr - c->units));
	}
	return err;
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
	for (int i = 0; frame; i++) {
		int err;

		if (i == MAX_FRAMES || st->groups == PY_MAX_FRAMES)
			return -ELOOP;
		err = peek(pid, frame, buf, len);
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
	err = thread_state(p, pid, tid, &ts);
	if (err == -ENOENT)
		return PY_NO_THREAD_STATE;
	if (!err)
		err = current_frame(p, pid, ts, &frame);
	if (!err)
		err = walk_frames(pr, p, pid, frame, st);
	if (err == -ESRCH)
		return PY_EXITED;
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
