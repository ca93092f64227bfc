# SPDX-License-Identifier: MIT
# The views of lane work, on recordings of the lanes example: threads lists
# the lanes, report and flame show a lane's spans by name and, for a CPU
# thread, the lane work it queued under the stack that queued it; diagnose
# counts each origin outcome that --origin provokes.
. "$SRCDIR/tests/e2e/lib.sh"

# A bad --link-window is refused before any file is read.
for cmd in report flame diagnose; do
	expect_exit 2 "$GTRACE" $cmd -i none.data --link-window 5parsecs
	expect_contains "$TESTDIR/stderr" "invalid --link-window '5parsecs'"
done

[ -x "$WORKLOADS/lanes" ] || fail "the lanes example is not built ($WORKLOADS/lanes): run make tests"
need_perf_events

# lane_spans FILE: the sum of the Spans column of the lanes in threads output.
lane_spans() {
	awk '$2 ~ /^0xfff/ { n += $(NF - 3) } END { print n + 0 }' "$1"
}

# origin_count FILE OUTCOME: the count on diagnose's line for OUTCOME.
origin_count() {
	awk -v o="$2" '$1 == o && NF >= 3 { print $2; found = 1; exit }
		END { if (!found) print -1 }' "$1"
}

# expect_count FILE OUTCOME N: diagnose counted N origins with OUTCOME.
expect_count() {
	got=$(origin_count "$1" "$2")
	if [ "$got" != "$3" ]; then
		show "$1"
		fail "diagnose counts $got origins $2, expected $3"
	fi
}

record lanes.data -- "$WORKLOADS/lanes" --wait-active 5 --threads 2 --spans 500
run_gtrace threads -i lanes.data >threads.txt
expect_contains threads.txt '^ +[0-9]+ +0xfff0000[01] +queue +queue 0 '
expect_contains threads.txt '^ +[0-9]+ +0xfff0000[01] +queue +queue 1 '
[ "$(lane_spans threads.txt)" -eq 1000 ] || { show threads.txt; fail "the lanes do not hold 2 x 500 spans"; }
# Lanes are listed past -n.
run_gtrace threads -i lanes.data -n 1 >threads1.txt
[ "$(lane_spans threads1.txt)" -eq 1000 ] || { show threads1.txt; fail "threads -n 1 hides lanes"; }

lane=$(awk '$2 ~ /^0xfff/ { print $2; exit }' threads.txt)
worker=$(thread_column threads.txt worker-0 2)
[ -n "$worker" ] || { show threads.txt; fail "no thread worker-0"; }

# A lane: its spans by name in target time, never as samples.
run_gtrace report -i lanes.data --tid "$lane" >lane-report.txt
expect_contains lane-report.txt '^# Lane spans: [0-9]+ in 1 lane'
expect_contains lane-report.txt ' queue [01]  job-[0-9]+$'
expect_not_contains lane-report.txt '^# Samples'
run_gtrace flame -i lanes.data --tid "$lane" >lane-flame.txt
expect_contains lane-flame.txt '^ +[0-9.]+ms +[0-9]+ +\[lane\] queue [01]$'
expect_contains lane-flame.txt '^ +[0-9.]+ms +[0-9]+ +job-[0-9]+$'
run_gtrace flame -i lanes.data --tid "$lane" --folded >lane-folded.txt
expect_contains lane-folded.txt '^\[lane\] queue [01];job-[0-9]+ [0-9]+$'

# A worker: its samples, and under dispatch_work the lane work it queued.
run_gtrace report -i lanes.data --tid "$worker" >worker-report.txt
expect_contains worker-report.txt '^# Samples: [0-9]+'
expect_contains worker-report.txt '^# Lane work queued from these threads: [1-9][0-9]* spans'
awk '/^# Lane work queued/ { work = 1 } work && $NF == "dispatch_work" { found = 1 }
	END { exit !found }' worker-report.txt ||
	{ show worker-report.txt; fail "no lane work queued from dispatch_work"; }
