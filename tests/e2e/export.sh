# SPDX-License-Identifier: MIT
# gtrace export, in every format, decoded by tests/e2e/tracesum.py and held
# against what threads, flame, diagnose and report --gpu say of the same
# recording: the tracks, the samples per thread and their stacks, the
# off-CPU time, each lane's spans and target time, a flow per linked
# origin, the span attributes, NVTX nesting, counters, the metrics (as
# report --metrics counts them), metadata, when ts 0 was (Perfetto's clock
# snapshot, against meta clock-start) and the tracks' order; then
# the time window, the filters, stdout, and each error.
. "$SRCDIR/tests/e2e/lib.sh"

FORMATS="perfetto chrome"
need_python3

# Refused before any file is read.
expect_exit 2 "$GTRACE" export -i none.data --format xml
expect_contains stderr "^gtrace: unknown format 'xml'"
expect_exit 2 "$GTRACE" export -i none.data --start 2s --end 1s
expect_contains stderr "^gtrace: empty time window: --start '2s' is not before --end '1s'"
expect_exit 2 "$GTRACE" export -i none.data --end 0
expect_contains stderr "^gtrace: empty time window"
expect_exit 2 "$GTRACE" export -i none.data --start 5parsecs
expect_contains stderr "^gtrace: invalid --start '5parsecs'"

need_perf_events

# summarise TRACE [FROM TO]: tracesum.py's facts about TRACE into TRACE.sum.
summarise() {
	python3 "$SRCDIR/tests/e2e/tracesum.py" "$@" >"$1.sum" 2>"$TESTDIR/stderr" ||
		{ show "$TESTDIR/stderr"; fail "'$1' does not decode"; }
}

# fact SUM WORD KEY: the rest of the line "WORD KEY ..." of a summary.
fact() {
	awk -v w="$2" -v k="$3" '$1 == w && $2 == k { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$1"
}

# expect_fact SUM WORD KEY VALUE: the summary says "WORD KEY VALUE".
expect_fact() {
	got=$(fact "$1" "$2" "$3")
	[ "$got" = "$4" ] || { show "$1"; fail "'$1': $2 $3 is '$got', expected '$4'"; }
}

# lane_total SUM NAME: "SLICES MS" summed over the tracks of the lane NAME
# (one per thread whose calls it holds, each "NAME"; an overlap "NAME #2").
lane_total() {
	awk -v lane="$2" '
		$1 == "track" {
			name = $0
			sub(/^track [0-9]+ [a-z]+ /, "", name)
			if (name == lane || index(name, lane " ") == 1)
				want[$2] = 1
		}
		$1 == "slices" && ($2 in want) { n += $3; ns += $4 }
		END { printf "%d %.1f\n", n, ns / 1e6 }' "$1"
}

# check_threads SUM THREADS: each thread and lane of gtrace threads output
# has its track; samples, off-CPU ms, spans and target ms agree. The rows
# are those of its first table (the tables after it, of processes and of
# threads renamed while sampled, come after a blank line).
check_threads() {
	awk '/^$/ { exit } $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print $2, $(NF - 4), $(NF - 2) }' "$2" |
	while read -r tid samples offcpu; do
		grep -q "^track $tid thread " "$1" || { show "$1"; fail "no track for thread $tid"; }
		got=$(fact "$1" samples "$tid")
		[ "${got:-0}" -eq "$samples" ] ||
			{ show "$1"; fail "thread $tid: ${got:-0} samples exported, threads says $samples"; }
		[ "$offcpu" = "-" ] && continue
		got=$(fact "$1" slices "$tid" | awk '{ printf "%.1f", $2 / 1e6 }')
		[ "${got:-0.0}" = "$offcpu" ] ||
			{ show "$1"; fail "thread $tid: ${got:-0} ms off-CPU exported, threads says $offcpu"; }
	done || exit 1
	awk '/^$/ { exit } $2 ~ /^0x/ { name = ""; for (i = 4; i <= NF - 4; i++) name = name (i > 4 ? " " : "") $i
		print $(NF - 3), $(NF - 2), name }' "$2" |
	while read -r spans ms name; do
		got=$(lane_total "$1" "$name")
		[ "$got" = "$spans $ms" ] ||
			{ show "$1"; fail "lane '$name': '$got' slices and ms exported, threads says '$spans $ms'"; }
	done || exit 1
}

