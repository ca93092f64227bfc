# SPDX-License-Identifier: MIT
# Ranks on one clock. Two ranks of the CUDA doubles' collective loop
# (fake-app --collectives: rank 1 computes three times longer; the fake
# driver ends the ranks' collective kernels together, as NCCL's do) are
# recorded at once, then one is rewritten as another machine's would be
# (tests/ranks/retime): with its monotonic clock 1000 s off, its clock pairs
# put it back exactly; with its realtime 5 ms off (bad time sync), the pairs
# misplace it by those 5 ms and --align collectives takes them back, to
# within the doubles' jitter. report --ranks names rank 1 the straggler,
# and analyze's straggler-rank finding the collective time it cost rank 0.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"
need_cuda_fakes
need_perf_events
need_python3
retime=$BUILD/tests/ranks/retime
[ -x "$retime" ] || fail "the ranks test tools are not built ($retime): run make tests"

# The ranks meet in barrier/ before each step, as NCCL's wait for each other
# in each collective, so that their k-th collectives are one collective
# however late a loaded machine runs one of them.
mkdir job barrier
for rank in 0 1; do
	RANK=$rank WORLD_SIZE=2 FAKE_APP_SLOW_RANK=1 FAKE_APP_BARRIER=$TESTDIR/barrier \
		"$GTRACE" record -q -o 'job/g.%r.data' -- \
		"$CUDA_DIR/fake-app" --collectives 20 >rank$rank.out 2>&1 &
done
wait
for rank in 0 1; do
	[ -s job/g.$rank.data ] || { show rank$rank.out; fail "rank $rank wrote no recording"; }
done

# shift ALIGN FILES...: rank 1's shift, then its residual, from diagnose.
shift_of() {
	align=$1
	shift
	run_gtrace diagnose --align "$align" "$@" --format json >diag.json
	python3 -c 'import json
r = json.load(open("diag.json"))["ranks"][1]
print(r["shift_ns"], r["residual_ns"] if r["residual_ns"] is not None else -1)'
}

set -- $(shift_of clocks -i job/g.0.data -i job/g.1.data)
same_machine=$1
"$retime" job/g.1.data mono.data -1000000000000 monotonic || fail "retime failed"
set -- $(shift_of clocks -i job/g.0.data -i mono.data)
[ "$1" -eq $((same_machine + 1000000000000)) ] ||
	fail "a clock 1000 s behind was shifted by $1 ns, expected $((same_machine + 1000000000000))"

"$retime" job/g.1.data sync.data 5000000 realtime || fail "retime failed"
set -- $(shift_of clocks -i job/g.0.data -i sync.data)
[ "$1" -eq $((same_machine + 5000000)) ] ||
	fail "clock pairs 5 ms off shifted by $1 ns, expected $((same_machine + 5000000))"
set -- $(shift_of collectives -i job/g.0.data -i sync.data)
awk -v s="$1" -v want="$same_machine" -v r="$2" \
	'BEGIN { d = s - want; if (d < 0) d = -d; exit !(d <= 100000 && r >= 0 && r <= 100000) }' ||
	fail "--align collectives left rank 1 at $1 ns (residual $2), expected $same_machine within 100 us"

run_gtrace report --ranks -i job >ranks.txt
expect_contains ranks.txt '^ +1 .*straggler'

# analyze's straggler-rank finding names rank 1, and puts at stake the time
# rank 0's collective kernels ran past rank 1's: rank 0 waited in each.
run_gtrace analyze -i job --format json >analyze.json
for rank in 0 1; do
	run_gtrace export -i job/g.$rank.data --format chrome -o trace$rank.json
done
python3 - analyze.json trace0.json trace1.json <<'PY' || fail "analyze's straggler-rank finding is not the construction's (see above)"
import json, sys
doc = json.load(open(sys.argv[1]))
(f,) = [f for f in doc["findings"] if f["rule"] == "straggler-rank"]
def collectives(path):
    return sum(e["dur"] * 1000 for e in json.load(open(path))["traceEvents"]
               if e.get("ph") == "X" and e.get("name", "").startswith("ncclDevKernel"))
want = collectives(sys.argv[2]) - collectives(sys.argv[3])
print(f"straggler-rank: {f['ns']} ns at stake, construction {want:.0f} ns: {f['message']}")
assert f["message"].startswith("rank 1 "), f
assert want > 0 and abs(f["ns"] - want) <= 0.01 * want, (f["ns"], want)
PY
exit 0
