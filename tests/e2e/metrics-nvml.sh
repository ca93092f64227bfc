# SPDX-License-Identifier: MIT
# GPU metrics end to end, on the NVML test double
# (tests/metrics/fake-nvml.c, loaded through GTRACE_NVML and scripted
# through FAKE_NVML): gtrace record --metrics-interval 10ms of a workload
# keeps the scripted readings as gpu.* series of each GPU, in the units of
# gtrace-format(5); a quantity the GPU does not support has no series, one
# failing for a while no value at those ticks; a GPU lost mid-run has its
# series stop there and diagnose's metrics-nvml says so; and when NVML is
# missing, fails to start or lists no GPU, the recording goes on with the
# sys.* and proc.* series and diagnose says why NVML is off. The series
# are read back with tests/metrics/metrics-dump (see its header for the
# lines it prints), each value as stored, and through gtrace report
# --metrics.
. "$SRCDIR/tests/e2e/lib.sh"

metrics_dir=$BUILD/tests/metrics
fake=$metrics_dir/libnvidia-ml.so.1
dump=$metrics_dir/metrics-dump
for file in "$fake" "$metrics_dir/old-names/libnvidia-ml.so.1" "$dump"; do
	[ -e "$file" ] || fail "the metrics test tools are not built ($file): run make tests"
done
need_perf_events
unset FAKE_NVML FAKE_NVML_LOG

# record_metrics NAME LIBRARY SCRIPT: records the hot workload into
# NAME.data with NVML from LIBRARY scripted by SCRIPT, reading the metrics
# every 10 ms; NAME.dump: the series, NAME.diag: diagnose.
record_metrics() {
	GTRACE_NVML=$2 FAKE_NVML=$3 FAKE_NVML_LOG=$TESTDIR/$1.log
	export GTRACE_NVML FAKE_NVML FAKE_NVML_LOG
	record "$1.data" --metrics-interval 10ms -- "$WORKLOADS/hot" 0.5
	unset GTRACE_NVML FAKE_NVML FAKE_NVML_LOG
	"$dump" "$1.data" >"$1.dump" || fail "metrics-dump cannot read '$1.data'"
	run_gtrace diagnose -i "$1.data" >"$1.diag"
}

# series DUMP NAME GPU: the dump's line of that series (GPU -1: none), or
# nothing.
series() {
	awk -v name="$2" -v gpu="gpu=$3" '$1 == name && $2 == gpu { print; exit }' "$1"
}

# field DUMP NAME GPU KEY: the KEY= field of that series' line; "none" when
# there is no such series.
field() {
	line=$(series "$1" "$2" "$3")
	if [ -z "$line" ]; then
		echo none
		return
	fi
	printf '%s\n' "$line" | tr ' ' '\n' | sed -n "s/^$4=//p"
}

# expect_field DUMP NAME GPU KEY VALUE: that field is VALUE.
expect_field() {
	got=$(field "$1" "$2" "$3" "$4")
	[ "$got" = "$5" ] || { show "$1"; fail "$2 of GPU $3: $4 is '$got', expected '$5'"; }
}

# expect_series DUMP NAME GPU / expect_no_series: the series is there
# with values, or not at all.
expect_series() {
	n=$(field "$1" "$2" "$3" n)
	[ "$n" != none ] && [ "$n" -ge 1 ] || { show "$1"; fail "no values of $2 of GPU $3"; }
}

expect_no_series() {
	[ -z "$(series "$1" "$2" "$3")" ] || { show "$1"; fail "$2 of GPU $3 has a series"; }
}

# values DATA NAME GPU: that series' values, one line, space-separated.
values() {
	"$dump" "$1" "$2" "$3" | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 } END { print "" }'
}

# expect_nvml DIAG ERE: diagnose's metrics-nvml sentence matches ERE.
expect_nvml() {
	expect_contains "$1" "^(metrics-nvml|GPU metrics): +$2"
}

# expect_cpu_metrics DUMP: the machine's and the workload's series are there.
expect_cpu_metrics() {
	for name in sys.cpu.user sys.cpu.idle sys.mem.used sys.mem.available; do
		expect_series "$1" "$name" -1
	done
	for name in proc.cpu.user proc.rss proc.threads; do
		awk -v name="$name" '$1 == name && $3 != "pid=0" && $5 != "n=0" { found = 1 }
			END { exit !found }' "$1" || { show "$1"; fail "no $name series of the workload"; }
	done
}

# Two GPUs: GPU 0 with every quantity but PCIe, GPU 1 without power either,
# lost after its 10th reading.
record_metrics two "$fake" "gpus=2; sm=10,20,30,40; sm@1=55,66,77; memutil=5;
	mem_used_mib=1024; mem_total_mib=16384; power_mw=70500; temp=61; clock_sm=1410;
	clock_mem=1215; throttle=0x4; notsup=pcie; notsup@1=pcie,power; lost_after@1=10"

