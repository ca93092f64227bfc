#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gtrace annotate against perf annotate, on one run of the same program:
# gtrace records perf recording hotline (whose hot_lines spends about 90%
# of its time on the line marked HOT, 10% on the one marked WARM), so that
# both sample the same execution. Prints each line's share of hot_lines'
# samples by each tool (perf's from its source-line summary, annotate
# --stdio -l) and the difference; fails when the HOT line is not first in
# gtrace's or the two shares are more than MAX_POINTS (default 5) apart.
#
# Then what the code that annotate --asm disassembles adds to a recording:
# for each bundled workload (and pywork.py under python3, its interpreter
# and C libraries), the functions whose code was kept, the bytes kept
# (diagnose's symbols.code-kept and symbols.code-bytes), per function, and
# as a share of the file's size: an upper bound, as the file holds them
# zstd-compressed. BASELINE=PATH, a gtrace that keeps no code (one built
# before table codes), records each workload too: its file's size, and how
# much larger gtrace's is, which is what the code costs compressed, give or
# take the difference between two runs.
#
# usage: bench/annotate.sh   (SECONDS_RUN=3 FREQ=999 MAX_POINTS=5 BUILD=build BASELINE=)

. "$(dirname "$0")/lib.sh"
need_perf

SECONDS_RUN=${SECONDS_RUN:-3}
FREQ=${FREQ:-999}
MAX_POINTS=${MAX_POINTS:-5}
src=$SRCDIR/tests/workloads/hotline.c
hot=$(grep -n '/\* HOT \*/' "$src" | cut -d: -f1)
warm=$(grep -n '/\* WARM \*/' "$src" | cut -d: -f1)

cd "$WORK"
say "$GTRACE" record -F "$FREQ" -o g.data -- "$PERF" record -e cpu-clock -F "$FREQ" -o p.data \
	-- "$WORKLOADS/hotline" "$SECONDS_RUN"
"$GTRACE" record -q -F "$FREQ" -o g.data -- "$PERF" record -q -e cpu-clock -F "$FREQ" \
	-o p.data -- "$WORKLOADS/hotline" "$SECONDS_RUN" >/dev/null 2>&1
say "$GTRACE" annotate -i g.data -c hotline hot_lines
"$GTRACE" annotate -i g.data -c hotline hot_lines >g.txt
say "$PERF" annotate -i p.data --stdio -l hot_lines
"$PERF" annotate -i p.data --stdio -l hot_lines >p.txt 2>/dev/null

# gtrace's share of LINE, perf's: its summary lines "  PCT hotline.c:LINE".
g_share() { awk -v l="$1" '!/^#/ && $3 == l { print $1 + 0; f = 1 } END { if (!f) print 0 }' g.txt; }
p_share() { awk -v l="hotline.c:$1" '$2 == l { s += $1 } END { print s + 0 }' p.txt; }
first=$(awk '!/^#/ { if ($1 + 0 > best) { best = $1 + 0; line = $3 } } END { print line }' g.txt)

printf '%-6s %6s %10s %10s %8s\n' line what gtrace% perf% diff
for l in "$hot" "$warm"; do
	what=HOT; [ "$l" = "$warm" ] && what=WARM
	awk -v l="$l" -v w="$what" -v g="$(g_share "$l")" -v p="$(p_share "$l")" \
		'BEGIN { printf "%-6s %6s %10.2f %10.2f %8.2f\n", l, w, g, p, g - p }'
done
[ "$first" = "$hot" ] || { cat g.txt; echo "bench: gtrace ranks line $first first, not $hot" >&2; exit 1; }
awk -v g="$(g_share "$hot")" -v p="$(p_share "$hot")" -v max="$MAX_POINTS" \
	'BEGIN { d = g - p; exit !(d <= max && d >= -max) }' ||
	{ echo "bench: the HOT line's shares are more than $MAX_POINTS points apart" >&2; exit 1; }
echo "ok: the HOT line ranks first, within $MAX_POINTS points of perf annotate"

# counter FILE NAME: a counter of gtrace diagnose's list.
counter() { "$GTRACE" diagnose -i "$1" | awk -v n="$2" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }'; }
echo
printf '%-10s %9s %10s %10s %10s %7s %10s %7s\n' workload functions code-bytes bytes/func \
	file-bytes code% base-bytes larger
for w in hot threads recurse hotline demo pywork; do
	case $w in
	pywork) cmd=(python3 "$SRCDIR/tests/workloads/pywork.py") ;;
	*) cmd=("$WORKLOADS/$w" "$SECONDS_RUN") ;;
	esac
	[ -x "${cmd[0]}" ] || command -v "${cmd[0]}" >/dev/null || continue
	"$GTRACE" record -q -o "$w.data" -- "${cmd[@]}" >/dev/null 2>&1 || continue
	kept=$(counter "$w.data" symbols.code-kept)
	bytes=$(counter "$w.data" symbols.code-bytes)
	size=$(wc -c <"$w.data")
	base=0
	if [ -n "${BASELINE:-}" ] &&
		"$BASELINE" record -q -o "$w.base.data" -- "${cmd[@]}" >/dev/null 2>&1; then
		base=$(wc -c <"$w.base.data")
	fi
	awk -v w="$w" -v k="$kept" -v b="$bytes" -v s="$size" -v base="$base" 'BEGIN {
		printf "%-10s %9d %10d %10.0f %10d %6.1f%%", w, k, b, k ? b / k : 0, s, 100 * b / s
		if (base) printf " %10d %6.1f%%", base, 100 * (s - base) / base
		printf "\n" }'
done
