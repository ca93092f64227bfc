# SPDX-License-Identifier: MIT
# gtrace export --format pprof, read by go tool pprof (Debian's golang-go):
# the threads workload's top functions and their shares are report's, with
# and without inlined functions; CPU time is the default sample type; the
# labels name each thread, whose off-CPU time is threads'; a filter leaves
# the other threads out; a window keeps the samples the Chrome export has. On the CUDA test doubles, the GPU time of each
# kernel is what report's lane work charges to the stacks that launched it.
. "$SRCDIR/tests/e2e/lib.sh"

command -v go >/dev/null 2>&1 ||
	skip go "no go command (Debian's golang-go): go tool pprof reads the profile"
need_perf_events

# pprof FILE ARGS...: go tool pprof ARGS FILE, which must read it, into pprof.txt.
pprof() {
	file=$1
	shift
	go tool pprof -nodefraction=0 -edgefraction=0 "$@" "$file" >pprof.txt 2>pprof.err ||
		{ show pprof.err; fail "go tool pprof $* cannot read '$file'"; }
}

# pprof_shares FILE ARGS...: "NAME FLAT% CUM%" of each function of
# go tool pprof -top ARGS, by name.
pprof_shares() {
	pprof "$@" -top
	awk 'rows { name = $6; for (i = 7; i <= NF; i++) name = name " " $i
		    sub(/ \(inline\)$/, "", name); sub(/%/, "", $2); sub(/%/, "", $5)
		    print name "|" $2 "|" $5 }
	     $2 == "flat%" { rows = 1 }' pprof.txt | sort
}

# report_shares ARGS...: the same of gtrace report -s symbol ARGS.
report_shares() {
	run_gtrace report -s symbol "$@" >report.txt
	awk '$1 ~ /%$/ && $2 ~ /%$/ { name = $4; for (i = 5; i <= NF; i++) name = name " " $i
				      sub(/%/, "", $1); sub(/%/, "", $2); print name "|" $2 "|" $1 }' \
		report.txt | sort
}

# same_shares WHAT A B: the rows of A and B name the same functions with
# the same shares, within pprof's rounding (two significant digits under 1%).
same_shares() {
	cut -d'|' -f1 "$2" >names.a
	cut -d'|' -f1 "$3" >names.b
	cmp -s names.a names.b || { show "$2"; show "$3"; fail "$1: not the same functions"; }
	paste -d'|' "$2" "$3" | awk -F'|' '
		function off(a, b) { return a - b > 0.011 || b - a > 0.011 }
		off($2, $5) || off($3, $6) { print; bad = 1 } END { exit bad }' >off.txt ||
		{ show "$2"; show "$3"; fail "$1: shares differ: $(cat off.txt)"; }
}

record threads.data -- "$WORKLOADS/threads" 0.5
run_gtrace export -i threads.data --format pprof -o threads.pb.gz
[ "$(od -An -tx1 -N2 threads.pb.gz | tr -d ' ')" = 1f8b ] || fail "threads.pb.gz is not gzip"

pprof_shares threads.pb.gz -sample_index=samples -noinlines >pprof.shares
report_shares -i threads.data >report.shares
same_shares "functions" pprof.shares report.shares
expect_contains report.shares '^spin_gamma\|'
pprof_shares threads.pb.gz -sample_index=samples >pprof-inline.shares
report_shares -i threads.data --inline >report-inline.shares
same_shares "inlined functions" pprof-inline.shares report-inline.shares
expect_contains pprof-inline.shares '^workload_mix\|'

# CPU time, samples times the period, is what pprof shows first.
pprof threads.pb.gz -top -noinlines
expect_contains pprof.txt '^Type: cpu$'
pprof_shares threads.pb.gz -noinlines >cpu.shares
same_shares "CPU time" cpu.shares pprof.shares

