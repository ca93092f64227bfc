# SPDX-License-Identifier: MIT
# gtrace analyze on the test doubles: tests/cuda/idle-app keeps the fake
# GPU idle for known causes, phase by phase (see its header). Each cause's
# share must be within 5 points of what the construction gives, counted
# from the recording's own kernels (a loaded machine stretches the phases,
# and its preemptions are host time): the gaps of the host-bound phase are
# host idle, those of the synchronizing phase synchronization, and the
# gaps between tiny kernels launched back to back launch overhead, and
# those of a stream made to wait for another device's work dependency. The
# function the host idle names first must be host_prepare. flame --weight
# gpu-idle weighs the same samples by the same idle: its folded stacks add
# up to analyze's sampled host idle, nearly all under host_prepare; on a
# recording with no GPU work it fails with one line, and where the GPU
# never waited on the host it is empty.
#
# Then the findings: each phase of idle-app that makes one (its header)
# must give its rule, with the phase's function at the top of the rule's
# first stack and its time at stake within 5 points of the construction
# (the fake's rates for GPU time, the recording's own calls for the calls'
# time, which a loaded machine stretches); and a clean phase none at all.
# In diff, each finding the rules recording adds to the clean one is a
# regression (--fail exits 3), and a recording against itself has none.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
[ -e "$CUDA_DIR/idle-app" ] || fail "the CUDA test doubles are not built ($CUDA_DIR/idle-app): run make tests"
need_perf_events
need_python3

record host.data -- "$CUDA_DIR/idle-app" --host 10 --sync 10
run_gtrace analyze -i host.data >host.txt
run_gtrace analyze -i host.data --format json >host.json
run_gtrace export -i host.data --format chrome -o host-trace.json
# The first function of the host idle table is host_prepare; without the
# kernel's frames, which a loaded machine's preemptions in it put first.
run_gtrace analyze -i host.data --no-kernel >host-user.txt
awk '/^host idle by function/ { on = 1; next } on && /FUNCTION/ { getline; print $3; exit }' \
	host-user.txt >top.txt
[ "$(cat top.txt)" = host_prepare ] || { show host-user.txt; fail "host_prepare does not lead the host idle"; }
run_gtrace flame -i host.data --weight gpu-idle --folded >idle.folded
run_gtrace flame -i host.data --weight gpu-idle --device 0 --svg idle.svg
expect_contains idle.svg '<title>host_prepare \([0-9.]+ ms, [0-9]+ samples, '

record none.data -- "$CUDA_DIR/idle-app"
expect_exit 1 "$GTRACE" flame -i none.data --weight gpu-idle --folded
expect_lines "$TESTDIR/stderr" 1
expect_contains "$TESTDIR/stderr" "^gtrace: --weight gpu-idle: no GPU work in 'none.data'$"
expect_lines "$TESTDIR/stdout" 0
# A GPU that only ever waited on synchronization: an empty graph, said.
record sync.data -- "$CUDA_DIR/idle-app" --sync 3
expect_exit 0 "$GTRACE" flame -i sync.data --weight gpu-idle --folded
expect_lines "$TESTDIR/stdout" 0
expect_contains "$TESTDIR/stderr" "^gtrace: no host-caused GPU idle covered by samples of the selected threads in 'sync.data'$"

record tiny.data -- "$CUDA_DIR/idle-app" --tiny 5000
run_gtrace analyze -i tiny.data --format json >tiny.json
run_gtrace export -i tiny.data --format chrome -o tiny-trace.json

record rules.data -- "$CUDA_DIR/idle-app" --sync-copy 20 --pageable 50 --alloc 40 \
	--tiny-copy 300 --occupancy 10
run_gtrace analyze -i rules.data --format json >rules.json
run_gtrace analyze -i rules.data >rules.txt
run_gtrace export -i rules.data --format chrome -o rules-trace.json
record clean.data -- "$CUDA_DIR/idle-app" --clean 20
run_gtrace analyze -i clean.data --format json >clean.json
run_gtrace analyze -i clean.data >clean.txt
grep -q '^findings: none$' clean.txt || { show clean.txt; fail "a clean program has findings"; }

