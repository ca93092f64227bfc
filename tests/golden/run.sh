#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The golden tests (tests/golden/README): runs the reading commands of
# tests/golden/cases on the committed recordings and compares what they
# print, byte for byte, with tests/golden/expected/:
#
#   expected/CASE          its standard output
#   expected/CASE.err      its standard error, where it prints any
#   expected/CASE.status   its exit status, where it is not 0
#
# usage: tests/golden/run.sh [CASE...]      compare these cases (default all):
#                                           "PASS golden/CASE", or "FAIL
#                                           golden/CASE" and the diff; exit 1
#                                           when one failed, 77 when one was
#                                           skipped (its decoder needs python3)
#        tests/golden/run.sh --update [PATTERN]   write the expected files of
#                                           the cases whose golden/CASE
#                                           contains PATTERN (make golden-update)
#        tests/golden/run.sh --list         the cases' names
#
# GTRACE selects the binary (default build/gtrace). This is the one place
# that makes the runs alike on every machine: each case runs in
# tests/golden/recordings/ (the -i paths are relative: views print them),
# with LC_ALL=C, TZ=UTC, no GTRACE_READ_LIMIT, stdin from /dev/null, its
# output to files (never a terminal). Nothing of the output is filtered:
# the recordings hold no name of the machine that made them
# (make-recordings.sh stamps them) and no view prints anything of the
# machine that reads them.

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
GOLDEN=$SRCDIR/tests/golden
GTRACE=${GTRACE:-$SRCDIR/build/gtrace}
case $GTRACE in /*) ;; *) GTRACE=$(pwd)/$GTRACE ;; esac
LC_ALL=C
TZ=UTC
export LC_ALL TZ
unset GTRACE_READ_LIMIT COLUMNS

# The cases: "NAME ARGS..." a line; # starts a comment.
cases() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$GOLDEN/cases"
}

names() {
	cases | awk '{ print $1 }'
}

# run CASE OUTDIR: runs the case, its output into OUTDIR/CASE{,.err,.status}.
run() {
	name=$1
	out=$2/$1
	line=$(cases | awk -v name="$name" '$1 == name { $1 = ""; print; exit }')
	rm -f "$out" "$out.err" "$out.status"
	if [ -z "$line" ]; then
		echo "no case '$name' in tests/golden/cases" >"$out.err"
		return
	fi
	# A case may pipe gtrace's output through a decoder of tests/golden/.
	args=${line%%|*}
	decoder=
	[ "$args" = "$line" ] || decoder=$(echo "${line#*|}" | awk '{ print $1 }')
	eval "set -- $args"
	exit_status=$(
		cd "$GOLDEN/recordings" || exit
		if [ -n "$decoder" ]; then
			{ "$GTRACE" "$@" 2>"$out.err" </dev/null; echo $? >"$out.status"; } |
				python3 "$GOLDEN/$decoder.py" >"$out" 2>>"$out.err"
			cat "$out.status"
		else
			"$GTRACE" "$@" >"$out" 2>"$out.err" </dev/null
			echo $?
		fi
	)
	rm -f "$out.status"
	[ "$exit_status" = 0 ] || echo "$exit_status" >"$out.status"
	[ -s "$out.err" ] || rm -f "$out.err"
}

# compare CASE: runs it and prints PASS, or FAIL and how its output
# differs; returns 0, 1 or 77 (skipped).
compare() {
	if grep -q "^$1 .*|" "$GOLDEN/cases" && ! command -v python3 >/dev/null 2>&1; then
		echo "SKIP(python3): python3 is not installed: golden/$1 decodes with it"
		return 77
	fi
	run "$1" "$tmp"
	failed=
	for file in "$1" "$1.err" "$1.status"; do
		want=$GOLDEN/expected/$file
		got=$tmp/$file
		[ -e "$want" ] || want=/dev/null
		[ -e "$got" ] || got=/dev/null
		cmp -s "$want" "$got" && continue
		[ -n "$failed" ] || echo "FAIL golden/$1"
		failed=1
		diff -u --label "expected/$file" --label "got/$file" "$want" "$got" |
			sed 's/^/    /'
	done
	[ -z "$failed" ] || return 1
	echo "PASS golden/$1"
}

if [ "${1:-}" != --list ] && [ ! -x "$GTRACE" ]; then
	echo "golden: no gtrace binary at $GTRACE (make, or set GTRACE)" >&2
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-golden.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

case ${1:-} in
--list)
	names
	;;
--update)
	mkdir -p "$GOLDEN/expected"
	for name in $(names); do
		case golden/$name in *"${2:-}"*) ;; *) continue ;; esac
		run "$name" "$GOLDEN/expected"
	done
	# The expected files of cases no longer listed go.
	for file in "$GOLDEN"/expected/*; do
		base=${file##*/}
		base=${base%.err}
		names | grep -qxF -- "${base%.status}" || rm -f "$file"
	done
	;;
*)
	[ $# -gt 0 ] || set -- $(names)
	result=0
	for name; do
		compare "$name"
		case $? in
		0) ;;
		77) [ $result = 1 ] || result=77 ;;
		*) result=1 ;;
		esac
	done
	exit $result
	;;
esac
