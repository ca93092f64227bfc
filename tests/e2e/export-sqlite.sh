# SPDX-License-Identifier: MIT
# gtrace export --format sqlite, queried with the sqlite3 shell (Debian's
# sqlite3) by the example queries of man/gtrace-export.1, taken from the
# page as they are printed, its tables and columns each in the page's
# list: on the threads workload, the samples of each
# thread are threads', the functions' samples report -s symbol's; a
# window keeps the samples taken in it, a filter the threads it selects.
# On the CUDA test doubles, the top kernel and its launch configuration
# are report --gpu's, the copies and API calls too, each GPU's idle gaps
# are those between the Chrome export's busy slices, the origins linked
# as diagnose counts, and a stream's queue holds the launches the
# program makes at once. A gtrace built without libsqlite3 says so in
# one line.
. "$SRCDIR/tests/e2e/lib.sh"

if ! "$GTRACE" --version | grep -q '^sqlite export: yes'; then
	expect_exit 1 "$GTRACE" export -i "$SRCDIR/tests/golden/recordings/cpu.data" \
		--format sqlite -o none.sqlite
	expect_contains stderr '^gtrace: sqlite export not built in: install libsqlite3-dev and reconfigure$'
	expect_lines stderr 1
	[ ! -e none.sqlite ] || fail "a gtrace without libsqlite3 wrote 'none.sqlite'"
	exit 0
fi
command -v sqlite3 >/dev/null 2>&1 ||
	skip sqlite3 "no sqlite3 shell (Debian's sqlite3): it runs the man page's queries"
need_perf_events

# query NAME: the man page's example query NAME, as the page prints it.
query() {
	awk -v name="$1" '
		$0 == ".\\\" query: " name { on = 1; next }
		on && $0 == ".EX" { next }
		on && $0 == ".EE" { exit }
		on { gsub(/\\-/, "-"); print }' "$SRCDIR/man/gtrace-export.1"
}

# sql DB NAME: the rows of query NAME on DB, "a|b|c", into NAME.out.
sql() {
	query "$2" >"$2.sql"
	[ -s "$2.sql" ] || fail "man/gtrace-export.1 has no query '$2'"
	sqlite3 -batch "$1" <"$2.sql" >"$2.out" 2>"$2.err" ||
		{ show "$2.sql"; show "$2.err"; fail "query '$2' failed on '$1'"; }
}

# count DB SQL: the one number SQL selects.
count() {
	sqlite3 -batch "$1" "$2" 2>sql.err || { show sql.err; fail "'$2' failed on '$1'"; }
}

record threads.data -- "$WORKLOADS/threads" 0.5
run_gtrace export -i threads.data --format sqlite -o threads.sqlite
[ "$(head -c 15 threads.sqlite)" = "SQLite format 3" ] || fail "threads.sqlite is not a database"
[ "$(count threads.sqlite "SELECT value FROM export WHERE key = 'schema-version'")" = 1 ] ||
	fail "no schema version"
[ "$(count threads.sqlite "SELECT count(*) FROM meta WHERE key = 'command'")" = 1 ] ||
	fail "no command in meta"

# Every table and column of the database is in the man page's list.
count threads.sqlite "SELECT m.name || ' ' || c.name FROM sqlite_master m,
	pragma_table_info(m.name) c WHERE m.type = 'table'" >columns.txt
at_least "columns" "$(wc -l <columns.txt)" 100
while read -r table column; do
	grep -q "^\.B $table\$" "$SRCDIR/man/gtrace-export.1" ||
		fail "man/gtrace-export.1 does not list table '$table'"
	grep -Eq "^\.BR? $column( |\$)" "$SRCDIR/man/gtrace-export.1" ||
		fail "man/gtrace-export.1 does not name column '$column' of '$table'"
done <columns.txt

# Each off-CPU interval says why, as threads --off-cpu sums it: the main
# thread blocked, waiting for the others.
run_gtrace threads -i threads.data --off-cpu >why.txt
blocked_ms=$(awk '$3 == "threads" { print $7; exit }' why.txt)
between "the main thread's blocked ms in the database (threads --off-cpu: $blocked_ms)" \
	"$(count threads.sqlite "SELECT sum(o.dur) / 1e6 FROM offcpu o JOIN threads t USING (tid)
		WHERE t.name = 'threads' AND o.reason = 'blocked'")" \
	"$(awk -v b="$blocked_ms" 'BEGIN { print b - 0.1 }')" "$(awk -v b="$blocked_ms" 'BEGIN { print b + 0.1 }')"

# The samples of each thread: threads' Samples column.
sql threads.sqlite samples-per-thread
cut -d'|' -f1,3 samples-per-thread.out | sort >samples.sql
run_gtrace threads -i threads.data >threads.txt
awk 'NF == 0 { exit } $1 ~ /^[0-9]+$/ { print $2 "|" $4 }' threads.txt | sort >samples.threads
cmp -s samples.sql samples.threads ||
	{ show samples.sql; show samples.threads; fail "samples per thread are not threads'"; }