FAKE_CUDA_DEVICES=2 record dep.data -- "$CUDA_DIR/idle-app" --streams 3
run_gtrace analyze -i dep.data --device 0 --format json >dep.json
run_gtrace export -i dep.data --format chrome -o dep-trace.json

python3 - host.json host-trace.json tiny.json tiny-trace.json dep.json dep-trace.json idle.folded <<'PY' ||
import bisect, json, sys

def load(path):
    with open(path) as f:
        return json.load(f)

def slices(trace, name):
    ev = trace["traceEvents"] if isinstance(trace, dict) else trace
    return sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                  if e.get("name") == name and e.get("ph") == "X" and e.get("dur", 0) > 0)

def gaps(kernels):
    return [b[0] - a[1] for a, b in zip(kernels, kernels[1:])]

def share(device, cause):
    return 100.0 * device["idle_causes"][cause] / device["idle_ns"]

def near(what, got, want):
    print(f"{what}: {got:.1f}% (construction {want:.1f}%)")
    assert abs(got - want) <= 5, f"{what} is {got:.1f}%, not within 5 points of {want:.1f}%"

host, tiny = load(sys.argv[1]), load(sys.argv[3])
(dev,) = host["devices"]
assert sum(dev["idle_causes"].values()) == dev["idle_ns"], dev
# 10 host-bound steps, then 10 synchronized ones: the 9 gaps between the
# first 10 kernels are host's, the 9 between the last 10 synchronization's.
steps = slices(load(sys.argv[2]), "step")
assert len(steps) == 20, steps
g = gaps(steps)
host_us, sync_us = sum(g[:9]), sum(g[10:])
near("host", share(dev, "host"), 100.0 * host_us / (host_us + sync_us))
near("synchronization", share(dev, "synchronization"), 100.0 * sync_us / (host_us + sync_us))
assert dev["host_stacks"] and "host_prepare" in dev["host_stacks"][0]["frames"], dev["host_stacks"][:3]
# The synchronizing calls' stacks: their origins' samples, in sync_bound.
assert dev["sync_stacks"] and "sync_bound" in dev["sync_stacks"][0]["frames"], dev["sync_stacks"][:3]
# flame --weight gpu-idle: the host idle charged to samples, to the ns,
# nearly all of it in host_bound's loop, and most in host_prepare (the gaps
# fall inside its 3 ms; a loaded machine may take the thread away in the
# launch call that ends one, and the sample there covers the idle until the
# thread is back).
with open(sys.argv[7]) as f:
    folded = [line.rsplit(" ", 1) for line in f.read().splitlines()]
idle_total = sum(int(ns) for _, ns in folded)
in_loop = sum(int(ns) for stack, ns in folded if ";host_bound;" in stack)
in_prepare = sum(int(ns) for stack, ns in folded if ";host_bound;host_prepare" in stack)
sampled = dev["idle_causes"]["host"] - dev["host_unsampled_ns"]
assert idle_total == sampled and sampled > 0, (idle_total, sampled)
assert in_loop >= 0.95 * idle_total, (in_loop, idle_total, folded)
assert in_prepare >= 0.5 * idle_total, (in_prepare, idle_total, folded)
(step,) = [k for k in host["launch"] if k["name"] == "step"]
# The fake starts a kernel on an idle stream 2 us after its launch call
# began (the agent's API span starts a little earlier), and 1 ms later
# behind a running one: most wait for nothing else.
assert step["count"] == 20 and 2000 <= step["median_queue_ns"] < 1000000, step
assert step["short"] == 0, step

# Tiny kernels back to back: each gap is launch overhead where the two launch
# calls came less than 10 us apart (the construction), host where the loaded
# machine took the thread away between them, but for the part after the
# next call began: a thread taken away inside that call (between the
# agent's span start and the fake's queueing) delays its kernel, which is
# launch latency. A recorder too slow for the
# burst drops spans (diagnose counts them): without every call, the
# construction cannot be read back, and the share is not checked.
(dev,) = tiny["devices"]
trace = load(sys.argv[4])
kernels = slices(trace, "tiny")
calls = slices(trace, "cuLaunchKernel")
assert len(kernels) == 5000, len(kernels)
if len(calls) >= len(kernels):
    # Each kernel's call is the last one started before it.
    starts = [c[0] for c in calls]
    own = [calls[bisect.bisect_right(starts, k[0]) - 1] for k in kernels]
    def launch_part(a, b, ca, cb):
        return b[0] - a[1] if cb[0] - ca[1] < 10 else max(0, b[0] - max(cb[0], a[1]))
    launch = sum(launch_part(*four) for four in zip(kernels, kernels[1:], own, own[1:]))
    near("launch", share(dev, "launch"), 100.0 * launch / sum(gaps(kernels)))
