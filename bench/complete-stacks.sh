#!/bin/bash
# SPDX-License-Identifier: MIT
#
# How many stacks come out whole from code built without frame pointers:
# the share of hot-nofp's samples whose unwound stack reaches main, for
# perf walking frame pointers (-g), perf with DWARF (--call-graph dwarf),
# and gtrace (DWARF, its default; and frame pointers, for comparison).
#
# usage: bench/complete-stacks.sh   (RUN_SECONDS=2 FREQ=999 BUILD=build)

. "$(dirname "$0")/lib.sh"
need_perf

FREQ=${FREQ:-999}
RUN_SECONDS=${RUN_SECONDS:-2}
workload="$WORKLOADS/hot-nofp $RUN_SECONDS"

# perf_complete FILE: "samples reaching-main" over hot-nofp's samples.
perf_complete() {
	"$PERF" script -i "$1" -F comm,ip,sym 2>/dev/null | awk '
		/^[^ \t]/ { mine = ($1 == "hot-nofp"); if (mine) all++; next }
		mine && $2 == "main" { whole++; mine = 0 }
		END { print all + 0, whole + 0 }'
}

# gtrace_complete FILE: the same from gtrace's folded stacks.
gtrace_complete() {
	"$GTRACE" flame -i "$1" --folded 2>/dev/null | awk '
		/^hot-nofp;/ { all += $NF; if (/;main;/) whole += $NF }
		END { print all + 0, whole + 0 }'
}

printf '%-13s %9s %12s %9s   %s\n' recorder samples "reach main" share command
for setup in perf-fp perf-dwarf gtrace gtrace-fp; do
	out=$WORK/$setup.data
	case $setup in
	perf-fp) cmd="$PERF record -q -F $FREQ -g -o $out -- $workload" ;;
	perf-dwarf) cmd="$PERF record -q -F $FREQ --call-graph dwarf -o $out -- $workload" ;;
	gtrace) cmd="$GTRACE record -q -F $FREQ -o $out -- $workload" ;;
	gtrace-fp) cmd="$GTRACE record -q -F $FREQ --call-graph fp -o $out -- $workload" ;;
	esac
	$cmd >/dev/null 2>"$WORK/stderr" ||
		{ cat "$WORK/stderr" >&2; echo "bench: $setup failed" >&2; exit 1; }
	case $setup in
	perf-*) read -r all whole < <(perf_complete "$out") ;;
	gtrace*) read -r all whole < <(gtrace_complete "$out") ;;
	esac
	awk -v s="$setup" -v a="$all" -v w="$whole" -v c="${cmd//$WORK\//}" 'BEGIN {
		printf "%-13s %9d %12d %8.1f%%   %s\n", s, a, w, a ? 100 * w / a : 0, c }'
done
