/* SPDX-License-Identifier: MIT */
#include "record/python.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/hashmap.h"
#include "util/xalloc.h"

/* Bounds on what one read walks: a longer chain is taken as corrupt. */
#define MAX_FRAMES 4096
#define MAX_THREADS 4096
/* _PyInterpreterFrame.owner of the shim frame each eval call pushes (3.12+). */
#define FRAME_OWNED_BY_CSTACK 3

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
	uint32_t frame_previous;
	uint32_t frame_is_entry;		/* 0: entries are owner CSTACK shims */
	uint32_t frame_owner;
};

static const struct py_layout layouts[] = {
	{ .minor = 11, .runtime_interpreters_head = 40, .interp_threads_head = 16,
	  .tstate_next = 8, .tstate_native_thread_id = 160, .tstate_cframe = 56,
	  .current_frame = 8, .frame_previous = 48, .frame_is_entry = 68,
	  .frame_owner = 69 },
	{ .minor = 12, .runtime_interpreters_head = 40, .interp_threads_head = 72,
	  .tstate_next = 8, .tstate_native_thread_id = 144, .tstate_cframe = 56,
	  .current_frame = 0, .frame_previous = 8, .frame_owner = 70 },
	{ .minor = 13, .runtime_interpreters_head = 632, .interp_threads_head = 7344,
	  .tstate_next = 8, .tstate_native_thread_id = 160, .current_frame = 72,
	  .frame_previous = 8, .frame_owner = 70 },
};

enum py_state { PROC_NOT_PYTHON, PROC_PYTHON, PROC_UNSUPPORTED };

struct pyproc {
	enum py_state state;
	const struct py_layout *layout;
	uint64_t runtime;		/* &_PyRuntime in the process */
	uint64_t eval_lo, eval_hi;	/* _PyEval_EvalFrameDefault's code */
	struct u64map tstates;		/* tid -> its PyThreadState */
};

struct pyreader {
	struct u64map procs;		/* pid -> struct pyproc * */
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

static void proc_free(struct pyproc *p)
{
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
	uint64_t runtime, version, eval, eval_size;
	uint64_t first_load;		/* page-aligned vaddr of the segment at offset 0 */
};

/* The symbols the reader needs from the ELF file at path, by ELF address. */
static int read_symbols(const char *path, struct py_symbols *sy)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t phnum;
	Elf *elf;

	if (fd < 0)
		return -errno;
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
			} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
				sy->eval = sym.st_value;
				sy->eval_size = sym.st_size;
			}
		}
	}
	err = sy->runtime && sy->eval ? 0 : -ENOENT;
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
 * Walks the frame chain from frame: *frames Python frames in *groups groups,
 * one per eval call (3.11: a group ends with its entry frame; 3.12+: with
 * the shim frame the eval call pushed, which is not a Python frame).
 */
static int walk_frames(struct pyproc *p, uint32_t pid, uint64_t frame, uint32_t *frames,
		       uint32_t *groups)
{
	const struct py_layout *l = p->layout;
	uint8_t buf[80];
	bool open = false;

	*frames = *groups = 0;
	for (int i = 0; frame; i++) {
		uint32_t len = (l->frame_is_entry ? l->frame_is_entry : l->frame_owner) + 1;
		int err;

		if (i == MAX_FRAMES)
			return -ELOOP;
		err = peek(pid, frame, buf, len);
		if (err)
			return err;
		if (l->frame_is_entry) {
			(*frames)++;
			open = !buf[l->frame_is_entry];
			*groups += !open;
		} else if (buf[l->frame_owner] == FRAME_OWNED_BY_CSTACK) {
			(*groups)++;
			open = false;
		} else {
			(*frames)++;
			open = true;
		}
		memcpy(&frame, buf + l->frame_previous, sizeof(frame));
	}
	/* The outermost frames of a thread belong to its first eval call too. */
	*groups += open;
	return 0;
}

enum py_outcome pyreader_sample(struct pyreader *pr, uint32_t pid, uint32_t tid,
				const uint64_t *ips, size_t n, bool complete,
				uint32_t *frames, const char **found)
{
	struct pyproc *p = NULL;
	uint64_t v, ts, frame;
	uint32_t groups, evals = 0;
	int err;

	*frames = 0;
	*found = NULL;
	if (u64map_get(&pr->procs, pid, &v) && v)
		p = (struct pyproc *)(uintptr_t)v;
	else
		p = proc_detect(pr, pid, found);
	if (p->state == PROC_NOT_PYTHON)
		return PY_NOT_PYTHON;
	if (p->state == PROC_UNSUPPORTED)
		return PY_UNSUPPORTED;
	err = thread_state(p, pid, tid, &ts);
	if (err == -ENOENT)
		return PY_NO_THREAD_STATE;
	if (!err)
		err = current_frame(p, pid, ts, &frame);
	if (!err)
		err = walk_frames(p, pid, frame, frames, &groups);
	if (err == -ESRCH)
		return PY_EXITED;
	if (err)
		return PY_READ_FAILED;
	for (size_t i = 0; i < n; i++)
		evals += ips[i] >= p->eval_lo && ips[i] < p->eval_hi;
	/* A cut native stack holds the innermost eval calls only. */
	if (evals == groups || (!complete && evals < groups))
		return PY_MATCHED;
	return PY_MISMATCH;
}