else:
    print(f"launch: not checked, {len(kernels) - len(calls)} launch calls dropped")
(k,) = tiny["launch"]
assert k["name"] == "tiny" and k["count"] == 5000 and k["short"] == 5000, k
# The launch rate: the 5000 kernels over the device's wall time, from the
# first's start to the last's end.
assert dev["launches"] == 5000, dev["launches"]
wall_ms = (kernels[-1][1] - kernels[0][0]) / 1e3
assert abs(dev["launches_per_ms"] - 5000 / wall_ms) <= 0.01 * 5000 / wall_ms, \
    (dev["launches_per_ms"], 5000 / wall_ms)
assert k["short_frames"] and "tiny_kernels" in k["short_frames"], k

# Device 0 alone: each step on stream B queued behind device 1's work, the
# 3 gaps before them dependency; the 2 between the steps, after each
# synchronization, not.
dep = load(sys.argv[5])
(dev,) = dep["devices"]
assert dev["device"] == 0, dev
steps = slices(load(sys.argv[6]), "step")
assert len(steps) == 6, steps
g = gaps(steps)
near("dependency", share(dev, "dependency"), 100.0 * sum(g[0::2]) / sum(g))
PY
	{ show host.txt; fail "analyze's causes are not the construction's (see above)"; }

python3 - rules.json rules-trace.json host.json tiny.json tiny-trace.json clean.json \
	host-trace.json <<'PY' ||
import json, sys

def load(path):
    with open(path) as f:
        return json.load(f)

def calls(trace, name, cat="cuda-api"):
    ev = trace["traceEvents"] if isinstance(trace, dict) else trace
    return sorted((e["ts"], e["dur"] * 1000) for e in ev
                  if e.get("name") == name and e.get("ph") == "X" and e.get("cat") == cat)

# export annotates the timeline with analyze's findings: an instant each on
# the recording's track, by rule, with its sentence and time at stake.
rules, trace = load(sys.argv[1]), load(sys.argv[2])
annotations = sorted((e["name"], e["args"]["message"], e["args"]["ns"])
                     for e in trace["traceEvents"] if e.get("cat") == "analyze")
want = sorted((f["rule"], f["message"], f["ns"]) for f in rules["findings"])
assert annotations == want and want, (annotations, want)
assert all(e.get("ph") == "i" and e.get("pid") == 0 for e in trace["traceEvents"]
           if e.get("cat") == "analyze")

def finding(doc, rule, function):
    by_rule = {f["rule"]: f for f in doc["findings"]}
    assert rule in by_rule, f"no {rule} finding: {sorted(by_rule)}"
    f = by_rule[rule]
    assert f["message"] and f["ns"] > 0, f
    if function:
        assert f["stacks"] and f["stacks"][0]["frames"][-1] == function, (rule, f["stacks"][:2])
    return f

def near(rule, got, want):
    share = 100.0 * got / want
    print(f"{rule}: {got / 1e6:.3f} ms, {share:.1f}% of the construction's {want / 1e6:.3f} ms")
    assert abs(share - 100) <= 5, f"{rule} is {share:.1f}% of the construction"

