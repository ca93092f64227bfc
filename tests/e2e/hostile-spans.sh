# SPDX-License-Identifier: MIT
# The span channel against a hostile target: span-client (tests/hostile/)
# speaks the wire protocol the way no libgtrace-target would. Each attack
# runs under memory and time ceilings; the recorder must keep within its
# limits (gtrace-target(3), LIMITS), write a whole recording, and count
# what it refused. And a recording with more lanes than there are lane
# thread ids must not rename real threads.
. "$SRCDIR/tests/e2e/lib.sh"

CLIENT=$BUILD/tests/hostile/span-client
LANE_FILE=$BUILD/tests/hostile/lane-file
[ -x "$CLIENT" ] && [ -x "$LANE_FILE" ] || fail "the hostile tools are not built ($CLIENT): run make tests"
need_perf_events

# attack NAME MIB SECONDS [RECORD-OPTIONS] -- ATTACK...: records span-client
# ATTACK into NAME.data within MIB MiB and SECONDS; its diagnose in NAME.txt.
attack() {
	name=$1 ceiling_mib=$2 ceiling_s=$3
	shift 3
	bounded "$ceiling_mib" "$ceiling_s" "$GTRACE" record -q -o "$name.data" "$@"
	[ "$bounded_status" -eq 0 ] ||
		{ show "$TESTDIR/stderr"; fail "recording '$name' exited with $bounded_status"; }
	run_gtrace diagnose -i "$name.data" >"$name.txt"
	grep -q '^ended: *cleanly' "$name.txt" || { show "$name.txt"; fail "'$name.data' did not end"; }
}

# Thirty copies of the library in one process, each with an id of 2^22:
# eight copies are taken, each id costs one entry, the rest are counted.
attack instances 200 60 -- "$CLIENT" instances 30 4194304
expect_counters instances.txt spans=8 lanes=8 processes=1 refused.instances=22 \
	dropped.limit=22 dropped.bad-message=0

# More lane definitions than the recorder keeps, and more lanes than it
# makes: every lane past the lanes kept is refused, its span counted.
attack lanes 300 120 -- "$CLIENT" lanes 600000
expect_counters lanes.txt lanes=262144 spans=262144 refused.lanes=337856 dropped.limit=337856 \
	dropped.bad-message=0

# 80 MiB of strings, and 200 MiB of meta changes: the recorder keeps 16 MiB
# of strings and 16384 changes.
attack strings 200 60 -- "$CLIENT" strings 80000 1024
at_least "target.refused.strings" "$(target_counter strings.txt refused.strings)" 60000
attack meta 200 60 -- "$CLIENT" meta 200000
expect_counters meta.txt refused.meta=183616

# Eight unfinished images of 60 MiB: only the first is held against the
# 64 MiB cap, the others are over it.
attack cubins 250 60 --gpu-pc-sampling -- "$CLIENT" cubins 8 62914560
cubins=$(sed -n 's/^PC cubins: *//p' cubins.txt)
case $cubins in
*" 7 over the cap, "*" 1 cut short;"*) ;;
*) show cubins.txt; fail "PC cubins: '$cubins', expected 7 over the cap and 1 cut short" ;;
esac

# 1019 connections (those the descriptors left allow) under ulimit -n 1024:
# a quarter of the descriptors are taken, the rest closed at once and counted; the recorder waits
# meanwhile rather than spin on the one it cannot take.
bounded 200 60 sh -c 'ulimit -n 1024 && exec "$0" record -q -o conns.data -- "$1" conns 1019 2' \
	"$GTRACE" "$CLIENT"
[ "$bounded_status" -eq 0 ] || { show "$TESTDIR/stderr"; fail "recording 'conns' exited with $bounded_status"; }
held=$(sed -n 's/^span-client: \([0-9]*\) connections held.*/\1/p' "$TESTDIR/stdout")
at_least "connections held" "${held:-0}" 1000
run_gtrace diagnose -i conns.data >conns.txt
expect_counters conns.txt refused.connections=$((held - 256))
cpu=$(sed -n 's/^recorder CPU: *\([0-9.]*\) s while recording.*/\1/p' conns.txt)
awk -v cpu="$cpu" 'BEGIN { exit !(cpu != "" && cpu < 0.5) }' ||
	{ show conns.txt; fail "the recorder took ${cpu:-?} s of CPU while 1019 connections waited 2 s"; }

# Packets of nothing but invalid spans, and empty ones: counted, no crash
# (the sanitizers' build checks that no invalid pointer reached memcpy).
attack invalid 100 60 -- "$CLIENT" invalid
expect_counters invalid.txt spans=0 dropped.bad-message=8

# The reader: 2^20 + 5000 lanes in a file of a few hundred bytes, and a real
# thread with the first lane's tid. Lanes past the lane thread ids are not
# shown, and counted; no real thread takes a lane's name.
"$LANE_FILE" lanes.gt $((1048576 + 5000)) || fail "lane-file could not write lanes.gt"
bounded 800 60 "$GTRACE" threads -i lanes.gt
[ "$bounded_status" -eq 0 ] || { show "$TESTDIR/stderr"; fail "gtrace threads exited with $bounded_status"; }
cp "$TESTDIR/stdout" lanes-threads.txt
for name in victim squatter; do
	[ "$(thread_column lanes-threads.txt "$name" 2)" != "" ] ||
		{ show lanes-threads.txt; fail "the real thread '$name' is not shown as itself"; }
done
real=$(awk '$1 !~ /^#/ && $3 == "lane" && $2 !~ /^0x/' lanes-threads.txt | wc -l)
[ "$real" -eq 0 ] || fail "$real real threads took a lane's name"
bounded 800 60 "$GTRACE" diagnose -i lanes.gt
expect_contains "$TESTDIR/stdout" '^lanes not shown: +5000 '
# Two such recordings as ranks of one: what the merge leaves past the lane
# thread ids is cut off too, and counted with what each had.
bounded 800 60 "$GTRACE" diagnose -i lanes.gt -i lanes.gt
expect_contains "$TESTDIR/stdout" '^lanes not shown: +1058576 '
