#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What hostile span-channel clients (tests/hostile/span-client) cost the
# recorder, and what a kernel-regions buffer made to be slow
# (tests/hostile/kr-flood) costs gtrace_kr_submit: peak RSS and wall time
# of each, and the recorder's CPU time for the connections held. Each run
# is capped (ulimit -v 4000000, timeout 60): "capped" when it hit that.
#
#   instances   30 copies of the library in one process, each id 2^22
#   lanes       600000 lanes, a span each
#   strings     80000 strings of 1024 bytes
#   meta        200000 meta changes of 1 KiB
#   cubins      8 unfinished GPU images of 60 MiB (--gpu-pc-sampling)
#   conns       1019 connections held 2 s under ulimit -n 1024
#   invalid     packets of only invalid spans
#   lane-file   gtrace threads on 2^20 + 5000 lanes in a 422-byte file
#   kr-submit   gtrace_kr_submit on 200000 events (linked with the
#               libgtrace-target.a beside GTRACE)
#
# usage: bench/hostile-spans.sh   (GTRACE=/path/to/gtrace to measure another
# build; the hostile tools come from BUILD)

. "$(dirname "$0")/lib.sh"

CLIENT=$BUILD/tests/hostile/span-client
LANE_FILE=$BUILD/tests/hostile/lane-file
TARGET_A=$(dirname "$GTRACE")/libgtrace-target.a
for tool in "$CLIENT" "$LANE_FILE" "$TARGET_A"; do
	[ -e "$tool" ] || { echo "bench: no '$tool': run make tests first" >&2; exit 1; }
done

# capped NAME CMD...: runs CMD capped, prints its line of the table.
capped() {
	local name=$1 status
	shift
	say "$@"
	set +e
	(ulimit -v 4000000 && exec /usr/bin/time -f '%M %e' -o "$WORK/$name.time" \
		timeout 60 "$@") >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null
	status=$?
	set -e
	awk -v name="$name" -v status="$status" 'END {
		printf "  %-10s %8.0f MiB %8.2f s%s\n", name, $1 / 1024, $2,
			status ? "  capped or failed (exit " status ")" : "" }' "$WORK/$name.time"
}

# recorder_cpu DATA: the recorder's CPU seconds while recording, from diagnose.
recorder_cpu() {
	"$GTRACE" diagnose -i "$1" 2>/dev/null | sed -n 's/^recorder CPU: *\([0-9.]*\) s while.*/\1/p'
}

echo "gtrace: $GTRACE"
cd "$WORK"
capped instances "$GTRACE" record -q -o i.data -- "$CLIENT" instances 30 4194304
capped lanes "$GTRACE" record -q -o l.data -- "$CLIENT" lanes 600000
capped strings "$GTRACE" record -q -o s.data -- "$CLIENT" strings 80000 1024
capped meta "$GTRACE" record -q -o m.data -- "$CLIENT" meta 200000
capped cubins "$GTRACE" record -q --gpu-pc-sampling -o c.data -- "$CLIENT" cubins 8 62914560
capped conns sh -c 'ulimit -n 1024 && exec "$0" record -q -o n.data -- "$1" conns 1019 2' \
	"$GTRACE" "$CLIENT"
echo "  conns: the recorder's CPU while they waited: $(recorder_cpu n.data) s"
capped invalid "$GTRACE" record -q -o v.data -- "$CLIENT" invalid
"$LANE_FILE" lanes.gt $((1048576 + 5000))
capped lane-file "$GTRACE" threads -i lanes.gt
say "${CC:-cc} -O2 tests/hostile/kr-flood.c $TARGET_A -lpthread"
"${CC:-cc}" -std=c11 -D_GNU_SOURCE -O2 -I"$SRCDIR/src" -I"$SRCDIR/include" -I"$SRCDIR" \
	"$SRCDIR/tests/hostile/kr-flood.c" "$TARGET_A" -lpthread -o kr-flood
capped kr-submit ./kr-flood 200000