# by_stack: folded stacks on stdin without their thread's frame, summed by
# stack. A thread renamed while sampled is one track of the export, of
# its last name, where flame names each sample's thread as it was then;
# check_threads holds each thread's samples by tid.
by_stack() {
	awk '{ n = $NF; stack = $0; sub(/ [0-9]+$/, "", stack); sub(/^[^;]*;/, "", stack)
	       sum[stack] += n } END { for (s in sum) print s, sum[s] }' | sort
}

# check_stacks SUM DATA: the samples' stacks are flame's, sample for sample.
check_stacks() {
	awk '$1 == "folded" { $1 = ""; sub(/^ /, ""); print }' "$1" | by_stack >exported.folded
	run_gtrace flame -i "$2" --folded --no-nvtx | by_stack >flame.folded
	[ -s flame.folded ] || fail "flame --folded of '$2' is empty"
	cmp -s exported.folded flame.folded ||
		{ show exported.folded; show flame.folded; fail "'$1': the stacks are not flame's"; }
}

# export_all DATA NAME COMMAND: exports DATA (a recording of COMMAND) in
# each format as NAME.FORMAT and checks it.
export_all() {
	run_gtrace threads -i "$1" >"$2.threads"
	run_gtrace diagnose -i "$1" >"$2.diagnose"
	linked=$(awk '$1 == "linked" && NF >= 3 { print $2; exit }' "$2.diagnose")
	samples=$(diagnose_value "$2.diagnose" samples)
	for format in $FORMATS; do
		run_gtrace export -i "$1" --format $format -o "$2.$format"
		summarise "$2.$format"
		sum=$2.$format.sum
		check_threads "$sum" "$2.threads"
		check_stacks "$sum" "$1"
		# A flow for each origin that linked, and from the API call that
		# queued a kernel, copy or memset whose origin did not.
		flows=$(awk '$1 == "flows" { print $2 }' "$sum")
		unlinked=$(awk '$1 == "unlinked-flows" && $2 == "api" { print $3 }' "$sum")
		expect_contains "$sum" '^unlinked-flows thread 0$'
		expect_contains "$sum" '^unlinked-flows bad 0$'
		[ $((flows - unlinked)) = "${linked:-0}" ] ||
			{ show "$sum"; fail "'$sum': $flows flows, $unlinked from unlinked origins' calls, $linked origins linked"; }
		expect_fact "$sum" counter samples "$samples"
		expect_contains "$sum" "^meta command .*$3"
		expect_contains "$sum" '^meta gtrace-version [0-9]'
		expect_contains "$sum" '^meta start-ns [0-9]+$'
		expect_contains "$sum" '^meta realtime-ns-at-ts-0 [0-9]+$'
	done
	# Both formats say when ts 0 was, and the same.
	[ "$(fact "$2.perfetto.sum" meta realtime-ns-at-ts-0)" = \
	  "$(fact "$2.chrome.sum" meta realtime-ns-at-ts-0)" ] ||
		fail "'$2': the formats' realtime of ts 0 differ"
	check_metrics "$1" "$2"
}

# check_metrics DATA NAME: both formats have the same metric counter tracks,
# each with as many values as report --metrics counts, under its subject.
check_metrics() {
	for format in $FORMATS; do
		grep -E '^(series|device) ' "$2.$format.sum" >"$2.$format.series"
	done
	cmp -s "$2.perfetto.series" "$2.chrome.series" ||
		{ show "$2.perfetto.series"; show "$2.chrome.series"; fail "'$2': the formats' metrics differ"; }
	run_gtrace report -i "$1" --metrics --format json >"$2.metrics.json"
	python3 - "$2.metrics.json" "$2.chrome.series" <<'PY' ||
import collections, json, sys
want = collections.Counter()
for r in json.load(open(sys.argv[1]))["series"]:
    owner = {"machine": "machine", "gpu": "GPU%s" % r["gpu"]}.get(r["subject"], r["comm"])
    want[(r["name"], r["unit"] or "-", owner)] += r["values"]
got = collections.Counter()
for line in open(sys.argv[2]):
    w = line.rstrip("\n").split(" ", 6)
    if w[0] == "series":
        got[(w[1], w[2], w[6])] += int(w[3])
want = +want
assert got == want, (sorted((got - want).items()), sorted((want - got).items()))
PY
		fail "'$2': the exported metrics are not those of report --metrics"
}

