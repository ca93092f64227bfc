# SPDX-License-Identifier: MIT
"""Summarises a trace that gtrace export wrote, for tests/e2e/export.sh.

    python3 tracesum.py FILE [FROM TO]

reads FILE (Chrome JSON, or Perfetto protobuf: told apart by the first
byte) with nothing but the standard library and prints one fact a line,
in the same words for both formats, so that the test asserts the same
way on each:

    track TID KIND NAME         every track: thread, lane (lanes have their
                                synthetic tid, 0xfff00000 and up)
    process PID NAME
    group NAME                  a group of lane tracks (Perfetto: "GPU 0")
    slices TID COUNT TOTAL_NS   per track, the slices and their summed length
    depth TID N                 per track, how deep its slices nest (1: flat)
    args NAME KEY=VALUE,...     the attributes of the first slice of each name
    instants TID COUNT          per track
    samples TID COUNT           CPU samples per thread
    flows COUNT                 flows whose two ends are both in the trace
    counter NAME VALUE
    meta KEY VALUE
    range FIRST_NS LAST_NS      of every event's time (slices: start, end)
    sample-range FIRST_NS LAST_NS   of the samples
    slice-range MIN_END MAX_START   of the slices
    window-samples N            with FROM and TO: the samples in [FROM, TO)
    folded THREAD;OUTER;...;LEAF COUNT   the samples' stacks, as flame --folded

Exit status 1 with a message when the file does not decode.
"""

import collections
import json
import sys


class Summary:
    def __init__(self):
        self.tracks = {}                 # key -> (tid, kind, name)
        self.processes = {}              # pid -> name
        self.groups = []
        self.slices = collections.defaultdict(list)     # tid -> [(start, end)]
        self.args = {}                   # slice name -> its first attributes
        self.sample_times = []
        self.instants = collections.Counter()
        self.samples = collections.Counter()
        self.flow_out = set()
        self.flow_in = set()
        self.counters = {}
        self.meta = {}
        self.folded = collections.Counter()
        self.first = None
        self.last = None

    def seen(self, start, end):
        self.first = start if self.first is None else min(self.first, start)
        self.last = end if self.last is None else max(self.last, end)

    def print(self):
        for pid, name in sorted(self.processes.items()):
            print("process %d %s" % (pid, name))
        for group in self.groups:
            print("group %s" % group)
        for tid, kind, name in sorted(self.tracks.values()):
            print("track %d %s %s" % (tid, kind, name))
        for tid, spans in sorted(self.slices.items()):
            print("slices %d %d %d" % (tid, len(spans), sum(e - b for b, e in spans)))
        for tid, spans in sorted(self.slices.items()):
            print("depth %d %d" % (tid, depth(spans)))
        for name, args in sorted(self.args.items()):
            print("args %s %s" % (name, ",".join("%s=%s" % kv for kv in sorted(args.items()))))
        for tid, n in sorted(self.instants.items()):
            print("instants %d %d" % (tid, n))
        for tid, n in sorted(self.samples.items()):
            print("samples %d %d" % (tid, n))
        print("flows %d" % len(self.flow_out & self.flow_in))
        for name, value in sorted(self.counters.items()):
            print("counter %s %d" % (name, value))
        for key, value in sorted(self.meta.items()):
            print("meta %s %s" % (key, value))
        if self.first is not None:
            print("range %d %d" % (self.first, self.last))
        if self.sample_times:
            print("sample-range %d %d" % (min(self.sample_times), max(self.sample_times)))
        spans = [span for track in self.slices.values() for span in track]
        if spans:
            print("slice-range %d %d" % (min(e for _, e in spans), max(b for b, _ in spans)))
        if len(sys.argv) == 4:
            lo, hi = int(sys.argv[2]), int(sys.argv[3])
            print("window-samples %d" % sum(lo <= t < hi for t in self.sample_times))
        for stack, n in sorted(self.folded.items()):
            print("folded %s %d" % (stack, n))


def depth(spans):
    """How deep slices nest on one track: 1 when none is inside another."""
    deepest, open_ends = 0, []
    for b, e in sorted(spans, key=lambda span: (span[0], -span[1])):
        while open_ends and open_ends[-1] <= b and not (open_ends[-1] == b == e):
            open_ends.pop()
        open_ends.append(e)
        deepest = max(deepest, len(open_ends))
    return deepest


def ns(us):
    """Chrome's microseconds with three decimals, back to exact ns."""
    whole, _, frac = str(us).partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def chrome(text, s):
    d = json.loads(text)
    events = d["traceEvents"]
    frames = d.get("stackFrames", {})
    assert d.get("displayTimeUnit") == "ns"
    s.meta.update(d.get("metadata", {}))
    names = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            s.processes[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    for (pid, tid), name in names.items():
        kind = "lane" if tid >= 0xfff00000 else "thread"
        s.tracks[(pid, tid)] = (tid, kind, name)

    def stack(sf):
        out = []
        while sf is not None:
            f = frames[str(sf)]
            out.append(f["name"])
            sf = f.get("parent")
        return out[::-1]

    for e in events:
        ph = e["ph"]
        if ph == "M":
            continue
        ts = ns(e["ts"])
        if ph == "X":
            dur = ns(e["dur"])
            s.seen(ts, ts + dur)
            if e.get("cat") == "origin":
                s.instants[e["tid"]] += 1
            else:
                s.slices[e["tid"]].append((ts, ts + dur))
                s.args.setdefault(e["name"], e.get("args", {}))
        elif ph == "i" and e.get("cat") == "cpu":
            s.seen(ts, ts)
            s.samples[e["tid"]] += 1
            s.sample_times.append(ts)
            frames_ = stack(e["sf"]) if "sf" in e else [e["name"]]
            thread = names.get((e["pid"], e["tid"]), ":%d" % e["tid"])
            s.folded[";".join([thread] + frames_)] += 1
        elif ph == "i":
            s.instants[e["tid"]] += 1
        elif ph == "s":
            s.flow_out.add(e["id"])
        elif ph == "f":
            s.flow_in.add(e["id"])
        elif ph == "C":
            s.counters[e["name"]] = e["args"]["value"]
        else:
            raise ValueError("unexpected event phase %r" % ph)


def main():
    data = open(sys.argv[1], "rb").read()
    s = Summary()
    try:
        chrome(data.decode("utf-8"), s)
    except (ValueError, KeyError, AssertionError) as err:
        print("tracesum: %s does not decode: %r" % (sys.argv[1], err), file=sys.stderr)
        return 1
    s.print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