# The functions' samples and self samples: report -s symbol's.
sql threads.sqlite functions
total=$(count threads.sqlite "SELECT count(*) FROM samples")
awk -F'|' -v total="$total" '{ printf "%s|%d|%.2f\n", $1, $2, 100 * $3 / total }' functions.out |
	sort >functions.sql
run_gtrace report -s symbol -i threads.data >report.txt
awk '$1 ~ /%$/ && $2 ~ /%$/ { name = $4; for (i = 5; i <= NF; i++) name = name " " $i
			      sub(/%/, "", $2); print name "|" $3 "|" $2 }' report.txt |
	sort >functions.report
cmp -s functions.sql functions.report ||
	{ show functions.sql; show functions.report; fail "functions' samples are not report's"; }
expect_contains functions.sql '^spin_gamma\|'

# A window keeps the samples taken in it, at their times.
run_gtrace export -i threads.data --format sqlite --start 20ms --end 120ms -o part.sqlite
in_window=$(count threads.sqlite "SELECT count(*) FROM samples WHERE ts >= 20000000 AND ts < 120000000")
[ "$(count part.sqlite "SELECT count(*) FROM samples")" = "$in_window" ] ||
	fail "the window's samples are not the whole export's between 20 and 120 ms"
at_least "samples in the window" "$in_window" 1
[ "$(count part.sqlite "SELECT count(*) FROM samples WHERE ts < 20000000 OR ts >= 120000000")" = 0 ] ||
	fail "a sample outside the window"
[ "$(count part.sqlite "SELECT value FROM export WHERE key = 'end-ns'")" = 120000000 ] ||
	fail "the window's end is not in table export"

# A filter keeps the threads it selects, all of their samples: threads'
# count for the thread named gamma. Not report -c gamma's, which leaves
# out a sample taken before the thread took its name.
run_gtrace export -i threads.data --format sqlite -c gamma -o gamma.sqlite
[ "$(count gamma.sqlite "SELECT group_concat(DISTINCT name) FROM threads")" = gamma ] ||
	fail "-c gamma exported other threads"
run_gtrace threads -i threads.data >gamma.txt
gamma=$(awk 'NF == 0 { exit } $3 == "gamma" { print $4 }' gamma.txt)
[ "$(count gamma.sqlite "SELECT count(*) FROM samples")" = "$gamma" ] ||
	fail "-c gamma's samples are not those of threads' gamma ($gamma)"

# Not to stdout, nor through a symbolic link.
expect_exit 2 "$GTRACE" export -i threads.data --format sqlite -o -
expect_contains stderr '^gtrace: cannot write an sqlite database to stdout'
echo keep >target.txt
ln -s target.txt link.sqlite
expect_exit 1 "$GTRACE" export -i threads.data --format sqlite -o link.sqlite
[ "$(cat target.txt)" = keep ] || fail "the export wrote through a symbolic link"

# The CUDA test doubles.
. "$SRCDIR/tests/cuda/lib.sh"
grep -q '^HAVE_CUPTI = 1' "$SRCDIR/config.mk" 2>/dev/null || {
	skip_part cuda "configure found no CUPTI: no GPU work to query"
	exit 0
}
need_cuda_fakes
record app.data -- "$CUDA_DIR/fake-app"
run_gtrace export -i app.data --format sqlite -o app.sqlite
run_gtrace report --gpu -i app.data >gpu.txt

# The top kernel, its time and launch configuration: report --gpu's first.
sql app.sqlite top-kernels
first=$(awk '/^# CUDA kernels/ { on = 1 } on && $1 ~ /%$/ { print; exit }' gpu.txt)
[ -n "$first" ] || { show gpu.txt; fail "report --gpu lists no kernel"; }
name=$(echo "$first" | awk '{ for (i = 14; i <= NF; i++) printf "%s%s", (i > 14 ? " " : ""), $i }')
ms=$(echo "$first" | awk '{ print $2 }')
top=$(head -n 1 top-kernels.out)
[ "${top%%|*}" = "$name" ] || { show top-kernels.out; fail "the top kernel is not '$name'"; }
[ "$(echo "$top" | awk -F'|' '{ printf "%.3f", $3 / 1e6 }')" = "$ms" ] ||
	{ show top-kernels.out; fail "'$name' did not take $ms ms"; }
