/* SPDX-License-Identifier: MIT */
/*
 * Rust names demangled as rustc-demangle prints them, with {:#} (no
 * hashes) and {} (hashes): names rustc 1.95 wrote (legacy for a crate of
 * its own, v0 for std), rustc-demangle's own test names for what rustc
 * rarely writes (punycode, const generics, dyn, fn pointers), and hostile
 * names that must come back NULL, whole, without blowing up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "symbols/rust-demangle.h"
#include "test.h"

static const struct {
	const char *mangled, *plain, *hashes;	/* hashes: NULL when not checked */
} names[] = {
	/* legacy: $LT$ escapes, ".." paths, the hash last, LLVM's suffix */
	{ "_ZN9hashbrown3raw21RawTable$LT$T$C$A$GT$14reserve_rehash17h6ecb7500bd145cbcE"
	  ".llvm.15192848787178124692",
	  "hashbrown::raw::RawTable<T,A>::reserve_rehash",
	  "hashbrown::raw::RawTable<T,A>::reserve_rehash::h6ecb7500bd145cbc" },
	{ "_ZN1m4work17h6ec0dbff1282c6a0E", "m::work", "m::work::h6ec0dbff1282c6a0" },
	{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h168e94e611939a97E",
	  "std::rt::lang_start::{{closure}}",
	  "std::rt::lang_start::{{closure}}::h168e94e611939a97" },
	{ "_ZN42_$LT$$RF$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h640e113d828edf9eE",
	  "<&T as core::fmt::Debug>::fmt", "<&T as core::fmt::Debug>::fmt::h640e113d828edf9e" },
	{ "_ZN71_$LT$Test$u20$$u2b$$u20$$u27$static$u20$as$u20$foo..Bar$LT$Test$GT$$GT$3bar"
	  "17h930b740aa94f1d3aE",
	  "<Test + 'static as foo::Bar<Test>>::bar",
	  "<Test + 'static as foo::Bar<Test>>::bar::h930b740aa94f1d3a" },
	{ "_ZN1m4main17h4009bc0cd8b193aaE.cold", "m::main.cold",
	  "m::main::h4009bc0cd8b193aa.cold" },
	/* not an escape ($u1f$ is a control character): the rest as it is */
	{ "_ZN8foo$u1f$17h0123456789abcdefE", "foo$u1f$", "foo$u1f$::h0123456789abcdef" },
	/* v0: generics, impls, closures, shims, backrefs */
	{ "_RINvCskK7mfDs1mzF_1m4workmEB2_", "m::work::<u32>", "m[f19dcfa532266295]::work::<u32>" },
	{ "_RINvMs6_NtCsgvbsrvnw3yD_9hashbrown3rawINtB6_8RawTableTlyEE14reserve_rehashNCINvNtB8_"
	  "3map11make_hasherlyNtNtNtCsjrHSEGnQ3l9_3std4hash6random11RandomStateE0ECskK7mfDs1mzF_1m"
	  ".llvm.12239173656947471762",
	  "<hashbrown::raw::RawTable<(i32, u64)>>::reserve_rehash::<hashbrown::map::make_hasher"
	  "<i32, u64, std::hash::random::RandomState>::{closure#0}>",
	  "<hashbrown[c0386ddbfadcbbc1]::raw::RawTable<(i32, u64)>>::reserve_rehash::"
	  "<hashbrown[c0386ddbfadcbbc1]::map::make_hasher<i32, u64, std[e28293b1aa0f68bd]::hash::"
	  "random::RandomState>::{closure#0}>" },
	{ "_RNCNCNgCs6DXkGYLi8lr_2cc5spawn00B5_", "cc::spawn::{closure#0}::{closure#0}",
	  "cc[4d6468d6c9fd4bb3]::spawn::{closure#0}::{closure#0}" },
	{ "_RNSNvYNCINvMs0_NtNtCsjrHSEGnQ3l9_3std4sync4onceNtBd_4Once15call_once_forceNCINvMNtBf_"
	  "9once_lockINtB1g_8OnceLockINtNtBf_14reentrant_lock13ReentrantLockINtNtCsgEmfK2I1SDS_4core"
	  "4cell7RefCellINtNtNtNtBh_2io8buffered10linewriter10LineWriterNtNtB36_5stdio9StdoutRawEEEE"
	  "10initializeNCINvB1f_11get_or_initNCNvB3N_6stdout0E0zE0E0INtNtNtB2t_3ops8function6FnOnce"
	  "TRNtBd_9OnceStateEE9call_once6vtableBh_",
	  "<<std::sync::once::Once>::call_once_force<<std::sync::once_lock::OnceLock<std::sync::"
	  "reentrant_lock::ReentrantLock<core::cell::RefCell<std::io::buffered::linewriter::LineWriter"
	  "<std::io::stdio::StdoutRaw>>>>>::initialize<<std::sync::once_lock::OnceLock<std::sync::"
	  "reentrant_lock::ReentrantLock<core::cell::RefCell<std::io::buffered::linewriter::LineWriter"
	  "<std::io::stdio::StdoutRaw>>>>>::get_or_init<std::io::stdio::stdout::{closure#0}>::"
	  "{closure#0}, !>::{closure#0}>::{closure#0} as core::ops::function::FnOnce<(&std::sync::"
	  "once::OnceState,)>>::call_once::{shim:vtable#0}", NULL },
	{ "_RNvNtNtNtNtNtCsjrHSEGnQ3l9_3std3sys3pal4unix14stack_overflow11thread_info9SPIN_LOCK",
	  "std::sys::pal::unix::stack_overflow::thread_info::SPIN_LOCK", NULL },
	/* const generics, dyn with an associated type, fn pointers, punycode */
	{ "_RINvNtCsgEmfK2I1SDS_4core6escape14escape_unicodeKja_ECsgY6Mt91CT9J_14rustc_demangle",
	  "core::escape::escape_unicode::<10>",
	  "core[c1f1a4ba060b9bfa]::escape::escape_unicode::<10usize>" },
	{ "_RMCs4fqI2P2rA04_13const_genericINtB0_6SignedKanb_E", "<const_generic::Signed<-11>>",
	  "<const_generic[317d481089b8c8fe]::Signed<-11i8>>" },
	{ "_RMCs4fqI2P2rA04_13const_genericINtB0_4BoolKb1_E", "<const_generic::Bool<true>>", NULL },
	{ "_RMCs4fqI2P2rA04_13const_genericINtB0_4CharKc2202_E",
	  "<const_generic::Char<'\xe2\x88\x82'>>", NULL },
	{ "_RMCs4fqI2P2rA04_13const_genericINtB0_4CharKca_E", "<const_generic::Char<'\\n'>>", NULL },
	{ "_RINbNbCskIICzLVDPPb_5alloc5alloc8box_freeDINbNiB4_5boxed5FnBoxuEp6OutputuEL_E"
	  "Cs1iopQbuBiw2_3std",
	  "alloc::alloc::box_free::<dyn alloc::boxed::FnBox<(), Output = ()>>",
	  "alloc[f15a878b47eb696b]::alloc::box_free::<dyn alloc[f15a878b47eb696b]::boxed::"
	  "FnBox<(), Output = ()>>" },
	{ "_RINvC1a1fFG_KCRL0_eEhE", "a::f::<for<'a> extern \"C\" fn(&'a str) -> u8>", NULL },
	{ "_RINvC1a1fFUK9rust_callQPuEuE", "a::f::<unsafe extern \"rust-call\" fn(&mut *const ())>",
	  NULL },
	{ "_RINvC1a1fASRmj4_E", "a::f::<[[&u32]; 4]>", "a::f::<[[&u32]; 4usize]>" },
	{ "_RNqCs4fqI2P2rA04_11utf8_identsu30____7hkackfecea1cbdathfdh9qvcsu",
	  "utf8_idents::\xe1\x83\x90\xe1\x83\x9b\xe1\x83\xa8\xe1\x83\x94\xe1\x83\x9a\xe1\x83\x90"
	  "\xe1\x83\x93_\xe1\x83\x92\xe1\x83\x94\xe1\x83\x9b\xe1\x83\x98\xe1\x83\x94\xe1\x83\x9a"
	  "\xe1\x83\x98_\xe1\x83\x90\xe1\x83\xa4\xe1\x83\xa9\xe1\x83\x93\xe1\x83\x98\xe1\x83\x9a"
	  "\xe1\x83\xa8\xe1\x83\x98", NULL },
	/* punycode that does not decode: printed the way rustc-demangle does */
	{ "_RNvC1au3a_9", "a::punycode{a-9}", NULL },
};

