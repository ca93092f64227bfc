# SPDX-License-Identifier: MIT
# shellcheck shell=sh
#
# Helpers for the end-to-end tests. tests/run.sh runs each tests/e2e/*.sh
# with sh, inside a fresh $TESTDIR, with:
#
#   GTRACE     absolute path of the gtrace binary under test
#   BUILD      the build directory
#   WORKLOADS  $BUILD/workloads: the programs of tests/workloads/
#   SRCDIR     the repository root
#   SAN_FLAGS  the sanitizer flags the build used (empty without ASAN=1)
#
# A test exits 0 to pass, 77 to skip (see skip), anything else to fail. It
# sources this file first:  . "$SRCDIR/tests/e2e/lib.sh"
#
# What a test needs from this machine and may go without is a requirement
# of tests/requirements: skip and skip_part name the one it lacks, so that
# tests/run.sh lists it, and fails the test where the run requires it.

set -u

for var in GTRACE BUILD WORKLOADS SRCDIR TESTDIR; do
	eval "value=\${$var:-}"
	if [ -z "$value" ]; then
		echo "FAIL: \$$var is not set; run the tests with tests/run.sh" >&2
		exit 1
	fi
done
cd "$TESTDIR" || exit 1

# fail MESSAGE: the test failed.
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# skip REQUIREMENT REASON...: the test cannot run here, for want of
# REQUIREMENT (a name of tests/requirements).
skip() {
	skip_part "$@"
	exit 77
}

# skip_part REQUIREMENT REASON...: a part of the test cannot run here; the
# rest goes on.
skip_part() {
	need=$1
	shift
	echo "SKIP($need): $*"
}

# show FILE: prints a file's content indented, to explain a failure.
show() {
	echo "--- $1:" >&2
	sed 's/^/  | /' "$1" >&2
}

# expect_contains FILE PATTERN: FILE has a line matching the extended regex.
expect_contains() {
	if ! grep -Eq -- "$2" "$1"; then
		show "$1"
		fail "'$1' has no line matching '$2'"
	fi
}

# expect_not_contains FILE PATTERN: no line of FILE matches.
expect_not_contains() {
	if grep -Eq -- "$2" "$1"; then
		show "$1"
		fail "'$1' has a line matching '$2'"
	fi
}

# expect_lines FILE N: FILE has exactly N lines.
expect_lines() {
	lines=$(wc -l <"$1")
	if [ "$lines" -ne "$2" ]; then
		show "$1"
		fail "'$1' has $lines lines, expected $2"
	fi
}

# expect_count_at_most MAX WHAT SCRIPT: sh SCRIPT -v (a scripts/ counter)
# lists what it counts, then prints the count; more than MAX fails, showing
# the list and saying "COUNT WHAT".
expect_count_at_most() {
	sh "$SRCDIR/$3" -v >count.txt || fail "$3 failed"
	n=$(tail -n 1 count.txt)
	if [ "$n" -gt "$1" ]; then
		show count.txt
		fail "$n $2"
	fi
}

# expect_exit CODE CMD...: CMD exits with CODE. Its stdout and stderr are
# left in $TESTDIR/stdout and $TESTDIR/stderr.
expect_exit() {
	want=$1
	shift
	"$@" >"$TESTDIR/stdout" 2>"$TESTDIR/stderr" </dev/null
	got=$?
	if [ "$got" -ne "$want" ]; then
		show "$TESTDIR/stdout"
		show "$TESTDIR/stderr"
		fail "'$*' exited with $got, expected $want"
	fi
}

# run_gtrace ARGS...: runs gtrace, which must succeed. Its stdout goes where
# the caller sends it; its stderr is kept in $TESTDIR/stderr, and shown with
# the exit status when it fails.
run_gtrace() {
	"$GTRACE" "$@" 2>"$TESTDIR/stderr" </dev/null
	status=$?
	if [ $status -ne 0 ]; then
		show "$TESTDIR/stderr"
		fail "'gtrace $*' exited with $status"
	fi
}

# is_perf_refusal FILE: FILE holds gtrace's message that the kernel refused
# perf_event_open (permissions or a sandbox), not some other failure.
is_perf_refusal() {
	grep -Eq 'perf_event_paranoid|CAP_PERFMON|seccomp' "$1"
}

# perf_events: true when perf_event_open is usable here; false, with the
# kernel's refusal in $TESTDIR/probe.out, when not.
perf_events() {
	"$GTRACE" record -q -o "$TESTDIR/probe.data" -- true \
		>"$TESTDIR/probe.out" 2>&1 </dev/null
	status=$?
	[ $status -eq 1 ] && is_perf_refusal "$TESTDIR/probe.out" && return 1
	if [ $status -ne 0 ]; then
		show "$TESTDIR/probe.out"
		fail "'gtrace record -- true' exited with $status"
	fi
	rm -f "$TESTDIR/probe.data"
}

