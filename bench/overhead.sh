#!/bin/bash
# SPDX-License-Identifier: MIT
#
# How much a recorder slows its target down, and how big its file gets.
# The target is hot-nofp (no frame pointers) doing a fixed amount of work,
# about TARGET_SECONDS (default 5) alone; it reports its own run time. Each
# set-up runs REPEAT (default 3) times, interleaved; medians are shown.
#
#   target    the target's own run time, and its slowdown over no recorder
#   total     the whole command, with the recorder's start and finish
#   bytes/sample  the file's size over the samples in it
#
# gtrace-nosw is gtrace without the samples of each context switch out
# (--no-switch-stacks), which give report --off-cpu the stack a thread
# went off the CPU in: the difference is their cost.
#
# Then the threads workload (four threads that sleep and spin, for
# TARGET_SECONDS) recorded by gtrace (and gtrace --no-switch-stacks) and
# perf --call-graph dwarf once each: its file's bytes per sample, where
# off-CPU intervals cost as much as the samples on a machine with fewer
# CPUs than threads, and the whole command's time.
#
# usage: bench/overhead.sh   (FREQ=999 REPEAT=3 TARGET_SECONDS=5 BUILD=build)

. "$(dirname "$0")/lib.sh"
need_perf

FREQ=${FREQ:-999}
REPEAT=${REPEAT:-3}
TARGET_SECONDS=${TARGET_SECONDS:-5}
target=$WORKLOADS/hot-nofp

# Calibrate the fixed work to the time asked for.
"$target" --loops 500 2>"$WORK/calibrate"
loops=$(awk -v s="$TARGET_SECONDS" '/^hot: / { print int(500 * s / $(NF - 1)) }' "$WORK/calibrate")
workload="$target --loops $loops"

setups=(none perf-fp perf-dwarf gtrace gtrace-nosw)
# command SETUP OUT: the command line of a set-up writing to OUT.
command_of() {
	case $1 in
	none) echo "$workload" ;;
	perf-fp) echo "$PERF record -q -F $FREQ -g -o $2 -- $workload" ;;
	perf-dwarf) echo "$PERF record -q -F $FREQ --call-graph dwarf -o $2 -- $workload" ;;
	gtrace) echo "$GTRACE record -q -F $FREQ -o $2 -- $workload" ;;
	gtrace-nosw) echo "$GTRACE record -q -F $FREQ --no-switch-stacks -o $2 -- $workload" ;;
	esac
}

echo "commands (OUT is a scratch file):"
for setup in "${setups[@]}"; do
	say "$(command_of "$setup" OUT)"
done
echo "$REPEAT rounds of the ${#setups[@]} set-ups, interleaved, on $(nproc) CPUs"

for round in $(seq "$REPEAT"); do
	for setup in "${setups[@]}"; do
		out=$WORK/$setup.data
		rm -f "$out"
		start=$(now)
		# shellcheck disable=SC2091 # runs the command line, split into words
		$(command_of "$setup" "$out") 2>"$WORK/stderr" >/dev/null ||
			{ cat "$WORK/stderr" >&2; echo "bench: $setup failed" >&2; exit 1; }
		end=$(now)
		target_s=$(awk '/^hot: / { print $(NF - 1) }' "$WORK/stderr")
		echo "$setup $target_s $(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" >>"$WORK/times"
		echo "  round $round: $setup: target ${target_s} s"
	done
done

# Sizes and sample counts from the last round's files.
printf '\n%-11s %9s %9s %9s %9s %11s %13s\n' setup target-s slowdown total-s samples bytes bytes/sample
base=$(awk '$1 == "none" { print $2 }' "$WORK/times" | median)
for setup in "${setups[@]}"; do
	target_s=$(awk -v s="$setup" '$1 == s { print $2 }' "$WORK/times" | median)
	total_s=$(awk -v s="$setup" '$1 == s { print $3 }' "$WORK/times" | median)
	out=$WORK/$setup.data
	case $setup in
	none) samples=- bytes=- ;;
	perf-*) samples=$(perf_samples "$out") bytes=$(file_size "$out") ;;
	gtrace*) samples=$(gtrace_samples "$out") bytes=$(file_size "$out") ;;
	esac
	awk -v s="$setup" -v t="$target_s" -v b="$base" -v tot="$total_s" -v n="$samples" -v sz="$bytes" 'BEGIN {
		per = (n + 0 > 0) ? sprintf("%.1f", sz / n) : "-"
		printf "%-11s %9.3f %8.3fx %9.3f %9s %11s %13s\n", s, t, t / b, tot, n, sz, per }'
done

threads="$WORKLOADS/threads $TARGET_SECONDS"
# threads_command SETUP OUT: the command line recording the threads workload to OUT.
threads_command() {
	case $1 in
	gtrace) echo "$GTRACE record -q -F $FREQ -o $2 -- $threads" ;;
	gtrace-nosw) echo "$GTRACE record -q -F $FREQ --no-switch-stacks -o $2 -- $threads" ;;
	perf-dwarf) echo "$PERF record -q -F $FREQ --call-graph dwarf -o $2 -- $threads" ;;
	esac
}
for setup in gtrace gtrace-nosw perf-dwarf; do
	say "$(threads_command "$setup" OUT)"
	start=$(now)
	# shellcheck disable=SC2091 # runs the command line, split into words
	$(threads_command "$setup" "$WORK/threads.$setup") >/dev/null 2>&1 ||
		{ echo "bench: $setup's record of the threads workload failed" >&2; exit 1; }
	awk -v a="$start" -v b="$(now)" 'BEGIN { print b - a }' >"$WORK/threads.$setup.s"
done
printf '\n%-11s %9s %9s %11s %13s\n' threads total-s samples bytes bytes/sample
for setup in gtrace gtrace-nosw perf-dwarf; do
	out=$WORK/threads.$setup
	case $setup in
	gtrace*) samples=$(gtrace_samples "$out") ;;
	perf-dwarf) samples=$(perf_samples "$out") ;;
	esac
	awk -v s="$setup" -v t="$(cat "$out.s")" -v n="$samples" -v sz="$(file_size "$out")" 'BEGIN {
		printf "%-11s %9.3f %9s %11s %13.1f\n", s, t, n, sz, (n > 0 ? sz / n : 0) }'
done
