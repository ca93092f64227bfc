# SPDX-License-Identifier: MIT
# GPU PC sampling end to end on the test doubles: fake-app runs the kernels
# of a real cubin built by nvcc (tests/cuda/pc-app.cu), the fake CUPTI
# samples them as the real one would and logs what it produced, and the
# real agent and recorder keep the samples and the cubin. The views must
# find the hot line that readelf's decoding of the cubin's line table
# gives to the offsets the fake was told to favour, tie the samples to the
# launch and the CPU stack that launched it, count every sample, and say
# what happened when the driver refused or lost samples.
. "$SRCDIR/tests/e2e/lib.sh"
. "$SRCDIR/tests/cuda/lib.sh"

need_cuda_fakes
need_perf_events
SOURCE=$SRCDIR/tests/cuda/pc-app.cu
CUBIN=$CUDA_DIR/pc-app.sm_90.cubin
[ -f "$CUBIN" ] || skip nvcc "no nvcc: the PC sampling cubins are not built ($CUBIN)"
command -v readelf >/dev/null || skip tools "no readelf to decode the cubins' line tables"
HOT=$(grep -n '/\* PC-HOT-LINE \*/' "$SOURCE" | cut -d: -f1)
COLD=$(grep -n '/\* PC-COLD-LINE \*/' "$SOURCE" | cut -d: -f1)

# line_offsets CUBIN LINE: the offsets where readelf's decoding of the
# line table starts a row of LINE, "+"-joined (only pc_hot has the hot line).
line_offsets() {
	readelf -W --debug-dump=decodedline "$1" |
		awk -v line="$2" '$2 == line && $3 ~ /^0x/ { printf "%s%s", n++ ? "+" : "", $3 }'
}

# fake_total LOG WHAT FIELD: a number of the fake's log, from the line
# starting with WHAT ("samples", "function pc_hot"): the one after FIELD.
fake_total() {
	awk -v what="$2" -v field="$3" 'index($0, what " ") == 1 {
		for (i = 1; i < NF; i++) if ($i == field) { print $(i + 1); exit } }' "$1"
}

# pc_line FILE WHAT: the value of diagnose's "PC WHAT:" line.
pc_line() {
	sed -n "s/^PC $2: *//p" "$1"
}

# agent_samples DIAG: the samples the agent sent, from diagnose.
agent_samples() {
	pc_line "$1" kept | sed -n 's/.*the agent sent [0-9]* pairs, \([0-9]*\) samples.*/\1/p'
}

# pc_record NAME [RECORD-OPTIONS] -- [FAKE-APP-OPTIONS]: records fake-app
# running the cubin into NAME.data, the fake's log in NAME.log, diagnose in
# NAME.diag and report --gpu-pc in NAME.pc.
pc_record() {
	name=$1
	shift
	opts=
	while [ "$1" != -- ]; do
		opts="$opts $1"
		shift
	done
	shift
	# shellcheck disable=SC2086 # options, one word each
	FAKE_CUPTI_PC_LOG=$TESTDIR/$name.log record "$name.data" $opts -- \
		"$CUDA_DIR/fake-app" --pc-cubin "${PC_CUBIN:-$CUBIN}" "$@" >/dev/null
	run_gtrace diagnose -i "$name.data" >"$name.diag"
}

hot_offsets=$(line_offsets "$CUBIN" "$HOT")
[ -n "$hot_offsets" ] || fail "readelf shows no row of line $HOT in '$CUBIN'"
FAKE_CUPTI_PC_HOT="pc_hot:$hot_offsets"
export FAKE_CUPTI_PC_HOT

# Always on, every launch serialized: every sample the fake took is kept.
pc_record all --gpu-pc-sampling=period=12,rate=0 -- --launches 20
expect_contains all.diag '^GPU PC sampling: +on: kernel-serialized, a sample every 2\^12 cycles'
collected=$(fake_total all.log samples collected)
at_least "samples the fake produced" "$(fake_total all.log samples produced)" 1000
[ "$collected" = "$(fake_total all.log samples produced)" ] ||
	{ show all.log; fail "the agent left samples in CUPTI"; }
[ "$(agent_samples all.diag)" = "$collected" ] ||
	{ show all.diag; show all.log; fail "the agent sent $(agent_samples all.diag) samples, the fake gave $collected"; }
expect_contains all.diag "^PC kept: +[0-9]+ pairs, $collected samples "
expect_contains all.diag "^PC cubins: +1 sent, .*; 1 kept, $(wc -c <"$CUBIN") bytes"
expect_contains all.diag "^PC source lines: +$collected of $collected samples \(100\.00%\)"

