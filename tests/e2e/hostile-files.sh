# SPDX-License-Identifier: MIT
# Recordings made to hurt whoever opens them, written with the project's
# own writer (tests/hostile/table-bomb, cubin-bomb): a few KB whose chunks
# decompress to hundreds of MB of rows, or whose cubins cost many times
# their size to parse. Every command that reads a recording, in each of its
# ways (report, flame, threads, diagnose, analyze, export, diff, --gpu-pc,
# --sass), stays under a memory and time ceiling on each, and says where
# it stopped reading; GTRACE_READ_LIMIT moves the limit; a directory of
# recordings with a bomb in it is read, the bomb up to its limit.
. "$SRCDIR/tests/e2e/lib.sh"

HOSTILE=$BUILD/tests/hostile
for tool in table-bomb cubin-bomb; do
	[ -x "$HOSTILE/$tool" ] || fail "the hostile tools are not built ($HOSTILE/$tool): run make tests"
done
unset GTRACE_READ_LIMIT

# each_command MIB SECONDS FILE: every way of reading FILE, each bounded;
# each must succeed, but --gpu-pc on a file without PC samples, which
# fails saying so.
each_command() {
	mib=$1
	seconds=$2
	input=$3
	for cmd in "report" "report --no-children -s comm,tid,dso" "report --gpu" \
		"flame --folded" "flame --svg out.svg" "threads" "threads --format json" \
		"diagnose" "diagnose --format json" "analyze" "analyze --format json" \
		"export -o out.pftrace" "export --format chrome -o out.json" \
		"report --gpu-pc" "report --gpu-pc --sass" "flame --gpu-pc --folded"; do
		# shellcheck disable=SC2086 # the command's words
		bounded "$mib" "$seconds" "$GTRACE" $cmd -i "$input"
		case "$bounded_status:$cmd" in
		0:*) ;;
		1:*--gpu-pc*) expect_contains "$TESTDIR/stderr" "^gtrace: no GPU PC samples in" ;;
		*) show "$TESTDIR/stderr"; fail "'gtrace $cmd -i $input' exited with $bounded_status" ;;
		esac
	done
	for cmd in "diff" "flame --diff --folded"; do
		# shellcheck disable=SC2086
		bounded $((mib * 2)) "$seconds" "$GTRACE" $cmd "$input" "$input"
		[ "$bounded_status" -eq 0 ] ||
			{ show "$TESTDIR/stderr"; fail "'gtrace $cmd $input $input' exited with $bounded_status"; }
	done
}

# cut_short FILE WHAT: reading FILE stops where WHAT ("table 'strings'" or
# "a chunk") passes the read limit, and says so; diagnose says it too.
cut_short() {
	bounded 256 20 "$GTRACE" threads -i "$1"
	expect_contains "$TESTDIR/stderr" "^gtrace: warning: '$1' is cut short after chunk 1 \(offset [0-9]+\): $2 (decodes|decompresses) to more than the read limit \([0-9.]+ MiB\); showing what was read \(GTRACE_READ_LIMIT sets the limit\)$"
	bounded 256 20 "$GTRACE" diagnose -i "$1"
	expect_contains "$TESTDIR/stdout" "^ended: +truncated after chunk 1 \(offset [0-9]+\): $2 "
}

# Small files: read within the floor of the limit (16 MiB decoded).
"$HOSTILE/table-bomb" strings strings.data || fail "table-bomb failed"
"$HOSTILE/table-bomb" samples chunks.data 4 || fail "table-bomb failed"
"$HOSTILE/table-bomb" strings strings1m.data 1 1024 || fail "table-bomb failed"
"$HOSTILE/table-bomb" tids tids.data 1 1024 || fail "table-bomb failed"
"$HOSTILE/table-bomb" unknown unknown.data 4 || fail "table-bomb failed"
for file in strings chunks strings1m tids unknown; do
	[ "$(wc -c <$file.data)" -lt 40000 ] || fail "$file.data is not a few KB"
	each_command 256 30 $file.data
