# SPDX-License-Identifier: MIT
# The recordings of two ranks (the launcher's RANK simulated), read as one
# through -i of their directory or -i given twice: a Rank column in report
# and threads, --rank to keep one, a "rank N" frame per rank in flame, a
# process per rank in export, the ranks in diagnose. Ranks 9 and 10: the
# directory's files come in natural order, so rank 9's is read first. A
# recording of the directory that cannot be read is left out.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

mkdir job empty
# rank_record RANK CMD...: records CMD as that rank of the job would.
rank_record() {
	rank=$1
	shift
	RANK=$rank WORLD_SIZE=11 "$GTRACE" record -q -o 'job/r.%r.data' -- "$@" \
		2>"$TESTDIR/stderr" </dev/null || { show "$TESTDIR/stderr"; fail "rank $rank's record failed"; }
}
rank_record 9 "$WORKLOADS/hot" 0.3
rank_record 10 "$WORKLOADS/threads" 0.3
[ -s job/r.9.data ] && [ -s job/r.10.data ] ||
	fail "-o job/r.%r.data did not name the files by rank"
echo "not a recording" >job/README
echo "not a recording" >empty/README

# A directory's recordings are those given one by one, in natural order.
run_gtrace report -i job --no-children >dir.txt
run_gtrace report -i job/r.9.data -i job/r.10.data --no-children >both.txt
grep -v '^# File:' dir.txt >dir.rows
grep -v '^# File:' both.txt >both.rows
cmp -s dir.rows both.rows || { show dir.txt; show both.txt; fail "-i DIR and -i twice differ"; }
expect_contains dir.txt '^# File: job$'
expect_contains both.txt '^# File: job/r.9.data, job/r.10.data$'

# Rows gain a rank column, first of the default keys.
expect_contains dir.txt '^#.*Samples  Rank  Command'
expect_contains dir.txt ' 9  +hot  +hot  +hot_leaf$'
expect_contains dir.txt ' 10  +(alpha|beta|gamma)  +threads  +spin_(alpha|beta|gamma)$'
run_gtrace report -i job/r.9.data >one.txt
expect_not_contains one.txt 'Rank'

run_gtrace report -i job --rank 10 --no-children >rank10.txt
expect_contains rank10.txt 'spin_gamma$'
expect_not_contains rank10.txt 'hot_leaf'
run_gtrace report -i job -s rank,symbol --no-children --format json >rows.json
expect_contains rows.json '"rank": 9, "symbol": "hot_leaf"'

run_gtrace threads -i job >threads.txt
expect_contains threads.txt '^ Rank +PID +TID +Name'
expect_contains threads.txt '^ +9 +[0-9]+ +[0-9]+ +hot '
expect_contains threads.txt '^ +10 +[0-9]+ +[0-9]+ +gamma '
run_gtrace threads -i job --rank 9 --format json >threads.json
expect_contains threads.json '"rank": 9, "pid": [0-9]+, "tid": [0-9]+, "name": "hot"'
expect_not_contains threads.json '"rank": 10'

run_gtrace flame -i job --folded >folded.txt
expect_contains folded.txt '^rank 9;hot;.*;hot_leaf [0-9]+$'
expect_contains folded.txt '^rank 10;gamma;.*;spin_gamma [0-9]+$'
expect_not_contains folded.txt '^(hot|alpha|beta|gamma);'

# One process per rank, named by it, rank 9's made first.
need_python3
for format in perfetto chrome; do
	run_gtrace export -i job --format "$format" -o "job.$format"
	python3 "$SRCDIR/tests/e2e/tracesum.py" "job.$format" >"$format.sum" 2>"$TESTDIR/stderr" ||
		{ show "$TESTDIR/stderr"; fail "'job.$format' does not decode"; }
	expect_contains "$format.sum" '^process [0-9]+ rank 9: hot$'
	expect_contains "$format.sum" '^process [0-9]+ rank 10: threads$'
	grep -E '^process [0-9]+ rank ' "$format.sum" >"$format.procs"
	expect_lines "$format.procs" 2
	head -n 1 "$format.procs" | grep -q 'rank 9:' ||
		{ show "$format.procs"; fail "rank 10's process came first"; }
done

run_gtrace diagnose -i job >diag.txt
expect_contains diag.txt '^ranks: +2 recordings'
expect_contains diag.txt '^ +9 .* clock base .*job/r\.9\.data$'
expect_contains diag.txt '^ +10 .*job/r\.10\.data$'
run_gtrace diagnose -i job --format json >diag.json
expect_contains diag.json '"rank": 10, "has_rank": true'

# A directory is one job's recordings: a second run of rank 9 into it
# left r.9.data.old, left out with one warning; two recordings of one
# rank named by hand are refused, naming both.
rank_record 9 "$WORKLOADS/hot" 0.2
[ -s job/r.9.data.old ] || fail "re-recording rank 9 left no r.9.data.old"
run_gtrace threads -i job >rerun.txt
expect_contains stderr "^gtrace: warning: leaving out 1 recording of earlier runs in 'job' \\(\\*\\.old\\)\$"
[ "$(wc -l <stderr)" -eq 1 ] || { show stderr; fail "-i job warned more than once"; }
[ "$(grep -cE '^ +9 +[0-9]+ +[0-9]+ +hot ' rerun.txt)" -eq 1 ] || { show rerun.txt; fail "-i job read rank 9 twice"; }
expect_exit 1 "$GTRACE" report -i job/r.9.data -i job/r.9.data.old
expect_contains stderr "^gtrace: 'job/r.9.data' and 'job/r.9.data.old' both claim rank 9: "
[ "$(wc -l <stderr)" -eq 1 ] || { show stderr; fail "two rank 9s took more than one line"; }

expect_exit 1 "$GTRACE" report -i empty
expect_contains stderr "^gtrace: no gtrace recordings in 'empty'$"
expect_exit 1 "$GTRACE" report -i job --rank 3
expect_contains stderr '^gtrace: no rank 3 in the recordings$'
expect_exit 1 "$GTRACE" threads -i job -i missing.data
expect_contains stderr "^gtrace: cannot read 'missing.data': No such file or directory$"

# A recording of the directory that cannot be read is left out with a
# warning, the others read: one that needs a newer gtrace, and, for an
# ordinary user, one it may not open. None left: an error.
mkdir -m 755 part
cp job/r.9.data job/r.10.data part/
chmod 644 part/*
cp job/r.9.data part/r.11.data
printf '\143' | dd of=part/r.11.data bs=1 seek=12 conv=notrunc 2>/dev/null
run_gtrace threads -i part >part.txt
expect_contains stderr "^gtrace: warning: cannot read 'part/r.11.data': needs a newer gtrace to read it; leaving it out$"
expect_contains part.txt '^ +9 '
expect_contains part.txt '^ +10 '
if [ "$(id -u)" -ne 0 ] || command -v setpriv >/dev/null 2>&1; then
	chmod 000 part/r.10.data
	(cd part && as_unprivileged "$GTRACE" threads -i . >../locked.txt 2>../locked.err)
	[ $? -eq 0 ] || { show locked.err; fail "threads of a directory with a locked recording failed"; }
	expect_contains locked.err "^gtrace: warning: cannot read '\./r\.10\.data': Permission denied; leaving it out$"
	expect_contains locked.txt ' hot '
	chmod 644 part/r.10.data
fi
rm part/r.9.data part/r.10.data
expect_exit 1 "$GTRACE" threads -i part
expect_contains stderr "^gtrace: no gtrace recording in 'part' could be read$"
