# SPDX-License-Identifier: MIT
# gtrace script prints the samples as perf script does, so that the tools
# that read perf script's text read it unchanged: folded by the rules of
# FlameGraph's stackcollapse-perf.pl (written out below in awk: Debian does
# not package FlameGraph), it gives the stacks and counts of
# 'gtrace flame --folded', weighed by the period, as the script weighs them.
. "$SRCDIR/tests/e2e/lib.sh"

# tidy: what stackcollapse-perf.pl does to a function name by default (its
# tidy_generic): ';' becomes ':', everything from the first '(' that does
# not open "(anonymous namespace)" goes, unless the name looks like a Go
# method ("pkg.(*T).M"), and quotes go.
TIDY='
function tidy(name,    rest, at, cut) {
	gsub(/;/, ":", name)
	if (name !~ /\.\(.*\)\./) {
		rest = name
		cut = 0
		while ((at = index(rest, "(")) > 0) {
			if (substr(rest, at, 21) != "(anonymous namespace)") {
				name = substr(name, 1, cut + at - 1)
				break
			}
			cut += at
			rest = substr(rest, at + 1)
		}
	}
	gsub(/["\047]/, "", name)
	return name
}'

# fold FILE: perf script text folded as stackcollapse-perf.pl folds it. A
# sample starts with a line that starts with a non-blank: its command is
# what comes before the first blank-separated number (PID or PID/TID)
# followed by a blank, spaces made '_'; ": PERIOD EVENT:" ends it (no
# period: 1), and only the first event seen counts. A frame line is
# "ADDRESS FUNCTION (DSO)": a "+0x..." offset is cut from the function, and
# "[unknown]" is the DSO'\''s basename in brackets when it has one. An empty
# line ends the sample: "command;outermost;...;innermost", weighed by its
# period.
fold() {
	awk "$TIDY"'
	/^#/ { next }
	/^$/ {
		if (pname != "") {
			stack = pname
			for (i = n; i >= 1; i--)
				stack = stack ";" frame[i]
			count[stack] += period
		}
		n = 0
		pname = ""
		next
	}
	/^[^ \t]/ {
		pname = ""
		if (!match(substr($0, 2), /[ \t]+[0-9]+\/?[0-9]*[ \t]/))
			next
		comm = substr($0, 1, RSTART)
		period = 1
		event = ""
		if (match($0, /:[ \t]*[0-9]*[ \t]+[^ \t]+:[ \t]*$/)) {
			k = split(substr($0, RSTART + 1), field, /[ \t]+/)
			for (i = 1; i <= k; i++) {
				if (field[i] ~ /^[0-9]+$/)
					period = field[i] + 0
				else if (field[i] != "")
					event = field[i]
			}
		}
		if (first_event == "")
			first_event = event
		if (event != first_event)
			next
		gsub(/ /, "_", comm)
		pname = comm
		next
	}
	{
		if (pname == "")
			next
		line = $0
		sub(/^[ \t]+/, "", line)
		if (!match(line, /^[A-Za-z0-9_]+/))
			next
		rest = substr(line, RLENGTH + 1)
		sub(/^[ \t]+/, "", rest)
		close_at = 0
		for (i = length(rest); i > 0 && !close_at; i--)
			if (substr(rest, i, 1) == ")")
				close_at = i
		open_at = 0
		for (i = close_at - 2; i > 1 && !open_at; i--)
			if (substr(rest, i, 2) == " (")
				open_at = i
		if (!open_at)
			next
		func = substr(rest, 1, open_at - 1)
		dso = substr(rest, open_at + 2, close_at - open_at - 2)
		sub(/\+0x[0-9a-f]+$/, "", func)
		if (func ~ /^\(/)
			next
		if (func == "[unknown]" && dso != "[unknown]") {
			sub(/.*\//, "", dso)
			func = "[" dso "]"
		}
		frame[++n] = tidy(func)
	}
	END { for (s in count) print s, count[s] }
	' "$1" | LC_ALL=C sort
}

# expect_folded FILE: flame --folded in FILE, with the names as a perf
# script folder sees them (an unnamed frame "[dso]+0xADDR" as "[dso]",
# tidied, a thread name's spaces made '_') and the counts weighed by
# $period, is what fold gives of script.txt.
expect_folded() {
	awk -v period="$period" "$TIDY"'
	{
		count = $NF
		sub(/ [0-9]+$/, "")
		k = split($0, frame, ";")
		gsub(/ /, "_", frame[1])
		stack = frame[1]
		for (i = 2; i <= k; i++) {
			if (frame[i] ~ /^\[.*\]\+0x[0-9a-f]+$/)
				sub(/\+0x[0-9a-f]+$/, "", frame[i])
			else if (frame[i] ~ /^0x[0-9a-f]+$/)
				frame[i] = "[unknown]"
			stack = stack ";" tidy(frame[i])
		}
		sum[stack] += count * period
	}
	END { for (s in sum) print s, sum[s] }
	' "$1" | LC_ALL=C sort >flame-weighed.txt
	fold script.txt >script-folded.txt
	[ -s script-folded.txt ] || { show script.txt; fail "script.txt folds to nothing"; }
	if ! cmp -s flame-weighed.txt script-folded.txt; then
		diff flame-weighed.txt script-folded.txt >&2
		fail "$2: the folded script is not flame --folded"
	fi
}

# check_layout: script.txt is laid out as perf script's default output: a
# header line as the Firefox Profiler detects it, frame lines as
# stackcollapse-perf.pl and the importers match them, an empty line after
# each sample; and $period is its period (1 when it has none).
check_layout() {
	expect_contains script.txt '^[^ 	].* [0-9]+/[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: '
	bad=$(grep -vcE '^$|^[^ 	].* [0-9]+/[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: +([0-9]+ )?[^ ]+: $|^	 *[0-9a-f]+ .+ \([^)]*\)$' script.txt)
	[ "$bad" -eq 0 ] || { show script.txt; fail "$bad lines of script.txt are not perf script's"; }
	[ "$(head -n 1 script.txt | cut -c1)" != "#" ] || fail "script.txt starts with a comment"
	period=$(sed -n '1s/.*: *\([0-9]*\) [^ ]*: $/\1/p' script.txt)
	period=${period:-1}
	[ "$(grep -c '^[^ 	]' script.txt)" -eq "$(grep -c '^$' script.txt)" ] ||
		fail "a sample of script.txt does not end with an empty line"
}

# The recordings of the golden tests: DWARF stacks of three threads, and
# CPython frames over C (their names, cut at '(' by the tidying, fold alike).
for data in cpu python; do
	run_gtrace script -i "$SRCDIR/tests/golden/recordings/$data.data" >script.txt
	check_layout
	run_gtrace flame -i "$SRCDIR/tests/golden/recordings/$data.data" --folded --no-nvtx >flame.txt
	expect_folded flame.txt "$data.data"
done

# Inlined functions: frames of their own with --inline, in both.
run_gtrace script -i "$SRCDIR/tests/golden/recordings/cpu.data" --inline >script.txt
check_layout
run_gtrace flame -i "$SRCDIR/tests/golden/recordings/cpu.data" --inline --folded --no-nvtx >flame.txt
expect_folded flame.txt "cpu.data --inline"

# -o writes the same text to a file; the filters select as flame's do.
run_gtrace script -i "$SRCDIR/tests/golden/recordings/cpu.data" -o out.txt -c beta
run_gtrace script -i "$SRCDIR/tests/golden/recordings/cpu.data" --comm beta >script.txt
cmp -s out.txt script.txt || fail "script -o wrote other text than to stdout"
expect_contains script.txt '^beta '
expect_not_contains script.txt '^(alpha|gamma|threads) '
run_gtrace flame -i "$SRCDIR/tests/golden/recordings/cpu.data" --folded --comm beta >flame.txt
check_layout
expect_folded flame.txt "cpu.data --comm beta"

# A window: the samples before a time and those from then on are all of them.
run_gtrace script -i "$SRCDIR/tests/golden/recordings/cpu.data" --end 150ms >before.txt
run_gtrace script -i "$SRCDIR/tests/golden/recordings/cpu.data" --start 150ms >after.txt
run_gtrace script -i "$SRCDIR/tests/golden/recordings/cpu.data" >script.txt
[ -s before.txt ] && [ -s after.txt ] || fail "a window of script holds no sample"
cat before.txt after.txt | cmp -s - script.txt ||
	fail "script --end 150ms and --start 150ms together are not all the samples"

# A recording made here.
need_perf_events
record threads.data -- "$WORKLOADS/threads" 1
run_gtrace script -i threads.data >script.txt
check_layout
expect_contains script.txt '^(alpha|beta|gamma) +[0-9]+/[0-9]+ '
expect_contains script.txt '^	 *[0-9a-f]+ spin_(alpha|beta|gamma) \(.*/threads\)$'
run_gtrace flame -i threads.data --folded --no-nvtx >flame.txt
expect_folded flame.txt "a recording of threads"
