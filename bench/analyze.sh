#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What gtrace analyze costs on a big recording: KERNELS (default 100,000)
# kernels, each with its launch call, and 10 samples of the launching
# thread per kernel (1,000,000 by default), 20 frames deep, made by
# tests/hostile/view-recordings launches. Its wall time and peak memory
# (text and JSON), against gtrace threads on the same file, which loads
# the model and prints a few lines: the difference is what analyzing adds.
# The issue's aim: under a second for the analysis.
#
# usage: bench/analyze.sh   (KERNELS=100000 BUILD=build)

. "$(dirname "$0")/lib.sh"

KERNELS=${KERNELS:-100000}
MAKER=$BUILD/tests/hostile/view-recordings
[ -x "$MAKER" ] || { echo "bench: no '$MAKER': run make tests first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }
# The synthetic file compresses far better than a recording: read it whole.
export GTRACE_READ_LIMIT=8G

data=$WORK/launches.data
say "$MAKER launches launches.data $KERNELS"
"$MAKER" launches "$data" "$KERNELS"
echo "launches.data: $(file_size "$data") bytes, $KERNELS kernels, $((KERNELS * 10)) samples"
cat "$data" >/dev/null

for cmd in "threads" "analyze" "analyze --format json"; do
	name=${cmd// /-}
	say "/usr/bin/time -v $GTRACE $cmd -i launches.data >/dev/null"
	# shellcheck disable=SC2086 # the command's words
	timed "$name" "$GTRACE" $cmd -i "$data"
	read -r wall rss <"$WORK/$name.result"
	printf '  %-22s %6.2f s  %6.0f MiB peak RSS\n' "$cmd" "$wall" "$((rss / 1024))"
done
read -r base _ <"$WORK/threads.result"
read -r full _ <"$WORK/analyze.result"
awk -v b="$base" -v f="$full" 'BEGIN { printf "analyze adds %.2f s to loading (%.2fx threads)\n", f - b, (b > 0 ? f / b : 0) }'