# The threads workload: samples and stacks of four threads.
record threads.data -- "$WORKLOADS/threads"
export_all threads.data threads threads
for format in $FORMATS; do
	expect_contains threads.$format.sum '^track [0-9]+ thread alpha$'
	expect_contains threads.$format.sum '^folded gamma;.*;thread_gamma;spin_gamma [0-9]+$'
done

# The lanes example: two queue lanes of 500 spans, each queued by a worker.
if [ -x "$WORKLOADS/lanes" ]; then
	record lanes.data -- "$WORKLOADS/lanes" --wait-active 5 --threads 2 --spans 500
	export_all lanes.data lanes lanes
	for format in $FORMATS; do
		expect_contains lanes.$format.sum '^track [0-9]+ lane queue 0$'
		expect_contains lanes.$format.sum '^track [0-9]+ lane queue 1$'
		[ "$(lane_total lanes.$format.sum "queue 0")" != "0 0.0" ] ||
			fail "lanes.$format: the lane 'queue 0' has no slice"
		expect_contains lanes.$format.sum '^args job-[0-9]+ .*origin=linked'
	done
	# Origins that did not link: no flow, their outcome on the span.
	run_gtrace export -i lanes.data --format chrome --link-window 1ns -o far.json
	summarise far.json
	expect_contains far.json.sum '^args job-[0-9]+ .*origin=too_far'
	expect_contains far.json.sum "^flows 0$"
	worker=$(thread_column lanes.threads worker-0 2)
	# --tid of a worker: its track, its samples, and the lane work it queued.
	for format in $FORMATS; do
		run_gtrace export -i lanes.data --format $format --tid "$worker" -o worker.$format
		summarise worker.$format
		threads=$(grep -c '^track [0-9]* thread ' worker.$format.sum)
		[ "$threads" -eq 1 ] || { show worker.$format.sum; fail "--tid $worker: $threads thread tracks"; }
		expect_contains worker.$format.sum "^track $worker thread worker-0$"
		awk -v w="$worker" '$1 == "samples" && $2 != w { exit 1 }' worker.$format.sum ||
			{ show worker.$format.sum; fail "--tid $worker: samples of other threads"; }
		flows=$(awk '$1 == "flows" { print $2 }' worker.$format.sum)
		[ "$flows" -gt 0 ] || { show worker.$format.sum; fail "--tid $worker: no flow"; }
	done
fi

