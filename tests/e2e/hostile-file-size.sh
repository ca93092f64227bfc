# SPDX-License-Identifier: MIT
# A file past the size limit (ulimit -f, RLIMIT_FSIZE) fails as a full disk
# does, without SIGXFSZ killing gtrace: one line naming the file and the
# problem, exit 1; cut at the header or the first chunk, no file is left
# and the previous one stays in its place; cut later, the recording reads
# up to its last whole chunk and the previous one is in .old. export and
# flame --svg leave what was at their output as it was.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
command -v prlimit >/dev/null 2>&1 || skip tools "prlimit (util-linux) is not installed"

# capped BYTES CMD...: CMD with the files it writes capped at BYTES, its
# stderr through a pipe (which the cap does not cut) into $TESTDIR/stderr;
# its exit status in $capped_status. As the user $run_as says.
run_as=
capped() {
	bytes=$1
	shift
	{ $run_as prlimit --fsize="$bytes" -- "$@" </dev/null 2>&1 >/dev/null; echo $? >capped.status; } |
		cat >"$TESTDIR/stderr"
	capped_status=$(cat capped.status)
}

# failed_with LINE: the capped command exited 1 saying LINE, and only that.
failed_with() {
	[ "$capped_status" -eq 1 ] ||
		{ show "$TESTDIR/stderr"; fail "exited with $capped_status, not 1, for '$1'"; }
	expect_lines "$TESTDIR/stderr" 1
	expect_contains "$TESTDIR/stderr" "^gtrace: $1\$"
}

# kept NAME PREVIOUS: NAME is PREVIOUS still, and nothing was left beside it.
kept() {
	cmp -s "$1" "$2" || fail "'$1' is not the previous '$2' any more"
	[ ! -e "$1.old" ] || fail "'$1' was moved to '$1.old'"
	leftover=$(ls -A "$(dirname "$1")" | grep -F ".$(basename "$1")." || true)
	[ -z "$leftover" ] || fail "a temporary is left beside '$1': $leftover"
}

record prev.data -- "$WORKLOADS/hot" 0.2
cp prev.data x.data

# The header (32 bytes) does not fit.
capped 16 "$GTRACE" record -q -o x.data -- true
failed_with "cannot create 'x.data': File too large"
kept x.data prev.data

# The header fits, the first chunk does not.
capped 100 "$GTRACE" record -q -o x.data -- true
failed_with "cannot write 'x.data': File too large; no recording was kept"
kept x.data prev.data

# Capped at its size once its first chunk is written: the chunks before the
# cap read, the previous recording is x.data.old.
"$GTRACE" record -q -o x.data -- "$WORKLOADS/hot" 3 </dev/null >/dev/null 2>stderr &
gtrace_pid=$!
tries=0
while [ ! -e x.data.old ] || [ "$(wc -c <x.data)" -le 64 ]; do
	tries=$((tries + 1))
	[ $tries -le 400 ] || { kill -KILL $gtrace_pid; fail "no chunk written"; }
	sleep 0.05
done
prlimit --pid $gtrace_pid --fsize="$(wc -c <x.data)"
wait $gtrace_pid
capped_status=$?
failed_with "cannot write 'x.data': File too large; it reads up to its last whole chunk"
cmp -s x.data.old prev.data || fail "the previous recording is not x.data.old"
run_gtrace diagnose -i x.data >diag.txt
expect_contains diag.txt '^ended: +truncated'
at_least "samples read before the cap" "$(diagnose_value diag.txt samples)" 1

# export and flame --svg: the previous output stays, no temporary beside it.
run_gtrace export -i prev.data --format chrome -o e.json
cp e.json prev.json
capped 1000 "$GTRACE" export -i prev.data --format chrome -o e.json
failed_with "cannot write 'e.json': File too large"
kept e.json prev.json
run_gtrace flame -i prev.data --svg f.svg
cp f.svg prev.svg
capped 1000 "$GTRACE" flame -i prev.data --svg f.svg
failed_with "cannot write 'f.svg': File too large"
kept f.svg prev.svg

# An ordinary user, in a shared directory.
chmod 711 "$TESTDIR"
mkdir shared
chmod 1777 shared
cp prev.data shared/u.data
[ "$(id -u)" -eq 0 ] && chown 65534:65534 shared/u.data
run_as=as_unprivileged
capped 100 "$GTRACE" record -q -o shared/u.data -- true
failed_with "cannot write 'shared/u.data': File too large; no recording was kept"
kept shared/u.data prev.data
