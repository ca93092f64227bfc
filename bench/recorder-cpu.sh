#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What the recorder itself spends per sample (issue 11): attached with -p
# for SECONDS (5) to recurse, a CPU-bound program of DEPTH (30) frames, at
# each of FREQS (999 4999), the recorder's own user and system time (GNU
# time on the recorder alone) over the samples it wrote; the same for
# perf record -p with -g (frame pointers) and with --call-graph dwarf,
# over the samples in its perf.data. The target runs without frame
# pointers for dwarf and with them for fp. For gtrace also what diagnose
# shows: its CPU while recording, less the time it spent naming addresses,
# over the samples.
#
# usage: bench/recorder-cpu.sh   (SECONDS=5 DEPTH=30 FREQS="999 4999" BUILD=build)

. "$(dirname "$0")/lib.sh"

RUN=${RUN_SECONDS:-5}
DEPTH=${DEPTH:-30}
FREQS=${FREQS:-999 4999}
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }

# attach NAME TARGET CMD...: runs TARGET, then CMD (with PID replaced by
# TARGET's pid) under GNU time for the run; the target ends with it.
attach() {
	local name=$1 target=$2
	shift 2
	"$WORKLOADS/$target" "$DEPTH" $((RUN + 3)) &
	time_attached "$name" $! "$@"
}

# recording_us FILE: diagnose's recorder CPU while recording per sample, in us.
recording_us() {
	"$GTRACE" diagnose -i "$1" | sed -n 's/^recorder CPU:.*, \([0-9.]*\) us per sample$/\1/p'
}

printf '%-12s %6s %9s %12s %14s %14s\n' setup Hz samples recorder-s us/sample recording-us
for freq in $FREQS; do
	for mode in dwarf fp; do
		target=recurse-nofp
		[ $mode = fp ] && target=recurse
		say "$GTRACE record -q -F $freq --call-graph $mode -p PID --duration $RUN"
		attach "g-$mode-$freq" $target "$GTRACE" record -q -F "$freq" --call-graph $mode \
			-o "$WORK/g.data" -p PID --duration "$RUN"
		n=$(gtrace_samples "$WORK/g.data")
		printf '%-12s %6s %9s %12.3f %14.2f %14s\n' "gtrace-$mode" "$freq" "$n" \
			"$(cpu_of "g-$mode-$freq")" "$(awk -v c="$(cpu_of "g-$mode-$freq")" -v n="$n" \
			'BEGIN { print n ? c * 1e6 / n : 0 }')" "$(recording_us "$WORK/g.data")"
		if command -v "$PERF" >/dev/null; then
			opt=-g
			[ $mode = dwarf ] && opt=--call-graph=dwarf
			attach "p-$mode-$freq" $target "$PERF" record -q -F "$freq" $opt \
				-o "$WORK/p.data" -p PID -- sleep "$RUN"
			n=$(perf_samples "$WORK/p.data")
			printf '%-12s %6s %9s %12.3f %14.2f\n' "perf-$mode" "$freq" "$n" \
				"$(cpu_of "p-$mode-$freq")" "$(awk -v c="$(cpu_of "p-$mode-$freq")" -v n="$n" \
				'BEGIN { print n ? c * 1e6 / n : 0 }')"
		fi
	done
done
