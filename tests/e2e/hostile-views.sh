#!/bin/sh
# SPDX-License-Identifier: MIT
# The offline views on hostile recordings (tests/hostile/view-recordings),
# each under memory and time ceilings: stacks 60000 frames deep with a
# sample at each depth, a launch of 80000 kernels that PC samples join,
# 80000 meta keys, spans whose durations add past 2^64 ns, names with
# terminal escapes, a newline and a ';', and a thread renamed mid-run;
# then the same names from a real program (tests/workloads/renamer).
. "$SRCDIR/tests/e2e/lib.sh"

make_recording() {
	"$BUILD/tests/hostile/view-recordings" "$@" ||
		fail "view-recordings $* failed"
}

esc=$(printf '\033')
bel=$(printf '\007')

# no_raw_escapes FILE: FILE holds no ESC or BEL byte, which a terminal would act on.
no_raw_escapes() {
	if grep -q "[$esc$bel]" "$1"; then
		fail "'$1' holds a raw escape byte: $(od -c "$1" | grep -m1 '033\|\\a')"
	fi
}

# well_folded FILE: each line of FILE is "frame;...;frame COUNT..." with no
# frame that starts a line of its own; its line count.
well_folded() {
	if grep -Evq '^[^;]+(;[^;]+)* [0-9]+( [0-9]+)?$' "$1"; then
		show "$1"
		fail "'$1' has a line that is not a folded stack"
	fi
	wc -l <"$1"
}

# --- Deep stacks: the children of report and diff, the flame diff's paths.
make_recording deep deep.data 60000
bounded_gtrace 300 10 report -i deep.data
expect_contains "$TESTDIR/stdout" '^ +100\.00% +0\.00% +60000 +deep +deep +f0$'
# Each row's call graph walks the stacks through it: bounded, and said.
bounded_gtrace 300 10 report -i deep.data -g
expect_contains "$TESTDIR/stdout" '^# Call graphs cut short: they may walk [0-9]+ frames'
bounded_gtrace 300 10 report -i deep.data -g callee
bounded_gtrace 300 10 report -i deep.data -g caller --no-children
bounded_gtrace 300 10 diff deep.data deep.data
bounded_gtrace 300 10 flame -i deep.data
bounded_gtrace 300 10 flame --svg deep.svg -i deep.data
bounded_gtrace 150 10 flame --diff --svg deep-diff.svg deep.data deep.data
bounded_gtrace 300 10 export --format chrome -o deep.json -i deep.data
bounded_gtrace 300 10 export --format pprof -o deep.pb.gz -i deep.data

# --- One launch of 80000 kernel spans: each PC sample bucket looks it up;
# analyze (and flame --weight gpu-idle) finds the one call for each.
make_recording storm storm.data 80000
bounded_gtrace 300 10 report --gpu-pc -i storm.data
expect_contains "$TESTDIR/stdout" '^ +80000 +100\.00% +missing$'
bounded_gtrace 300 10 flame --gpu-pc --folded -i storm.data
bounded_gtrace 300 10 analyze -i storm.data
bounded_gtrace 300 10 analyze --format json -i storm.data
bounded_gtrace 300 10 flame --weight gpu-idle --folded -i storm.data

# --- 80000 meta keys: diagnose and export print each once, with its last value.
make_recording meta meta.data 80000
bounded_gtrace 300 10 diagnose -i meta.data
expect_contains "$TESTDIR/stdout" '^k79999: +v$'
bounded_gtrace 300 10 diagnose --format json -i meta.data
bounded_gtrace 300 10 export -o meta.pftrace -i meta.data
bounded_gtrace 300 10 export --format chrome -o meta.json -i meta.data

# --- Durations adding past 2^64 ns: no frame wider than the graph's root.
make_recording overflow overflow.data
bounded_gtrace 200 10 flame --svg overflow.svg -i overflow.data
awk 'match($0, /data-w="[0-9]+"/) {
		w = substr($0, RSTART + 8, RLENGTH - 9) + 0
		if (!n++) root = w
		else if (w > root) { print "frame wider than the root: " w " > " root; bad = 1 }
	}
	END { exit bad || !n }' overflow.svg || fail "overflow.svg has frames wider than its root"