# need_perf_events: skips the test when perf_event_open is unusable here.
need_perf_events() {
	perf_events || skip perf-events "$(sed -n '1s/^gtrace: //p' "$TESTDIR/probe.out")"
}

# record FILE [RECORD-OPTIONS] -- CMD...: records CMD quietly into FILE;
# gtrace must exit 0 (so CMD must too).
record() {
	out=$1
	shift
	run_gtrace record -q -o "$out" "$@"
	[ -s "$out" ] || fail "gtrace record wrote no '$out'"
}

# as_unprivileged CMD...: runs CMD as an ordinary user: as nobody, without
# capabilities, when root; as is otherwise. Skips when that is impossible.
as_unprivileged() {
	if [ "$(id -u)" -ne 0 ]; then
		"$@"
		return
	fi
	command -v setpriv >/dev/null 2>&1 || skip tools "setpriv (util-linux) is not installed"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps=-all --bounding-set=-all -- "$@"
}

# folded_share FILE ERE: the percentage (0-100, rounded down) of the samples
# in the folded stacks FILE ("frame;frame;... COUNT" lines) whose line
# matches ERE.
folded_share() {
	awk -v re="$2" '
		{ total += $NF; if ($0 ~ re) hit += $NF }
		END { print total ? int(100 * hit / total) : 0 }' "$1"
}

# folded_samples FILE ERE: the number of samples on lines matching ERE.
folded_samples() {
	awk -v re="$2" '$0 ~ re { n += $NF } END { print n + 0 }' "$1"
}

# report_self FILE SYMBOL: the first percentage on the line of a report whose
# last column is SYMBOL (with --no-children, the self share), as an integer.
report_self() {
	awk -v sym="$2" '
		$NF == sym && !found {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^[0-9.]+%$/) { print int($i); found = 1; break }
		}
		END { if (!found) print -1 }' "$1"
}

# thread_column FILE NAME COLUMN: from gtrace threads output, COLUMN (1-based)
# of the first row whose Name column (3) is NAME; empty when there is none.
thread_column() {
	awk -v name="$2" -v col="$3" '
		$1 !~ /^#/ && $3 == name { print $col; exit }' "$1"
}

# at_least WHAT VALUE MIN: VALUE >= MIN (numbers, possibly fractional).
at_least() {
	if ! awk -v v="$2" -v m="$3" 'BEGIN { exit !(v + 0 >= m + 0) }'; then
		fail "$1 is $2, expected at least $3"
	fi
}

# between WHAT VALUE MIN MAX: MIN <= VALUE <= MAX (numbers, possibly
# fractional).
between() {
	if ! awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v + 0 >= lo + 0 && v + 0 <= hi + 0) }'; then
		fail "$1 is $2, expected $3 to $4"
	fi
}

# sampled_for WHAT SAMPLES MS HZ: SAMPLES is what MS ms on the CPU give at
# HZ: at most a tenth more (and one), at least three quarters. A sampling
# timer that the host of a loaded virtual machine holds back fires once
# for all the periods it missed: samples go missing, never come extra.
sampled_for() {
	between "$1" "$2" "$(awk -v ms="$3" -v hz="$4" 'BEGIN { print ms * hz / 1000 * 0.75 - 1 }')" \
		"$(awk -v ms="$3" -v hz="$4" 'BEGIN { print ms * hz / 1000 * 1.1 + 1 }')"
}

# cut_in_last_chunk IN OUT: OUT is the recording IN cut 10 bytes into its
# last chunk of rows (the one before END): every chunk before it whole. IN
# needs two chunks of rows or more for OUT to hold any.
cut_in_last_chunk() {
	size=$(wc -c <"$1")
	at=32 last=32 before=32
	# Each chunk: a 20-byte header, its frame's length at byte 4.
	while [ $((at + 20)) -le "$size" ]; do
		before=$last last=$at
		at=$((at + 20 + $(od -An -tu4 -j $((at + 4)) -N4 "$1" | tr -d ' ')))
	done
	head -c $((before + 10)) "$1" >"$2"
}

# diagnose_percent FILE KEY: from gtrace diagnose output, the percentage on
# the line whose first word is KEY (e.g. complete, under unwinding:), as an
# integer; -1 when there is none.
diagnose_percent() {
	awk -v key="$2" '
		$1 == key && match($0, /[0-9.]+%/) {
			print int(substr($0, RSTART, RLENGTH - 1)); found = 1; exit
		}
		END { if (!found) print -1 }' "$1"
}

# diagnose_value FILE KEY: the first number after "KEY:" in diagnose output.
diagnose_value() {
	awk -v key="$2:" '
		index($0, key) == 1 && match(substr($0, length(key) + 1), /[0-9]+/) {
			print substr($0, length(key) + RSTART, RLENGTH); exit
		}' "$1"
}