# Each thread's samples and off-CPU time under its labels, as threads counts them.
run_gtrace threads -i threads.data >threads.txt
# tag_values ARGS: "VALUE AMOUNT" of go tool pprof -tags ARGS under the tid label.
tag_values() {
	pprof threads.pb.gz -tags "$@"
	awk '/^ *tid:/ { on = 1; next } on && NF == 0 { on = 0 }
	     on { v = $1; sub(/ms$/, "", v); print $NF, v }' pprof.txt | sort
}
tag_values -sample_index=samples >samples.tags
tag_values -sample_index=off-cpu -unit=ms >offcpu.tags
# thread_rows COLUMN: "TID VALUE" of the threads with a value in that column of threads.txt.
thread_rows() {
	awk -v col="$1" '/^$/ { exit } $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $col > 0 { print $2, $col }' \
		threads.txt | sort
}
# same_rows WHAT PPROF WANT MARGIN: the same tids, each value within MARGIN.
same_rows() {
	if ! join "$2" "$3" | awk -v margin="$4" '
		NF != 3 || $2 - $3 > margin || $3 - $2 > margin { bad = 1 } END { exit bad }' ||
		[ "$(wc -l <"$2")" -ne "$(wc -l <"$3")" ]; then
		show "$2"
		show threads.txt
		fail "$1 by tid are not threads'"
	fi
}
thread_rows 4 >samples.want
thread_rows 6 >offcpu.want
same_rows samples samples.tags samples.want 0
# pprof and threads round the same ns to a tenth of a ms or finer.
same_rows "off-CPU ms" offcpu.tags offcpu.want 0.1
pprof threads.pb.gz -tags -sample_index=samples
for name in alpha beta gamma; do
	expect_contains pprof.txt ": $name$"
done

# A filter: the samples taken while a thread was named gamma, as report
# counts them (not threads' row: a sample before the thread named itself is
# under the name it had then).
run_gtrace export -i threads.data --format pprof -o gamma.pb.gz -c gamma
pprof gamma.pb.gz -top -sample_index=samples
run_gtrace report -i threads.data -c gamma >gamma.txt
gamma=$(sed -n 's/^# Samples: \([0-9]*\) .*/\1/p' gamma.txt)
[ -n "$gamma" ] || { show gamma.txt; fail "report -c gamma has no '# Samples:' line"; }
expect_contains pprof.txt "^Showing nodes accounting for $gamma, 100% of $gamma total$"

# A window: the samples taken in it, as many as the Chrome export's, and its
# length. Early in the run: how long the threads work depends on the machine
# (0.28 s under ASan on a loaded one), and a window past the last event is
# cut there.
run_gtrace export -i threads.data --format pprof --start 20ms --end 80ms -o part.pb.gz
pprof part.pb.gz -top -sample_index=samples
expect_contains pprof.txt '^Duration: 60ms, '
if command -v python3 >/dev/null 2>&1; then
	run_gtrace export -i threads.data --format chrome --start 20ms --end 80ms -o part.json
	in_window=$(python3 -c 'import json, sys
print(sum(e.get("cat") == "cpu" and e["ph"] == "i" for e in json.load(open(sys.argv[1]))["traceEvents"]))' part.json)
	expect_contains pprof.txt "^Showing nodes accounting for $in_window, 100% of $in_window total$"
else
	skip_part python3 "python3 is not installed: the window's samples are not counted"
fi

# GPU time under the stacks that launched it, on the CUDA test doubles.
. "$SRCDIR/tests/cuda/lib.sh"
grep -q '^HAVE_CUPTI = 1' "$SRCDIR/config.mk" 2>/dev/null || {
	skip_part cuda "configure found no CUPTI: no GPU time to check"
	exit 0
}
need_cuda_fakes
record app.data -- "$CUDA_DIR/fake-app"
run_gtrace export -i app.data --format pprof -o app.pb.gz
pprof app.pb.gz -top -sample_index=gpu -unit=ns
# gpu_ms: "NAME MS" of each leaf (flat) function.
awk 'rows && $1 != "0" { name = $6; for (i = 7; i <= NF; i++) name = name " " $i
			 v = $1; sub(/ns$/, "", v); printf "%s|%.3f\n", name, v / 1e6 }
     $2 == "flat%" { rows = 1 }' pprof.txt | sort >gpu.pprof
# report's lane work rows of the GPU streams: Self ms by span name, summed.
run_gtrace report -i app.data >app-report.txt
awk '/^#Children ms/ { on = 1; next }
     on && $5 == "[lane]" && $6 == "GPU0" { name = $9; for (i = 10; i < NF; i++) name = name " " $i
					     ms[name] += $2 }
     END { for (n in ms) printf "%s|%.3f\n", n, ms[n] }' app-report.txt | sort >gpu.report
[ -s gpu.report ] || { show app-report.txt; fail "report shows no GPU work queued"; }
cmp -s gpu.pprof gpu.report || { show gpu.pprof; show gpu.report; fail "GPU ms by kernel are not report's"; }
expect_contains gpu.pprof '^graph_step\(float\*\)\|15\.000$'
# Its cumulative time: under the function that launched it.
expect_contains pprof.txt ' 15000000ns +[0-9.]+% +launch_graph$'
