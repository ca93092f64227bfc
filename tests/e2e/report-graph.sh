# SPDX-License-Identifier: MIT
# report -g: under each row its call graph, as flame's tree counts it:
# threads' start_thread calls thread_gamma, thread_beta and thread_alpha
# (work 3:2:1), each its spin_ function; --percent-limit prunes the
# smallest branch; callee order lists a leaf's callers. report -s srcline
# names hot's lines: the loop of workload_mix, and with --inline the line
# of hot_leaf that calls it.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

# User time only: as root the kernel's frames would hang under the spin_
# functions, where a timer interrupt or a switch caught them.
record threads.data -e cpu-clock:u -- "$WORKLOADS/threads" 0.5
run_gtrace flame -i threads.data --folded >threads.folded

# graph FILE ROW: the graph lines under the row whose last column is ROW,
# as "COUNT DEPTH NAME" (DEPTH: the name's indent in columns).
graph() {
	awk -v row="$2" '
		/^#/ { next }
		!in_graph && $NF == row && $1 ~ /%$/ && substr($0, 1, 12) != "            " {
			in_graph = 1; next }
		in_graph && /^$/ { exit }
		in_graph { print $2, index($0, $3) - 1, $3 }' "$1"
}

run_gtrace report -i threads.data -s symbol -g --percent-limit 0 >caller.txt
graph caller.txt start_thread >start_thread.graph
[ "$(sed -n 1p start_thread.graph | cut -d' ' -f3)" = start_thread ] ||
	{ show caller.txt; fail "start_thread's graph does not begin at start_thread"; }
top=$(sed -n 1p start_thread.graph | cut -d' ' -f2)
# Each thread function one level under start_thread, its spin_ function
# under it, with the samples of the folded stacks through them.
for name in alpha beta gamma; do
	want=$(folded_samples threads.folded ";start_thread;thread_$name;")
	awk -v name="thread_$name" -v n="$want" -v top="$top" '
		$3 == name && $1 == n && $2 == top + 2 { found = 1 }
		END { exit !found }' start_thread.graph ||
		{ show start_thread.graph; fail "thread_$name: not $want samples under start_thread"; }
	spin=$(folded_samples threads.folded ";thread_$name;spin_$name [0-9]+$")
	awk -v name="spin_$name" -v n="$spin" -v top="$top" '
		$3 == name && $1 == n && $2 == top + 4 { found = 1 }
		END { exit !found }' start_thread.graph ||
		{ show start_thread.graph; fail "spin_$name: not $spin samples under thread_$name"; }
done
# Branches by samples, largest first.
awk '$3 ~ /^thread_/ { if (last != "" && $1 > last) exit 1; last = $1 }' start_thread.graph ||
	{ show start_thread.graph; fail "start_thread's branches are not largest first"; }

# --percent-limit halfway between alpha's and beta's shares: alpha's
# branch goes, beta's stays, and so do the rows.
alpha=$(folded_share threads.folded ';thread_alpha;')
beta=$(folded_share threads.folded ';thread_beta;')
[ "$alpha" -lt "$beta" ] || fail "alpha has $alpha% of the samples, beta $beta%"
limit=$(( (alpha + beta + 1) / 2 ))
run_gtrace report -i threads.data -s symbol -g --percent-limit "$limit" >limited.txt
graph limited.txt start_thread >limited.graph
expect_contains limited.graph ' thread_beta$'
expect_not_contains limited.graph ' thread_alpha$'
expect_not_contains limited.txt ' spin_alpha$'

# Callee order without children: a leaf, then its callers outward.
run_gtrace report -i threads.data -s symbol -g callee --no-children >callee.txt
graph callee.txt spin_gamma | head -3 | cut -d' ' -f3 | tr '\n' ' ' >callee.order
[ "$(cat callee.order)" = "spin_gamma thread_gamma start_thread " ] ||
	{ show callee.txt; fail "spin_gamma's callers are '$(cat callee.order)'"; }
# And caller order: the paths from the outermost frame in to the leaf.
run_gtrace report -i threads.data -s symbol --call-graph=caller --no-children >paths.txt
graph paths.txt spin_gamma >paths.graph
awk '$3 == "start_thread" { at = $2; next }
	at && $3 == "thread_gamma" && $2 == at + 2 { mid = 1; next }
	mid && $3 == "spin_gamma" && $2 == at + 4 { found = 1 }
	{ at = mid = 0 }
	END { exit !found }' paths.graph ||
	{ show paths.txt; fail "spin_gamma's paths do not go start_thread, thread_gamma, spin_gamma"; }

expect_exit 2 "$GTRACE" report -i threads.data --call-graph=sideways
expect_contains "$TESTDIR/stderr" "^gtrace: invalid call graph order 'sideways'; use caller or callee$"
expect_exit 2 "$GTRACE" report -i threads.data --percent-limit 101
expect_contains "$TESTDIR/stderr" "^gtrace: invalid percentage '101'$"

# srcline: hot's time is in workload_mix's lines, inlined into hot_leaf;
# with --inline, hot_leaf's own line is the call.
record hot.data -e cpu-clock:u -- "$WORKLOADS/hot" 0.5
run_gtrace report -i hot.data -s srcline --no-children >lines.txt
top=$(awk '!/^#/ && NF { print $NF; exit }' lines.txt)
case $top in
workload.h:5[4-9]) ;;
*) show lines.txt; fail "the hottest line is '$top', not workload_mix's" ;;
esac
call=$(grep -n 'seed = workload_mix(seed + i);' "$SRCDIR/tests/workloads/hot.c" | cut -d: -f1)
run_gtrace report -i hot.data -s symbol,srcline --inline >inline.txt
awk -v line="hot.c:$call" '$(NF - 1) == "hot_leaf" && $NF == line && int($1) >= 50 { found = 1 }
	END { exit !found }' inline.txt ||
	{ show inline.txt; fail "hot_leaf's call of workload_mix, hot.c:$call, is not half the samples"; }
expect_contains inline.txt ' workload_mix +workload\.h:5[4-9]$'
run_gtrace report -i hot.data -s srcline --format json >lines.json
expect_contains lines.json '"srcline": "workload\.h:5[4-9]"'
