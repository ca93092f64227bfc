/* SPDX-License-Identifier: MIT */
#include "symbols/debugcache.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cachedir.h"
#include "util/untrusted.h"
#include "util/xalloc.h"

/* Where distributions install debug files by build-id, as libdwfl finds them. */
#define SYSTEM_BUILD_ID_DIR "/usr/lib/debug/.build-id/"
/* The most inflated sections a copy is made of: libxul's or libLLVM's DWARF fits. */
#define DEBUGCACHE_MAX_BYTES (4ull << 30)
/* ... and the largest file read, its headers and alignment besides. */
#define COPY_MAX_BYTES (2 * DEBUGCACHE_MAX_BYTES)

/* The bytes elf's sections take inflated, when any is compressed; else 0. */
static uint64_t inflated_bytes(Elf *elf)
{
	uint64_t total = 0;
	bool compressed = false;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Chdr ch;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return 0;
		if (sh.sh_flags & SHF_COMPRESSED) {
			if (!gelf_getchdr(scn, &ch))
				return 0;
			compressed = true;
			total += ch.ch_size;
		} else if (sh.sh_type != SHT_NOBITS) {
			total += sh.sh_size;
		}
		if (total > DEBUGCACHE_MAX_BYTES)
			return 0;
	}
	return compressed ? total : 0;
}

/* Writes src to fd as an ELF file with every section inflated. */
static int write_inflated(Elf *src, int fd)
{
	Elf *dst = elf_begin(fd, ELF_C_WRITE, NULL);
	size_t nphdr, shstrndx;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	int err = -EINVAL;

	if (!dst)
		return -ENOMEM;
	if (!gelf_getehdr(src, &eh) || elf_getphdrnum(src, &nphdr) ||
	    elf_getshdrstrndx(src, &shstrndx) || shstrndx >= SHN_LORESERVE ||
	    !gelf_newehdr(dst, gelf_getclass(src)) || (nphdr && !gelf_newphdr(dst, nphdr)))
		goto out;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(src, (int)i, &ph) || !gelf_update_phdr(dst, (int)i, &ph))
			goto out;
	}
	/* In order: section indexes, which sh_link and sh_info hold, stay the same. */
	while ((scn = elf_nextscn(src, scn))) {
		Elf_Scn *to = elf_newscn(dst);
		Elf_Data *d = NULL, *copy;
		GElf_Shdr sh;

		if (!to || !gelf_getshdr(scn, &sh) ||
		    ((sh.sh_flags & SHF_COMPRESSED) &&
		     (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh))))
			goto out;
		while ((d = elf_getdata(scn, d))) {
			if (!(copy = elf_newdata(to)))
				goto out;
			*copy = *d;
		}
		if (!gelf_update_shdr(to, &sh))
			goto out;
	}
	eh.e_shstrndx = (GElf_Half)shstrndx;
	if (gelf_update_ehdr(dst, &eh) && elf_update(dst, ELF_C_WRITE) >= 0)
		err = 0;
out:
	elf_end(dst);
	return err;
}

/*
 * Whether fd is a whole inflated copy of the file of build-id id[0 .. len):
 * an ELF file that carries the build-id, its sections within the file
 * (not cut short by a crash or a full disk) and none compressed.
 */
static bool whole_copy(int fd, const void *id, int len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got;
	Elf_Scn *scn = NULL;
	struct stat st;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	size_t n;
	/* Its section headers within the file first: else libelf reads none. */
	bool whole = elf && !fstat(fd, &st) && gelf_getehdr(elf, &eh) && !elf_getshdrnum(elf, &n) &&
		     n > 1 && eh.e_shoff <= (uint64_t)st.st_size &&
		     (uint64_t)n * eh.e_shentsize <= (uint64_t)st.st_size - eh.e_shoff &&
		     dwelf_elf_gnu_build_id(elf, &got) == len && !memcmp(got, id, (size_t)len);

	while (whole && (scn = elf_nextscn(elf, scn)))
		whole = gelf_getshdr(scn, &sh) && !(sh.sh_flags & SHF_COMPRESSED) &&
			(sh.sh_type == SHT_NOBITS ||
			 (sh.sh_offset <= (uint64_t)st.st_size &&
			  sh.sh_size <= (uint64_t)st.st_size - sh.sh_offset));
	elf_end(elf);
	return whole;
}

/* Leaves in the cache, as name, fd's file inflated: 0, or a negative errno and nothing. */
static int make_copy(const struct cachedir *c, int fd, const char *name)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct outfile f;
	int err = elf && inflated_bytes(elf) ? cachedir_write(c, name, &f) : -ENOENT;

	if (!err)
		err = cachedir_place(&f, write_inflated(elf, f.fd));
	elf_end(elf);
	return err;
}

/* The whole copy name of the file of build-id id[0 .. len), read from the cache; or -1. */
static int open_copy(const struct cachedir *c, const char *name, const unsigned char *id,
		     int len)
{
	int copy = cachedir_read(c, name, COPY_MAX_BYTES);

	/* One cut short by a crash or a full disk, or not this file's, is made again. */
	if (copy >= 0 && !whole_copy(copy, id, len)) {
		close(copy);
		copy = -1;
	}
	return copy;
}

/*
 * The cached copy of the file of build-id id[0 .. len), made from the
 * system's debug file when missing or bad; or -1.
 */
static int cached_copy(const struct cachedir *c, const unsigned char *id, int len, char **path)
{
	/* By build-id, as libdwfl finds it: root's files, through root's links. */
	const struct untrusted_rules system_file = {
		.follow = true, .owned = true, .owner = 0, .not_writable = true,
		.max_size = COPY_MAX_BYTES,
	};
	char hex[2 * 64 + 1], name[sizeof(hex) + 8], full[PATH_MAX];
	int copy, fd;

	if (len < 2 || len > 64)
		return -1;
	for (int i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	snprintf(name, sizeof(name), "%s.debug", hex);
	if (snprintf(full, sizeof(full), "%s/%s", c->path, name) >= (int)sizeof(full))
		return -1;
	copy = open_copy(c, name, id, len);
	if (copy < 0) {
		char system[sizeof(SYSTEM_BUILD_ID_DIR) + sizeof(name) + 1];

		snprintf(system, sizeof(system), SYSTEM_BUILD_ID_DIR "%.2s/%s", hex, name + 2);
		fd = untrusted_open(system, &system_file, NULL);
		if (fd < 0)
			return -1;
		if (!make_copy(c, fd, name))
			copy = open_copy(c, name, id, len);
		close(fd);
	}
	if (copy >= 0)
		*path = xstrdup(full);
	return copy;
}

int debugcache_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		    char **debuginfo_file_name)
{
	const struct cachedir *c = *userdata;
	const char *debug_file = NULL;
	const unsigned char *id;
	GElf_Addr vaddr;
	char *path = NULL;
	int len, copy = -1;

	/*
	 * libdwfl asks again for the supplementary file (dwz) that the DWARF
	 * found names, by its .gnu_debugaltlink (a name, no CRC), once it has
	 * the debug file: that one is its own search's.
	 */
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug_file);
	if (!debug_file && !(debuglink_file && !debuglink_crc) && c && c->fd >= 0 &&
	    (len = dwfl_module_build_id(mod, &id, &vaddr)) > 0)
		copy = cached_copy(c, id, len, &path);
	/*
	 * Before dwfl_build_id_find_debuginfo, which keeps the file it opens
	 * in the module, where libdw reads it whatever this returns.
	 */
	if (copy >= 0) {
		free(*debuginfo_file_name);
		*debuginfo_file_name = path;
		return copy;
	}
	return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}
