# SPDX-License-Identifier: MIT
# An ordinary user records its own program (user-space stacks only) when
# perf_event_paranoid allows it (<= 2), and is told why not otherwise; lane
# spans and Python stacks reach its recording too.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

mkdir user
chmod 1777 user
cd user || exit 1
as_unprivileged "$GTRACE" record -o user.data -- "$WORKLOADS/hot" 0.5 \
	>out.txt 2>err.txt </dev/null
status=$?
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)
if [ $status -eq 1 ] && is_perf_refusal err.txt; then
	[ "$paranoid" != unknown ] && [ "$paranoid" -le 2 ] &&
		{ show err.txt; fail "refused with perf_event_paranoid=$paranoid, which allows it"; }
	skip perf-events-user "perf_event_paranoid=$paranoid does not let ordinary users record"
fi
[ $status -eq 0 ] || { show err.txt; fail "unprivileged record exited with $status"; }
expect_contains err.txt "recorded [0-9]+ samples"
run_gtrace report -i user.data --no-children >report.txt
expect_contains report.txt 'hot_leaf$'

# Lane spans reach an ordinary user's recording through its private socket.
as_unprivileged env -u XDG_RUNTIME_DIR "$GTRACE" record -q -o lanes.data -- \
	"$WORKLOADS/lanes" --threads 2 --spans 300 >lanes.txt 2>err.txt </dev/null ||
	{ show err.txt; fail "unprivileged record of the lanes example failed"; }
reported=$(lanes_result lanes.txt reported)
[ "$reported" -eq 600 ] || { show lanes.txt; fail "lanes reported $reported spans, not 600"; }
run_gtrace diagnose -i lanes.data >diag.txt
recorded=$(target_counter diag.txt spans)
[ "$recorded" -eq "$reported" ] ||
	{ show diag.txt; fail "$recorded spans recorded of $reported reported"; }

# An ordinary user's Python program has its Python stacks read: the
# recorder is its parent, which may read its memory.
if [ -x /usr/bin/python3.11 ]; then
	as_unprivileged "$GTRACE" record -q -o py.data -- /usr/bin/python3.11 \
		"$SRCDIR/tests/workloads/pywork.py" >py.txt 2>err.txt </dev/null ||
		{ show err.txt; fail "unprivileged record of a Python program failed"; }
	run_gtrace diagnose -i py.data >py.diag
	matched=$(awk '$1 == "python.matched" { print $2 }' py.diag)
	[ "${matched:-0}" -gt 0 ] || { show py.diag; fail "no Python stack read as an ordinary user"; }
fi
