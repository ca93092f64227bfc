# SPDX-License-Identifier: MIT
# Kernel regions end to end on the test doubles: tests/cuda/kr-app, a CUDA
# program on the fake driver that reports its kernels' regions through
# libgtrace-target while the CUDA agent, with its own copy of the library,
# records its kernels. Each of the first 16 blocks' lanes holds its regions;
# every region lies inside a run of the kernel that produced it; the counts
# are exact; the two copies of the library do not mix their names.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events
[ -x "$CUDA_DIR/kr-app" ] || fail "kr-app is not built ($CUDA_DIR/kr-app): run make tests"

record kr.data -- "$CUDA_DIR/kr-app" --launches 10
run_gtrace threads -i kr.data >threads.txt
expect_lane threads.txt cuda "GPU0 stream 13" 10
# 16 of the 24 blocks get lanes, 3 groups each; 3 regions a launch.
[ "$(grep -c ' kernel-regions  *attn_fwd b[0-9]* g[0-2] ' threads.txt)" -eq 48 ] ||
	{ show threads.txt; fail "not 48 region lanes (16 blocks x 3 groups)"; }
expect_lane threads.txt kernel-regions "attn_fwd b0 g0" 30
expect_lane threads.txt kernel-regions "attn_fwd b15 g2" 30
expect_lane threads.txt kernel-region-stats "attn_fwd regions" 30
expect_not_contains threads.txt 'attn_fwd b16 '
# The agent's lanes keep their own names beside the program's.
expect_lane threads.txt cuda-api "CUDA API" 27

# 24 x 3 leaders x 7 events x 10 launches; 8 blocks x 3 groups x 10 past the cap.
run_gtrace diagnose -i kr.data >diag.txt
expect_contains diag.txt '^Kernel regions: +10 buffers collected, 5040 events decoded, 240 lanes capped; 48 region lanes, 1 summary lanes$'
expect_contains diag.txt '^KR overflows: +0 buffers overflowed, 0 events lost$'
expect_contains diag.txt '^KR mismatches: +0 unmatched begins or ends, 0 collisions$'
expect_contains diag.txt '^KR undecodable: +0 events, 0 buffers$'

# report --gpu: every block's regions, compute about 80% of the kernel.
run_gtrace report -i kr.data --gpu >gpu.txt
expect_contains gpu.txt '^# Kernel regions: 3 regions of 1 kernel, 10 collects$'
for region in load compute store; do
	expect_contains gpu.txt "^ +720( +[0-9.]+){4} +[0-9.]+% +[0-9.]+x +attn_fwd +$region\$"
done
awk '$NF == "compute" && $(NF - 1) == "attn_fwd" { sub(/%/, "", $6); ok = $6 >= 75 && $6 <= 85 }
	END { exit !ok }' \
	gpu.txt || { show gpu.txt; fail "compute is not about 80% of attn_fwd"; }

run_gtrace report -i kr.data --gpu --format json >gpu.json
python3 - gpu.json <<'PY' || fail "the kernel regions' JSON is not the table (see above)"
import json, sys
rows = json.load(open(sys.argv[1]))["kernel_regions"]
assert [(r["kernel"], r["region"], r["instances"]) for r in rows] == \
    [("attn_fwd", n, 720) for n in ("load", "compute", "store")], rows
assert all(set(r) == {"kernel", "region", "instances", "avg_us", "median_us", "min_us",
                      "max_us", "kernel_percent", "imbalance"} for r in rows), rows
assert 75 <= rows[1]["kernel_percent"] <= 85, rows[1]
PY

# flame: the regions under their kernel, in target time.
run_gtrace flame -i kr.data --folded --weight target >flame.txt
expect_contains flame.txt '^\[kernel\] attn_fwd;compute [0-9]+$'

# Every region inside a run of attn_fwd, on the timeline.
if command -v python3 >/dev/null; then
	run_gtrace export -i kr.data --format chrome -o kr.json
	python3 - kr.json <<'PY' || fail "a region lies outside every run of its kernel"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
         if e.get("ph") == "M" and e.get("name") == "thread_name"}
slices = [e for e in events if e.get("ph") == "X"]
runs = [(e["ts"], e["ts"] + e["dur"]) for e in slices
        if names.get((e["pid"], e["tid"])) == "GPU0 stream 13"]
regions = [(e["ts"], e["ts"] + e["dur"]) for e in slices
           if names.get((e["pid"], e["tid"]), "").startswith("attn_fwd b")]
assert len(runs) == 10 and len(regions) == 1440, (len(runs), len(regions))
outside = [r for r in regions if not any(b <= r[0] and r[1] <= e for b, e in runs)]
assert not outside, outside[:3]
PY
fi
