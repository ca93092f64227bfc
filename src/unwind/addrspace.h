/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UNWIND_ADDRSPACE_H
#define GTRACE_UNWIND_ADDRSPACE_H

/*
 * What each recorded process has mapped, rebuilt from MMAP2, FORK, EXEC
 * (COMM with exec) and EXIT records as they are drained. The unwinder finds
 * unwind tables through it and the recorder turns addresses into
 * (dso, ELF address) locations with it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct addrspaces;

struct dso_info {
	uint32_t id;		/* dense, 1-based: the trace's dso id */
	const char *path;	/* as mapped ("[vdso]", "//anon", "/usr/lib/...") */
	uint32_t flags;		/* enum tr_dso_flags */
	uint32_t pid;		/* for anonymous/JIT dsos, the process */
	uint32_t uid;		/* ... and its user when its code was first seen (0: unknown) */
	uint8_t build_id[20];
	uint32_t build_id_len;	/* 0 if the file has none or is unreadable */
};

struct map {
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t pgoff;		/* file offset of start */
	uint32_t prot;		/* PROT_* */
	const struct dso_info *dso;
};

int addrspaces_new(struct addrspaces **as);
void addrspaces_free(struct addrspaces *as);

/* A new process: copies the parent's maps (fork), or starts empty (ppid 0). */
void addrspace_fork(struct addrspaces *as, uint32_t pid, uint32_t ppid);
/* exec replaced the image: forget all maps of pid. */
void addrspace_exec(struct addrspaces *as, uint32_t pid);
/* The process (not merely one of its threads) is gone. */
void addrspace_exit(struct addrspaces *as, uint32_t pid);
/*
 * From a PERF_RECORD_MMAP2; replaces any overlapped range. Only code and
 * read-only file mappings are kept: any other mapping just removes what it
 * covers. build_id may be NULL (then it is read from the file, once per file).
 */
void addrspace_mmap(struct addrspaces *as, uint32_t pid, uint64_t start,
		    uint64_t len, uint64_t pgoff, uint32_t prot,
		    const char *path, const uint8_t *build_id, uint32_t build_id_len);
/* Reads /proc/PID/maps, for processes that existed before recording began. */
int addrspace_load_proc(struct addrspaces *as, uint32_t pid);

/*
 * A number that changes whenever any process's maps do: what was worked
 * out from the maps holds while it stays the same.
 */
uint64_t addrspaces_generation(const struct addrspaces *as);

/* The map holding addr, or NULL; valid until pid's maps next change. */
const struct map *addrspace_find(const struct addrspaces *as, uint32_t pid, uint64_t addr);

/*
 * The ELF virtual address (what the symbol tables use) of an address in a
 * file-backed map; for anonymous maps the address itself. The vdso's ELF
 * addresses are its offsets from the map start (it is linked at 0).
 */
uint64_t map_to_elf_addr(const struct map *m, uint64_t addr);

/*
 * This process's vdso image and its size, or NULL: one kernel maps the
 * same vdso into every process, so it stands in for the recorded ones'.
 */
const void *addrspace_own_vdso(size_t *size);

/*
 * A dso no map holds, such as a Python source file, whose locs the
 * recorder names itself; its id.
 */
uint32_t addrspaces_add_dso(struct addrspaces *as, const char *path, uint32_t flags);

/* Every dso seen so far, by id; ids are never reused. */
uint32_t addrspaces_dso_count(const struct addrspaces *as);
const struct dso_info *addrspaces_dso(const struct addrspaces *as, uint32_t id);

#endif
