# SPDX-License-Identifier: MIT
# NVTX ranges as real programs make them, on the test doubles. With a
# second libcupti loaded before the agent's (a PyTorch wheel has its own),
# the ranges still reach the agent, which hands NVTX to the copy it
# subscribed to. A range opened before cuInit is recorded. Wide-string,
# registered-string and domain ranges keep their names, and each domain
# nests its push/pop ranges apart (fake-app --nvtx-more).
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events
second=$CUDA_DIR/second/libcupti.so.13
[ -e "$second" ] || fail "the second fake CUPTI is not built ($second): run make tests"

# nvtx_report DATA OUT: report of the NVTX lane of recording DATA, into OUT.
nvtx_report() {
	run_gtrace threads -i "$1" >"$2.threads"
	lane=$(awk '$2 ~ /^0xfff/ && $3 == "nvtx" { print $2 }' "$2.threads")
	[ -n "$lane" ] || { show "$2.threads"; fail "'$1' has no NVTX lane"; }
	run_gtrace report -i "$1" --tid "$lane" >"$2"
}

# The program's own CUPTI comes first (preloaded ahead of the agent, in
# the program only): the agent uses that copy, and so must NVTX.
record two.data -- sh -c 'LD_PRELOAD="$0:$LD_PRELOAD" exec "$1"' "$second" "$CUDA_DIR/fake-app"
run_gtrace diagnose -i two.data >two.diag
expect_contains two.diag '^cuda\.status: +active$'
run_gtrace threads -i two.data >two.threads
expect_lane two.threads cuda "GPU0 stream 13" 15
expect_lane two.threads nvtx NVTX 4	# epoch, 2 x step, checkpoint

record more.data -- "$CUDA_DIR/fake-app" --nvtx-early --nvtx-more
run_gtrace threads -i more.data >more.threads
expect_lane more.threads nvtx NVTX 13	# 4 + before init + 8 of --nvtx-more
nvtx_report more.data more.txt
expect_row more.txt '  before init' ' 1 '
expect_row more.txt '  wide push été' ' 1 '
expect_row more.txt '  wide start' ' 1 '
expect_row more.txt '  alpha outer' ' 1 '
expect_row more.txt '  beta registered' ' 1 '
expect_row more.txt '  beta wide' ' 1 '
expect_row more.txt '  beta start' ' 1 '
# (Avg, then Min, in us.) Both hold 4 ms of CPU when a pop in one domain
# closes that domain's range; one stack for all would close another's.
expect_row more.txt '  alpha registered' ' 1 +[0-9.]+ +([4-9][0-9]{3}|[0-9]{5,})\.'
expect_row more.txt '  default inner' ' 1 +[0-9.]+ +([4-9][0-9]{3}|[0-9]{5,})\.'
expect_not_contains more.txt 'wide mark|unregistered|unnamed'

exit 0
