#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the files a recorded program plants cost the recorder
# (tests/hostile/planted-paths, as e2e/hostile-paths.sh plants them: its
# JIT map a FIFO, a link to a file only root reads, a link to /dev/zero,
# another user's file, 100 MiB; its executable made a FIFO; a FIFO as the
# debug link, the .gnu_debugaltlink file and dwz's file of copies of hot),
# and what a recorder stopped while the program forks loses
# (tests/hostile/lost-forks).
# For each: the recorder's wall time and peak RSS, how it ended, and what
# the recording shows. Each run is capped at 30 s and 4 GB of address
# space ("capped" when it hit one). Run as root to plant as nobody.
#
#   bench/hostile-paths.sh                   # this build
#   GTRACE=/path/to/old/gtrace bench/hostile-paths.sh
source "$(dirname "$0")/lib.sh"

PLANT=$BUILD/tests/hostile/planted-paths
FORKS=$BUILD/tests/hostile/lost-forks
for tool in "$PLANT" "$FORKS"; do
	[ -x "$tool" ] || { echo "bench: no '$tool': run make tests first" >&2; exit 1; }
done
AS_TARGET=()
[ "$(id -u)" -eq 0 ] && AS_TARGET=(setpriv --reuid=65534 --regid=65534 --clear-groups
	--inh-caps=-all --bounding-set=-all --)

# capped NAME CMD...: runs CMD under the caps; "wall-s max-rss-mib status" in $WORK/NAME.result.
capped() {
	local name=$1 status=0
	shift
	( ulimit -v 4000000 && exec /usr/bin/time -f '%e %M' -o "$WORK/$name.time" \
		timeout -s KILL 30 "$@" ) >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null || status=$?
	awk -v s="$status" 'END { printf "%s %d %s\n", $1, $2 / 1024, s }' \
		"$WORK/$name.time" >"$WORK/$name.result"
}

# shows FILE: what a recording shows of the planted file, in a few words.
shows() {
	local report diag refused
	report=$("$GTRACE" report -i "$1" --no-children 2>/dev/null || true)
	diag=$("$GTRACE" diagnose -i "$1" 2>/dev/null || true)
	refused=$(awk '$1 == "symbols.refused" { print $2 }' <<<"$diag")
	if grep -q root_only_secret <<<"$report"; then
		printf 'the secret line named'
	elif grep -q ' jit_spin_code$' <<<"$report"; then
		printf 'JIT code named'
	else
		printf 'not named'
	fi
	printf ', refused %s, cut %s' "${refused:-n/a}" \
		"$(awk '$1 == "symbols.jit-maps-cut" { print $2 }' <<<"$diag" | grep . || echo n/a)"
}

row() {
	local name=$1 wall mib status
	read -r wall mib status <"$WORK/$name.result"
	case $status in
	0) status=ok ;;
	137) status="capped (killed at 30 s)" ;;
	*) status="exit $status (4 GB cap?)" ;;
	esac
	printf '%-10s %8s s %8s MiB  %-24s %s\n' "$name" "$wall" "$mib" "$status" "$2"
}

printf '7e0000000000 10 root_only_secret\n' >"$WORK/secret.map"
chmod 600 "$WORK/secret.map"
cp "$PLANT" "$WORK/exe-copy"
echo "gtrace: $GTRACE"
printf '%-10s %10s %12s  %-24s %s\n' case wall "peak RSS" ended shows
for spec in own fifo "symlink $WORK/secret.map" devzero "chown 1" huge exe-fifo; do
	read -r mode arg <<<"$spec"
	prefix=("${AS_TARGET[@]}")
	exe=$PLANT
	[ "$mode" = chown ] && prefix=()
	[ "$mode" = exe-fifo ] && { prefix=(); exe=$WORK/exe-copy; }
	say "$GTRACE" record -q -o "$WORK/$mode.data" -- "${prefix[@]}" "$exe" "$mode" $arg >&2
	capped "$mode" "$GTRACE" record -q -o "$WORK/$mode.data" -- "${prefix[@]}" "$exe" "$mode" $arg
	rm -f "/tmp/perf-$(head -1 "$WORK/$mode.out").map"
	row "$mode" "$(shows "$WORK/$mode.data")"
done

# Copies of hot whose debug files are FIFOs, as e2e/hostile-paths.sh makes them.
mkdir "$WORK/debuglink" "$WORK/altlink" "$WORK/dwz"
objcopy --only-keep-debug "$WORKLOADS/hot" "$WORK/debuglink/hot.debug"
objcopy --strip-debug --add-gnu-debuglink="$WORK/debuglink/hot.debug" "$WORKLOADS/hot" \
	"$WORK/debuglink/hot"
rm "$WORK/debuglink/hot.debug"
mkfifo "$WORK/debuglink/hot.debug"
{ printf 'alt.fifo\0'; head -c 20 /dev/zero; } >"$WORK/altlink.section"
objcopy --add-section .gnu_debugaltlink="$WORK/altlink.section" "$WORKLOADS/hot" "$WORK/altlink/hot"
mkfifo "$WORK/altlink/alt.fifo"
cp "$WORKLOADS/hot" "$WORK/dwz/hot"
cp "$WORKLOADS/hot" "$WORK/dwz/twin"
(cd "$WORK/dwz" && dwz -m alt.dwz hot twin && rm alt.dwz && mkfifo alt.dwz)
for name in debuglink altlink dwz; do
	say "$GTRACE" record -q -o "$WORK/$name.data" -- "$WORK/$name/hot" 0.3 >&2
	capped "$name" "$GTRACE" record -q -o "$WORK/$name.data" -- "$WORK/$name/hot" 0.3
	if "$GTRACE" report -i "$WORK/$name.data" --no-children 2>/dev/null | grep -q ' hot_leaf$'; then
		row "$name" "hot_leaf named"
	else
		row "$name" "hot_leaf not named"
	fi
done

# The lost forks, as e2e/hostile-lost-fork.sh drives them.
mkfifo "$WORK/go" "$WORK/spin"
say "$GTRACE" record -q --call-graph fp -m 16 -o "$WORK/lost.data" -- "$FORKS" "$WORK" 4 "(stopped while it forks)" >&2
(
	cd "$WORK"
	"$GTRACE" record -q --call-graph fp -m 16 -o lost.data -- "$FORKS" "$WORK" 4 &
	recorder=$!
	until [ -s pid ]; do sleep 0.05; done
	kill -STOP $recorder
	until [ "$(sed 's/.*) //' /proc/$recorder/stat | cut -d' ' -f1)" = T ]; do sleep 0.05; done
	echo >go
	until [ -s forked ]; do sleep 0.05; done
	kill -CONT $recorder
	echo >spin
	wait $recorder
)
kill -KILL $(cat "$WORK/children") 2>/dev/null || true
"$GTRACE" diagnose -i "$WORK/lost.data" --format json >"$WORK/lost.json"
python3 - "$WORK/lost.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["counters"]
samples = sum(v for k, v in c.items() if k.startswith("unwind."))
no_map = c.get("unwind.failed.no-map", 0)
print(f"lost forks: the recorder counted {c['processes']} of 5 processes "
      f"({c.get('processes.recovered', 'n/a')} recovered from /proc), "
      f"{no_map} of {samples} samples failed.no-map ({100 * no_map / max(samples, 1):.1f}%)")
PY