done
cut_short strings.data "a chunk"
cut_short chunks.data "a chunk"
cut_short unknown.data "a chunk"
cut_short strings1m.data "table 'strings'"
# Under the limit: all its samples, each of a thread of its own, are read.
bounded 256 30 "$GTRACE" threads -i tids.data --format json
expect_not_contains "$TESTDIR/stderr" "cut short"

# A larger file may decode to TR_BUDGET_RATIO (1024) times its size: its
# chunk of 256 MiB decompresses, its rows do not fit.
"$HOSTILE/table-bomb" samples padded.data 1 262144 256 || fail "table-bomb failed"
limit=$(wc -c <padded.data | awk '{ printf "%.1f", $1 * 1024 / 1048576 }')
bounded 512 30 "$GTRACE" report -i padded.data
expect_contains "$TESTDIR/stderr" "table 'samples' decodes to more than the read limit \($limit MiB\)"

# GTRACE_READ_LIMIT sets the limit: what did not fit fits, and a bad one is refused.
bounded 512 30 env GTRACE_READ_LIMIT=128M "$GTRACE" diagnose -i strings1m.data
expect_contains "$TESTDIR/stdout" "^ended: +cleanly$"
expect_contains "$TESTDIR/stdout" "^decoded: +[0-9]+ bytes, [0-9.]+ times the file \(read limit 134217728 bytes\)$"
bounded 256 30 env GTRACE_READ_LIMIT=2K "$GTRACE" report -i tids.data
expect_contains "$TESTDIR/stderr" "is cut short after chunk 1 .*: a chunk decompresses to more than the read limit \(2048 bytes\)"
for bad in 0 -1 12Q lots 99999999999T; do
	expect_exit 2 env GTRACE_READ_LIMIT=$bad "$GTRACE" report -i tids.data
	expect_contains "$TESTDIR/stderr" "^gtrace: invalid GTRACE_READ_LIMIT '$bad': expected a size such as 512M or 8G$"
done

# Cubins whose line tables cost 40 bytes a byte, or a path as long as
# their directory a file name, parsed within what the tables left of the
# limit: each over it is counted as such.
"$HOSTILE/cubin-bomb" rows cubin-rows.data || fail "cubin-bomb failed"
"$HOSTILE/cubin-bomb" paths cubin-paths.data 6 64 || fail "cubin-bomb failed"
for file in cubin-rows cubin-paths; do
	[ "$(wc -c <$file.data)" -lt 40000 ] || fail "$file.data is not a few KB"
	each_command 256 30 $file.data
	bounded 256 30 "$GTRACE" report --gpu-pc -i $file.data
	expect_contains "$TESTDIR/stdout" "^# 0 of 6 samples \(0.00%\) at a source line; .*6 whose cubin would pass the read limit"
	bounded 256 30 "$GTRACE" diagnose -i $file.data
	expect_contains "$TESTDIR/stdout" "^PC source lines: +0 of 6 samples .*6 whose cubin would pass the read limit"
done
# A larger file: the first cubin fits in what is left, the others no more.
"$HOSTILE/cubin-bomb" rows cubin-big.data 6 4096 256 || fail "cubin-bomb failed"
bounded 640 60 "$GTRACE" report --gpu-pc --sass -i cubin-big.data
expect_contains "$TESTDIR/stdout" "^# 1 of 6 samples \(16.67%\) at a source line; 5 whose cubin would pass the read limit$"

# A directory with a bomb among the recordings: the bomb read to its limit, the rest whole.
mkdir job
cp tids.data job/rank0.data
cp strings1m.data job/rank1.data
bounded 512 30 "$GTRACE" threads -i job
[ "$bounded_status" -eq 0 ] || { show "$TESTDIR/stderr"; fail "'threads -i job' exited with $bounded_status"; }
expect_contains "$TESTDIR/stderr" "'job/rank1.data' is cut short after chunk 1"
exit 0
