#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Runs the test suite, one test at a time (recordings measure CPU time, so
# tests must not compete for the cores):
#
#   unit tests   $BUILD/tests/test-*  exit 0 pass, 77 skip, else fail
#   fuzz replay  $BUILD/tests/fuzz-NAME over tests/fuzz/corpus/NAME/
#   golden       each case of tests/golden/cases: a reading command run on a
#                committed recording, its output compared byte for byte
#                with tests/golden/expected/ (tests/golden/run.sh)
#   end to end   tests/e2e/*.sh, run with GTRACE, BUILD, WORKLOADS, SRCDIR,
#                SAN_FLAGS (the build's sanitizer flags, may be empty) and a
#                fresh TESTDIR each; XDG_RUNTIME_DIR is $TESTDIR/run, so the
#                span sockets of recorders go with TESTDIR (should one be
#                left, by a recorder and its remover both killed), and one
#                left after a test that passed fails it
#
# usage: BUILD=build GTRACE=build/gtrace sh tests/run.sh [PATTERN]
# PATTERN keeps the tests whose name contains it, e.g. "e2e/hot", "fuzz" or
# "golden/cuda".
# Each test prints "PASS name", "SKIP name: reason" or "FAIL name" followed
# by its output; the last line counts them. TEST_TIMEOUT (seconds, default
# 300) stops a hung test.

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$SRCDIR/$BUILD ;; esac
GTRACE=${GTRACE:-$BUILD/gtrace}
case $GTRACE in /*) ;; *) GTRACE=$(pwd)/$GTRACE ;; esac
WORKLOADS=$BUILD/workloads
SAN_FLAGS=${SAN_FLAGS:-}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
pattern=${1:-}
export SRCDIR BUILD GTRACE WORKLOADS SAN_FLAGS

passed=0
failed=0
skipped=0
log=$(mktemp "${TMPDIR:-/tmp}/gtrace-test.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 130' INT TERM

if command -v timeout >/dev/null 2>&1; then
	with_timeout="timeout -k 10 $TEST_TIMEOUT"
else
	with_timeout=
fi

selected() {
	case $1 in *"$pattern"*) return 0 ;; esac
	return 1
}

# report NAME STATUS: counts and prints one result; the output is in $log.
report() {
	case $2 in
	0)
		passed=$((passed + 1))
		echo "PASS $1"
		;;
	77)
		skipped=$((skipped + 1))
		reason=$(sed -n 's/^SKIP: //p' "$log" | head -n 1)
		echo "SKIP $1: ${reason:-no reason given}"
		;;
	*)
		failed=$((failed + 1))
		case $2 in
		124|137) echo "FAIL $1 (timed out after ${TEST_TIMEOUT}s)" ;;
		*) echo "FAIL $1 (exit $2)" ;;
		esac
		sed 's/^/    /' "$log"
		;;
	esac
}

for bin in "$BUILD"/tests/test-*; do
	[ -x "$bin" ] || continue
	name=unit/${bin##*/}
	selected "$name" || continue
	(cd "$SRCDIR" && $with_timeout "$bin") >"$log" 2>&1
	report "$name" $?
done

for bin in "$BUILD"/tests/fuzz-*; do
	[ -x "$bin" ] || continue
	corpus=${bin##*/fuzz-}
	name=fuzz/$corpus
	selected "$name" || continue
	dir=$SRCDIR/tests/fuzz/corpus/$corpus
	if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
		$with_timeout "$bin" "$dir"/* >"$log" 2>&1
		report "$name" $?
	else
		echo "SKIP: no corpus in tests/fuzz/corpus/$corpus" >"$log"
		report "$name" 77
	fi
done

for name in $(sh "$SRCDIR/tests/golden/run.sh" --list); do
	selected "golden/$name" || continue
	if [ ! -x "$GTRACE" ]; then
		echo "SKIP: no gtrace binary at $GTRACE" >"$log"
		report "golden/$name" 77
		continue
	fi
	$with_timeout sh "$SRCDIR/tests/golden/run.sh" "$name" >"$log" 2>&1
	report "golden/$name" $?
done

for script in "$SRCDIR"/tests/e2e/*.sh; do
	[ -f "$script" ] || continue
	base=${script##*/}
	[ "$base" = lib.sh ] && continue
	name=e2e/${base%.sh}
	selected "$name" || continue
	if [ ! -x "$GTRACE" ]; then
		echo "SKIP: no gtrace binary at $GTRACE" >"$log"
		report "$name" 77
		continue
	fi
	TESTDIR=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-e2e.XXXXXX") || exit 1
	export TESTDIR
	# The test's XDG_RUNTIME_DIR (see above) where the paths of sockets in
	# it fit in a socket address (108 bytes); the caller's one otherwise.
	runtime=$TESTDIR/run
	if [ ${#runtime} -le 64 ]; then
		mkdir -m 700 "$runtime" || exit 1
	else
		runtime=
	fi
	(cd "$TESTDIR" && { [ -z "$runtime" ] || export XDG_RUNTIME_DIR="$runtime"; } &&
		$with_timeout sh "$script" </dev/null) >"$log" 2>&1
	status=$?
	if [ $status -eq 0 ] && [ -n "$runtime" ] && [ -n "$(find "$runtime" -type s)" ]; then
		echo "FAIL: span sockets left behind:" $(find "$runtime" -type s) >>"$log"
		status=1
	fi
	report "$name" $status
	if [ $status -eq 0 ] || [ $status -eq 77 ]; then
		rm -rf "$TESTDIR"
	else
		echo "    (files kept in $TESTDIR)"
	fi
done

summary="$passed passed, $failed failed"
[ $skipped -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ $failed -eq 0 ]
