# SPDX-License-Identifier: MIT
# A hostile CPython (tests/hostile/python3-fake): a fake interpreter whose
# memory says what it likes. The recorder reads it within bounds: code
# objects that change at every turn leave it small and on time, each
# sample reads at most its budget, loops and absurd lengths end the read,
# and each bound it hits is counted and shown by diagnose. A FIFO planted
# where the interpreter's file was is never waited on.
. "$SRCDIR/tests/e2e/lib.sh"

need_perf_events
fake=$BUILD/tests/hostile/python3-fake

# counter DIAG NAME: a counter of diagnose output, 0 when not listed.
counter() {
	awk -v name="$2" '$1 == name { print $2; found = 1; exit } END { if (!found) print 0 }' "$1"
}

# expect_counted DIAG NAME...: each counter NAME of DIAG is above 0.
expect_counted() {
	diag=$1
	shift
	for name in "$@"; do
		[ "$(counter "$diag" "$name")" -gt 0 ] || { show "$diag"; fail "$diag: $name is 0"; }
	done
}

# record_bounded NAME SCENARIO SECONDS: records the fake running SCENARIO
# into NAME.data within 256 MiB and 30 s, and diagnoses it into NAME.diag:
# a recording read whole, within the readers' limit.
record_bounded() {
	bounded 256 30 "$GTRACE" record -q -o "$1.data" -- "$fake" "$2" "$3"
	[ "$bounded_status" -eq 0 ] || { show "$TESTDIR/stderr"; fail "record of '$2' exited with $bounded_status"; }
	echo "$2: $bounded_mib MiB, $bounded_seconds s"
	run_gtrace diagnose -i "$1.data" >"$1.diag"
	expect_contains "$1.diag" '^ended: +cleanly$'
}

# map_files_open: whether this shell may open its mapped files through
# /proc/PID/map_files, as a recorder run the same way may.
map_files_open() {
	entry=$(ls /proc/$$/map_files 2>/dev/null | head -n 1)
	[ -n "$entry" ] && head -c 1 "/proc/$$/map_files/$entry" >/dev/null 2>&1
}

# The fake is read as CPython: its three frames, at their lines.
record plain.data -- "$fake" plain 0.5
run_gtrace flame -i plain.data --folded >plain.folded
expect_contains plain.folded ';<module> \(fake\.py:40\);main \(fake\.py:25\);fake_work \(fake\.py:12\) [0-9]+$'

# 256 frames whose code objects all change at every turn: no stack is
# read whole within a sample's budget; the code objects read are evicted
# for the next, their names of 1100 characters cut.
record_bounded churn churn 2
expect_counted churn.diag python.over-budget python.codes-evicted python.names-cut
expect_contains churn.diag '^Python: .*; [0-9]+ past what one sample may read$'

# The innermost 8 change: most stacks are read, the code the program
# runs all the time stays in the cache, and the names past the budget are
# one name.
record_bounded inner churn-inner 3
expect_counted inner.diag python.codes-evicted python.names-over-budget
matched=$(counter inner.diag python.matched)
all=$(awk '/^Python:/ { print $4 }' inner.diag)
[ $((matched * 2)) -gt "${all:-0}" ] || { show inner.diag; fail "churn-inner: $matched of $all Python stacks read"; }
run_gtrace flame -i inner.data --folded >inner.folded
expect_contains inner.folded ';steady \(steady\.py:2\);\[name over budget\] \(\[python\]\);'

# Each turn another hostile structure: loops, lengths past all bounds,
# control bytes in names, absurd location tables, a thread list that
# loops, chains too deep, wild pointers.
record_bounded hostile hostile 2
expect_counted hostile.diag python.matched python.read-failed python.over-budget \
	python.names-cut python.linetables-too-long
run_gtrace flame -i hostile.data --folded >hostile.folded
expect_contains hostile.folded ';lines \(lines\.py:65537\);lines \(lines\.py\);lines \(lines\.py\);lines \(lines\.py:2147483647\);lines \(lines\.py\);lines \(lines\.py:7\) [0-9]+$'
# f's file name claims 2^40 bytes: "huge.py" and what memory holds after
# it, cut; a '/' among those bytes (a pointer's, as the layout falls)
# starts its base name after it. Then the function of 2^62 characters.
expect_contains hostile.folded ';g \(huge\.py\);f \([^;]*\);huge'

# A copy of the fake mapped as its libpython, deleted, and a FIFO planted
# where its maps say it was: the recorder reads the very file mapped
# through /proc/PID/map_files where the kernel lets it, else refuses the
# FIFO and leaves the process unread; it never waits on the FIFO. The fake
# runs as "planter", so that it is CPython only once the FIFO is there.
cp "$fake" planter
fake=./planter
record_bounded planted planted 0.5
if map_files_open; then
	expect_contains planted.diag '^python\.process\.[0-9]+: +CPython 3\.12\.4 /tmp/python3-fake\.[^/]+/libpython3\.12\.so \(deleted\)$'
else
	expect_not_contains planted.diag '^python\.process\.'
fi
# The same as an ordinary user, who may not open map_files.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	mkdir user && chmod 1777 user && cp planter user && cd user || exit 1
	bounded 256 30 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all -- "$GTRACE" record -q -o planted.data -- "$fake" planted 0.5
	if ! { [ "$bounded_status" -eq 1 ] && is_perf_refusal "$TESTDIR/stderr"; }; then
		[ "$bounded_status" -eq 0 ] ||
			{ show "$TESTDIR/stderr"; fail "unprivileged record of 'planted' exited with $bounded_status"; }
		run_gtrace diagnose -i planted.data >planted.diag
		expect_not_contains planted.diag '^python\.process\.'
	fi
fi
