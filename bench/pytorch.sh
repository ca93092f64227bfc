#!/bin/bash
# SPDX-License-Identifier: MIT
#
# gtrace on a real program (issue 24): a PyTorch CPU training loop
# (bench/pytorch-train.py, Debian's python3-torch, installed here when
# python3 cannot import torch) beside perf record -g, in one run:
#
#   attached    the recorder's own CPU (GNU time on the recorder alone,
#               user + system) attached with -p for RUN_SECONDS (5) to the
#               loop once it trains, and per sample; perf also with
#               --call-graph dwarf (DWARF=0 leaves it out). gtrace twice,
#               with a cache of its own: gtrace-cold makes it (the
#               kernel's symbols, libc6-dbg's DWARF inflated), gtrace
#               reads it, as perf reads its ~/.debug
#   launched    the wall time of `record -- python3 pytorch-train.py` (STEPS
#               steps, 300) from start to the recorder's exit, the
#               median of REPEAT (3) interleaved rounds, beside the loop
#               alone
#   names       of the samples, the share whose innermost frame has a name
#               (gtrace: diagnose's leaf resolved; perf: perf script's
#               symbol not [unknown]), and gtrace's share of samples of
#               CPython threads whose Python stack was read
#
# usage: bench/pytorch.sh   (RUN_SECONDS=5 STEPS=300 REPEAT=3 FREQ=999 PYTHON=/usr/bin/python3 BUILD=build)

. "$(dirname "$0")/lib.sh"
need_perf

PYTHON=${PYTHON:-/usr/bin/python3}
RUN=${RUN_SECONDS:-5}
STEPS=${STEPS:-300}
REPEAT=${REPEAT:-3}
FREQ=${FREQ:-999}
DWARF=${DWARF:-1}
[ -x /usr/bin/time ] || { echo "bench: needs GNU time in /usr/bin/time (package time)" >&2; exit 1; }

if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
	say "apt-get install -y python3-torch"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torch >"$WORK/apt.log" 2>&1 ||
		{ tail -5 "$WORK/apt.log" >&2; echo "bench: cannot install python3-torch" >&2; exit 1; }
fi
train="$PYTHON $SRCDIR/bench/pytorch-train.py"
echo "torch $("$PYTHON" -c 'import torch; print(torch.__version__)'), $FREQ Hz, $(nproc) CPUs"

# attach NAME CMD...: starts the loop, waits until it trains, then runs CMD
# (PID replaced by the loop's pid) under GNU time; the loop ends with it.
attach() {
	local name=$1
	shift
	start_training $((RUN + 30))
	time_attached "$name" "$TRAINING_PID" "$@"
}

# perf_leaf_named FILE: the share of perf.data's samples whose leaf has a symbol, in %.
perf_leaf_named() {
	"$PERF" script -i "$1" -F ip,sym -G 2>/dev/null |
		awk 'NF { n++; if ($NF != "[unknown]" && NF > 1) named++ }
			END { printf "%.2f", n ? 100 * named / n : 0 }'
}

# gtrace_share FILE FIELD: the percentage on diagnose's line FIELD.
gtrace_share() {
	"$GTRACE" diagnose -i "$1" 2>/dev/null |
		awk -v f="$2" 'index($0, f) == 1 && match($0, /\([0-9.]+%\)/) {
			print substr($0, RSTART + 1, RLENGTH - 3); exit }'
}

echo
echo "attached for $RUN s:"
printf '%-14s %9s %12s %12s\n' recorder samples recorder-s us/sample
row() {
	printf '%-14s %9s %12.3f %12.2f\n' "$1" "$2" "$(cpu_of "$1")" \
		"$(awk -v c="$(cpu_of "$1")" -v n="$2" 'BEGIN { print n ? c * 1e6 / n : 0 }')"
}
export GTRACE_CACHE_DIR="$WORK/cache"
say "GTRACE_CACHE_DIR=$GTRACE_CACHE_DIR $GTRACE record -q -F $FREQ -p PID --duration $RUN (twice)"
attach gtrace-cold "$GTRACE" record -q -F "$FREQ" -o "$WORK/attach-cold.gtrace" -p PID \
	--duration "$RUN"
row gtrace-cold "$(gtrace_samples "$WORK/attach-cold.gtrace")"
attach gtrace "$GTRACE" record -q -F "$FREQ" -o "$WORK/attach.gtrace" -p PID --duration "$RUN"
row gtrace "$(gtrace_samples "$WORK/attach.gtrace")"
say "$PERF record -q -F $FREQ -g -p PID -- sleep $RUN"
attach perf-g "$PERF" record -q -F "$FREQ" -g -o "$WORK/attach.perf" -p PID -- sleep "$RUN"
row perf-g "$(perf_samples "$WORK/attach.perf")"
if [ "$DWARF" = 1 ]; then
	say "$PERF record -q -F $FREQ --call-graph dwarf -p PID -- sleep $RUN"
	attach perf-dwarf "$PERF" record -q -F "$FREQ" --call-graph dwarf -o "$WORK/attach.dwarf" \
		-p PID -- sleep "$RUN"
	row perf-dwarf "$(perf_samples "$WORK/attach.dwarf")"
fi

# command_of SETUP OUT: the launched loop under that set-up, writing to OUT.
command_of() {
	case $1 in
	none) echo "$train" ;;
	perf-g) echo "$PERF record -q -F $FREQ -g -o $2 -- $train" ;;
	gtrace) echo "$GTRACE record -q -F $FREQ -o $2 -- $train" ;;
	esac
}

echo
echo "launched, $STEPS steps, median of $REPEAT rounds:"
export STEPS
time_rounds none perf-g gtrace
printf '%-14s %9s %12s %14s\n' setup wall-s leaf-named-% python-read-%
for setup in none perf-g gtrace; do
	wall=$(round_wall "$setup")
	case $setup in
	none) named=- python=- ;;
	perf-g) named=$(perf_leaf_named "$WORK/perf-g.1.data") python=- ;;
	gtrace) named=$(gtrace_share "$WORK/gtrace.1.data" "leaf resolved:")
		python=$(gtrace_share "$WORK/gtrace.1.data" "Python:") ;;
	esac
	printf '%-14s %9.2f %12s %14s\n' "$setup" "$wall" "$named" "$python"
done
echo
echo "attached: gtrace $(gtrace_share "$WORK/attach.gtrace" "leaf resolved:")% leaf named," \
	"$(gtrace_share "$WORK/attach.gtrace" "Python:")% Python read;" \
	"perf -g $(perf_leaf_named "$WORK/attach.perf")% leaf named"