# The hot line leads pc_hot with the fake's 80% at least; its kernel's
# samples are the fake's count for it.
run_gtrace report -i all.data --gpu-pc >all.pc
hot_samples=$(fake_total all.log "function pc_hot" collected)
expect_contains all.pc "^ +$hot_samples +[0-9.]+% +pc_hot\$"
first=$(awk '$3 == "pc_hot" { getline; print $3, $2; exit }' all.pc)
case $first in
"pc-app.cu:$HOT "*) ;;
*) show all.pc; fail "pc_hot's first line is '$first', expected pc-app.cu:$HOT" ;;
esac
awk -v share="${first#* }" 'BEGIN { exit !(share + 0 >= 80) }' ||
	{ show all.pc; fail "the hot line has ${first#* } of pc_hot's samples, expected 80% or more"; }
expect_contains all.pc "^ +[0-9]+ +[0-9.]+% +pc-app\.cu:$COLD "
expect_contains all.pc '^# Stall reasons:'
expect_contains all.pc '^#   long_scoreboard +waiting for a global or local memory'

# The same as JSON: pc_hot's rows with every stall reason, the hot line first.
run_gtrace report -i all.data --gpu-pc --format json >all.json
python3 - all.json "$hot_samples" "pc-app.cu:$HOT" <<'PY' || fail "report --gpu-pc --format json (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"version", "path", "samples", "sass", "kernels"} and not d["sass"], d.keys()
hot = next(k for k in d["kernels"] if k["name"] == "pc_hot")
assert hot["samples"] == int(sys.argv[2]) and set(hot) == {"name", "samples", "rows"}, hot.keys()
assert hot["rows"][0]["place"] == sys.argv[3], hot["rows"][0]
for row in hot["rows"]:
    assert set(row) == {"place", "samples", "stalls"}, row
    assert sum(s["samples"] for s in row["stalls"]) == row["samples"], row
    assert all(set(s) == {"reason", "samples", "not_issued"} for s in row["stalls"]), row
PY

# Per instruction: each offset the fake favoured is shown at the line
# readelf gives it.
run_gtrace report -i all.data --gpu-pc --sass >all.sass
for off in $(echo "$hot_offsets" | tr + ' '); do
	row=$(printf '0x%04x' "$off")
	expect_contains all.sass "^ +[0-9]+ +[0-9.]+% +$row +pc-app\.cu:$HOT "
done

# Each kernel hangs under the function that launched it.
run_gtrace flame -i all.data --gpu-pc --folded >all.folded
awk '/\[kernel\] pc_hot;/ { n = $NF; all += n; if (/;launch_hot;/) hot += n }
	/\[kernel\] pc_cold;/ { n = $NF; call += n; if (/;launch_cold;/) cold += n }
	END { exit !(all && call && hot >= all * 0.9 && cold >= call * 0.9) }' all.folded ||
	{ show all.folded; fail "pc_hot and pc_cold are not under launch_hot and launch_cold"; }
expect_contains all.folded ";launch_hot;.*\[kernel\] pc_hot;pc-app\.cu:$HOT;[a-z_]+ [0-9]+\$"

# The other architecture's cubin, and continuous mode: buckets by function.
PC_CUBIN=$CUDA_DIR/pc-app.sm_80.cubin FAKE_CUPTI_PC_HOT="pc_hot:$(line_offsets \
	"$CUDA_DIR/pc-app.sm_80.cubin" "$HOT")" pc_record sm80 --gpu-pc-sampling=period=12,rate=0 -- \
	--launches 5
run_gtrace report -i sm80.data --gpu-pc >sm80.pc
[ "$(awk '$3 == "pc_hot" { getline; print $3; exit }' sm80.pc)" = "pc-app.cu:$HOT" ] ||
	{ show sm80.pc; fail "sm_80: the hot line does not lead pc_hot"; }
pc_record cont --gpu-pc-sampling=period=12,rate=0,mode=continuous -- --launches 5
expect_contains cont.diag '^PC mode: +continuous'
[ "$(agent_samples cont.diag)" = "$(fake_total cont.log samples collected)" ] ||
	{ show cont.diag; fail "continuous: samples lost"; }
run_gtrace report -i cont.data --gpu-pc >cont.pc
[ "$(awk '$3 == "pc_hot" { getline; print $3; exit }' cont.pc)" = "pc-app.cu:$HOT" ] ||
	{ show cont.pc; fail "continuous: the hot line does not lead pc_hot"; }

# Windows: with a rate no window can reach, one opens at the first launch
# after each closes; each is a span of the "GPU0 PC sampling" lane, and
# what ran inside them is all that is kept: less than the 100 runs of
# pc_hot would give (fake.h: floor(522720000 / 2^12) each).
pc_record duty --gpu-pc-sampling=period=12,rate=1000000 -- --launches 100
windows=$(pc_line duty.diag windows | awk '{ print $1 }')
at_least "sampling windows" "$windows" 3
run_gtrace threads -i duty.data >duty.threads
expect_lane duty.threads cuda-pc "GPU0 PC sampling" "$windows"
[ "$(agent_samples duty.diag)" = "$(fake_total duty.log samples collected)" ] ||
	{ show duty.diag; show duty.log; fail "windows: samples lost"; }
