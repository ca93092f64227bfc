/* SPDX-License-Identifier: MIT */
/*
 * Feeds arbitrary bytes to the Rust demangler as a symbol name, which a
 * recorded binary chooses. Both forms must agree on whether it is Rust,
 * and the form without hashes is never the longer one.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/rust-demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1), *plain, *full;

	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = 0;
	plain = rust_demangle(name, false);
	full = rust_demangle(name, true);
	if (!plain != !full || rust_mangled(name) != !!full ||
	    (plain && strlen(plain) > strlen(full)))
		abort();
	free(plain);
	free(full);
	free(name);
	return 0;
}
