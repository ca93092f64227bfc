# SPDX-License-Identifier: MIT
# A full disk (a small tmpfs): one line naming the file and the problem,
# exit 1. Full at the header, no file is left and the previous recording
# stays in its place; full later, the recording reads up to its last whole
# chunk and the previous one is in .old. export leaves its previous output.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events
[ "$(id -u)" -eq 0 ] || skip root "mounting a small tmpfs needs root"
mkdir disk
mount -t tmpfs -o size=256k,mode=755 tmpfs disk 2>/dev/null || skip root "cannot mount a tmpfs here"
trap 'umount -l disk' EXIT

# fill: the disk has no byte left.
fill() {
	dd if=/dev/zero of=disk/fill bs=4k 2>/dev/null
	[ "$(df -k disk | awk 'NR == 2 { print $4 }')" -eq 0 ] || fail "the tmpfs is not full"
}

# kept NAME PREVIOUS: NAME is PREVIOUS still, and nothing was left beside it.
kept() {
	cmp -s "$1" "$2" || fail "'$1' is not the previous '$2' any more"
	[ ! -e "$1.old" ] || fail "'$1' was moved to '$1.old'"
	leftover=$(ls -A disk | grep -F ".$(basename "$1")." || true)
	[ -z "$leftover" ] || fail "a temporary is left beside '$1': $leftover"
}

record prev.data -- "$WORKLOADS/hot" 0.2
run_gtrace export -i prev.data --format chrome -o prev.json
cp prev.data disk/x.data
cp prev.json disk/e.json

# Full before the header.
fill
expect_exit 1 "$GTRACE" record -q -o disk/x.data -- true
expect_lines stderr 1
expect_contains stderr "^gtrace: cannot create 'disk/x.data': No space left on device\$"
kept disk/x.data prev.data
expect_exit 1 "$GTRACE" export -i prev.data --format chrome -o disk/e.json
expect_lines stderr 1
expect_contains stderr "^gtrace: cannot (create|write) 'disk/e.json': No space left on device\$"
kept disk/e.json prev.json
rm disk/fill

# Full once the first chunk is written.
"$GTRACE" record -q -o disk/x.data -- "$WORKLOADS/hot" 3 </dev/null >/dev/null 2>stderr &
gtrace_pid=$!
tries=0
while [ ! -e disk/x.data.old ] || [ "$(wc -c <disk/x.data)" -le 64 ]; do
	tries=$((tries + 1))
	[ $tries -le 400 ] || { kill -KILL $gtrace_pid; fail "no chunk written"; }
	sleep 0.05
done
fill
wait $gtrace_pid
status=$?
[ $status -eq 1 ] || { show stderr; fail "a recording on a disk that filled up exited with $status"; }
expect_lines stderr 1
expect_contains stderr "^gtrace: cannot write 'disk/x.data': No space left on device; it reads up to its last whole chunk\$"
cmp -s disk/x.data.old prev.data || fail "the previous recording is not x.data.old"
run_gtrace diagnose -i disk/x.data >diag.txt
expect_contains diag.txt '^ended: +truncated'
at_least "samples read before the disk filled" "$(diagnose_value diag.txt samples)" 1