# (a) The scripted utilization of each GPU, in order, the last repeating.
ticks=$(field two.dump gpu.sm.util 0 n)
at_least "GPU 0's readings" "$ticks" 20
sm0=$(values two.data gpu.sm.util 0)
case "$sm0 " in
"10 20 30 40 40 "*) ;;
*) fail "gpu.sm.util of GPU 0 is '$sm0', expected 10 20 30 40 then 40s" ;;
esac
expect_field two.dump gpu.sm.util 0 last 40
expect_field two.dump gpu.sm.util 0 unit %
sm1=$(values two.data gpu.sm.util 1)
case "$sm1 " in
"55 66 77 77 "*) ;;
*) fail "gpu.sm.util of GPU 1 is '$sm1', expected 55 66 77 then 77s" ;;
esac
expect_field two.dump gpu.sm.util 1 max 77
# The other quantities in gtrace-format(5)'s units, every tick.
expect_field two.dump gpu.mem.util 0 max 5
expect_field two.dump gpu.mem.used 0 max 1048576
expect_field two.dump gpu.mem.used 0 unit KiB
expect_field two.dump gpu.mem.total 0 max 16777216
expect_field two.dump gpu.power 0 max 70.500
expect_field two.dump gpu.power 0 unit W
expect_field two.dump gpu.temp 0 max 61
expect_field two.dump gpu.clock.sm 0 max 1410
expect_field two.dump gpu.clock.mem 0 max 1215
expect_field two.dump gpu.throttle 0 max 4
for name in gpu.mem.util gpu.mem.used gpu.mem.total gpu.power gpu.temp gpu.clock.sm \
	gpu.clock.mem gpu.throttle; do
	expect_field two.dump "$name" 0 n "$ticks"
done

# (b) Quantities not supported: no series at all.
for gpu in 0 1; do
	expect_no_series two.dump gpu.pcie.rx "$gpu"
	expect_no_series two.dump gpu.pcie.tx "$gpu"
done
expect_no_series two.dump gpu.power 1
expect_series two.dump gpu.temp 1

# (c) GPU 1 lost at its 11th reading: each of its series ends at its 10th
# value, while GPU 0's go on; diagnose says which GPU was lost.
for name in gpu.sm.util gpu.mem.used gpu.temp gpu.clock.sm gpu.throttle; do
	expect_field two.dump "$name" 1 n 10
done
awk -v a="$(field two.dump gpu.sm.util 1 t1)" -v b="$(field two.dump gpu.sm.util 0 t1)" \
	'BEGIN { exit !(a + 0 < b + 0) }' || { show two.dump; fail "GPU 1's series do not stop early"; }
expect_nvml two.diag 'on: 2 GPUs'
expect_nvml two.diag '.*GPU ?1 lost'
expect_not_contains two.diag '^(metrics-nvml|GPU metrics): .*GPU ?0 lost'
expect_cpu_metrics two.dump
# NVML started once and was shut down at the end.
printf 'nvmlInit_v2 0\nnvmlShutdown 0\n' >want.log
cmp -s two.log want.log || { show two.log; fail "NVML was not started and shut down once"; }

# The same through gtrace report --metrics, as JSON: per GPU, the series
# there and their values.
run_gtrace report -i two.data --metrics --format json >two.json
python3 - two.json "$ticks" <<'PY' || fail "report --metrics --format json differs (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
ticks = int(sys.argv[2])
gpu = {}
for s in d["series"]:
    if s["name"].startswith("gpu."):
        assert s["pid"] is None, s
        gpu[(s["gpu"], s["name"])] = s
quantities = {"gpu.sm.util", "gpu.mem.util", "gpu.mem.used", "gpu.mem.total", "gpu.power",
              "gpu.temp", "gpu.clock.sm", "gpu.clock.mem", "gpu.throttle"}
assert {n for g, n in gpu if g == 0} == quantities, sorted(gpu)
assert {n for g, n in gpu if g == 1} == quantities - {"gpu.power"}, sorted(gpu)
assert all(s["values"] == ticks for (g, n), s in gpu.items() if g == 0), gpu
assert all(s["values"] == 10 for (g, n), s in gpu.items() if g == 1), gpu
sm0, sm1 = gpu[(0, "gpu.sm.util")], gpu[(1, "gpu.sm.util")]
assert (sm0["unit"], sm0["min"], sm0["max"]) == ("%", 10, 40), sm0
assert (sm1["min"], sm1["max"]) == (55, 77), sm1
assert gpu[(0, "gpu.power")]["max"] == 70.5, gpu[(0, "gpu.power")]
assert gpu[(0, "gpu.mem.used")]["max"] == 1048576, gpu[(0, "gpu.mem.used")]
PY

# A quantity failing for a while: no value at those ticks, the series
# going on after them (and the clock event reasons under their old name).
record_metrics old "$metrics_dir/old-names/libnvidia-ml.so.1" "sm=10,x,x,30; throttle=0x8"
sm=$(values old.data gpu.sm.util 0)
case "$sm " in
"10 30 30 "*) ;;
*) fail "gpu.sm.util is '$sm', expected 10 then 30s (two failed readings left out)" ;;
esac
expect_field old.dump gpu.sm.util 0 n $(($(field old.dump gpu.temp 0 n) - 2))
expect_field old.dump gpu.throttle 0 max 8
expect_nvml old.diag 'on: 1 GPU$'

# (d) No NVML library: the recording goes on without GPU series.
record_metrics missing "$TESTDIR/no-such-dir/libnvidia-ml.so.1" ""
expect_nvml missing.diag "off: .*no-such-dir/libnvidia-ml\\.so\\.1"
expect_not_contains missing.dump '^gpu\.'
expect_cpu_metrics missing.dump
run_gtrace report -i missing.data --metrics >missing.txt
expect_contains missing.txt '^ +sys\.cpu\.user '
expect_contains missing.txt '^ +proc\.rss '
expect_not_contains missing.txt '^ +gpu\.|^GPU'

# (e) NVML refusing to start, or listing no GPU: likewise, with why.
record_metrics refused "$fake" "init=fail"
expect_nvml refused.diag 'off: .*(start|nvmlInit)'
expect_not_contains refused.dump '^gpu\.'
expect_cpu_metrics refused.dump
printf 'nvmlInit_v2 9\n' >want.log
cmp -s refused.log want.log || { show refused.log; fail "NVML was shut down though it never started"; }

record_metrics none "$fake" "gpus=0"
expect_nvml none.diag 'off: .*no GPU'
expect_not_contains none.dump '^gpu\.'
expect_cpu_metrics none.dump