run_gtrace flame -i lanes.data --tid "$worker" --min-percent 0 >worker-flame.txt
awk '/ dispatch_work$/ { depth = index($0, "dispatch_work"); next }
	depth && /\[lane\] queue/ && index($0, "[lane]") > depth { found = 1 }
	END { exit !found }' worker-flame.txt ||
	{ show worker-flame.txt; fail "flame shows no lane work under dispatch_work"; }
run_gtrace flame -i lanes.data --tid "$worker" --folded --weight target >worker-folded.txt
expect_contains worker-folded.txt ';dispatch_work;([^;]+;)*\[lane\] queue [01];job-[0-9]+ [0-9]+$'
expect_not_contains worker-folded.txt '^worker-1'
# Folded samples stay samples.
run_gtrace flame -i lanes.data --tid "$worker" --folded >worker-samples.txt
expect_not_contains worker-samples.txt '\[lane\]'

run_gtrace diagnose -i lanes.data >diag.txt
expect_contains diag.txt '^target: +1000 spans in 2 lanes of 1 process'
# Each of the 1000 spans was queued by a worker busy on its CPU: linked to
# a sample of it, or, for a worker kept off its CPU for milliseconds on a
# loaded machine, too far from any; at most one in ten.
for outcome in bad_tid no_thread no_stack none; do
	expect_count diag.txt $outcome 0
done
linked=$(origin_count diag.txt linked)
far=$(origin_count diag.txt too_far)
[ $((linked + far)) -eq 1000 ] && [ "$linked" -ge 900 ] ||
	{ show diag.txt; fail "$linked of 1000 origins linked, $far too far; expected at least 900 linked"; }
# Nothing is close enough within a window of 0.
run_gtrace diagnose -i lanes.data --link-window 0 >diag0.txt
expect_count diag0.txt linked 0

# Each --origin mode gives its outcome to every span. "bad" alternates tid 0
# (with a time: an origin, not none) and a synthetic tid. The idler that
# nostack names runs for a millisecond or two at its start (ASan clears its
# stack's shadow then), so that recording samples every 100 ms of CPU time.
for mode in unknown:no_thread nostack:no_stack far:too_far none:none bad:bad_tid; do
	origin=${mode%%:*}
	outcome=${mode#*:}
	freq=999
	[ "$origin" = nostack ] && freq=10
	record "$origin.data" -F $freq -- "$WORKLOADS/lanes" --wait-active 5 --threads 2 \
		--spans 200 --origin "$origin"
	run_gtrace diagnose -i "$origin.data" >"$origin.txt"
	expect_count "$origin.txt" "$outcome" 400
	expect_count "$origin.txt" linked 0
done

# Lane work by span name: each worker queues 1000 spans named alpha .. eta
# from queue_work, a span of the i-th name lasting (i + 1) * 10 us. With a
# window of 1 s every origin links, so each name's spans and time are exact.
record greek.data -- "$WORKLOADS/lanes" --wait-active 5 --threads 2 --spans 1000 --queue-work
run_gtrace threads -i greek.data >greek-threads.txt
worker=$(thread_column greek-threads.txt worker-0 2)
[ -n "$worker" ] || { show greek-threads.txt; fail "no thread worker-0"; }

# greek_check FILE WHAT TIMES GOT: GOT is "NAME SPANS US FROM" per name
# (spans, target us, and the spans that hang under queue_work). Each name
# must have its spans, times TIMES, and their exact time; most of them hang
# under queue_work, where the worker spends its time (a few may link to a
# sample taken elsewhere in its loop).
greek_check() {
	echo "$4" | awk -v times="$3" -v what="$2" '
		BEGIN {
			split("alpha beta gamma delta epsilon zeta eta", name, " ")
			for (i = 1; i <= 7; i++) {
				spans = (i == 7 ? 142 : 143) * times
				want[name[i]] = spans " " spans * i * 10
			}
		}
		NF == 4 { got[$1] = $2 " " $3; from[$1] = $4 }
		END {
			for (i = 1; i <= 7; i++) {
				n = name[i]
				if (got[n] != want[n] || 2 * from[n] <= want[n] + 0) {
					printf "%s: %s has spans, us %s (%d under queue_work), expected %s\n",
						what, n, got[n], from[n], want[n] > "/dev/stderr"
					bad = 1
				}
			}
			exit bad
		}' || { show "$1"; fail "$2 does not show alpha .. eta as queued"; }
}

# report_greek FILE: from the lane work table, per span name: its spans and
# target us summed over its rows, and the spans of the rows queued from
# queue_work. A span row names its lane "[lane] queue N" in the DSO column,
# then the span; the symbol it was queued from may hold spaces (C++).
report_greek() {
	awk '/^# Lane work queued/ { work = 1; next }
		/^# Lane spans/ { work = 0 }
		work && /\[lane\] / && $1 !~ /^#/ {
			for (i = 1; $i != "[lane]"; i++)
				;
			name = $(i + 3)
			spans[name] += $3
			us[name] += int($2 * 1000 + 0.5)
			if ($(i + 4) == "queue_work" && NF == i + 4)
				from[name] += $3
		}
		END { for (n in spans) print n, spans[n], us[n], from[n] + 0 }' "$1"
}

