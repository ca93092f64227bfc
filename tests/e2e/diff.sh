# SPDX-License-Identifier: MIT
# gtrace diff on two recordings of the regress workload: with target made
# 60% slower (its share from 30% to 41%: well past what this shared
# machine's noise moves a share, a few points), target alone is a regression and --fail exits 3; the same
# run recorded twice shows no significant row and exits 0. The JSON has
# the keys gtrace-diff(1) documents; flame --diff colours target red; bad
# input is one line and the usual status.
. "$SRCDIR/tests/e2e/lib.sh"
need_perf_events

# User time only: the kernel's frames (kept where its time is sampled)
# move with how often this shared machine switches the workload out, a
# change of its own that diff rightly finds, but not the one under test.
record base.data -F 1999 -e cpu-clock:u -- "$WORKLOADS/regress" 2
record again.data -F 1999 -e cpu-clock:u -- "$WORKLOADS/regress" 2
record slow.data -F 1999 -e cpu-clock:u -- "$WORKLOADS/regress" 2 60

expect_exit 3 "$GTRACE" diff --fail base.data slow.data
cp stdout slow.txt
expect_contains stderr "^gtrace: warning: the recordings ran different commands: '.*regress 2' and '.*regress 2 60'\$"
expect_contains slow.txt '^# normalize total, confidence 99%, threshold 5%; .*: 1 regression, '
expect_contains slow.txt '^  cpu .* regression +target \(regress\)$'
[ "$(grep -c ' regression ' slow.txt)" -eq 1 ] || { show slow.txt; fail "more than target regressed"; }
# Only CPU regressions fail here; a kind that has none does not.
expect_exit 3 "$GTRACE" diff --fail --fail-on cpu base.data slow.data
expect_exit 0 "$GTRACE" diff --fail --fail-on kernel base.data slow.data
# --fail-on alone fails as --fail does: it names what fails.
expect_exit 3 "$GTRACE" diff --fail-on cpu base.data slow.data
# A threshold above target's change: significant, not a regression.
expect_exit 0 "$GTRACE" diff --fail --threshold 90 base.data slow.data
expect_contains stdout '^  cpu .*\* same +target \(regress\)$'

# At 99.9%: the chance of any significant row in an unchanged pair is 0.1%
# by design; at the default 99%, one CI run in a hundred would fail.
expect_exit 0 "$GTRACE" diff --fail --confidence 99.9 base.data again.data
cp stdout same.txt
expect_contains same.txt ': 0 regressions, 0 improvements, '
expect_not_contains same.txt '\* '

run_gtrace diff --format json base.data slow.data >diff.json
python3 - diff.json <<'PY' || fail "diff.json lacks documented keys (see above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["regressions"] == 1, d
for side in ("base", "new"):
    assert set(d[side]) == {"path", "command", "samples", "ms"}, d[side]
assert set(d["options"]) == {"normalize", "confidence", "threshold"}
row_keys = {"kind", "name", "where", "status", "change", "p", "tested", "significant",
            "impact_ms", "base", "new"}
for row in d["rows"]:
    if row["kind"] == "metric":
        assert set(row) == row_keys | {"unit"}, row
        assert all(set(row[side]) == {"count", "mean"} for side in ("base", "new")), row
        continue
    assert set(row) == row_keys, row
    extra = {"cpu": {"children", "share"}, "thread": {"offcpu_ms"}}.get(
        row["kind"], {"mean_ns", "median_ns", "p95_ns"})
    for side in ("base", "new"):
        assert set(row[side]) == {"count", "ms"} | extra, row
bad = [r["name"] for r in d["rows"] if r["status"] == "regression"]
assert bad == ["target"], bad
PY
run_gtrace diff --by threads base.data slow.data >threads.txt
expect_contains threads.txt '^  thread +1 +1 +[0-9.]+ms +[0-9.]+ms .* -  same +regress$'
# Metrics by their means, shown, never tested; the process by its name.
run_gtrace report -i base.data --metrics --format json >metrics.json
if grep -q '"name": "proc.rss"' metrics.json; then
	run_gtrace diff --by metrics base.data slow.data >metrics.txt
	expect_contains metrics.txt '^  metric +[0-9]+ +[0-9]+ +[0-9.]+ [KMG]iB +[0-9.]+ [KMG]iB .* -  same +regress: proc.rss$'
	expect_contains metrics.txt '^# normalize .*; [0-9]+ rows, 0 tested: 0 regressions, 0 improvements'
fi
run_gtrace diff --format markdown base.data slow.data >diff.md
expect_contains diff.md '^\| \*\*regression\*\* \| cpu \| target \(regress\) \|'

# flame --diff: each stack's counts in both; target's frame red, grown.
run_gtrace flame --diff --folded base.data slow.data >diff.folded
awk '/;run_workload;target [0-9]+ [0-9]+$/ { found = 1; if ($(NF) <= $(NF - 1)) exit 1 }
     END { exit !found }' diff.folded || { show diff.folded; fail "target did not grow in flame --diff"; }
run_gtrace flame --diff --svg diff.svg base.data slow.data
# The reddest: red at full, the least of green of all frames (how red
# depends on how much it grew, which a busy machine moves).
awk 'match($0, /<title>[^ <]*/) { name = substr($0, RSTART + 7, RLENGTH - 7) }
     match($0, /fill="rgb\(255,[0-9]+,/) {
	     g = substr($0, RSTART + 14, RLENGTH - 15) + 0
	     if (best == "" || g < best) { best = g; reddest = name }
     }
     END { exit reddest != "target" }' diff.svg ||
	fail "target is not the reddest frame of flame --diff --svg"
expect_exit 2 "$GTRACE" flame --diff base.data slow.data
expect_contains stderr '^gtrace: --diff takes two recordings, BASE and NEW, and --svg or --folded$'

# Bad input: one line, and 2 for usage, 1 for a file that cannot be read.
expect_exit 2 "$GTRACE" diff base.data
expect_contains stderr '^gtrace: diff compares two recordings: give BASE and NEW'
expect_exit 2 "$GTRACE" diff base.data slow.data again.data
expect_contains stderr "^gtrace: unexpected argument 'again.data'"
expect_exit 2 "$GTRACE" diff --format yaml base.data slow.data
expect_contains stderr "^gtrace: invalid --format 'yaml'; use text, json or markdown\$"
expect_exit 2 "$GTRACE" diff --by kernels base.data slow.data
expect_contains stderr "^gtrace: invalid --by 'kernels'; use cpu, gpu, kernel, copy, api, wait, nvtx, lane, lanes, thread, threads, metric, metrics, rule, idle, findings\$"
expect_exit 2 "$GTRACE" diff --confidence 100 base.data slow.data
expect_exit 1 "$GTRACE" diff base.data missing.data
expect_contains stderr "^gtrace: cannot read 'missing.data': "

# A side may be a directory, the recordings of a job, as -i DIR reads
# elsewhere; -i itself is refused with diff's form.
mkdir before after
cp base.data before/
cp slow.data after/gtrace.0.data
expect_exit 3 "$GTRACE" diff --fail before/ after
expect_contains stdout "^# gtrace diff: 'before/' -> 'after'\$"
expect_exit 2 "$GTRACE" diff -i base.data -i slow.data
expect_contains stderr "^gtrace: diff takes its recordings as operands, not -i: 'gtrace diff BASE NEW'"
[ "$(wc -l <stderr)" -eq 1 ] || { show stderr; fail "diff -i said more than one line"; }
exit 0
