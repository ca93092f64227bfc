/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_SYMBOLS_RUST_DEMANGLE_H
#define GTRACE_SYMBOLS_RUST_DEMANGLE_H

/*
 * Rust's two symbol manglings, demangled as rustc-demangle does: legacy
 * (an Itanium _ZN path whose last element is "h" and 16 hex digits, with
 * $LT$-style escapes) and v0 (_R...). Our own code, not libiberty's
 * cplus_demangle (Debian's libiberty-dev): its Rust demangler's licence
 * would allow it (LGPL-2+ with an exception for linking the demanglers into
 * any program), but it would be a new build dependency, a static library
 * whose other objects are plain LGPL, for a few hundred lines; C++ keeps
 * libstdc++'s __cxa_demangle, loaded at run time, and its output. Here the
 * limits on what a hostile binary (the recorder reads them as root) can
 * make a name cost are ours, and tested.
 */

#include <stdbool.h>

/*
 * Whether name is a Rust symbol this demangler reads: a legacy name (which
 * would demangle as C++ too, into $LT$...::h<hash>) or a v0 name it parses.
 */
bool rust_mangled(const char *name);

/*
 * name demangled into a malloc'd string, or NULL when it is not a Rust
 * symbol or cannot be read within the limits. With hashes, rustc-demangle's
 * full form: a legacy name's "::h<hash>", a v0 crate's "[<disambiguator>]"
 * and the types of const generic arguments; without, its alternate form
 * (perf's), which leaves them out.
 */
char *rust_demangle(const char *name, bool hashes);

#endif
