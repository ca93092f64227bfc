# SPDX-License-Identifier: MIT
# Rust's names, both manglings: a program built here with rustc (legacy
# names, the default for a crate of its own, then v0) is recorded, and the
# views show its functions as rustc-demangle does, without the hashes, and
# with them under --verbose. No $LT$ escapes, no ::h<hash>.
. "$SRCDIR/tests/e2e/lib.sh"
# rustup's, where it installs, when no rustc is on PATH (as under CI).
[ -x "${CARGO_HOME:-$HOME/.cargo}/bin/rustc" ] && PATH=$PATH:${CARGO_HOME:-$HOME/.cargo}/bin
command -v rustc >/dev/null 2>&1 ||
	skip rustc "no rustc: the Rust program whose names report demangles cannot be built"
need_perf_events

# build NAME [RUSTC-OPTIONS]: tests/workloads/rustnames.rs as NAME, with
# debug info and frame pointers.
build() {
	name=$1
	shift
	rustc -g -C opt-level=1 -C force-frame-pointers=yes "$@" -o "$name" \
		"$SRCDIR/tests/workloads/rustnames.rs" 2>rustc.err ||
		{ show rustc.err; fail "rustc could not build $name"; }
}

# check MANGLING CHURN CLOSURE SPIN: the recording MANGLING.data's report
# names the three functions (regexes), and flame has them on one stack.
check() {
	run_gtrace report -i "$1.data" >"$1.report"
	run_gtrace report -i "$1.data" --verbose >"$1.verbose"
	for f in "$2" "$3" "$4"; do
		expect_contains "$1.report" "%.* $f\$"
	done
	expect_not_contains "$1.report" '\$(LT|GT|C|u7b)\$|::h[0-9a-f]{16}'
	run_gtrace flame -i "$1.data" --folded >"$1.folded"
	expect_contains "$1.folded" ";$2;$3;$4 [0-9]+\$"
}

build legacy
record legacy.data -- ./legacy 0.5
check legacy 'rustnames::churn' 'rustnames::churn::\{\{closure\}\}' \
	'<rustnames::Spinner<T> as rustnames::Work>::spin'
expect_contains legacy.verbose ' rustnames::churn::h[0-9a-f]{16}$'
expect_contains legacy.verbose ' <rustnames::Spinner<T> as rustnames::Work>::spin::h[0-9a-f]{16}$'

build v0 -C symbol-mangling-version=v0
record v0.data -- ./v0 0.5
check v0 'rustnames::churn::<rustnames::Spinner<u32>>' \
	'rustnames::churn::<rustnames::Spinner<u32>>::\{closure#0\}' \
	'<rustnames::Spinner<u32> as rustnames::Work>::spin'
expect_contains v0.verbose \
	' rustnames\[[0-9a-f]+\]::churn::<rustnames\[[0-9a-f]+\]::Spinner<u32>>$'
# std's own names are v0 too (rustup's std): none is left mangled.
expect_not_contains v0.report ' _R[A-Z]'