bounded_gtrace 200 10 flame -i overflow.data
bounded_gtrace 200 10 report -i overflow.data

# --- Names: escaped in every text view, and each sample under the name it was taken under.
make_recording names names.data
bounded_gtrace 200 10 report -i names.data --sort comm
no_raw_escapes "$TESTDIR/stdout"
expect_contains "$TESTDIR/stdout" '^ +41\.67% +41\.67% +5 +after$'
expect_contains "$TESTDIR/stdout" '^ +25\.00% +25\.00% +3 +before$'
expect_contains "$TESTDIR/stdout" '^ +16\.67% +16\.67% +2 +\\x1b\]0;PWN\\x07\\x1b\[2J$'
expect_contains "$TESTDIR/stdout" '^ +16\.67% +16\.67% +2 +fake\\x0aline;frame$'
bounded_gtrace 200 10 threads -i names.data
no_raw_escapes "$TESTDIR/stdout"
expect_contains "$TESTDIR/stdout" '^ +100 +100 +after +8 '
expect_contains "$TESTDIR/stdout" '^ +PID +TID +Samples +Sampled as$'
expect_contains "$TESTDIR/stdout" '^ +100 +100 +3 +before$'
expect_contains "$TESTDIR/stdout" '^ +100 +100 +5 +after$'
expect_contains "$TESTDIR/stdout" '^ +100 +102 +fake\\x0aline;frame +2 '
bounded_gtrace 200 10 flame --folded -i names.data
cp "$TESTDIR/stdout" names.folded
[ "$(well_folded names.folded)" -eq 4 ] ||
	{ show names.folded; fail "names.folded is not 4 stacks"; }
expect_contains names.folded '^fake\\x0aline\\x3bframe;main;work 2$'
expect_contains names.folded '^before;main;work 3$'
bounded_gtrace 200 10 flame --diff --folded names.data names.data
cp "$TESTDIR/stdout" names-diff.folded
[ "$(well_folded names-diff.folded)" -eq 4 ] ||
	{ show names-diff.folded; fail "names-diff.folded is not 4 stacks"; }
bounded_gtrace 200 10 flame -i names.data
no_raw_escapes "$TESTDIR/stdout"
bounded_gtrace 200 10 diagnose -i names.data
no_raw_escapes "$TESTDIR/stdout"
bounded_gtrace 200 10 diff names.data names.data
no_raw_escapes "$TESTDIR/stdout"

# --- The same from a program that renames its threads (needs perf events).
need_perf_events
record renamer.data -- "$WORKLOADS/renamer" 300
run_gtrace report -i renamer.data --sort comm >renamer.txt
no_raw_escapes renamer.txt
for name in before after '\\x1b\]0;PWN\\x07\\x1b\[2J' 'fake\\x0aline;x'; do
	expect_contains renamer.txt "^ +[0-9.]+% +[0-9.]+% +[1-9][0-9]* +$name\$"
done
run_gtrace threads -i renamer.data >renamer-threads.txt
no_raw_escapes renamer-threads.txt
expect_contains renamer-threads.txt '^ +[0-9]+ +[0-9]+ +after +[1-9]'
expect_contains renamer-threads.txt '^ +[0-9]+ +[0-9]+ +[1-9][0-9]* +before$'
expect_contains renamer-threads.txt '^ +[0-9]+ +[0-9]+ +[1-9][0-9]* +after$'
run_gtrace flame --folded -i renamer.data >renamer.folded
well_folded renamer.folded >/dev/null
expect_contains renamer.folded '^before;.*;spin_before(;[^ ]*)? [0-9]+$'
expect_contains renamer.folded '^after;.*;spin_after(;[^ ]*)? [0-9]+$'
expect_not_contains renamer.folded '^before;.*spin_after'
exit 0
