# SPDX-License-Identifier: MIT
# At a high rate through rings too small to keep up (-m), the kernel drops
# samples, and every one it drops is counted: diagnose's lost records are
# the sum of the kernel's reports, each listed with its CPU and thread,
# and the samples kept plus those lost come to what the threads' time on
# the CPU at that rate makes; the warning asks for a larger -m. By default
# a ring is sized to the rate.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

run_gtrace record -o small.data -F 20000 -m 16 -- "$WORKLOADS/recurse-nofp" 30 1 4 >/dev/null
# The rings -m made too small for the rate: the warning says so, and a -m
# that holds 50 ms of 20 kHz samples with their 16 KiB stack copies.
expect_contains stderr '^gtrace: warning: the kernel dropped [0-9]+ records .*: rings of 64 KiB hold less than 50 ms at -F 20000; try a larger -m, such as -m 32M$'
run_gtrace diagnose -i small.data >small.txt
run_gtrace diagnose -i small.data --format json >small.json
run_gtrace threads -i small.data --format json >threads.json
expect_contains small.txt '^ring-size: +65536$'
expect_contains small.txt '^ +[0-9]+ ending at [0-9.]+ s on CPU [0-9]+, with thread [0-9]+ \(recurse-nofp\)$'

python3 - <<'PY' || fail "lost samples are not all counted (see above)"
import json
d = json.load(open("small.json"))
t = json.load(open("threads.json"))
lost = d["counters"]["lost"]
kept = d["recorded"]["samples"]
reported = sum(r["count"] for r in d["losses"])
assert lost > 0, "nothing lost through 64 KiB rings at 20 kHz"
assert lost == reported, f"lost counter {lost} against {reported} in the reports"
assert all(r["tid"] in [th["tid"] for th in t["threads"]] for r in d["losses"]), d["losses"]
oncpu_s = sum(th["oncpu_ms"] for th in t["threads"]) / 1000
expected = oncpu_s * 20000
print(f"kept {kept}, lost {lost}, expected about {expected:.0f} "
      f"from {oncpu_s:.3f} s on the CPU; throttled {d['counters'].get('throttled', 0)}")
# The kernel's throttling lowers the rate: what it skips is never a sample.
if d["counters"].get("throttled", 0) == 0:
    assert kept + lost >= 0.85 * expected, "samples went missing uncounted"
assert kept + lost <= 1.05 * expected, "more samples than the time allows"
PY

# 50 ms of 10 kHz samples with a 16 KiB stack copy: 8 MiB.
record sized.data -F 10000 -- "$WORKLOADS/recurse-nofp" 30 0.5 4
run_gtrace diagnose -i sized.data >sized.txt
expect_contains sized.txt '^ring-size: +8388608$'