static void test_names(void)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *plain = rust_demangle(names[i].mangled, false);
		char *full = rust_demangle(names[i].mangled, true);

		CHECK_STREQ(plain, names[i].plain);
		if (names[i].hashes)
			CHECK_STREQ(full, names[i].hashes);
		CHECK(rust_mangled(names[i].mangled));
		free(plain);
		free(full);
	}
}

/* C++ and C names are not Rust's; a C++ name shaped like a legacy one is (as for rustc-demangle). */
static void test_not_rust(void)
{
	static const char *const other[] = {
		"_ZN3foo3barEv", "_ZN3foo17h0123456789abcdefEv", "_Z6kernelPf", "main",
		"_ZN3foo3barE", "_ZN17h0123456789abcdefE", "_ZN3foo16h0123456789abcdeE",
		"_ZN3foo17h0123456789abcdegE", "_R", "_Rx", "_R0NvC1a1b", "",
		"_ZN3foo17h0123456789abcdefEx",
	};
	struct demangler d = { 0 };

	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		CHECK(!rust_mangled(other[i]));
		CHECK(!rust_demangle(other[i], true));
	}
	/* The C++ demangler leaves Rust to the views, keeps the C++ it had. */
	CHECK(!demangle(&d, "_ZN1m4work17h6ec0dbff1282c6a0E"));
	CHECK(!demangle(&d, "_RINvCskK7mfDs1mzF_1m4workmEB2_"));
	if (demangler_available(&d)) {
		char *cxx = demangle(&d, "_ZN3foo3barEv");

		CHECK_STREQ(cxx, "foo::bar()");
		free(cxx);
	}
	demangler_free(&d);
}

