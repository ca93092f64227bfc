# SPDX-License-Identifier: MIT
# gtrace analyze's critical path on the test doubles: tests/cuda/idle-app
# runs phases whose path is known by construction (see its header), each
# measured back from the recording's own calls and kernels, as a loaded
# machine stretches them:
#   --host: the thread's host_prepare between launch calls, the kernels
#     running meanwhile off the path, but the last;
#   --sync: each step, then after_sync between the synchronizing call's
#     return and the next launch, but after the last step;
#   --tiny: launch calls back to back, each kernel done before the next
#     call: the calls;
#   --streams on device 0: each step on stream B waits for device 1's
#     remote: remote, on another device, leads device 0's path.
# Each time the top item must be the construction's, its share within 5
# points of it, and the items must add up to the wall time. Without kernel
# frames: on a loaded machine, the sample after a preemption is in the
# scheduler's.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
[ -e "$CUDA_DIR/idle-app" ] || fail "the CUDA test doubles are not built ($CUDA_DIR/idle-app): run make tests"
need_perf_events
need_python3

record host.data -- "$CUDA_DIR/idle-app" --host 30
record sync.data -- "$CUDA_DIR/idle-app" --sync 10
record tiny.data -- "$CUDA_DIR/idle-app" --tiny 5000
for phase in host sync tiny; do
	run_gtrace analyze -i $phase.data --no-kernel --format json >$phase.json
	run_gtrace export -i $phase.data --format chrome -o $phase-trace.json
done
run_gtrace analyze -i host.data --no-kernel >host.txt
FAKE_CUDA_DEVICES=2 record dep.data -- "$CUDA_DIR/idle-app" --streams 3
run_gtrace analyze -i dep.data --no-kernel --device 0 --format json >dep.json
run_gtrace export -i dep.data --format chrome -o dep-trace.json

# The text's section: its title, then host_prepare first.
awk '/^critical path: / { on = 1; next } on && /KIND/ { getline; print $3, $4; exit }' \
	host.txt >top.txt
[ "$(cat top.txt)" = "cpu host_prepare" ] || { show host.txt; fail "host_prepare does not lead the critical path"; }

python3 - <<'PY' || { show host.txt; fail "the critical path is not the construction's (see above)"; }
import json

def load(path):
    with open(path) as f:
        return json.load(f)

def slices(trace, name):
    # A call shows on its thread and on its lane: each once.
    ev = trace["traceEvents"] if isinstance(trace, dict) else trace
    return sorted({(e["ts"], e["ts"] + e["dur"]) for e in ev
                   if e.get("name") == name and e.get("ph") == "X" and e.get("dur", 0) > 0})

def calls(trace):
    ev = trace["traceEvents"] if isinstance(trace, dict) else trace
    return sorted({(e["ts"], e["ts"] + e.get("dur", 0)) for e in ev
                   if e.get("ph") == "X" and e.get("cat") == "cuda-api"})

def path(phase):
    (dev,) = load(phase + ".json")["devices"]
    cp = dev["critical_path"]
    total = sum(i["ns"] for i in cp["items"])
    assert total == cp["wall_ns"], f"{phase}: the items add up to {total}, not {cp['wall_ns']}"
    return cp

def check(phase, cp, rank, kind, name, want_us):
    """The item of kind and name, of that rank unless None, against want_us."""
    if rank is None:
        (item,) = [i for i in cp["items"] if (i["kind"], i["name"]) == (kind, name)]
    else:
        item = cp["items"][rank]
        assert (item["kind"], item["name"]) == (kind, name), f"{phase}: item {rank} is {item}"
    got = 100.0 * item["ns"] / cp["wall_ns"]
    want = 100.0 * want_us * 1000 / cp["wall_ns"]
    print(f"{phase}: {kind} {name} {got:.1f}% of {cp['wall_ns'] / 1e6:.3f} ms "
          f"(construction {want:.1f}%)")
    assert abs(got - want) <= 5, f"{phase}: {name} is {got:.1f}%, not within 5 points of {want:.1f}%"

