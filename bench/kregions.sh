#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What kernel regions cost the host and the file, without a GPU: bench/
# kr-submit.c fills buffers as a kernel of 16 blocks x 3 groups (3 regions
# each) leaves them and hands each to gtrace_kr_submit, COLLECTS times, one
# a millisecond.
#
#   collect  the host's CPU per 1000 events for decoding and reporting,
#            reporting off (alone) and on (under gtrace record). The
#            copies gtrace_kr_collect makes on a GPU come on top.
#   bytes    the recording's growth per event: kr-submit with COLLECTS
#            collects against one with none, over the events.
#
# usage: bench/kregions.sh   (REPEAT=3 COLLECTS=2000 BUILD=build)

. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
COLLECTS=${COLLECTS:-2000}
bench=$WORK/kr-submit
compile_bench "$bench" bench/kr-submit.c libgtrace-target.a -lpthread include tests/unit

for round in $(seq "$REPEAT"); do
	alone=$("$bench" --collects "$COLLECTS")
	"$GTRACE" record -q -F 1 -o "$WORK/none.data" -- "$bench" --wait-active 10 --collects 0 >/dev/null
	traced=$("$GTRACE" record -q -F 1 -o "$WORK/kr.data" -- "$bench" --wait-active 10 \
		--collects "$COLLECTS")
	events=$(echo "$traced" | awk '{ print $3 }')
	growth=$(( $(file_size "$WORK/kr.data") - $(file_size "$WORK/none.data") ))
	awk -v g="$growth" -v n="$events" 'BEGIN { printf "%.2f\n", g / n }' >>"$WORK/bytes"
	echo "$alone" | grep -Eo '[0-9.]+ us' | grep -Eo '[0-9.]+' >>"$WORK/off"
	echo "$traced" | grep -Eo '[0-9.]+ us' | grep -Eo '[0-9.]+' >>"$WORK/on"
	"$GTRACE" diagnose -i "$WORK/kr.data" >"$WORK/diag"
	dropped=$(awk '$1 == "dropped.queue-full" { print $2 }' "$WORK/diag")
	echo "  round $round: alone: $alone; recorded: $traced; $growth bytes, $(tail -n 1 "$WORK/bytes") per event; ${dropped:-0} spans dropped"
done
echo "  median: $(median <"$WORK/off") us per 1000 events alone, $(median <"$WORK/on") recorded; $(median <"$WORK/bytes") bytes per event"
