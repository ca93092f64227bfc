#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Two builds' recorders side by side (issue 24), for changes smaller than
# this machine's noise: ROUNDS (8) rounds, each attaching this build's
# gtrace, then GTRACE_BASE (required: the other build's gtrace), for
# RUN_SECONDS (8) to the same kind of target, so that both see the same
# noise. The target: recurse-nofp of DEPTH (30) frames, sampled at FREQ
# (4999) Hz with DWARF stacks, a new one each recording; or, with
# WORKLOAD=pytorch, the PyTorch training loop (bench/pytorch-train.py,
# python3-torch) at FREQ (999) Hz, one process for every recording.
# Prints each build's medians: diagnose's recorder CPU per sample while
# recording (us), the recorder's whole CPU (GNU time, s), and for the
# PyTorch loop the share of samples whose Python stack was read.
#
# usage: GTRACE_BASE=OTHER/gtrace bench/recorder-ab.sh
#        (ROUNDS=8 RUN_SECONDS=8 WORKLOAD=recurse|pytorch FREQ DEPTH=30 BUILD=build)

. "$(dirname "$0")/lib.sh"

BASE=${GTRACE_BASE:?bench: set GTRACE_BASE to the gtrace to compare with}
ROUNDS=${ROUNDS:-8}
RUN=${RUN_SECONDS:-8}
WORKLOAD=${WORKLOAD:-recurse}
DEPTH=${DEPTH:-30}
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }
[ -x "$BASE" ] || { echo "bench: no '$BASE' to compare with" >&2; exit 1; }
case $WORKLOAD in
recurse) FREQ=${FREQ:-4999} ;;
pytorch) FREQ=${FREQ:-999}
	"$PYTHON" -c 'import torch' 2>/dev/null ||
		{ echo "bench: no torch for $PYTHON: bench/pytorch.sh installs it" >&2; exit 1; } ;;
*) echo "bench: no workload '$WORKLOAD': recurse or pytorch" >&2; exit 1 ;;
esac

# target: starts the workload in the background, its pid in pid.
target() {
	if [ "$WORKLOAD" = recurse ]; then
		"$WORKLOADS/recurse-nofp" "$DEPTH" $((RUN + 2)) >/dev/null &
		pid=$!
		return
	fi
	start_training $((ROUNDS * 2 * (RUN + 2) + 30))
	pid=$TRAINING_PID
}

# record NAME GTRACE PID: one recording of PID by GTRACE; its figures to WORK/ab.
record() {
	local name=$1 gtrace=$2 pid=$3 us python
	/usr/bin/time -v -o "$WORK/$name.time" "$gtrace" record -q -F "$FREQ" --call-graph dwarf \
		-o "$WORK/ab.data" -p "$pid" --duration "$RUN" >/dev/null 2>"$WORK/$name.err" ||
		{ cat "$WORK/$name.err" >&2; echo "bench: $name's recording failed" >&2; exit 1; }
	"$gtrace" diagnose -i "$WORK/ab.data" >"$WORK/diagnose" 2>&1
	us=$(sed -n 's/^recorder CPU:.*, \([0-9.]*\) us per sample$/\1/p' "$WORK/diagnose")
	python=$(sed -n 's/^Python: .*(\([0-9.]*\)%).*/\1/p' "$WORK/diagnose")
	echo "$name ${us:-0} $(cpu_of "$name") ${python:--}" >>"$WORK/ab"
}

say "$GTRACE record -q -F $FREQ --call-graph dwarf -p PID --duration $RUN  ($WORKLOAD; against $BASE)"
[ "$WORKLOAD" = pytorch ] && target
for round in $(seq "$ROUNDS"); do
	for build in this base; do
		gtrace=$GTRACE
		[ $build = base ] && gtrace=$BASE
		[ "$WORKLOAD" = recurse ] && target
		record "$build" "$gtrace" "$pid"
		if [ "$WORKLOAD" = recurse ]; then
			wait "$pid" || true
		fi
	done
	echo "  round $round: $(tail -2 "$WORK/ab" | tr '\n' ' ')"
done
[ "$WORKLOAD" = pytorch ] && kill "$pid" 2>/dev/null

printf '\n%-6s %7s %15s %12s %10s\n' build rounds recording-us recorder-s python-%
for build in this base; do
	printf '%-6s %7s %15s %12s %10s\n' "$build" "$ROUNDS" \
		"$(awk -v b=$build '$1 == b { print $2 }' "$WORK/ab" | median)" \
		"$(awk -v b=$build '$1 == b { print $3 }' "$WORK/ab" | median)" \
		"$(awk -v b=$build '$1 == b && $4 != "-" { print $4 }' "$WORK/ab" | median)"
done