# target_counter FILE NAME: from gtrace diagnose output, the target counter
# NAME (spans, dropped.queue-full, ...) of the "target:" block; -1 if none.
target_counter() {
	awk -v name="$2" '
		/^target:/ { on = 1; next }
		on && !/^ / { on = 0 }
		on && $1 == name && $2 ~ /^[0-9]+$/ { print $2; found = 1; exit }
		END { if (!found) print -1 }' "$1"
}

# expect_counters DIAGNOSE-FILE NAME=VALUE...: target counters in diagnose output.
expect_counters() {
	file=$1
	shift
	for pair in "$@"; do
		got=$(target_counter "$file" "${pair%%=*}")
		[ "$got" = "${pair#*=}" ] ||
			{ show "$file"; fail "target.${pair%%=*} is $got, expected ${pair#*=}"; }
	done
}

# lanes_result FILE pid|reported|dropped: from the last "lanes: pid P
# reported N spans, dropped D" line the lanes example printed; -1 if none.
lanes_result() {
	awk -v what="$2" '
		/^lanes: pid [0-9]+ reported [0-9]+ spans, dropped [0-9]+$/ {
			v["pid"] = $3; v["reported"] = $5; v["dropped"] = $8
		}
		END { print ("pid" in v) ? v[what] : -1 }' "$1"
}

# wait_for FILE: until FILE exists and is not empty (at most 20 s).
wait_for() {
	tries=0
	while [ ! -s "$1" ]; do
		tries=$((tries + 1))
		[ $tries -le 400 ] || fail "'$1' did not appear"
		sleep 0.05
	done
}

# cpython VERSION: sets $py to a CPython VERSION (3.12, say): Debian's
# /usr/bin/pythonVERSION, else pyenv's; false, with $py empty, when there
# is none.
cpython() {
	pyenv=${PYENV_ROOT:-$HOME/.pyenv}/versions
	for py in /usr/bin/python$1 "$pyenv"/$1.*/bin/python3; do
		[ -x "$py" ] && return
	done
	py=
	false
}

# need_python311: sets $py311 to a CPython 3.11; skips the test when there
# is none.
need_python311() {
	cpython 3.11 || skip python3.11 "no CPython 3.11 (/usr/bin/python3.11 or pyenv's)"
	py311=$py
}

# need_python3: skips the test when there is no python3 to decode with.
need_python3() {
	command -v python3 >/dev/null 2>&1 || skip python3 "python3 is not installed: the test decodes with it"
}

# bounded MIB SECONDS CMD...: runs CMD on a hostile input with its memory
# and time capped: it must neither hang nor exhaust the machine. Its stdout
# and stderr go to $TESTDIR/stdout and $TESTDIR/stderr, stdin is /dev/null.
# Fails the test when CMD runs past SECONDS or its peak RSS (the largest of
# CMD and the processes it waited for) passes MIB MiB; else sets
# $bounded_status to CMD's exit status, $bounded_mib to its peak RSS and
# $bounded_seconds to its wall time. ulimit -v is a safety net well above
# the ceiling (threads reserve address space they never touch); built with
# the sanitizers, whose shadow memory rules ulimit -v out, ASan's
# hard_rss_limit_mb is the net instead and the ceiling is 3 times as high.
bounded() {
	mib=$1
	seconds=$2
	shift 2
	[ -x /usr/bin/time ] || skip tools "GNU time (/usr/bin/time) is not installed"
	if [ -n "${SAN_FLAGS:-}" ]; then
		mib=$((mib * 3))
		net="export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=$((mib * 2))"
	else
		net="ulimit -v $(((mib + 2048) * 1024))"
	fi
	(eval "$net" && exec /usr/bin/time -f '%M %e' -o "$TESTDIR/bounded.peak" \
		timeout -k 5 "$seconds" "$@") >"$TESTDIR/stdout" 2>"$TESTDIR/stderr" </dev/null
	bounded_status=$?
	if [ "$bounded_status" -eq 124 ] || [ "$bounded_status" -eq 137 ]; then
		show "$TESTDIR/stderr"
		fail "'$*' ran past $seconds s"
	fi
	bounded_mib=$(awk 'END { printf "%d", $1 / 1024 }' "$TESTDIR/bounded.peak")
	bounded_seconds=$(awk 'END { print $2 }' "$TESTDIR/bounded.peak")
	if [ "$bounded_mib" -gt "$mib" ]; then
		show "$TESTDIR/stderr"
		fail "'$*' peaked at $bounded_mib MiB, more than $mib MiB"
	fi
}

# bounded_gtrace MIB SECONDS ARGS...: gtrace ARGS within bounded's ceilings,
# which must succeed.
bounded_gtrace() {
	mib=$1
	seconds=$2
	shift 2
	bounded "$mib" "$seconds" "$GTRACE" "$@"
	if [ "$bounded_status" -ne 0 ]; then
		show "$TESTDIR/stderr"
		fail "'gtrace $*' exited with $bounded_status"
	fi
}
