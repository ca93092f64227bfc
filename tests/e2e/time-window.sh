# SPDX-License-Identifier: MIT
# --time START,END and PCT%/N: report, flame and threads show the window
# alone; report --time-buckets shows each row over parts of the run, each
# part what --time would show of it. In the threads workload alpha ends first: a window after its last
# event has none of its samples, and the samples of two windows that split
# the run add up to the whole. export --time writes what --start --end do.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

record threads.data -- "$WORKLOADS/threads" 0.5

# samples ARGS: the "# Samples: N" of gtrace report ARGS.
samples() {
	run_gtrace report -i threads.data "$@" >report.txt
	n=$(sed -n 's/^# Samples: \([0-9]*\) .*/\1/p' report.txt)
	[ -n "$n" ] || { show report.txt; fail "report $* has no '# Samples:' line"; }
	echo "$n"
}

run_gtrace threads -i threads.data >threads.txt
alpha_last=$(thread_column threads.txt alpha 8)
[ -n "$alpha_last" ] || { show threads.txt; fail "threads has no alpha"; }
after=$(awk -v s="$alpha_last" 'BEGIN { printf "%.3f", s + 0.005 }')

# After alpha's last event: none of alpha, gamma's samples there.
run_gtrace threads -i threads.data --time "$after," >late.txt
expect_not_contains late.txt ' alpha '
expect_contains late.txt ' gamma '
late_gamma=$(thread_column late.txt gamma 4)
all_gamma=$(thread_column threads.txt gamma 4)
[ "$late_gamma" -lt "$all_gamma" ] || { show late.txt; fail "gamma has all its samples after $after s"; }
first=$(thread_column late.txt gamma 7)
at_least "gamma's first event in the window" "$first" "$after"

run_gtrace report -i threads.data -s symbol --time "$after," >late-report.txt
expect_not_contains late-report.txt 'spin_alpha'
expect_contains late-report.txt 'spin_gamma'
run_gtrace flame -i threads.data --folded --time "$after," >late.folded
expect_not_contains late.folded 'spin_alpha'

# Two windows that split the run count every sample once.
total=$(samples)
early=$(samples --time ",$after")
late=$(samples --time "$after,")
[ $((early + late)) -eq "$total" ] || fail "--time ,$after and $after, count $early + $late samples of $total"
half1=$(samples --time 50%/1)
half2=$(samples --time 50%/2)
[ $((half1 + half2)) -eq "$total" ] || fail "50%/1 and 50%/2 count $half1 + $half2 samples of $total"
[ "$(samples --time 0%-50%)" -eq "$half1" ] || fail "0%-50% is not 50%/1"
after_ms=$(awk -v s="$after" 'BEGIN { printf "%d", s * 1000 + 0.5 }')
[ "$(samples --time "${after_ms}ms,")" -eq "$late" ] || fail "--time ${after_ms}ms, is not --time $after,"

# export --time is --start and --end.
run_gtrace export -i threads.data --format chrome --time 0.1,0.2 -o time.json
run_gtrace export -i threads.data --format chrome --start 100ms --end 200ms -o startend.json
cmp -s time.json startend.json || fail "export --time 0.1,0.2 differs from --start 100ms --end 200ms"

# --time-buckets: each row's parts add up to its count, and with two parts
# each is the row's count in --time 50%/1 and 50%/2.
if command -v python3 >/dev/null 2>&1; then
	for window in "" "--time 20%-90%"; do
		# shellcheck disable=SC2086 # the window's words
		run_gtrace report -i threads.data -s symbol --no-children --time-buckets 7 \
			$window --format json >buckets.json
		python3 - buckets.json <<'PY' || fail "report --time-buckets 7 $window: parts do not add up"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert rows and all(len(r["over_time"]) == 7 and sum(r["over_time"]) == r["self"]
                    for r in rows), rows
PY
	done
	run_gtrace report -i threads.data -s symbol --no-children --time-buckets 2 \
		--format json >halves.json
	for half in 1 2; do
		run_gtrace report -i threads.data -s symbol --no-children --time 50%/$half \
			--format json >half$half.json
	done
	python3 - halves.json half1.json half2.json <<'PY' || fail "--time-buckets 2 is not --time 50%/1 and 50%/2"
import json, sys
def rows(path):
    return {r["symbol"]: r for r in json.load(open(path))["rows"]}
both, halves = rows(sys.argv[1]), [rows(sys.argv[2]), rows(sys.argv[3])]
for name, r in both.items():
    for k in (0, 1):
        want = halves[k][name]["self"] if name in halves[k] else 0
        assert r["over_time"][k] == want, (name, k, r["over_time"], want)
PY
else
	skip_part python3 "python3 is not installed: --time-buckets' JSON is not read"
fi
run_gtrace report -i threads.data --time-buckets 12 --no-children >buckets.txt
expect_contains buckets.txt '^# +Self +Samples Over time +Command'
expect_exit 2 "$GTRACE" report -i threads.data --time-buckets 41
expect_contains "$TESTDIR/stderr" "^gtrace: invalid --time-buckets '41'; use 1 to 40"

# Bad windows: a one-line error each.
expect_exit 2 "$GTRACE" report -i threads.data --time 2,1
expect_contains "$TESTDIR/stderr" "^gtrace: empty time window: --time '2,1'"
expect_exit 2 "$GTRACE" threads -i threads.data --time 10%/11
expect_contains "$TESTDIR/stderr" "^gtrace: invalid --time '10%/11'"
expect_exit 2 "$GTRACE" flame -i threads.data --time soon
expect_contains "$TESTDIR/stderr" "^gtrace: invalid --time 'soon'"
expect_exit 2 "$GTRACE" export -i threads.data --time 1,2 --start 1s
expect_contains "$TESTDIR/stderr" "^gtrace: --time and --start or --end"
expect_exit 1 "$GTRACE" report -i threads.data --time 100,
expect_contains "$TESTDIR/stderr" "^gtrace: no events in --time '100,' in 'threads.data'"
