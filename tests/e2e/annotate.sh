# SPDX-License-Identifier: MIT
# gtrace annotate: hotline's hot_lines spends about 90% of its time on the
# line marked HOT and 10% on the one marked WARM; annotate ranks them so,
# picks the function itself or by name, shows the source text with
# --source-dir or line numbers alone, and a Python function by its lines.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

src=$SRCDIR/tests/workloads/hotline.c
hot_line=$(grep -n '/\* HOT \*/' "$src" | cut -d: -f1)
warm_line=$(grep -n '/\* WARM \*/' "$src" | cut -d: -f1)
record hl.data -- "$WORKLOADS/hotline" 0.5

# line_share FILE LINE: the percentage of annotate's row for source line LINE, rounded down.
line_share() {
	awk -v line="$2" '!/^#/ && $3 == line { print int($1); found = 1; exit }
		END { if (!found) print -1 }' "$1"
}

# The hottest function, without its source here: line numbers, the hot line first by share.
run_gtrace annotate -i hl.data >plain.txt
expect_contains plain.txt '^# Function: hot_lines \(hotline\): [0-9]+ of [0-9]+ samples'
expect_contains plain.txt '^# Source: .*hotline\.c \(not readable here: line numbers only\)$'
between "the HOT line's share" "$(line_share plain.txt "$hot_line")" 75 100
between "the WARM line's share" "$(line_share plain.txt "$warm_line")" 1 25
[ "$(awk '!/^#/ { print $3 }' plain.txt | sort -n | tr '\n' ' ')" = \
	"$(awk '!/^#/ { print $3 }' plain.txt | tr '\n' ' ')" ] || { show plain.txt; fail "lines not in file order"; }

# By name, with the source text found under --source-dir; -n 1: the hot line alone.
run_gtrace annotate -i hl.data hot_lines --source-dir "$SRCDIR" >source.txt
expect_contains source.txt "^# Source: $src\$"
expect_contains source.txt "^ +[0-9.]+% +[0-9]+ +$hot_line  .*/\\* HOT \\*/\$"
run_gtrace annotate -i hl.data --source-dir "$SRCDIR/tests/workloads" -n 1 >one.txt
[ "$(grep -Ec '^ +[0-9.]+%' one.txt)" -eq 1 ] || { show one.txt; fail "-n 1 shows more than one line"; }
expect_contains one.txt "^ +[0-9.]+% +[0-9]+ +$hot_line  "

# JSON: the same lines and shares.
run_gtrace annotate -i hl.data --format json --source-dir "$SRCDIR" >hl.json
need_python3
python3 - hl.json "$hot_line" plain.txt <<'PY' || fail "annotate --format json disagrees with the text"
import json, sys
doc = json.load(open(sys.argv[1]))
hot = int(sys.argv[2])
assert doc["symbol"] == "hot_lines" and doc["dso"] == "hotline", doc
lines = [l for f in doc["files"] for l in f["lines"]]
assert sum(l["samples"] for l in lines) == doc["samples"], doc
top = max(lines, key=lambda l: l["samples"])
assert top["line"] == hot and "/* HOT */" in top["text"], top
text = {int(r.split()[2]): int(r.split()[1]) for r in open(sys.argv[3]) if not r.startswith("#")}
assert text == {l["line"]: l["samples"] for l in lines}, (text, lines)
PY

# --asm: the code the recorder kept of hot_lines, disassembled; its hottest
# instruction is one of the HOT loop's (before the WARM loop's first,
# whose address is the HOT loop's jump back's next). Without libcapstone,
# one line says it is not built in.
if "$GTRACE" --version | grep -q '^annotate --asm: yes'; then
	run_gtrace diagnose -i hl.data >diagnose.txt
	expect_contains diagnose.txt '^ +symbols\.code-kept +[1-9][0-9]*$'
	expect_contains diagnose.txt '^ +symbols\.code-cut +0$'
	run_gtrace annotate -i hl.data --asm >asm.txt
	expect_contains asm.txt '^# Code: .*/hotline at 0x[0-9a-f]+, [0-9]+ bytes$'
	awk '/^# Percent  Samples  Address/ { on = 1; next } on && !/^#/' asm.txt >insns.txt
	[ "$(awk '$1 ~ /%$/ { n += $2 } END { print n + 0 }' insns.txt)" -eq \
		"$(sed -n 's/^# Function: [^:]*: \([0-9]*\) of.*/\1/p' asm.txt)" ] ||
		{ show asm.txt; fail "--asm's instructions do not hold all of hot_lines' samples"; }
	hottest=$(awk '$1 ~ /%$/ && $2 > best { best = $2; at = $3 } END { print at }' insns.txt)
	loop_end=$(awk '$1 !~ /%$/ && $2 ~ /^j/ { print $1; exit } $1 ~ /%$/ && $4 ~ /^j/ { print $3; exit }' insns.txt)
	[ -n "$hottest" ] && [ -n "$loop_end" ] &&
		[ "$((0x$hottest))" -le "$((0x$loop_end))" ] ||
		{ show asm.txt; fail "the hottest instruction ($hottest) is not in the HOT loop (up to $loop_end)"; }
	run_gtrace annotate -i hl.data --asm --format json >asm.json
	python3 - asm.json <<'PY' || fail "annotate --asm --format json disagrees"
import json, sys
doc = json.load(open(sys.argv[1]))
code = doc["code"]
assert code and all(c["disassembled"] for c in code), code
assert sum(i["samples"] for c in code for i in c["instructions"]) + doc["samples_without_code"] == doc["samples"], doc
PY
else
	expect_exit 2 "$GTRACE" annotate -i hl.data --asm
	expect_contains "$TESTDIR/stderr" '^gtrace: --asm not built in: install libcapstone-dev and reconfigure$'
fi

# An unknown function: one line, exit 1.
expect_exit 1 "$GTRACE" annotate -i hl.data no_such_function
expect_contains "$TESTDIR/stderr" "^gtrace: no samples in function 'no_such_function' in 'hl.data'\$"
expect_lines "$TESTDIR/stderr" 1

# A Python function annotates by its Python lines: its loop's line is the hot one.
if cpython 3.11; then
	cat >spin.py <<'PY'
def spin(n):
    total = 0
    for i in range(n): total += i * i % 7
    return total


spin(3000000)
PY
	record py.data -- "$py" spin.py
	run_gtrace annotate -i py.data "spin (spin.py)" >py.txt
	expect_contains py.txt '^# Function: spin \(spin\.py\) \(spin\.py\)'
	between "the Python loop line's share" "$(line_share py.txt 3)" 60 100
else
	skip_part python3.11 "no CPython 3.11 (/usr/bin/python3.11 or pyenv's)"
fi
