#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What the metrics cost (issue 12): a shell and PROCS-1 sleeping children
# (1, 50, 200), recorded for SECONDS (5) with the metrics read every 100 ms;
# for each, the reading thread's CPU per reading and as a share of one CPU,
# and the bytes a value takes in the file, encoded and compressed (from
# gtrace diagnose). Then the same with one process and two GPUs of the NVML
# test double, whose readings move like a busy GPU's, for the GPU series.
# The GPU Flight seed's rows are about 20 bytes (host: CPU %, RAM used and
# total) and 30 bytes (device): compare a reading of the machine's or a
# GPU's 11 values.
#
# usage: bench/metrics.sh   (SECONDS=5 PROCS="1 50 200")

. "$(dirname "$0")/lib.sh"

RUN=${RUN_SECONDS:-5}
PROCS=${PROCS:-1 50 200}
FAKE_NVML_LIB=$BUILD/tests/metrics/libnvidia-ml.so.1

# figures FILE: "ticks cpu-ns values encoded compressed processes" from diagnose.
figures() {
	"$GTRACE" diagnose -i "$1" --format json | python3 -c 'import json, sys
d = json.load(sys.stdin); c = d["counters"]; m = d["metrics"]
print(c["metrics.ticks"], c["metrics.cpu-ns"], m["values"], m["encoded_bytes"],
      m["compressed_bytes"], c["metrics.processes"])'
}

# row LABEL FILE: one line of the table.
row() {
	# shellcheck disable=SC2046 # six numbers
	set -- "$1" $(figures "$2")
	awk -v l="$1" -v t="$2" -v ns="$3" -v v="$4" -v e="$5" -v z="$6" -v p="$7" -v s="$RUN" '
		BEGIN { printf "%-22s %6d %7d %10.1f %8.2f %8d %9.2f %11.2f\n", l, p, t, ns / t / 1e3,
			ns / (s * 1e9) * 100, v, e / v, z / v }'
}

printf '%-22s %6s %7s %10s %8s %8s %9s %11s\n' setup procs ticks us/tick %CPU values B/value B/value-zst
for n in $PROCS; do
	cmd="i=1; while [ \$i -lt $n ]; do sleep $RUN & i=\$((i + 1)); done; sleep $RUN; wait"
	say "$GTRACE record -q -o $WORK/p$n.data -- sh -c '$cmd'"
	"$GTRACE" record -q -o "$WORK/p$n.data" -- sh -c "$cmd"
	row "$n processes" "$WORK/p$n.data"
done

if [ -e "$FAKE_NVML_LIB" ]; then
	# Utilization, power, clocks and PCIe moving every reading, as on a busy GPU.
	script="gpus=2;sm=97,88,100,92,75,99;memutil=40,55,38,61;power_mw=301250,288400,312900,296100"
	script="$script;temp=61,62,62,63;clock_sm=1980,1965,1980,1755;pcie_rx=51200,48100,150000,900"
	script="$script;pcie_tx=2100,1900,35000,800;mem_used_mib=40100,40180,40230;throttle=0,0,4,0"
	say "GTRACE_NVML=$FAKE_NVML_LIB FAKE_NVML='$script' $GTRACE record -q -o $WORK/gpu.data -- sleep $RUN"
	GTRACE_NVML=$FAKE_NVML_LIB FAKE_NVML=$script "$GTRACE" record -q -o "$WORK/gpu.data" -- sleep "$RUN"
	row "1 process, 2 GPUs" "$WORK/gpu.data"
	"$GTRACE" report -i "$WORK/gpu.data" --metrics | grep -E '^(machine|GPU[0-9]|pid)' | sort | uniq -c
else
	echo "note: no NVML test double at '$FAKE_NVML_LIB' (make tests): no GPU row" >&2
fi
