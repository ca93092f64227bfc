# SPDX-License-Identifier: MIT
# The recorder names the addresses of each chunk in the next one: killed
# after its second chunk, it leaves the first second's names in the file,
# which read without the program. Killed after its first, it leaves none:
# report names the addresses from the local files and says so; a file that
# is no longer the recorded build is not used; --symfs finds the files
# under another root.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

# killed NAME PROGRAM [UNTIL]: records PROGRAM (hot's arguments) into
# NAME.data and kills the recorder with SIGKILL once the command UNTIL
# (default: the first chunk is written) succeeds.
killed() {
	"$GTRACE" record -q -o "$1.data" -- sh -c \
		'echo "$GTRACE_TARGET_SOCKET" >"$0.sock"; echo $$ >"$0.pid"; exec "$1" 30' "$1" "$2" \
		</dev/null 2>"$1.err" &
	gtrace_pid=$!
	wait_for "$1.pid"
	tries=0
	while ! ${3:-first_chunk} "$1.data"; do
		tries=$((tries + 1))
		[ $tries -le 400 ] || { kill -KILL "$(cat "$1.pid")" $gtrace_pid; fail "the recording never met ${3:-first_chunk}"; }
		sleep 0.05
	done
	kill -KILL $gtrace_pid
	wait $gtrace_pid 2>/dev/null
	kill -KILL "$(cat "$1.pid")" 2>/dev/null
	# A killed recorder cannot remove its span socket: the test does.
	rm -rf "$(dirname "$(cat "$1.sock")")"
}

# first_chunk FILE: FILE holds a chunk (its header is 32 bytes).
first_chunk() {
	[ "$(wc -c <"$1" 2>/dev/null || echo 0)" -gt 64 ]
}

# named_in_file FILE: FILE itself names hot_leaf (--symfs keeps the local files out).
named_in_file() {
	"$GTRACE" report -i "$1" --no-children --symfs "$TESTDIR/root" 2>/dev/null |
		grep -q ' hot_leaf$'
}

mkdir bin root
# Killed once the file names hot_leaf, the program gone: the names stay.
cp "$WORKLOADS/hot" bin/named
killed named "$TESTDIR/bin/named" named_in_file
rm bin/named
run_gtrace report -i named.data --no-children >named.txt
expect_contains named.txt ' named +named +hot_leaf$'

cp "$WORKLOADS/hot" bin/app
killed plain "$TESTDIR/bin/app"
"$GTRACE" report -i plain.data --no-children >plain.txt 2>plain.warn ||
	{ show plain.warn; fail "the killed recording does not read"; }
expect_contains plain.warn "^gtrace: warning: 'plain.data' lacks names \\(its recorder did not finish\\): [1-9][0-9]* of [0-9]+ addresses named from the local files\$"
expect_contains plain.txt ' app +app +hot_leaf$'

# The file at the recorded path is another build now: not used.
cp "$WORKLOADS/recurse" bin/app
"$GTRACE" report -i plain.data --no-children >stale.txt 2>stale.warn ||
	{ show stale.warn; fail "the killed recording does not read"; }
expect_contains stale.warn ', some files skipped: not the recorded build$'
expect_not_contains stale.txt 'hot_leaf|recurse'

# The file moved under another root: --symfs finds it there.
cp "$WORKLOADS/hot" bin/app2
killed moved "$TESTDIR/bin/app2"
mkdir -p "root$TESTDIR/bin"
mv bin/app2 "root$TESTDIR/bin/app2"
run_gtrace report -i moved.data --no-children >nosymfs.txt
expect_not_contains nosymfs.txt 'hot_leaf'
run_gtrace report -i moved.data --no-children --symfs "$TESTDIR/root" >symfs.txt
expect_contains symfs.txt ' app2 +app2 +hot_leaf$'
exit 0