/* name with every prefix of it: each NULL or a string, nothing read past the end. */
static void check_prefixes(const char *name)
{
	size_t len = strlen(name);
	char *buf = malloc(len + 1);

	for (size_t i = 0; i < len; i++) {
		memcpy(buf, name, i);
		buf[i] = 0;
		free(rust_demangle(buf, true));
		free(rust_demangle(buf, false));
	}
	free(buf);
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t h = strlen(head), u = strlen(unit), t = strlen(tail);
	char *s = malloc(h + u * n + t + 1), *at = s;

	memcpy(at, head, h);
	at += h;
	for (size_t i = 0; i < n; i++, at += u)
		memcpy(at, unit, u);
	memcpy(at, tail, t + 1);
	return s;
}

static void test_hostile(void)
{
	static const char *const bad[] = {
		"_RNvB_1a",		/* a backref to itself */
		"_RNvNvC1aB2_1b",	/* a backref forward */
		"_RINvC1aB0_E",		/* a backref to its own path: loops until the depth */
		"_RC99999999999999999999999a",	/* a count past the name */
		"_RNvC1au9999999999_a",
		"_RC1aB99999999999999999999999999_",	/* a base-62 number past 64 bits */
		"_ZN99999999999999999999999a17h0123456789abcdefE",
		"_RNvC1a1fFG99999999999_E",	/* a binder of billions of lifetimes */
		"_RINvC1a1fRL5_hE",	/* a lifetime no binder holds */
		"_RINvC1a1fKe3foo_E",	/* a str constant: not stable Rust */
		"_RINvC1a1fKb2_E",	/* a bool that is 2 */
		"_RINvC1a1fKc110000_E",	/* a char past Unicode */
		"_RNvC1a1f\x01",	/* a control byte */
		"_RNvC1a1fx",		/* text after the path that is not a suffix */
	};
	char *deep;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(!rust_demangle(bad[i], true));
		CHECK(!rust_demangle(bad[i], false));
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_prefixes(names[i].mangled);

	/* Nesting past the depth limit, in paths, types and generics. */
	deep = repeat("_R", "N", 5000, "");
	deep = realloc(deep, strlen(deep) + 5000 * 3 + 8);
	strcat(deep, "vC1a");
	for (int i = 0; i < 5000; i++)
		strcat(deep, "v1b");
	CHECK(!rust_demangle(deep, true));
	free(deep);
	deep = repeat("_RINvC1a1f", "R", 3000, "hE");
	CHECK(!rust_demangle(deep, true));
	free(deep);
	/* Nesting within it demangles. */
	deep = repeat("_RINvC1a1f", "R", 100, "hE");
	CHECK(rust_mangled(deep));
	free(deep);
	/* A legacy name longer than the limit stays mangled. */
	deep = repeat("_ZN", "1a", 5000, "17h0123456789abcdefE");
	CHECK(!rust_demangle(deep, false));
	free(deep);
}

/*
 * Tuples whose two fields are backrefs to the tuple before: each doubles
 * what the next prints. 40 of them would print 2^40 "u8"; the output limit
 * ends it.
 */
static void test_backref_doubling(void)
{
	char name[4096] = "_RINvC1a1fThhE";
	size_t prev = 8;	/* offset of the first tuple after "_R" */

	for (int i = 0; i < 40; i++) {
		size_t at = strlen(name) - 2;
		char digits[16];
		uint64_t v = prev - 1;	/* base-62: the offset - 1, then '_' */
		char b62[16];
		int n = 0;

		do {
			uint64_t d = v % 62;

			b62[n++] = (char)(d < 10 ? '0' + d : d < 36 ? 'a' + d - 10 : 'A' + d - 36);
			v /= 62;
		} while (v);
		for (int j = 0; j < n; j++)
			digits[j] = b62[n - 1 - j];
		digits[n] = 0;
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "TB%s_B%s_E", digits,
			 digits);
		prev = at;
	}
	strcat(name, "E");
	CHECK(!rust_demangle(name, true));
	CHECK(!rust_demangle(name, false));
}

int main(void)
{
	RUN(test_names);
	RUN(test_not_rust);
	RUN(test_hostile);
	RUN(test_backref_doubling);
	return test_summary();
}
