# SPDX-License-Identifier: MIT
# NVTX ranges as real programs make them, on the test doubles. With a
# second libcupti loaded before the agent's (a PyTorch wheel has its own),
# the ranges still reach the agent, which hands NVTX to the copy it
# subscribed to. A range opened before cuInit is recorded. Wide-string,
# registered-string and domain ranges keep their names, and each domain
# nests its push/pop ranges apart (fake-app --nvtx-more), on a lane of its
# own, "NVTX <domain>": in report, in flame, where two domains' ranges that
# overlap nest apart, the default domain's outermost, and in export, a
# track per domain under the thread that opened the ranges. Past the
# agent's 256 named domains, ranges go on one lane of unnamed domains.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events
second=$CUDA_DIR/second/libcupti.so.13
[ -e "$second" ] || fail "the second fake CUPTI is not built ($second): run make tests"

# nvtx_report DATA OUT: report of the NVTX lanes of recording DATA, into OUT.
nvtx_report() {
	run_gtrace threads -i "$1" >"$2.threads"
	lanes=$(awk '$2 ~ /^0xfff/ && $3 == "nvtx" { printf "%s%s", sep, $2; sep = "," }' "$2.threads")
	[ -n "$lanes" ] || { show "$2.threads"; fail "'$1' has no NVTX lane"; }
	run_gtrace report -i "$1" --tid "$lanes" >"$2"
}

# The program's own CUPTI comes first (preloaded ahead of the agent, in
# the program only): the agent uses that copy, and so must NVTX.
record two.data -- sh -c 'LD_PRELOAD="$0:$LD_PRELOAD" exec "$1"' "$second" "$CUDA_DIR/fake-app"
run_gtrace diagnose -i two.data >two.diag
expect_contains two.diag '^cuda\.status: +active$'
run_gtrace threads -i two.data >two.threads
expect_lane two.threads cuda "GPU0 stream 13" 15
expect_lane two.threads nvtx NVTX 4	# epoch, 2 x step, checkpoint
expect_not_contains two.threads ' nvtx +NVTX [^ ]'	# no domain but the default

record more.data -- "$CUDA_DIR/fake-app" --nvtx-early --nvtx-more
run_gtrace threads -i more.data >more.threads
# 4 + before init + wide push, wide start, default inner, default across
expect_lane more.threads nvtx NVTX 9
expect_lane more.threads nvtx 'NVTX alpha' 3	# outer, registered, across
expect_lane more.threads nvtx 'NVTX beta' 3	# registered, wide, start
nvtx_report more.data more.txt
expect_row more.txt '  before init' 'NVTX +before init$'
expect_row more.txt '  wide push été' ' 1 .*NVTX +wide push été$'
expect_row more.txt '  wide start' ' 1 .*NVTX +wide start$'
expect_row more.txt '  alpha outer' ' 1 .*NVTX alpha +alpha outer$'
expect_row more.txt '  beta registered' ' 1 .*NVTX beta +beta registered$'
expect_row more.txt '  beta wide' ' 1 .*NVTX beta +beta wide$'
expect_row more.txt '  beta start' ' 1 .*NVTX beta +beta start$'
# (Avg, then Min, in us.) Both hold 4 ms of CPU when a pop in one domain
# closes that domain's range; one stack for all would close another's.
expect_row more.txt '  alpha registered' ' 1 +[0-9.]+ +([4-9][0-9]{3}|[0-9]{5,})\..*NVTX alpha '
expect_row more.txt '  default inner' ' 1 +[0-9.]+ +([4-9][0-9]{3}|[0-9]{5,})\..*NVTX +default'
expect_not_contains more.txt 'wide mark|unregistered|unnamed'

# Flame: alpha's range opened first, yet the default domain's is outermost;
# each domain's frames are named after it.
run_gtrace flame -i more.data --folded >more.folded
expect_contains more.folded ';\[nvtx\] default across;\[nvtx alpha\] alpha across;'
expect_not_contains more.folded 'alpha across;\[nvtx\] default across'
expect_contains more.folded ';\[nvtx alpha\] alpha outer;\[nvtx alpha\] alpha registered;'

# Export: a track per domain under the main thread, in both formats.
main=$(awk '$3 == "fake-app" { print $1; exit }' more.threads)
for format in chrome perfetto; do
	run_gtrace export -i more.data --format "$format" -o "more.$format"
	python3 "$SRCDIR/tests/e2e/tracesum.py" "more.$format" >"more.$format.sum" ||
		fail "tracesum could not read 'more.$format'"
	for name in NVTX 'NVTX alpha' 'NVTX beta'; do
		track=$(awk -v name="$name" '$1 == "track" && $3 == "lane" {
			n = $4; for (i = 5; i <= NF; i++) n = n " " $i
			if (n == name) { print $2; exit } }' "more.$format.sum")
		[ -n "$track" ] || { show "more.$format.sum"; fail "$format: no track '$name'"; }
		expect_contains "more.$format.sum" "^under $track $main\$"
	done
	expect_not_contains "more.$format.sum" '^track .* NVTX.* #2$'
done

# The agent names 256 domains; the ranges of those made later share a lane.
record many.data -- "$CUDA_DIR/fake-app" --nvtx-domains 300
run_gtrace threads -i many.data >many.threads
expect_lane many.threads nvtx 'NVTX d0' 1
expect_lane many.threads nvtx 'NVTX d255' 1
expect_lane many.threads nvtx 'NVTX d256' -1
expect_lane many.threads nvtx 'NVTX [unnamed domain]' 44

exit 0