launch=$(echo "$first" | awk '{ print $9, $10, $11, $12, $13 }')
got=$(count app.sqlite "SELECT DISTINCT grid_x || 'x' || grid_y || 'x' || grid_z || ' ' ||
	block_x || 'x' || block_y || 'x' || block_z || ' ' || registers || ' ' ||
	printf('%.1f%%', 100 * occupancy) || ' ' || occupancy_limiter
	FROM kernels k JOIN spans s ON s.id = k.span WHERE s.name = '$name'")
[ "$got" = "$launch" ] || fail "'$name' launched as '$got', report --gpu says '$launch'"

# The copies by kind: report --gpu's count of each.
awk '/^# CUDA copies/ { on = 1 } /^# CUDA API/ { on = 0 }
     on && $1 ~ /%$/ { print $NF "|" $3 }' gpu.txt | sort >copies.report
count app.sqlite "SELECT kind, count(*) FROM copies GROUP BY kind
	UNION ALL SELECT 'memset', count(*) FROM memsets" | sort >copies.sql
cmp -s copies.sql copies.report ||
	{ show copies.sql; show copies.report; fail "the copies are not report --gpu's"; }

# The API calls of each thread add up to report --gpu's.
sql app.sqlite api-per-thread
api=$(sed -n 's/^# CUDA API: \([0-9]*\) calls, \([0-9.]*\) ms$/\1 \2/p' gpu.txt)
[ "$(awk -F'|' '{ n += $3; ns += $4 } END { printf "%d %.3f", n, ns / 1e6 }' api-per-thread.out)" = "$api" ] ||
	{ show api-per-thread.out; fail "the API calls are not report --gpu's ($api)"; }

# Each GPU's idle gaps: between the busy slices of the Chrome export.
sql app.sqlite gpu-idle
if command -v python3 >/dev/null 2>&1; then
	run_gtrace export -i app.data --format chrome -o app.json
	python3 -c 'import json, sys
busy = sorted((e["ts"], e["dur"]) for e in json.load(open(sys.argv[1]))["traceEvents"]
	      if e.get("name") == "busy" and e["ph"] == "X")
gaps = [round((b[0] - a[0] - a[1]) * 1000) for a, b in zip(busy, busy[1:])]
print("\n".join(str(g) for g in sorted(gaps, reverse=True)[:10]))' app.json >gaps.chrome
	cut -d'|' -f4 gpu-idle.out >gaps.sql
	cmp -s gaps.sql gaps.chrome || { show gaps.sql; show gaps.chrome; fail "the idle gaps are not the busy slices'"; }
	at_least "idle gaps" "$(wc -l <gaps.sql)" 1
else
	skip_part python3 "python3 is not installed: the idle gaps are not checked"
fi

# The origins linked as diagnose counts, none farther than its maximum.
sql app.sqlite origins
run_gtrace diagnose -i app.data >diagnose.txt
linked=$(awk '$1 == "linked" && $2 ~ /^[0-9]+$/ { print $2; exit }' diagnose.txt)
[ "$(grep '^linked|' origins.out | cut -d'|' -f2)" = "$linked" ] ||
	{ show origins.out; fail "linked origins are not diagnose's $linked"; }

# The GPU time each stack launched: the top one's is the top kernel's.
sql app.sqlite launch-stacks
[ "$(head -n 1 launch-stacks.out | awk -F'|' '{ printf "%.3f", $5 / 1e6 }')" = "$ms" ] ||
	{ show launch-stacks.out; fail "the top launching stack did not launch $ms ms"; }

# The metrics around the slowest NVTX range: a query that runs.
sql app.sqlite metrics-around-slow-step

# Each stream's longest queue: tests/cuda/idle-app --queue 4 launches 4
# kernels of 10 ms back to back; the queue is empty again after them.
record queue.data -- "$CUDA_DIR/idle-app" --queue 4
run_gtrace export -i queue.data --format sqlite -o queue.sqlite
sql queue.sqlite queue-max
expect_lines queue-max.out 1
expect_contains queue-max.out '^GPU0 stream [0-9]+\|4$'
[ "$(count queue.sqlite "SELECT length FROM stream_queues ORDER BY ts DESC LIMIT 1")" = 0 ] ||
	fail "the stream's queue does not end empty"

# Each NVTX range's domain: its lane's, NULL for the default domain.
record nvtx.data -- "$CUDA_DIR/fake-app" --nvtx-more
run_gtrace export -i nvtx.data --format sqlite -o nvtx.sqlite
run_gtrace threads -i nvtx.data >nvtx-threads.txt
for domain in alpha beta; do
	want=$(awk -v lane="NVTX $domain" 'index($0, lane) { print $(NF - 3); exit }' nvtx-threads.txt)
	[ -n "$want" ] || { show nvtx-threads.txt; fail "threads has no lane 'NVTX $domain'"; }
	[ "$(count nvtx.sqlite "SELECT count(*) FROM nvtx_ranges WHERE domain = '$domain'")" = "$want" ] ||
		fail "nvtx_ranges has not the $want ranges of domain $domain"
done
[ "$(count nvtx.sqlite "SELECT count(*) FROM nvtx_ranges WHERE domain IS NULL")" -gt 0 ] ||
	fail "nvtx_ranges has no range of the default domain"
exit 0
