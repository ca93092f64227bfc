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
# by its output; the last line counts them ("N passed, N failed" and, when
# some were, ", N skipped"), after the list of the skips with their reasons.
# TEST_TIMEOUT (seconds, default 300) stops a hung test.
#
# Skips: a test that cannot run here, or a part of one, prints
# "SKIP(REQUIREMENT): reason" (tests/e2e/lib.sh's skip and skip_part,
# tests/unit/test.h's test_skip), REQUIREMENT one of tests/requirements;
# a whole test skipped exits 77. GTRACE_TEST_REQUIRE lists, space-separated,
# the requirements this run must have (.ci/run names CI's): a skip for one
# of them fails the test, and so does a skip that names no requirement of
# tests/requirements.

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$SRCDIR/$BUILD ;; esac
GTRACE=${GTRACE:-$BUILD/gtrace}
case $GTRACE in /*) ;; *) GTRACE=$(pwd)/$GTRACE ;; esac
WORKLOADS=$BUILD/workloads
SAN_FLAGS=${SAN_FLAGS:-}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
pattern=${1:-}
# The recordings' cache (gtrace-record(1), FILES): one for the run, made
# anew, so that tests read what earlier ones left and never $HOME's.
GTRACE_CACHE_DIR=$BUILD/tests/cache
rm -rf "$GTRACE_CACHE_DIR"
export SRCDIR BUILD GTRACE WORKLOADS SAN_FLAGS GTRACE_CACHE_DIR

REQUIREMENTS=$SRCDIR/tests/requirements
# shellcheck disable=SC2086 # one word a requirement, whatever the spacing
required=$(echo ${GTRACE_TEST_REQUIRE:-})

# known NAME: NAME is a requirement of tests/requirements.
known() {
	grep -q "^$1 " "$REQUIREMENTS"
}

for need in $required; do
	known "$need" || {
		echo "tests/run.sh: GTRACE_TEST_REQUIRE names '$need', which tests/requirements does not list" >&2
		exit 2
	}
done

passed=0
failed=0
skipped=0
log=$(mktemp "${TMPDIR:-/tmp}/gtrace-test.XXXXXX") || exit 1
# The run's skips, "name [requirement]: reason" a line.
skips=$(mktemp "${TMPDIR:-/tmp}/gtrace-skips.XXXXXX") || exit 1
trap 'rm -f "$log" "$skips"' EXIT
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

# skip_faults NAME STATUS: notes in $skips the skips that the output ($log)
# of a test that exited with STATUS (0 or 77) holds, and prints why they
# fail it, if they do: a skip of what this run requires, one that names no
# requirement of tests/requirements, or an exit 77 without a skip.
skip_faults() {
	grep '^SKIP[(:]' "$log" >"$log.skips"
	while IFS= read -r line; do
		need=${line#SKIP(}
		need=${need%%)*}
		reason=${line#"SKIP($need): "}
		if [ "$reason" = "$line" ]; then
			echo "a skip names no requirement: $line"
		elif ! known "$need"; then
			echo "a skip names '$need', which tests/requirements does not list: $reason"
		elif case " $required " in *" $need "*) true ;; *) false ;; esac; then
			echo "a skip for '$need', which this run requires (GTRACE_TEST_REQUIRE): $reason"
		else
			echo "$1 [$need]: $reason" >>"$skips"
		fi
	done <"$log.skips"
	[ "$2" -ne 77 ] || [ -s "$log.skips" ] || echo "it exited 77 (skipped) without saying why"
	rm -f "$log.skips"
}

# report NAME STATUS: counts and prints one result; the output is in $log.
report() {
	case $2 in
	0|77)
		faults=$(skip_faults "$1" "$2")
		if [ -n "$faults" ]; then
			failed=$((failed + 1))
			echo "FAIL $1"
			printf '%s\n' "$faults" | sed 's/^/    /'
			sed 's/^/    /' "$log"
		elif [ "$2" -eq 0 ]; then
			passed=$((passed + 1))
			echo "PASS $1"
		else
			skipped=$((skipped + 1))
			echo "SKIP $1: $(sed -n 's/^SKIP([^)]*): //p' "$log" | head -n 1)"
		fi
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
		echo "FAIL: no corpus in tests/fuzz/corpus/$corpus" >"$log"
		report "$name" 1
	fi
done

for name in $(sh "$SRCDIR/tests/golden/run.sh" --list); do
	selected "golden/$name" || continue
	if [ ! -x "$GTRACE" ]; then
		echo "FAIL: no gtrace binary at $GTRACE (make tests builds it)" >"$log"
		report "golden/$name" 1
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
		echo "FAIL: no gtrace binary at $GTRACE (make tests builds it)" >"$log"
		report "$name" 1
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

if [ -s "$skips" ]; then
	echo "skipped for what this machine lacks (tests/requirements):"
	sed 's/^/  /' "$skips"
fi
summary="$passed passed, $failed failed"
[ $skipped -gt 0 ] && summary="$summary, $skipped skipped"
echo "$summary"
[ $failed -eq 0 ]