rules, trace = load(sys.argv[1]), load(sys.argv[2])
ns = [f["ns"] for f in rules["findings"]]
assert ns == sorted(ns, reverse=True), ns
# Each phase makes enough calls that one a loaded machine places by a
# sample of the phase before or after (one that ran no sample around it)
# moves its rule's time by less than the 5 points.
# 20 synchronous copies of 4 MiB at 10 bytes a ns: the calls block that
# long, and longer where the loaded machine took the thread away.
copy_ns = (4 << 20) / 10
sync = calls(trace, "cuMemcpyHtoD_v2")
assert len(sync) == 20 and min(d for _, d in sync) >= copy_ns, sync
near("sync-copy", finding(rules, "sync-copy", "sync_copies")["ns"], sum(d for _, d in sync))
near("pageable-copy", finding(rules, "pageable-copy", "pageable_copies")["ns"], 50 * copy_ns)
# The calls' own time: 40 allocations and frees in the loop (main's first and last aside).
allocs = sorted(calls(trace, "cuMemAlloc_v2") + calls(trace, "cuMemFree_v2"))[1:-1]
assert len(allocs) == 80, len(allocs)
near("alloc-in-loop", finding(rules, "alloc-in-loop", "alloc_loop")["ns"], sum(d for _, d in allocs))
# The 300 asynchronous copies after the 50 pageable ones.
tiny = calls(trace, "cuMemcpyHtoDAsync_v2")[50:]
assert len(tiny) == 300, len(tiny)
near("tiny-copies", finding(rules, "tiny-copies", "tiny_copies")["ns"], sum(d for _, d in tiny))
occ = finding(rules, "low-occupancy", None)
(k,) = occ["kernels"]
assert k["name"] == "wide" and k["count"] == 10 and k["limiter"] == "registers", k
assert k["occupancy_permille"] == 125, k
near("low-occupancy", occ["ns"], 10 * 1000000)

# 10 synchronized steps of 1 ms: the waits, with main's last, which finds
# the GPU idle and may link to the loop's last sample. The first wait, where
# no sample was taken in it, is nearest host_bound's last sample, and goes
# to sync_bound, where the sample after it is and the other waits were seen.
# With 11 calls, one is 9 points: a loaded machine may place either of the
# two at the ends by a sample of the phase before or after (CI runs did,
# each end once), so the construction is the calls with or without it.
host = load(sys.argv[3])
waits = calls(load(sys.argv[7]), "cuCtxSynchronize", "cuda-wait")
assert len(waits) == 11, waits
got = finding(host, "sync-in-loop", "sync_bound")["ns"]
total = sum(d for _, d in waits)
total = min((total, total - waits[0][1], total - waits[-1][1]), key=lambda t: abs(got - t))
near("sync-in-loop", got, total)
# Host idle and synchronization idle about even: the stacks are the leading cause's.
(dev,) = host["devices"]
host_led = dev["idle_causes"]["host"] >= dev["idle_causes"]["synchronization"]
idle = finding(host, "gpu-idle", "host_prepare" if host_led else None)
assert idle["ns"] == dev["idle_ns"], idle
assert host_led or "sync_bound" in idle["stacks"][0]["frames"], idle
# The phases of rules.data leave the GPU idle while the host runs them:
# the sentence names the function of the first stack, one of theirs.
idle = finding(rules, "gpu-idle", None)
top = idle["stacks"][0]["frames"][-1]
assert top in ("pageable_copies", "alloc_loop", "tiny_copies"), idle["stacks"][:2]
assert "most of it host" in idle["message"] and top in idle["message"], idle

tiny = load(sys.argv[4])
launches = calls(load(sys.argv[5]), "cuLaunchKernel")
short = finding(tiny, "short-kernels", "tiny_kernels")
assert short["kernels"][0]["name"] == "tiny" and short["kernels"][0]["count"] == 5000, short
if len(launches) == 5000:
    near("short-kernels", short["ns"], sum(d for _, d in launches))

clean = load(sys.argv[6])
assert clean["findings"] == [], clean["findings"]
PY
	{ show rules.txt; fail "analyze's findings are not the construction's (see above)"; }

expect_exit 3 "$GTRACE" diff --by findings --fail --format json clean.data rules.data
mv "$TESTDIR/stdout" diff.json
expect_exit 0 "$GTRACE" diff --by findings --fail rules.data rules.data
python3 - diff.json <<'PY' || fail "diff does not show the new findings as regressions"
import json, sys

with open(sys.argv[1]) as f:
    rows = json.load(f)["rows"]
status = {(r["kind"], r["where"], r["name"]): r["status"] for r in rows}
for rule in ("sync-copy", "pageable-copy", "alloc-in-loop", "tiny-copies", "low-occupancy"):
    assert status.get(("rule", "", rule)) == "regression", (rule, status)
assert status.get(("rule", "GPU 0", "gpu-idle")) == "regression", status
assert status.get(("idle", "GPU 0", "host idle")) == "regression", status
PY
