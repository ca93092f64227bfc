# SPDX-License-Identifier: MIT
# CPython processes: the recorder finds the interpreter (libpython or the
# python executable), reads each sample's Python stack and holds it against
# the native one; diagnose names the process and version and counts how
# the reads went. The rings of an interpreter run as the command (itself,
# or by its "#!" line) or attached to wake the recorder at each sample; one
# that another command starts is read every millisecond instead. A version
# without a known layout is named and counted; a program that is not Python
# has no Python section.
. "$SRCDIR/tests/e2e/lib.sh"

need_perf_events
need_python311
work=$SRCDIR/tests/workloads/pywork.py

# counter DIAG NAME: a counter of diagnose output, 0 when not listed.
counter() {
	awk -v name="$2" '$1 == name { print $2; found = 1; exit } END { if (!found) print 0 }' "$1"
}

# python_samples DIAG: the samples of CPython threads, by any outcome.
python_samples() {
	echo $(($(counter "$1" python.matched) + $(counter "$1" python.mismatch) +
		$(counter "$1" python.no-thread-state) + $(counter "$1" python.read-failed) +
		$(counter "$1" python.exited) + $(counter "$1" python.unsupported)))
}

# check_read NAME VERSION: NAME.diag found CPython VERSION and read most of
# its samples' stacks, each at least <module>, main and a work function deep.
check_read() {
	expect_contains "$1.diag" "^python\\.process\\.[0-9]+: +CPython $2\\.[0-9]+ /"
	expect_contains "$1.diag" '^Python: +[0-9]+ of [0-9]+ samples of CPython processes'
	all=$(python_samples "$1.diag")
	matched=$(counter "$1.diag" python.matched)
	frames=$(counter "$1.diag" python.frames)
	[ "$all" -gt 0 ] && [ $((matched * 2)) -gt "$all" ] ||
		{ show "$1.diag"; fail "$1: $matched of $all Python stacks read"; }
	[ "$frames" -ge $((matched * 3)) ] ||
		{ show "$1.diag"; fail "$1: $frames frames in $matched stacks, fewer than 3 each"; }
}

record py311.data -- "$py311" "$work" 2
run_gtrace diagnose -i py311.data >py311.diag
check_read py311 3.11
# The interpreter run as the command: its rings wake the recorder at each
# sample, so that its Python stacks are read as the samples land.
expect_contains py311.diag '^wakeups: +each sample$'

# Above 1000 Hz, once a millisecond of samples (a rate any kernel allows).
record fast.data -F 1500 -- "$py311" "$work"
run_gtrace diagnose -i fast.data >fast.diag
expect_contains fast.diag '^wakeups: +every 2 samples$'
# Frame pointers' samples, a few hundred bytes each, wake it each too
# (counted in samples, not bytes).
record fp.data --call-graph fp -- "$py311" "$work"
run_gtrace diagnose -i fp.data >fp.diag
expect_contains fp.diag '^wakeups: +each sample$'

# A script whose "#!" line names the interpreter, through env(1) too.
printf '#!/usr/bin/env -S %s -u\n' "$(basename "$py311")" >env-script.py
cat "$work" >>env-script.py
chmod +x env-script.py
PATH="$(dirname "$py311"):$PATH" record env.data -- ./env-script.py
run_gtrace diagnose -i env.data >env.diag
expect_contains env.diag '^wakeups: +each sample$'

# Started by a command that is not Python: read every millisecond instead.
record shell.data -- sh -c '"$0" "$1" 2' "$py311" "$work"
run_gtrace diagnose -i shell.data >shell.diag
expect_contains shell.diag '^wakeups: +every [0-9]+ bytes$'
check_read shell 3.11

# Attached to the interpreter: at each sample too (once the child runs it).
"$py311" "$work" 4 &
pid=$!
tries=0
until [ "$(readlink "/proc/$pid/exe")" = "$(readlink -f "$py311")" ]; do
	tries=$((tries + 1))
	[ "$tries" -le 200 ] || fail "the attach target never ran $py311"
	sleep 0.05
done
record attached.data -p "$pid" --duration 0.5
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
run_gtrace diagnose -i attached.data >attached.diag
expect_contains attached.diag '^wakeups: +each sample$'
check_read attached 3.11

# The other versions with a layout.
for version in 3.12 3.13; do
	if ! cpython $version; then
		skip_part python$version "no CPython $version: its stacks are not checked"
		continue
	fi
	record "py$version.data" -- "$py" "$work"
	run_gtrace diagnose -i "py$version.data" >"py$version.diag"
	check_read "py$version" "$version"
done

# A version without one: named, counted, and said in the summary.
if cpython 3.10; then
	record py310.data -- "$py" "$work"
	run_gtrace diagnose -i py310.data >py310.diag
	expect_contains py310.diag '^python\.process\.[0-9]+: +unsupported: CPython 3\.10'
	expect_contains py310.diag '; [0-9]+ of a version gtrace cannot read$'
	[ "$(counter py310.diag python.unsupported)" -gt 0 ] ||
		{ show py310.diag; fail "python.unsupported is 0 for CPython 3.10"; }
	[ "$(counter py310.diag python.matched)" -eq 0 ] ||
		{ show py310.diag; fail "CPython 3.10 stacks counted as read"; }
else
	skip_part python3.10 "no CPython 3.10: an unsupported version is not checked"
fi

# Not Python: no section, no counter.
record hot.data -- "$WORKLOADS/hot" 0.2
run_gtrace diagnose -i hot.data >hot.diag
expect_not_contains hot.diag '^Python:'
expect_not_contains hot.diag 'python\.'
expect_contains hot.diag '^wakeups: +every [0-9]+ bytes$'
