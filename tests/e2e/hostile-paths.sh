# SPDX-License-Identifier: MIT
# The files a recorded program controls and the recorder opens, planted by
# the program itself (tests/hostile/planted-paths), run as nobody when the
# test runs as root: its JIT map /tmp/perf-PID.map as a FIFO, as a
# symbolic link to a file only root may read or to /dev/zero, owned by
# another user, or of 100 MiB; and its own executable's path made a FIFO
# while it runs. Each recording ends within its ceilings, refuses the file
# (diagnose's symbols.refused) and shows nothing of it; a map of the
# program's own user names its JIT code, and one over the cap is read as
# far as the cap (symbols.jit-maps-cut). Then the files a program's debug
# information names (made with objcopy, and dwz where it is installed): a
# FIFO as its .gnu_debuglink file beside a copy of hot without DWARF, and
# as the supplementary file its .gnu_debugaltlink names beside a copy
# with DWARF, whose strings are in that file with dwz. None is opened:
# the copies are named from their symbol tables.
. "$SRCDIR/tests/e2e/lib.sh"

tool=$BUILD/tests/hostile/planted-paths
[ -x "$tool" ] || fail "the hostile tools are not built ($tool): run make tests"
[ "$(uname -m)" = x86_64 ] || skip x86_64 "planted-paths runs x86-64 code"
need_perf_events

root=false
as_target=
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null 2>&1 || skip tools "setpriv (util-linux) is not installed"
	root=true
	as_target="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all --"
fi
# A planted map outlives a failed run: the program printed its pid.
trap 'rm -f "/tmp/perf-$(cat "$TESTDIR/stdout" 2>/dev/null).map"' EXIT

# plant NAME [as-is] MODE [ARG]: records $exe (planted-paths) MODE [ARG],
# as the target user unless as-is, under 200 MiB and 30 s into NAME.data;
# then NAME.report (self shares) and NAME.diag.
exe=$tool
plant() {
	name=$1
	shift
	prefix=$as_target
	if [ "$1" = as-is ]; then
		prefix=
		shift
	fi
	# shellcheck disable=SC2086 # the prefix is words
	bounded 200 30 "$GTRACE" record -q -o "$name.data" -- $prefix "$exe" "$@"
	if [ "$bounded_status" -ne 0 ]; then
		show "$TESTDIR/stderr"
		fail "recording planted-paths $* exited with $bounded_status"
	fi
	rm -f "/tmp/perf-$(cat "$TESTDIR/stdout").map"
	echo "$name: $bounded_mib MiB, $bounded_seconds s"
	run_gtrace report -i "$name.data" --no-children >"$name.report"
	run_gtrace diagnose -i "$name.data" >"$name.diag"
}

# counter DIAG NAME: a counter of diagnose's other counters; -1 if absent.
counter() {
	awk -v name="$2" '$1 == name && $2 ~ /^[0-9]+$/ { print $2; found = 1; exit }
		END { if (!found) print -1 }' "$1"
}

# refused NAME: NAME's recording refused the planted file.
refused() {
	n=$(counter "$1.diag" symbols.refused)
	[ "$n" -gt 0 ] || { show "$1.diag"; fail "$1: symbols.refused is $n, expected some"; }
}

plant own own
expect_contains own.report ' jit_spin_code$'
[ "$(counter own.diag symbols.refused)" -le 0 ] || fail "own: its own map refused"

plant fifo fifo
refused fifo

printf '7e0000000000 10 root_only_secret\n' >secret.map
chmod 600 secret.map
plant symlink symlink "$TESTDIR/secret.map"
expect_not_contains symlink.report 'root_only_secret'
refused symlink

plant devzero devzero
refused devzero

if $root; then
	plant other as-is chown 1
	expect_not_contains other.report 'jit_spin_code'
	refused other
fi

plant huge huge
expect_contains huge.report ' jit_spin_code$'
[ "$(counter huge.diag symbols.jit-maps-cut)" -eq 1 ] ||
	{ show huge.diag; fail "huge: the map over the cap is not counted as cut"; }

cp "$tool" exe-copy
exe=$TESTDIR/exe-copy
plant exe-fifo as-is exe-fifo
[ -p exe-copy ] || fail "exe-fifo: the executable's path is no FIFO"
expect_not_contains exe-fifo.report 'spin_own'
refused exe-fifo

# The debug links need objcopy to make.
if ! command -v objcopy >/dev/null 2>&1; then
	echo "note: no objcopy (binutils): debug links not checked"
	exit 0
fi
mkdir debuglink altlink
objcopy --only-keep-debug "$WORKLOADS/hot" debuglink/hot.debug &&
	objcopy --strip-debug --add-gnu-debuglink=debuglink/hot.debug "$WORKLOADS/hot" debuglink/hot ||
	fail "objcopy cannot make a copy of hot with a debug link"
rm debuglink/hot.debug
mkfifo debuglink/hot.debug
{ printf 'alt.fifo\0'; head -c 20 /dev/zero; } >altlink.section
objcopy --add-section .gnu_debugaltlink=altlink.section "$WORKLOADS/hot" altlink/hot ||
	fail "objcopy cannot add a .gnu_debugaltlink to hot"
mkfifo altlink/alt.fifo
names="debuglink altlink"
mkdir dwz
cp "$WORKLOADS/hot" dwz/hot
cp "$WORKLOADS/hot" dwz/twin
if ! command -v dwz >/dev/null 2>&1; then
	echo "note: no dwz: DWARF in a supplementary file not checked"
elif (cd dwz && dwz -m alt.dwz hot twin) 2>dwz.err; then
	rm dwz/alt.dwz
	mkfifo dwz/alt.dwz
	names="$names dwz"
elif grep -q 'Unknown debugging section' dwz.err; then
	# dwz 0.15 cannot read the .debug_addr of clang's DWARF 5 (make UBSAN=1).
	echo "note: dwz cannot read hot's DWARF: DWARF in a supplementary file not checked"
else
	show dwz.err
	fail "dwz cannot share out the DWARF of hot"
fi
for name in $names; do
	bounded 200 30 "$GTRACE" record -q -o "$name.data" -- "$TESTDIR/$name/hot" 0.3
	[ "$bounded_status" -eq 0 ] || { show "$TESTDIR/stderr"; fail "recording $name/hot failed"; }
	echo "$name: $bounded_mib MiB, $bounded_seconds s"
	run_gtrace report -i "$name.data" --no-children >"$name.report"
	expect_contains "$name.report" ' hot_leaf$'
done
