#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What libgtrace-target costs the application thread that reports: bench/
# target-span.c, linked with the static library, run alone (reporting off)
# and under gtrace record (reporting on). Goals: gtrace_reporting_active()
# about 1 ns when off; gtrace_span() a median of at most 50 ns while
# recording. Each set-up runs REPEAT (default 3) times; every run is shown.
#
# usage: bench/target-span.sh   (REPEAT=3 BATCHES=20000 BUILD=build)

. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
BATCHES=${BATCHES:-20000}
bench=$WORK/target-span
compile_bench "$bench" bench/target-span.c libgtrace-target.a -lpthread include

echo "reporting off:"
say "target-span --batches $BATCHES"
for round in $(seq "$REPEAT"); do
	"$bench" --batches "$BATCHES" | sed "s/^/  round $round: /"
done

echo "reporting on:"
say "$GTRACE record -q -o OUT -- target-span --wait-active 10 --batches $BATCHES"
for round in $(seq "$REPEAT"); do
	"$GTRACE" record -q -o "$WORK/out.data" -- "$bench" --wait-active 10 --batches "$BATCHES" |
		sed "s/^/  round $round: /"
done
