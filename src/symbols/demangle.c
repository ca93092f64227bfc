/* SPDX-License-Identifier: MIT */
#include "symbols/demangle.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/rust-demangle.h"

bool demangler_available(struct demangler *d)
{
	if (!d->tried) {
		d->tried = true;
		d->lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (d->lib)
			d->fn = (cxa_demangle_fn)dlsym(d->lib, "__cxa_demangle");
	}
	return d->fn != NULL;
}

char *demangle(struct demangler *d, const char *name)
{
	char *out;
	int status;

	/*
	 * Itanium ABI names; anything else is plain already. A Rust legacy name
	 * is one too, which __cxa_demangle would make "RawTable$LT$T$GT$::f::h<hash>":
	 * Rust names stay mangled for the views to demangle (rust_demangle).
	 */
	if (strncmp(name, "_Z", 2) || rust_mangled(name) || !demangler_available(d))
		return NULL;
	out = d->fn(name, NULL, NULL, &status);
	if (status) {
		free(out);
		return NULL;
	}
	return out;
}

void demangler_free(struct demangler *d)
{
	if (d->lib)
		dlclose(d->lib);
	memset(d, 0, sizeof(*d));
}
