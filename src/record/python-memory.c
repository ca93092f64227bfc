/* SPDX-License-Identifier: MIT */
/*
 * The Python reader's reads of a process's memory, within a sample's
 * budget, and what it learns of the interpreter a process runs: its file's
 * symbols and its version's layout.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/python-internal.h"
#include "util/untrusted.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* The versions read: what each keeps where (struct py_layout). */
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

ssize_t py_read_live(void *arg, uint32_t pid, const struct iovec *local,
		     const struct iovec *remote, unsigned long n)
{
	ssize_t got = process_vm_readv((pid_t)pid, local, n, remote, n, 0);

	return got < 0 ? -errno : got;
}

/*
 * n ranges of pid's memory of len bytes in all, within the read's budget:
 * the bytes read (a read ends at the first range that faults) or a
 * negative errno.
 */
ssize_t py_read_some(struct pyreader *pr, uint32_t pid, const struct iovec *local,
		     const struct iovec *remote, unsigned long n, size_t len)
{
	if (!pr->reads_left || len > pr->bytes_left)
		return OVER_BUDGET;
	pr->reads_left--;
	pr->bytes_left -= (uint32_t)len;
	return pr->mem.read(pr->mem.arg, pid, local, remote, n);
}

/* As py_read_some, but all of them: 0 or a negative errno. */
int py_read_ranges(struct pyreader *pr, uint32_t pid, const struct iovec *local,
		   const struct iovec *remote, unsigned long n, size_t len)
{
	ssize_t got = py_read_some(pr, pid, local, remote, n, len);

	if (got < 0)
		return (int)got;
	return (size_t)got == len ? 0 : -EFAULT;
}

/* len bytes at addr in pid's memory; 0 or a negative errno. */
int py_peek(struct pyreader *pr, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (!addr || addr > UINT64_MAX - len)
		return -EFAULT;
	return py_read_ranges(pr, pid, &local, &remote, 1, len);
}

int py_peek_u64(struct pyreader *pr, uint32_t pid, uint64_t addr, uint64_t *v)
{
	return py_peek(pr, pid, addr, v, sizeof(*v));
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
int py_find_live(void *arg, uint32_t pid, struct py_interpreter *in)
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
struct pyproc *py_proc_detect(struct pyreader *pr, uint32_t pid, const char **found)
{
	struct pyproc *p = xcalloc(1, sizeof(*p));
	struct py_interpreter in;
	uint64_t version = 0;
	unsigned major, minor, micro;

	u64map_put(&pr->procs, pid, (uintptr_t)p);
	if (pr->mem.find(pr->mem.arg, pid, &in))
		return p;
	/* Py_Version (3.11+); before it, the file name says the version. */
	if (!in.version || py_peek_u64(pr, pid, in.version, &version)) {
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
 * A str object's text as UTF-8 into text (compact strings only: every str
 * the interpreter makes for code objects is one), its first MAX_NAME_CHARS
 * characters.
 */
int py_read_str(struct pyreader *pr, const struct py_layout *l, uint32_t pid,
		uint64_t addr, char *text)
{
	uint8_t head[STR_STATE + 4], chars[MAX_NAME_CHARS * 4];
	uint32_t state, kind;
	int64_t len;
	int err;

	/* Its length and state only: a short ASCII str may end where memory does. */
	if ((err = py_peek(pr, pid, addr, head, sizeof(head))))
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
	if (len && (err = py_peek(pr, pid, addr + (state >> 6 & 1 ? l->ascii_size : l->compact_size),
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