run_gtrace report -i greek.data --tid "$worker" --link-window 1s >greek-report.txt
expect_contains greek-report.txt '^# Lane work queued from these threads: 1000 spans, 39\.970 ms'
expect_contains greek-report.txt '^#Children ms +Self ms +Spans +Command +DSO +Symbol +Queued from$'
# queue_work queued the spans: its own time is theirs, under Children.
expect_contains greek-report.txt '^ +[0-9.]+ +0\.000 +[0-9]+ +worker-0 +lanes +queue_work$'
greek_check greek-report.txt "report --tid" 1 "$(report_greek greek-report.txt)"
# Without --tid: both workers' spans, by name.
run_gtrace report -i greek.data --link-window 1s >greek-all.txt
greek_check greek-all.txt "report" 2 "$(report_greek greek-all.txt)"

# The tree: span names under [lane] nodes under the stacks, in ms and spans.
run_gtrace flame -i greek.data --tid "$worker" --link-window 1s --min-percent 0 >greek-flame.txt
greek_check greek-flame.txt "flame --tid" 1 "$(awk '
	{
		name = $0
		sub(/^ *[^ ]+ +[^ ]+  /, "", name)
		indent = match(name, /[^ ]/)
		sub(/^ +/, "", name)
	}
	depth && indent <= depth { depth = 0 }
	name == "queue_work" { depth = indent; next }
	$1 ~ /ms$/ && name ~ /^(alpha|beta|gamma|delta|epsilon|zeta|eta)$/ {
		spans[name] += $2
		us[name] += int($1 * 1000 + 0.5)
		if (depth)
			from[name] += $2
	}
	END { for (n in spans) print n, spans[n], us[n], from[n] + 0 }' greek-flame.txt)"

# Folded in target ns: one line per stack, lane and name. They carry no
# span count: each name's ns must be its spans' time.
run_gtrace flame -i greek.data --tid "$worker" --link-window 1s --folded --weight target \
	>greek-folded.txt
expect_not_contains "$TESTDIR/stderr" 'not weighed'
greek_check greek-folded.txt "flame --folded" 1 "$(awk '
	BEGIN { split("alpha beta gamma delta epsilon zeta eta", name, " ")
		for (i = 1; i <= 7; i++) dur[name[i]] = i * 10 }
	{
		stack = $0
		sub(/ [0-9]+$/, "", stack)
		n = split(stack, frame, ";")
		us[frame[n]] += $NF / 1000
		if (index(stack, ";queue_work;") && frame[n - 1] ~ /^\[lane\] /)
			from[frame[n]] += $NF / 1000
	}
	END { for (n in us) print n, us[n] / dur[n], us[n], from[n] / dur[n] }' greek-folded.txt)"
# Folded samples leave the lane work out, and say so on stderr.
run_gtrace flame -i greek.data --tid "$worker" --link-window 1s --folded >greek-samples.txt
expect_not_contains greek-samples.txt 'alpha'
expect_contains "$TESTDIR/stderr" "^gtrace: lane work not weighed: 1000 spans, 39\.970 ms of target time; '--weight target' weighs it$"
