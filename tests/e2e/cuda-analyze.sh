# SPDX-License-Identifier: MIT
# gtrace analyze on the test doubles: tests/cuda/idle-app keeps the fake
# GPU idle for known causes, phase by phase (see its header). Each cause's
# share must be within 5 points of what the construction gives, counted
# from the recording's own kernels (a loaded machine stretches the phases,
# and its preemptions are host time): the gaps of the host-bound phase are
# host idle, those of the synchronizing phase synchronization, and the
# gaps between tiny kernels launched back to back launch overhead, and
# those of a stream made to wait for another device's work dependency. The
# function the host idle names first must be host_prepare.
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
# The first function of the host idle table is host_prepare.
awk '/^host idle by function/ { on = 1; next } on && /FUNCTION/ { getline; print $3; exit }' \
	host.txt >top.txt
[ "$(cat top.txt)" = host_prepare ] || { show host.txt; fail "host_prepare does not lead the host idle"; }

record tiny.data -- "$CUDA_DIR/idle-app" --tiny 5000
run_gtrace analyze -i tiny.data --format json >tiny.json
run_gtrace export -i tiny.data --format chrome -o tiny-trace.json

FAKE_CUDA_DEVICES=2 record dep.data -- "$CUDA_DIR/idle-app" --streams 3
run_gtrace analyze -i dep.data --device 0 --format json >dep.json
run_gtrace export -i dep.data --format chrome -o dep-trace.json

python3 - host.json host-trace.json tiny.json tiny-trace.json dep.json dep-trace.json <<'PY' ||
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
(step,) = [k for k in host["launch"] if k["name"] == "step"]
# The fake starts a kernel on an idle stream 2 us after its launch call
# began (the agent's API span starts a little earlier), and 1 ms later
# behind a running one: most wait for nothing else.
assert step["count"] == 20 and 2000 <= step["median_queue_ns"] < 1000000, step
assert step["short"] == 0, step

# Tiny kernels back to back: each gap is launch overhead where the two launch
# calls came less than 10 us apart (the construction), host where the loaded
# machine took the thread away between them. A recorder too slow for the
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
    back_to_back = sum(b[0] - a[1] for a, b, ca, cb in zip(kernels, kernels[1:], own, own[1:])
                       if cb[0] - ca[1] < 10)
    near("launch", share(dev, "launch"), 100.0 * back_to_back / sum(gaps(kernels)))
else:
    print(f"launch: not checked, {len(kernels) - len(calls)} launch calls dropped")
(k,) = tiny["launch"]
assert k["name"] == "tiny" and k["count"] == 5000 and k["short"] == 5000, k
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
