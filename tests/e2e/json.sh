# SPDX-License-Identifier: MIT
# report, threads and diagnose with --format json: one JSON document each, with
# exactly the keys their man pages list and the figures the tables print;
# diagnose's carries every counter. A truncated file says so.
. "$SRCDIR/tests/e2e/lib.sh"
[ -x "$WORKLOADS/lanes" ] || fail "the lanes example is not built ($WORKLOADS/lanes): run make tests"
need_perf_events

record lanes.data -- "$WORKLOADS/lanes" --wait-active 5 --threads 2 --spans 500
run_gtrace threads -i lanes.data --format json >threads.json
run_gtrace threads -i lanes.data >threads.txt
run_gtrace report -i lanes.data --format json >report.json
run_gtrace report -i lanes.data --format json -s comm,tid,symbol --no-children -n 3 >sorted.json
run_gtrace report -i lanes.data --format json -s comm,tid,symbol --no-children >unlimited.json
run_gtrace report -i lanes.data --format json --tid 0xfff00001 >lane.json
run_gtrace diagnose -i lanes.data --format json >diag.json
run_gtrace diagnose -i lanes.data >diag.txt
size=$(wc -c <lanes.data)
head -c $((size - 100)) lanes.data >cut.data
"$GTRACE" diagnose -i cut.data --format json >cut.json 2>cut.err ||
	{ show cut.err; fail "diagnose --format json of a truncated file failed"; }

python3 - <<'PY' || fail "the JSON documents do not match their man pages (see above)"
import json
t = json.load(open("threads.json"))
assert set(t) == {"version", "path", "threads", "processes", "lanes"} and t["version"] == 1, t.keys()
thread_keys = {"pid", "tid", "name", "samples", "oncpu_ms", "offcpu_ms", "first_s", "last_s"}
lane_keys = {"pid", "tid", "kind", "name", "spans", "target_ms", "first_s", "last_s"}
assert all(set(r) == thread_keys for r in t["threads"]), t["threads"]
assert all(set(r) == lane_keys for r in t["lanes"]), t["lanes"]
assert all(set(r) == {"pid", "name", "peak_rss_kib", "cpu_percent"} for r in t["processes"])
assert [r["tid"] for r in t["lanes"]] == [0xfff00000, 0xfff00001], t["lanes"]
assert sum(r["spans"] for r in t["lanes"]) == 1000, t["lanes"]
# The threads table: the first, up to the blank line before the tables of
# threads renamed while sampled, of processes and of lanes.
first = open("threads.txt").read().split("\n\n")[0]
rows = {int(w[1]): int(w[3]) for w in (l.split() for l in first.splitlines()[1:])}
assert {r["tid"]: r["samples"] for r in t["threads"]} == rows, (rows, t["threads"])

r = json.load(open("report.json"))
assert set(r) == {"version", "path", "event", "samples", "rows", "lane_work", "lanes"}, r.keys()
assert r["lanes"]["lanes"] == 2 and r["lanes"]["spans"] == 1000, r["lanes"]
lane_row_keys = {"lane", "tid", "span", "spans", "target_ms", "lane_percent", "avg_us",
                 "min_us", "max_us"}
assert all(set(row) == lane_row_keys for row in r["lanes"]["rows"]), r["lanes"]["rows"][0]
one = json.load(open("lane.json"))
assert one["samples"] == 0 and one["rows"] == [] and one["lanes"]["lanes"] == 1, one
assert {row["tid"] for row in one["lanes"]["rows"]} == {0xfff00001}, one["lanes"]
assert sum(row["self"] for row in r["rows"]) == r["samples"] > 0, r["samples"]
sample_keys = {"self", "children", "self_percent", "children_percent", "comm", "dso", "symbol"}
assert all(set(row) == sample_keys for row in r["rows"]), r["rows"][0]
assert set(r["lane_work"]) == {"spans", "target_ms", "rows"}, r["lane_work"].keys()
work_keys = {"spans_self", "spans_children", "self_ms", "children_ms", "comm", "dso", "symbol"}
assert all(set(row) - {"queued_from"} == work_keys for row in r["lane_work"]["rows"])
assert sum(row["spans_self"] for row in r["lane_work"]["rows"]) == r["lane_work"]["spans"]
s = json.load(open("sorted.json"))
unlimited = json.load(open("unlimited.json"))["rows"]
# A busy machine may leave fewer than three rows: -n keeps the first three there are.
assert s["rows"] == unlimited[:3] and len(s["rows"]) >= 2, (s, unlimited)
assert all(isinstance(row["tid"], int) for row in s["rows"]), s
assert all(set(row) == {"self", "children", "self_percent", "children_percent", "comm", "tid",
                        "symbol"} for row in s["rows"]), s["rows"]

d = json.load(open("diag.json"))
assert set(d) == {"version", "file", "meta", "counters", "recorded", "losses", "origins",
                  "ranks", "metrics"}, d.keys()
assert [set(r) for r in d["ranks"]] == [{"rank", "has_rank", "host", "path", "clock_pairs",
                                         "shift_ns", "drift_ns", "aligned_by",
                                         "residual_ns"}], d["ranks"]
assert d["ranks"][0]["path"] == "lanes.data" and d["ranks"][0]["shift_ns"] == 0, d["ranks"]
assert set(d["metrics"]) == {"recorded", "interval_ns", "ticks", "spacing_ns", "series", "values",
                             "encoded_bytes", "compressed_bytes", "nvml"}, d["metrics"]
assert d["losses"] == [] or set(d["losses"][0]) == {"ts", "cpu", "tid", "count"}, d["losses"]
assert d["file"]["ended"] == "cleanly" and "lanes" in d["file"]["features"], d["file"]
assert set(d["recorded"]) == {"samples", "threads", "processes", "lanes", "spans"}
assert d["recorded"]["spans"] == 1000, d["recorded"]
assert set(d["origins"]) == {"window_ns", "none", "linked", "bad_tid", "no_thread",
                             "no_stack", "too_far"}, d["origins"]
assert set(d["origins"]["linked"]) == {"count", "min_ns", "mean_ns", "max_ns"}
assert d["meta"]["command"].endswith("--spans 500"), d["meta"]
# Every counter the text lists by name, with its value.
for line in open("diag.txt"):
    w = line.split()
    if len(w) == 2 and "." in w[0] and w[1].isdigit() and w[0] in d["counters"]:
        assert d["counters"][w[0]] == int(w[1]), (w, d["counters"][w[0]])
assert d["counters"]["target.spans"] == 1000, d["counters"]
assert d["counters"]["samples"] == d["recorded"]["samples"]

c = json.load(open("cut.json"))
assert c["file"]["ended"] == "truncated" and "damage_offset" in c["file"], c["file"]
PY
expect_exit 2 "$GTRACE" threads -i lanes.data --format yaml
expect_contains stderr "^gtrace: invalid --format 'yaml'; use text or json\$"
exit 0
