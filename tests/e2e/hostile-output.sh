# SPDX-License-Identifier: MIT
# What gtrace writes is never written through a name another user planted:
# a symbolic link at -o (record, export, flame --svg) in a sticky shared
# directory is refused and its target left alone, as is a FIFO or device;
# the previous recording is moved to .old without following a link there;
# a directory anyone may write to without the sticky bit is refused; a
# recording leaves no temporary beside it. As root and as an ordinary user.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

# The shared directory, as /tmp; the victim outside it, which the user
# running gtrace may write (root may write anything).
mkdir shared private
chmod 1777 shared
chmod 755 private
printf 'precious\n' >private/victim.conf
chmod 666 private/victim.conf

# refused WHAT CMD...: CMD exits 1 with one line saying WHAT of the output,
# the victim untouched. Bounded: opening a FIFO for writing would hang.
refused() {
	what=$1
	shift
	bounded 200 30 "$@"
	[ "$bounded_status" -eq 1 ] ||
		{ show "$TESTDIR/stderr"; fail "'$*' exited with $bounded_status, not 1"; }
	expect_lines "$TESTDIR/stderr" 1
	expect_contains "$TESTDIR/stderr" "^gtrace: cannot create '[^']+': $what"
	[ "$(cat private/victim.conf)" = precious ] || fail "'$*' wrote through to the victim"
}

# The attack of the issue: a link at the name root records to.
ln -s "$TESTDIR/private/victim.conf" shared/gtrace.data
refused 'it is a symbolic link' "$GTRACE" record -q -o shared/gtrace.data -- true
[ -L shared/gtrace.data ] || fail "the planted link was removed or replaced"
record plain.data -- "$WORKLOADS/hot" 0.2
refused 'it is a symbolic link' "$GTRACE" export -i plain.data -o shared/gtrace.data
refused 'it is a symbolic link' "$GTRACE" flame -i plain.data --svg shared/gtrace.data
rm shared/gtrace.data

# A FIFO or a device at the name is no file to replace.
mkfifo shared/fifo.data
refused 'it is not a regular file' "$GTRACE" record -q -o shared/fifo.data -- true
refused 'it is not a regular file' "$GTRACE" export -i plain.data -o shared/fifo.data
refused 'it is not a regular file' "$GTRACE" record -q -o /dev/null -- true

# The previous recording goes to .old, replacing a link there, not following it.
cp plain.data shared/mine.data
ln -s "$TESTDIR/private/victim.conf" shared/mine.data.old
record shared/mine.data -- true
[ "$(cat private/victim.conf)" = precious ] || fail "the rotation to .old wrote through a link"
[ ! -L shared/mine.data.old ] && cmp -s shared/mine.data.old plain.data ||
	fail "the previous recording is not mine.data.old"

# Anyone could swap the file in a directory writable by all and not sticky.
mkdir open
chmod 777 open
refused 'its directory is writable by anyone and not sticky' \
	"$GTRACE" record -q -o open/x.data -- true
refused 'its directory is writable by anyone and not sticky' \
	"$GTRACE" export -i plain.data -o open/x.json
[ -z "$(ls -A open)" ] || fail "something was left in the refused directory: $(ls -A open)"

# Nothing but the outputs is left beside them.
run_gtrace export -i plain.data -o shared/x.json
run_gtrace flame -i plain.data --svg shared/x.svg
leftover=$(ls -A shared | grep -v -x -e fifo.data -e mine.data -e mine.data.old \
	-e x.json -e x.svg)
[ -z "$leftover" ] || fail "left beside the outputs: $leftover"

# An ordinary user in the same shared directory, who may reach the victim.
chmod 711 "$TESTDIR"
[ "$(id -u)" -eq 0 ] && chown 65534:65534 private/victim.conf
ln -s "$TESTDIR/private/victim.conf" shared/user.data
as_unprivileged "$GTRACE" record -q -o shared/user.data -- true >/dev/null 2>stderr </dev/null
status=$?
[ $status -eq 1 ] || { show stderr; fail "an ordinary user's record through a link exited with $status"; }
expect_contains stderr "^gtrace: cannot create 'shared/user.data': it is a symbolic link"
[ "$(cat private/victim.conf)" = precious ] || fail "an ordinary user's record wrote through to the victim"
rm shared/user.data
as_unprivileged "$GTRACE" record -q -o shared/user.data -- "$WORKLOADS/hot" 0.2 \
	>/dev/null 2>stderr </dev/null
status=$?
if [ $status -eq 1 ] && is_perf_refusal stderr; then
	skip perf-events-user "an ordinary user may not record here: $(cat stderr)"
fi
[ $status -eq 0 ] || { show stderr; fail "an ordinary user's recording exited with $status"; }
run_gtrace report -i shared/user.data --no-children >report.txt
expect_contains report.txt 'hot_leaf$'