# host_prepare runs from the call before each launch call to its start,
# and leads. The thread's own work holds the path before these too, from
# the path's start (the process's first event) to its first CUDA call,
# which a loaded machine stretches. It may also preempt the thread in the
# return from a launch call, after its span ended, or in main before the
# loop: the sample after that names launch_block, host_bound or main for
# part of a stretch. The thread's functions together hold the
# construction's share.
trace = load("host-trace.json")
every = calls(trace)
launches = slices(trace, "cuLaunchKernel")
assert len(launches) == 30, launches
host = sum(l[0] - max(c[1] for c in every if c[1] <= l[0]) for l in launches)
cp = path("host")
start = slices(trace, "step")[-1][1] - cp["wall_ns"] / 1000
host += max(0.0, every[0][0] - start)
assert (cp["items"][0]["kind"], cp["items"][0]["name"]) == ("cpu", "host_prepare"), cp["items"][:3]
loop = [i for i in cp["items"] if i["kind"] == "cpu"]
got = 100.0 * sum(i["ns"] for i in loop) / cp["wall_ns"]
want = 100.0 * host * 1000 / cp["wall_ns"]
print(f"host: host_prepare {100.0 * cp['items'][0]['ns'] / cp['wall_ns']:.1f}%, "
      f"with the thread's other functions {got:.1f}% of {cp['wall_ns'] / 1e6:.3f} ms "
      f"(construction {want:.1f}%)")
assert abs(got - want) <= 5, f"host: the thread is {got:.1f}%, not within 5 points of {want:.1f}%"

# The thread's own work runs from its first event to the first launch call
# (but the calls), then from each synchronizing call's return to the next
# launch: after_sync, most of it. A preempted thread's time goes to the
# samples of its stretch, and on a loaded machine one may fall where the
# thread came back, in the return from the synchronizing call, named by
# sync_bound: after_sync must lead the others, and the thread's time is
# checked whole.
trace = load("sync-trace.json")
launches = slices(trace, "cuLaunchKernel")
syncs = slices(trace, "cuCtxSynchronize")
steps = slices(trace, "step")
assert len(launches) == 10 and len(steps) == 10 and len(syncs) == 11, (launches, syncs)
cp = path("sync")
first = steps[-1][1] - cp["wall_ns"] / 1000
before = launches[0][0] - first - sum(e - s for s, e in calls(trace) if e <= launches[0][0])
after = sum(l[0] - s[1] for s, l in zip(syncs, launches[1:]))
cpu = [i for i in cp["items"] if i["kind"] in ("cpu", "off-cpu")]
assert [i for i in cpu if i["name"] != "sync_bound"][0]["name"] == "after_sync", cpu[:3]
got = 100.0 * sum(i["ns"] for i in cpu) / cp["wall_ns"]
want = 100.0 * (before + after) * 1000 / cp["wall_ns"]
print(f"sync: the thread's work {got:.1f}% (construction {want:.1f}%)")
assert abs(got - want) <= 5, f"sync: the thread's work is {got:.1f}%, not within 5 points of {want:.1f}%"
check("sync", cp, None, "kernel", "step", sum(e - s for s, e in steps))

# Each tiny kernel ended before the next call: the calls are on the path,
# beside the start-up. A recorder too slow for the burst drops spans
# (diagnose counts them): then the construction cannot be read back.
trace = load("tiny-trace.json")
launches = slices(trace, "cuLaunchKernel")
cp = path("tiny")
if len(launches) == 5000:
    check("tiny", cp, None, "api", "cuLaunchKernel", sum(e - s for s, e in launches))
else:
    print(f"tiny: not checked, {5000 - len(launches)} launch calls dropped")

# Device 0's path runs through device 1's remote kernels.
trace = load("dep-trace.json")
remote = slices(trace, "remote")
assert len(remote) == 3, remote
(dev,) = load("dep.json")["devices"]
cp = dev["critical_path"]
assert dev["device"] == 0 and sum(i["ns"] for i in cp["items"]) == cp["wall_ns"], cp
check("streams", cp, 0, "kernel", "remote", sum(e - s for s, e in remote))
PY