# In the timeline, the windows are slices under their GPU, beside its streams.
if command -v python3 >/dev/null; then
	run_gtrace export -i duty.data -o duty.pftrace
	python3 "$SRCDIR/tests/e2e/tracesum.py" duty.pftrace >duty.sum ||
		fail "'duty.pftrace' does not decode"
	expect_contains duty.sum '^grouped GPU0 PC sampling GPU 0$'
	expect_contains duty.sum '^grouped GPU0 stream 7 GPU 0$'
	track=$(awk '$1 == "track" && $3 == "lane" && $4 == "GPU0" && $5 == "PC" { print $2 }' duty.sum)
	expect_contains duty.sum "^slices $track $windows "
fi
awk -v a="$(fake_total duty.log "function pc_hot" collected)" \
	'BEGIN { exit !(a > 0 && a < 100 * int(522720000 / 4096)) }' ||
	{ show duty.log; fail "windows: sampling never paused"; }

# Refusals: one sentence that says what to change; the kernels still recorded.
FAKE_CUPTI_FAULTS=pc-privileges pc_record denied --gpu-pc-sampling -- --launches 2
expect_contains denied.diag '^GPU PC sampling: +refused: cuptiPCSamplingEnable: insufficient privileges: .*NVreg_RestrictProfilingToAdminUsers=0'
expect_exit 1 "$GTRACE" report -i denied.data --gpu-pc
expect_contains "$TESTDIR/stderr" 'insufficient privileges'
run_gtrace report -i denied.data --gpu >denied.gpu
expect_contains denied.gpu '^# CUDA kernels: 4 instances of 2 kernels'
FAKE_CUPTI_FAULTS=pc-refused pc_record unsupported --gpu-pc-sampling -- --launches 2
expect_contains unsupported.diag '^GPU PC sampling: +refused: cuptiPCSamplingEnable: this GPU or driver does not support PC sampling'

# The recorder's summary says what PC sampling kept, or where to look.
"$GTRACE" record -o said.data --gpu-pc-sampling=rate=0 -- "$CUDA_DIR/fake-app" \
	--pc-cubin "$CUBIN" --launches 2 >/dev/null 2>said.txt || { show said.txt; fail "record failed"; }
expect_contains said.txt '^gtrace: recorded [1-9][0-9]* GPU PC sample buckets and 1 cubin$'
FAKE_CUPTI_FAULTS=pc-privileges "$GTRACE" record -o said.data --gpu-pc-sampling -- \
	"$CUDA_DIR/fake-app" --pc-cubin "$CUBIN" --launches 2 >/dev/null 2>said.txt ||
	{ show said.txt; fail "record failed"; }
expect_contains said.txt "^gtrace: recorded no GPU PC samples: 'gtrace diagnose -i said.data' says why\$"

# Losses are counted, and what was collected is all there.
for fault in pc-buffer-full=20 pc-short=7 pc-dropped=3 pc-names-shared; do
	name=$(echo "$fault" | tr -c 'a-z\n' _)
	FAKE_CUPTI_FAULTS=$fault pc_record "$name" --gpu-pc-sampling=period=12,rate=0 -- --launches 5
	[ "$(agent_samples "$name.diag")" = "$(fake_total "$name.log" samples collected)" ] ||
		{ show "$name.diag"; show "$name.log"; fail "$fault: the agent's samples differ from the fake's"; }
	dropped=$(fake_total "$name.log" samples dropped)
	case $fault in
	pc-buffer-full*)
		expect_contains "$name.diag" "^PC drops: +$dropped samples dropped, 1 buffer-full events"
		at_least "samples dropped for the full buffer" "$dropped" 1 ;;
	pc-dropped*)
		expect_contains "$name.diag" "^PC drops: +$dropped samples dropped"
		at_least "samples dropped" "$dropped" 1 ;;
	*)
		[ "$(fake_total "$name.log" samples collected)" = \
			"$(fake_total "$name.log" samples produced)" ] ||
			{ show "$name.log"; fail "$fault: samples left in CUPTI"; } ;;
	esac
done

# Past the cubin cap, and without -lineinfo: function and offset.
pc_record capped --gpu-pc-sampling=period=12,rate=0 --gpu-cubin-max 1000 -- --launches 2
expect_contains capped.diag '^PC cubins: +0 sent, 1 over the cap, .*; 0 kept, 0 bytes'
run_gtrace report -i capped.data --gpu-pc >capped.pc
expect_contains capped.pc '^ +[0-9]+ +[0-9.]+% +pc_hot\+0x[0-9a-f]+ '
PC_CUBIN=$CUDA_DIR/pc-app.nolines.sm_90.cubin pc_record nolines \
	--gpu-pc-sampling=period=12,rate=0 -- --launches 2
expect_contains nolines.diag '^PC source lines: +0 of [0-9]+ samples \(0\.00%\)'

# Not asked for: said, and no samples.
record plain.data -- "$CUDA_DIR/fake-app" --pc-cubin "$CUBIN" --launches 2 >/dev/null
expect_exit 1 "$GTRACE" report -i plain.data --gpu-pc
expect_contains "$TESTDIR/stderr" 'gpu-pc-sampling'
