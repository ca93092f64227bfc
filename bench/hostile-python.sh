#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gtrace record on a hostile fake CPython (tests/hostile/python3-fake), each
# scenario for RUN_SECONDS, capped (ulimit -v 4000000, timeout -k 5 30) so that a
# recorder without bounds cannot eat the machine:
#
#   churn        256 frames whose code objects all change at every turn,
#                each with a 64 KiB location table and a long name of its own
#   churn-inner  the innermost 8 frames change; the rest stay
#   hostile      loops, absurd lengths and tables, wild pointers in turn
#   planted      its libpython deleted, a FIFO planted where its maps say it was
#
# For each: the exit status, peak RSS (the largest of the recorder and the
# fake), the fake's own peak RSS when run alone, wall time, samples
# recorded, records the kernel lost (and their share of all), and the
# samples whose Python stack was read and matched.
#
# usage: bench/hostile-python.sh   (RUN_SECONDS=3 GTRACE=build/gtrace BUILD=build)

. "$(dirname "$0")/lib.sh"

RUN_SECONDS=${RUN_SECONDS:-3}
FAKE=$BUILD/tests/hostile/python3-fake
[ -x "$FAKE" ] || { echo "bench: no '$FAKE': make tests first" >&2; exit 1; }

# diag_value DIAG WORD: the number after the line's first word WORD in diagnose output.
diag_value() {
	awk -v w="$2" '$1 == w { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }' "$1"
}

printf '%-12s %6s %9s %9s %8s %8s %8s %7s %8s\n' scenario status peak-MiB fake-MiB wall-s samples \
	lost lost% matched
for scenario in churn churn-inner hostile planted; do
	data=$WORK/$scenario.data
	say "$GTRACE record -q -o $data -- $FAKE $scenario $RUN_SECONDS"
	set +e
	(ulimit -v 4000000 && exec /usr/bin/time -f '%M %e' -o "$WORK/$scenario.time" \
		timeout -k 5 30 "$GTRACE" record -q -o "$data" -- "$FAKE" "$scenario" "$RUN_SECONDS") \
		>/dev/null 2>"$WORK/$scenario.err"
	status=$?
	set -e
	# A command killed has GNU time say so on a line of its own first.
	read -r kib wall < <(tail -n 1 "$WORK/$scenario.time")
	/usr/bin/time -f '%M' -o "$WORK/$scenario.fake" "$FAKE" "$scenario" "$RUN_SECONDS"
	read -r fake_kib <"$WORK/$scenario.fake"
	"$GTRACE" diagnose -i "$data" >"$WORK/$scenario.diag" 2>/dev/null || true
	samples=$(diag_value "$WORK/$scenario.diag" samples:)
	lost=$(diag_value "$WORK/$scenario.diag" lost)
	matched=$(diag_value "$WORK/$scenario.diag" python.matched)
	printf '%-12s %6s %9d %9d %8s %8s %8s %7s %8s\n' "$scenario" "$status" $((kib / 1024)) \
		$((fake_kib / 1024)) "$wall" \
		"${samples:-n/a}" "${lost:-n/a}" \
		"$(awk -v s="${samples:-0}" -v l="${lost:-0}" 'BEGIN { printf "%.1f", s + l ? 100 * l / (s + l) : 0 }')" \
		"${matched:-n/a}"
done
