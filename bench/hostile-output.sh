#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# What gtrace writes and how the recorder ends, against hostile setups:
# for each, the exit status, peak RSS, wall time and what was left. Every
# run is capped at 30 s (timeout: "capped"). Compare two builds:
#
#   GTRACE=/path/to/old/gtrace bench/hostile-output.sh
#   bench/hostile-output.sh
#
# Some cases need root (a tmpfs, nobody's recording of a set-user-ID
# program) and say "skipped" without it.

. "$(dirname "$0")/lib.sh"
set +e

CAP_S=30
ROOT=$([ "$(id -u)" -eq 0 ] && echo yes || echo no)
cd "$WORK" || exit 1
export XDG_RUNTIME_DIR=$WORK/run
mkdir -p run

# run NAME CMD...: CMD under GNU time and the cap (SIGTERM, then status
# 124); sets status, mib, secs.
run() {
	local name=$1
	shift
	/usr/bin/time -f '%M %e' -o "$name.time" timeout $CAP_S "$@" \
		>"$name.out" 2>"$name.err" </dev/null
	status=$?
	mib=$(awk 'END { printf "%.1f", $1 / 1024 }' "$name.time")
	secs=$(awk 'END { print $2 }' "$name.time")
	[ "$status" -eq 124 ] && secs="$secs (capped)"
}

row() {
	printf '%-34s %6s %8s %14s  %s\n' "$1" "$2" "$3" "$4" "$5"
}

say "GTRACE=$GTRACE"
row case exit "RSS MiB" seconds left
record_hot() { "$GTRACE" record -q -o "$1" -- "$WORKLOADS/hot" 0.2 </dev/null >/dev/null 2>&1; }
record_hot prev.data

# -o a symbolic link, planted in a sticky shared directory, to a victim.
mkdir -m 1777 shared
echo precious >victim
ln -s "$WORK/victim" shared/gtrace.data
run link "$GTRACE" record -q -o shared/gtrace.data -- true
row "record -o <symlink>" "$status" "$mib" "$secs" \
	"$(grep -qx precious victim && echo "victim intact" || echo "victim overwritten")"
echo precious >victim
run link-export "$GTRACE" export -i prev.data -o shared/gtrace.data
row "export -o <symlink>" "$status" "$mib" "$secs" \
	"$(grep -qx precious victim && echo "victim intact" || echo "victim overwritten")"

# -o a FIFO nobody reads.
mkfifo shared/fifo.data
run fifo "$GTRACE" record -q -o shared/fifo.data -- true
row "record -o <fifo>" "$status" "$mib" "$secs" \
	"$([ -s fifo.err ] && head -n 1 fifo.err | cut -c1-60 || echo "hung opening it")"

# SIGUSR1 (QUIT, USR2, ALRM alike) to the recorder of a long command.
# signal SIG: once the command wrote gtrace.pid, sends SIG to its recorder.
signal() {
	rm -f gtrace.pid
	(while [ ! -s gtrace.pid ]; do sleep 0.05; done; sleep 0.5; kill -"$1" "$(cat gtrace.pid)") &
}
TARGET='echo "$GTRACE_TARGET_SOCKET" >socket.path; echo $$ >target.pid; echo $PPID >gtrace.pid; exec sleep 20'
signal USR1
run usr1 env --default-signal "$GTRACE" record -q -o usr1.data -- sh -c "$TARGET"
left=$("$GTRACE" diagnose -i usr1.data 2>/dev/null | awk '/^ended:/ { $1 = ""; print; exit }')
kill -0 "$(cat target.pid)" 2>/dev/null && left="$left; target running" && kill -KILL "$(cat target.pid)"
[ -e "$(dirname "$(cat socket.path)")" ] && left="$left; socket left"
row "SIGUSR1 to record" "$status" "$mib" "$secs" "ended:$left"

# SIGKILL: the span socket.
signal KILL
run kill "$GTRACE" record -q -o kill.data -- sh -c "$TARGET"
kill -KILL "$(cat target.pid)" 2>/dev/null
sleep 0.5
row "SIGKILL to record" "$status" "$mib" "$secs" \
	"$([ -e "$(dirname "$(cat socket.path)")" ] && echo "socket left" || echo "socket removed")"

# ulimit -f: the header fits, the first chunk does not; a previous file there.
cp prev.data fsize.data
run fsize prlimit --fsize=100 -- "$GTRACE" record -q -o fsize.data -- true
row "record, file size cap 100 B" "$status" "$mib" "$secs" \
	"$(cmp -s fsize.data prev.data && echo "previous kept" || echo "previous lost ($(wc -c <fsize.data) B file)")"
"$GTRACE" export -i prev.data --format chrome -o e.json >/dev/null 2>&1
cp e.json prev.json
run fsize-export prlimit --fsize=1000 -- "$GTRACE" export -i prev.data --format chrome -o e.json
row "export, file size cap 1000 B" "$status" "$mib" "$secs" \
	"$(cmp -s e.json prev.json && echo "previous kept" || echo "previous lost ($(wc -c <e.json) B file)")"

# A full disk mid-recording (a 256 KiB tmpfs filled once the first chunk is out).
if [ "$ROOT" = yes ] && mkdir disk && mount -t tmpfs -o size=256k tmpfs disk 2>/dev/null; then
	(while [ ! -e disk/full.data ] || [ "$(wc -c <disk/full.data)" -le 64 ]; do sleep 0.05; done
	 dd if=/dev/zero of=disk/fill bs=4k 2>/dev/null) &
	run full "$GTRACE" record -q -o disk/full.data -- "$WORKLOADS/hot" 3
	wait
	row "record, disk full mid-way" "$status" "$mib" "$secs" \
		"$("$GTRACE" diagnose -i disk/full.data 2>/dev/null | awk '/^ended:/ { $1 = ""; print "ended:" $0; exit }'); $(head -n 1 full.err | cut -c1-60)"
	umount -l disk
else
	row "record, disk full mid-way" - - - "skipped (needs root)"
fi

# nobody records a set-user-ID-root program.
if [ "$ROOT" = yes ] && command -v setpriv >/dev/null; then
	chmod 711 "$WORK"
	cp "$WORKLOADS/hot" hot-setuid
	chmod 4755 hot-setuid
	run setuid setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		--bounding-set=-all -- "$GTRACE" record -o shared/setuid.data -- ./hot-setuid 0.3
	row "nobody records a setuid program" "$status" "$mib" "$secs" \
		"$(grep -c 'stopped sampling' setuid.err) warning(s); $(grep -o 'recorded [0-9]* samples' setuid.err)"
else
	row "nobody records a setuid program" - - - "skipped (needs root)"
fi