# The CUDA test doubles: stream lanes under their GPU, kernels with their
# launch configuration, NVTX ranges nested, each launch a flow from its
# API call.
if grep -q '^HAVE_CUPTI = 1' "$SRCDIR/config.mk" 2>/dev/null && [ -e "$BUILD/tests/cuda/fake-app" ]; then
	(
		. "$SRCDIR/tests/cuda/lib.sh"
		need_cuda_fakes
		record app.data -- "$CUDA_DIR/fake-app" --nvtx-more --pinned
		export_all app.data app fake-app
		run_gtrace report -i app.data --gpu >app.gpu
		for format in $FORMATS; do
			sum=app.$format.sum
			expect_contains "$sum" '^args vector_add .*block\.x=256,.*grid\.x=4096,.*occupancy\.permille=1000,.*regs=24,'
			# Enumerations by the names report --gpu gives them; a copy's
			# GB/s, report --gpu's for the kind's one speed.
			expect_contains "$sum" '^args vector_add .*occupancy\.limiter=warps,'
			expect_contains "$sum" '^args matmul.*occupancy\.limiter=registers,'
			gbps=$(awk '$NF == "DtoD" && $(NF - 3) == $(NF - 1) { print $(NF - 3) + 0 }' app.gpu)
			expect_contains "$sum" "^args \\[CUDA memcpy DtoD\\] GB/s=${gbps:-none}(\\.0)?,bytes=4000000,.*copy\\.kind=DtoD,"
			expect_contains "$sum" '^args \[CUDA memcpy HtoD\] .*copy\.kind=HtoD,'
			# The memory each copy reads and writes, as CUPTI says: the
			# inputs from a static (pageable) buffer, the outputs into
			# cuMemAllocHost's pinned one.
			expect_contains "$sum" '^args \[CUDA memcpy HtoD\] .*copy\.dst=device,copy\.kind=HtoD,copy\.src=pageable,'
			expect_contains "$sum" '^args \[CUDA memcpy DtoH\] .*copy\.dst=pinned,copy\.kind=DtoH,copy\.src=device,'
			expect_contains "$sum" '^args \[CUDA memcpy DtoD\] .*copy\.dst=device,copy\.kind=DtoD,copy\.src=device,'
			expect_contains "$sum" '^args cuLaunchKernel api\.domain=driver,'
			# Each launch's flow starts in the API call that queued it,
			# at the kernel's start minus its queue delay.
			expect_contains "$sum" '^queue-flows api [1-9]'
			expect_contains "$sum" '^queue-flows bad 0$'
			expect_contains "$sum" '^queue-flows thread 0$'
			expect_contains "$sum" '^args epoch nvtx\.depth=0,nvtx\.kind=push-pop,'
			expect_contains "$sum" '^args checkpoint nvtx\.kind=start-end,'
			# epoch holds the two steps.
			nvtx=$(awk '$1 == "track" && $4 == "NVTX" && NF == 4 { print $2; exit }' "$sum")
			[ -n "$nvtx" ] || { show "$sum"; fail "no NVTX track for fake-app"; }
			[ "$(fact "$sum" depth "$nvtx")" -ge 2 ] ||
				{ show "$sum"; fail "the NVTX ranges do not nest"; }
			# Under the thread that opened them, the main one.
			[ "$(fact "$sum" under "$nvtx")" = "$(awk '$3 == "fake-app" { print $1; exit }' app.threads)" ] ||
				{ show "$sum"; fail "the NVTX track is not under the main thread"; }
			# report --gpu's kernel count, on the stream lanes.
			kernels=$(sed -n 's/^# CUDA kernels: \([0-9]*\) instances.*/\1/p' app.gpu)
			got=$(awk '$1 == "track" && $4 ~ /^GPU0$/ && $5 == "stream" { want[$2] = 1 }
				$1 == "slices" && ($2 in want) { n += $3 } END { print n + 0 }' "$sum")
			# The streams also hold 4 copies and a memset.
			[ "$got" -eq $((kernels + 5)) ] ||
				{ show "$sum"; fail "$got slices on the streams, report --gpu has $kernels kernels + 5 copies"; }
			expect_contains "$sum" 'été'
			# A busy row for the GPU: the union of its streams' spans,
			# its slices apart, each stream span inside one.
			set -- $(fact "$sum" busy 0)
			[ $# -eq 5 ] && [ "$1" -gt 0 ] && [ "$2" -eq "$3" ] && [ "$4" -eq 0 ] &&
				[ "$5" -eq 0 ] ||
				{ show "$sum"; fail "'$sum': GPU 0's busy row is '$*', not the union of its streams"; }
		done
		# Perfetto groups the streams under their GPU, in their process,
		# its busy row among them, first.
		pid=$(awk '$3 == "fake-app" { print $1; exit }' app.threads)
		expect_contains app.perfetto.sum "^group GPU 0 $pid\$"
		expect_contains app.perfetto.sum "^grouped GPU 0 busy GPU 0\$"
		# Each stream's queue length, the same in both formats, back to
		# 0 after its last work.
		grep '^queue ' app.perfetto.sum >app.perfetto.queues
		grep '^queue ' app.chrome.sum >app.chrome.queues
		streams=$(awk '$1 == "track" && $4 == "GPU0" && $5 == "stream" && NF == 6' app.chrome.sum | wc -l)
		expect_lines app.perfetto.queues "$streams"
		cmp -s app.perfetto.queues app.chrome.queues ||
			{ show app.perfetto.queues; show app.chrome.queues; fail "the formats' queue lengths differ"; }
		expect_not_contains app.chrome.queues ' [1-9][0-9]* GPU0 stream [0-9]+ queue$'
		# tests/cuda/idle-app --queue 4 launches 4 kernels of 10 ms
		# back to back: its stream's queue goes 1, 2, 3, 4, then down to 0.
		record queue.data -- "$CUDA_DIR/idle-app" --queue 4
		for format in $FORMATS; do
			run_gtrace export -i queue.data --format $format -o queue.$format
			summarise queue.$format
			expect_contains queue.$format.sum '^queue 8 4 0 GPU0 stream [0-9]+ queue$'
		done

		# Three threads launching at once: each one's API calls and
		# waits on tracks under it, none of another thread's.
		record launchers.data -- "$CUDA_DIR/fake-app" --threads 3
		export_all launchers.data launchers fake-app
		for format in $FORMATS; do
			sum=launchers.$format.sum
			awk '$1 == "track" && $3 == "lane" { name = $0; sub(/^track [0-9]+ lane /, "", name)
			     sub(/ #[0-9]+$/, "", name); lane[$2] = name }
			     $1 == "under" { under[$2] = $3 }
			     $1 == "callers" && (lane[$2] == "CUDA API" || lane[$2] == "CPU wait") {
				if (!($2 in under)) { print "track " $2 " (" lane[$2] ") is under no thread"; bad = 1 }
				else if ($3 != under[$2]) { print "track " $2 " under " under[$2] " has calls of " $3; bad = 1 }
				else if (lane[$2] == "CUDA API") api[$3] = 1 }
			     END { for (t in api) n++; if (n < 4) { print n + 0 " threads with CUDA API tracks"; bad = 1 }
				   exit bad }' "$sum" >launchers.$format.bad ||
				{ show "$sum"; show launchers.$format.bad; fail "'$sum': API calls not by thread"; }
		done
	) || exit 1
else
	echo "SKIP (part): the CUDA test doubles are not built"
fi

# The window: only what meets it, and every sample in it.
sum=threads.perfetto.sum
first=$(awk '$1 == "sample-range" { print $2 }' $sum)
last=$(awk '$1 == "sample-range" { print $3 }' $sum)
from=$(((first * 3 + last) / 4))
to=$(((first + last * 3) / 4))
summarise threads.perfetto "$from" "$to"
want=$(awk '$1 == "window-samples" { print $2 }' threads.perfetto.sum)
for format in $FORMATS; do
	run_gtrace export -i threads.data --format $format --start "$from" --end "${to}ns" -o cut.$format
	summarise cut.$format
	got=$(awk '$1 == "samples" { n += $3 } END { print n + 0 }' cut.$format.sum)
	[ "$got" -eq "$want" ] && [ "$got" -gt 0 ] ||
		{ show cut.$format.sum; fail "--start $from --end $to: $got samples, $want in the window"; }
	awk -v from="$from" -v to="$to" '
		$1 == "sample-range" && ($2 < from || $3 >= to) { bad = 1 }
		$1 == "slice-range" && ($2 <= from || $3 >= to) { bad = 1 }
		END { exit bad }' cut.$format.sum ||
		{ show cut.$format.sum; fail "--start $from --end $to: events outside the window"; }
done

# stdout, and the default file name.
for format in $FORMATS; do
	run_gtrace export -i threads.data --format $format -o - >stdout.$format
	cmp -s stdout.$format threads.$format || fail "export -o - differs from the file ($format)"
done
run_gtrace export -i threads.data
[ -s gtrace.pftrace ] || fail "export wrote no gtrace.pftrace"
expect_contains stderr "^gtrace: wrote 'gtrace.pftrace'; open it in https://ui.perfetto.dev\$"
cmp -s gtrace.pftrace threads.perfetto || fail "export's default format is not perfetto"
run_gtrace export -i threads.data --format chrome
[ -s gtrace.json ] || fail "export --format chrome wrote no gtrace.json"

# A window past the end, an output that cannot be made.
expect_exit 1 "$GTRACE" export -i threads.data --start 1000s
expect_contains stderr "^gtrace: no events after 1000s in 'threads.data'"
expect_lines stderr 1
for format in $FORMATS; do
	expect_exit 1 "$GTRACE" export -i threads.data --format $format -o no/such/dir/x
	expect_contains stderr "^gtrace: cannot create 'no/such/dir/x': No such file or directory"
	expect_lines stderr 1
done

# A truncated recording: what was read, and a warning. Long enough for
# several chunks of rows (the recorder ends one every second).
record long.data -- "$WORKLOADS/hot" 2.5
# A CPU-bound thread in Chrome JSON: its samples, as speedscope and
# catapult read them from "samples", walk through stackFrames' parents to
# main (hot spends its time in main -> run_workload -> compute_outer ->
# hot_leaf).
run_gtrace export -i long.data --format chrome -o long.chrome
summarise long.chrome
awk '$1 == "folded" && $2 ~ /^hot;/ { all += $3; if ($2 ~ /;main;run_workload;compute_outer/) main += $3 }
	END { exit !(all > 0 && main * 10 >= all * 9) }' long.chrome.sum ||
	{ show long.chrome.sum; fail "long.chrome: hot's samples do not walk to main"; }
cut_in_last_chunk long.data cut.data
for format in $FORMATS; do
	run_gtrace export -i cut.data --format $format -o cut-file.$format
	expect_contains stderr "warning: 'cut.data' is truncated"
	summarise cut-file.$format
	expect_contains cut-file.$format.sum '^samples [0-9]+ [1-9]'
done
exit 0
