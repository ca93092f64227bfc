/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_DEBUGCACHE_H
#define GTRACE_SYMBOLS_DEBUGCACHE_H

/*
 * System debuginfo kept inflated. Debian's debug packages compress their
 * DWARF, and libdw inflates every debug section of a file it opens: for
 * libc6-dbg some 10 MB, more than the rest of a recording's naming. The
 * first recording that reads such a file leaves an inflated copy of it in
 * the cache (util/cachedir.h) under its build-id, and later ones read that.
 * Only root's files under /usr/lib/debug/.build-id (through root's links)
 * are copied: a build-id is what a file says of itself, and the copy is
 * trusted for every file that says the same. A copy that is not whole is
 * made again.
 */

#include <elfutils/libdwfl.h>

/*
 * A Dwfl_Callbacks.find_debuginfo: dwfl_build_id_find_debuginfo's file,
 * or its inflated copy, from the cache that *userdata points to (a
 * const struct cachedir *; NULL: none).
 */
int debugcache_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		    char **debuginfo_file_name);

#endif
