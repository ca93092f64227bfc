# SPDX-License-Identifier: MIT
"""Summarises a trace that gtrace export wrote, for tests/e2e/export.sh.

    python3 tracesum.py FILE [FROM TO]

reads FILE (Chrome JSON, or Perfetto protobuf: told apart by the first
byte) with nothing but the standard library and prints one fact a line,
in the same words for both formats, so that the test asserts the same
way on each:

    track TID KIND NAME         every track: thread, lane (in Chrome a lane
                                has its synthetic tid, 0xfff00000 and up; in
                                Perfetto none: 2^32 + its track uuid here)
    process PID NAME
    device NAME                 the metrics of the machine or a GPU (in Chrome
                                a pseudo process, pid 0xffe00000 and up)
    under LANE THREAD           a lane track of one thread's calls, under that
                                thread (Chrome: sorted with it, named after
                                it: "THREAD TID NAME", summarised as NAME)
    callers LANE TID,...        per lane track, its slices' origin.tid's
    group NAME PARENT           a group of lane tracks, under the process
                                PARENT (Perfetto only: "GPU 0")
    grouped LANE GROUP          a lane track in a group (Perfetto only)
    slices TID COUNT TOTAL_NS   per track, the slices and their summed length
    depth TID N                 per track, how deep its slices nest (1: flat)
    args NAME KEY=VALUE,...     the attributes of the first slice of each name
    busy GPU SLICES TOTAL_NS UNION_NS JOINED OUTSIDE   per "GPU n busy" track:
                                its slices and their summed length, the
                                length of the union of the slices of the
                                GPU's streams ("GPUn stream ..." tracks),
                                busy slices that overlap or touch the one
                                before, stream slices inside no busy slice
    instants TID COUNT          per track
    samples TID COUNT           CPU samples per thread (Chrome: of the
                                "samples" array, which speedscope and catapult
                                read; the instants must be the same samples)
    lane-samples TID COUNT      Chrome: the entries of "samples" of a lane
                                (no "cpu"), which must open and close its
                                slices, each a frame named after it
    idle-samples TID COUNT      Chrome: the entries of "samples" of a thread
                                with neither "cpu" nor "sf", each after a
                                CPU sample of the thread, ending its weight
    flows COUNT                 flows whose two ends are both in the trace
    queue-flows FROM COUNT      flows to slices with a queue delay, by where
                                they start: "api" in a cuda-api slice that
                                holds the origin (the slice's start minus
                                its queue.delay.ns; Chrome: the "s" at it),
                                "thread" at an origin instant there, "bad"
                                elsewhere or from nowhere
    unlinked-flows FROM COUNT   flows to slices whose origin did not link,
                                by where they start, as queue-flows
    counter NAME VALUE          the recording's own counters
    queue COUNT MAX LAST NAME   a CUDA stream's queue length track, named
                                "GPU<n> stream <s> queue": its values, the
                                largest and the last
    series NAME UNIT COUNT MIN MAX OWNER   a metric's counter track: its
                                values in UNIT ("-" for a count), under its
                                process or device OWNER
    meta KEY VALUE
    range FIRST_NS LAST_NS      of every event's time (slices: start, end)
    sample-range FIRST_NS LAST_NS   of the samples
    slice-range MIN_END MAX_START   of the slices
    window-samples N            with FROM and TO: the samples in [FROM, TO)
    folded THREAD;OUTER;...;LEAF COUNT   the samples' stacks, as flame --folded

Exit status 1 with a message when the file does not decode.
"""

import bisect
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pftrace  # noqa: E402

QUEUE_TRACK = re.compile(r"GPU[0-9]+ stream [0-9]+ queue$")


class Summary:
    def __init__(self):
        self.tracks = {}                 # key -> (tid, kind, name)
        self.processes = {}              # pid -> name
        self.groups = []
        self.grouped = []                # (lane name, group name)
        self.under = []                  # (lane key, thread tid)
        self.callers = collections.defaultdict(set)     # lane key -> origin tids
        self.slices = collections.defaultdict(list)     # tid -> [(start, end)]
        self.args = {}                   # slice name -> its first attributes
        self.sample_times = []
        self.instants = collections.Counter()
        self.samples = collections.Counter()
        self.lane_samples = collections.Counter()
        self.idle_samples = collections.Counter()
        self.flow_out = set()
        self.flow_in = set()
        self.flow_from = {}              # id -> (category, start, end, "s" time or None)
        self.flow_to = {}                # id -> (start, args) of the slice it ends at
        self.counters = {}
        self.devices = set()
        self.series = collections.defaultdict(list)    # (name, unit, owner) -> values
        self.queues = collections.defaultdict(list)    # name -> values
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
        for group in sorted(self.groups):
            print("group %s %s" % group)
        for lane, group in sorted(self.grouped):
            print("grouped %s %s" % (lane, group))
        for tid, kind, name in sorted(self.tracks.values()):
            print("track %d %s %s" % (tid, kind, name))
        for lane, thread in sorted(self.under):
            print("under %d %d" % (lane, thread))
        for lane, tids in sorted(self.callers.items()):
            print("callers %d %s" % (lane, ",".join(str(t) for t in sorted(tids))))
        for tid, spans in sorted(self.slices.items()):
            print("slices %d %d %d" % (tid, len(spans), sum(e - b for b, e in spans)))
        for tid, spans in sorted(self.slices.items()):
            print("depth %d %d" % (tid, depth(spans)))
        for fact in busy(self.tracks, self.slices):
            print("busy %d %d %d %d %d %d" % fact)
        for name, args in sorted(self.args.items()):
            print("args %s %s" % (name, ",".join("%s=%s" % kv for kv in sorted(args.items()))))
        for tid, n in sorted(self.instants.items()):
            print("instants %d %d" % (tid, n))
        for tid, n in sorted(self.samples.items()):
            print("samples %d %d" % (tid, n))
        for tid, n in sorted(self.lane_samples.items()):
            print("lane-samples %d %d" % (tid, n))
        for tid, n in sorted(self.idle_samples.items()):
            print("idle-samples %d %d" % (tid, n))
        print("flows %d" % len(self.flow_out & self.flow_in))
        queued = collections.Counter({"api": 0, "thread": 0, "bad": 0})
        for flow, (start, args) in self.flow_to.items():
            if "queue.delay.ns" in args:
                queued[queued_from(self.flow_from.get(flow), start - args["queue.delay.ns"])] += 1
        for where, n in sorted(queued.items()):
            print("queue-flows %s %d" % (where, n))
        unlinked = collections.Counter({"api": 0, "thread": 0, "bad": 0})
        for flow in self.flow_out & self.flow_in:
            start, args = self.flow_to[flow]
            if args.get("origin") != "linked":
                unlinked[queued_from(self.flow_from.get(flow), start - args.get("queue.delay.ns", 0))] += 1
        for where, n in sorted(unlinked.items()):
            print("unlinked-flows %s %d" % (where, n))
        for name, value in sorted(self.counters.items()):
            print("counter %s %d" % (name, value))
        for name, values in sorted(self.queues.items()):
            print("queue %d %d %d %s" % (len(values), max(values), values[-1], name))
        for name in sorted(self.devices):
            print("device %s" % name)
        for (name, unit, owner), values in sorted(self.series.items()):
            print("series %s %s %d %.6g %.6g %s" % (name, unit, len(values), min(values),
                                                    max(values), owner))
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


def busy(tracks, slices):
    """Per GPU with a busy row, how it matches its streams' slices."""
    streams, rows = collections.defaultdict(list), {}
    for tid, _, name in tracks.values():
        words = name.split()
        if len(words) >= 2 and words[0][:3] == "GPU" and words[0][3:].isdigit() and \
                words[1] == "stream":
            streams[int(words[0][3:])] += slices.get(tid, [])
        elif len(words) == 3 and words[0] == "GPU" and words[1].isdigit() and words[2] == "busy":
            rows[int(words[1])] = sorted(slices.get(tid, []))
    for gpu, row in sorted(rows.items()):
        union, end = 0, 0
        for b, e in sorted(streams[gpu]):
            union += max(e - max(b, end), 0)
            end = max(end, e)
        joined = sum(row[i][0] <= row[i - 1][1] for i in range(1, len(row)))
        starts = [b for b, _ in row]
        outside = 0
        for b, e in streams[gpu]:
            i = bisect.bisect_right(starts, b) - 1
            outside += i < 0 or e > row[i][1]
        yield gpu, len(row), sum(e - b for b, e in row), union, joined, outside


def queued_from(start, origin):
    """Where a flow to work queued at origin starts: its start's category,
    times and "s" time."""
    if start is None:
        return "bad"
    category, begin, end, at = start
    if at is not None and at != origin:
        return "bad"
    if category == "cuda-api" and begin <= origin < end:
        return "api"
    if category == "origin" and begin == end == origin:
        return "thread"
    return "bad"


def depth(spans):
    """How deep slices nest on one track: 1 when none is inside another."""
    deepest, open_ends = 0, []
    for b, e in sorted(spans, key=lambda span: (span[0], -span[1])):
        while open_ends and open_ends[-1] <= b and not (open_ends[-1] == b == e):
            open_ends.pop()
        open_ends.append(e)
        deepest = max(deepest, len(open_ends))
    return deepest


def replay(entries):
    """The slices a lane's entries of "samples" open and close, as
    (start, end, name): each entry's stack, [(frame id, name)] outermost
    first, keeps the open slices it shares with the one before."""
    slices, open_ = collections.Counter(), []     # open_: [(frame id, name, start)]
    for ts, chain in entries:
        keep = 0
        while keep < min(len(open_), len(chain)) and open_[keep][0] == chain[keep][0]:
            keep += 1
        for frame, name, start in open_[keep:]:
            slices[(start, ts, name)] += 1
        open_ = open_[:keep] + [(frame, name, ts) for frame, name in chain[keep:]]
    if open_:
        raise ValueError("lane slices %r never end" % [name for _, name, _ in open_])
    return slices


def ns(us):
    """Chrome's microseconds with three decimals, back to exact ns."""
    whole, _, frac = str(us).partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


DEVICE_PID_BASE = 0xffe00000


def chrome(text, s):
    d = json.loads(text)
    events = d["traceEvents"]
    frames = d.get("stackFrames", {})
    assert d.get("displayTimeUnit") == "ns"
    s.meta.update(d.get("metadata", {}))
    names = {}
    sort = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "thread_sort_index":
            sort[(e["pid"], e["tid"])] = e["args"]["sort_index"]
        if e["ph"] == "M" and e["name"] == "process_name" and e["pid"] >= DEVICE_PID_BASE:
            s.devices.add(e["args"]["name"])
        elif e["ph"] == "M" and e["name"] == "process_name":
            s.processes[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    devices = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and
               e["name"] == "process_name" and e["pid"] >= DEVICE_PID_BASE}
    # A thread's sort index, unique among threads: its lanes share it.
    threads = {(pid, sort.get((pid, tid))): tid for pid, tid in names if tid < 0xfff00000}
    for (pid, tid), name in names.items():
        kind = "lane" if tid >= 0xfff00000 else "thread"
        thread = threads.get((pid, sort.get((pid, tid)))) if kind == "lane" else None
        if thread is not None:
            prefix = "%s %d " % (names[(pid, thread)], thread)
            if not name.startswith(prefix):
                raise ValueError("lane %r of thread %d is not named after it" % (name, thread))
            name = name[len(prefix):]
            s.under.append((tid, thread))
        s.tracks[(pid, tid)] = (tid, kind, name)

    def chain(sf):
        out = []
        while sf is not None:
            if str(sf) not in frames:
                raise ValueError("no stack frame %r in stackFrames" % sf)
            f = frames[str(sf)]
            out.append((str(sf), f["name"]))
            sf = f.get("parent")
        return out[::-1]

    def stack(sf):
        return [name for _, name in chain(sf)]

    # The "samples" array: each thread's in time order (speedscope weighs a
    # sample by the time to the next), each the same as an instant.
    profile = []
    last = {}
    lanes = collections.defaultdict(list)     # (pid, tid) -> [(ts, chain)]
    idle = {}                                 # (pid, tid) -> its last entry was idle
    for e in d["samples"]:
        key = (e["pid"], e["tid"])
        ts = ns(e["ts"])
        if ts < last.get(key, ts):
            raise ValueError("sample of thread %d at %d ns before the one at %d ns" %
                             (e["tid"], ts, last[key]))
        last[key] = ts
        if "cpu" not in e and e["tid"] < 0xfff00000:
            if "sf" in e or idle.get(key, True):
                raise ValueError("idle entry of thread %d at %d ns not after a CPU sample" %
                                 (e["tid"], ts))
            idle[key] = True
            s.idle_samples[e["tid"]] += 1
            continue
        idle[key] = False
        if "cpu" not in e:
            lanes[key].append((ts, chain(e["sf"]) if "sf" in e else []))
            s.lane_samples[e["tid"]] += 1
            continue
        frames_ = stack(e["sf"]) if "sf" in e else []
        if frames_[-1:] not in ([], [e["name"]]):
            raise ValueError("sample named %r, its leaf frame is %r" % (e["name"], frames_[-1]))
        profile.append((key, ts, e["cpu"], e.get("sf")))
        s.samples[e["tid"]] += 1
        s.sample_times.append(ts)
        thread = names.get(key, ":%d" % e["tid"])
        s.folded[";".join([thread] + (frames_ or [e["name"]]))] += 1
    instants = []
    xs = collections.defaultdict(list)    # (pid, tid) -> [(start, end, category)]
    starts = []                           # the "s" events: (id, pid, tid, ts)
    last_x = None
    lane_slices = collections.defaultdict(collections.Counter)

    for e in events:
        ph = e["ph"]
        if ph == "M":
            continue
        ts = ns(e["ts"])
        if ph == "X":
            dur = ns(e["dur"])
            s.seen(ts, ts + dur)
            xs[(e["pid"], e["tid"])].append((ts, ts + dur, e.get("cat")))
            last_x = (ts, e.get("args", {}))
            if e.get("cat") == "origin":
                s.instants[e["tid"]] += 1
            else:
                s.slices[e["tid"]].append((ts, ts + dur))
                lane_slices[(e["pid"], e["tid"])][(ts, ts + dur, e["name"])] += 1
                s.args.setdefault(e["name"], e.get("args", {}))
                if e["tid"] >= 0xfff00000 and "origin.tid" in e.get("args", {}):
                    s.callers[e["tid"]].add(e["args"]["origin.tid"])
        elif ph == "i" and e.get("cat") == "cpu":
            s.seen(ts, ts)
            instants.append(((e["pid"], e["tid"]), ts, e["args"]["cpu"], e.get("sf")))
        elif ph == "i":
            s.seen(ts, ts)
            s.instants[e["tid"]] += 1
        elif ph == "s":
            s.flow_out.add(e["id"])
            starts.append((e["id"], e["pid"], e["tid"], ts))
        elif ph == "f":
            s.flow_in.add(e["id"])
            s.flow_to[e["id"]] = last_x
        elif ph == "C" and e["pid"] == 0:
            s.counters[e["name"]] = e["args"]["value"]
        elif ph == "C" and QUEUE_TRACK.match(e["name"]):
            s.queues[e["name"]].append(e["args"]["value"])
        elif ph == "C":
            (unit, value), = e["args"].items()
            owner = s.processes.get(e["pid"]) or devices.get(e["pid"], str(e["pid"]))
            s.series[(e["name"], "-" if unit == "value" else unit, owner)].append(value)
        else:
            raise ValueError("unexpected event phase %r" % ph)
    # An "s" binds to the innermost slice of its thread around it.
    for flow, pid, tid, ts in starts:
        around = [x for x in xs[(pid, tid)] if x[0] <= ts and (ts < x[1] or x[0] == x[1] == ts)]
        if around:
            begin, end, category = max(around, key=lambda x: (x[0], -x[1]))
            s.flow_from[flow] = (category, begin, end, ts)
    for key, slices in lane_slices.items():
        if key[1] >= 0xfff00000 and replay(lanes.get(key, [])) != slices:
            raise ValueError("the samples array's entries of lane %d are not its slices" % key[1])
    for key in set(lanes) - set(lane_slices):
        raise ValueError("samples array entries of lane %d, which has no slice" % key[1])
    if instants != profile:
        raise ValueError("the samples array (%d) is not the samples' instants (%d)" %
                         (len(profile), len(instants)))


# Field numbers of Perfetto's protos (tests/e2e/pftrace.proto).
P_TIMESTAMP, P_SEQUENCE_ID, P_TRACK_EVENT, P_INTERNED, P_FLAGS = 8, 10, 11, 12, 13
P_TRACK_DESCRIPTOR, P_PERF_SAMPLE, P_CLOCK_SNAPSHOT = 60, 66, 6
REALTIME, MONOTONIC, BOOTTIME = 1, 3, 6
EXPLICIT = 3
SEQ_CLEARED, SEQ_NEEDS_STATE = 1, 2
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4


def perfetto(data, s):
    tracks = {}         # uuid -> dict
    interned = collections.defaultdict(dict)  # InternedData field -> iid -> entry
    events = []         # (ts, order, TrackEvent)
    samples = []        # (ts, PerfSample)
    cleared = False
    recording = None    # the first track: the recording's own
    clocks = {}         # of the snapshot: clock id -> its time at the trace's 0
    for order, pkt in enumerate(pftrace.packets(data)):
        assert pkt.one(P_SEQUENCE_ID) == 1, "a packet off sequence 1"
        snapshot = pkt.sub(P_CLOCK_SNAPSHOT)
        if snapshot:
            assert order == 0 and snapshot.one(2) == BOOTTIME, "a clock snapshot not first"
            clocks = {c.one(1): c.one(2, 0) for c in snapshot.subs(1)}
            assert clocks.get(BOOTTIME) == 0, "the snapshot is not at the trace's 0"
            s.meta["realtime-ns-at-ts-0"] = str(clocks[REALTIME])
        flags = pkt.one(P_FLAGS, 0)
        if flags & SEQ_CLEARED:
            cleared = True
        inter = pkt.sub(P_INTERNED)
        if inter:
            assert cleared, "interned data before the state was cleared"
            for field, entries in inter.f.items():
                for raw in entries:
                    e = pftrace.Message(raw)
                    iid = e.one(1)
                    assert iid and iid not in interned[field], \
                        "iid %r of InternedData field %d sent twice" % (iid, field)
                    interned[field][iid] = e
        desc = pkt.sub(P_TRACK_DESCRIPTOR)
        if desc:
            uuid = desc.one(1)
            assert uuid not in tracks, "track %d described twice" % uuid
            t = {"parent": desc.one(5), "name": desc.text(2), "ordering": desc.one(11)}
            assert desc.one(12) == uuid, "track %d ranked %r, not in the order made" % (
                uuid, desc.one(12))
            if desc.has(3):
                proc = desc.sub(3)
                t.update(kind="process", pid=proc.one(1), name=proc.text(6))
                s.processes[t["pid"]] = t["name"]
            elif desc.has(4):
                th = desc.sub(4)
                t.update(kind="thread", pid=th.one(1), tid=th.one(2), name=th.text(5))
            elif desc.has(8):
                t.update(kind="counter", unit=desc.sub(8).text(6, "-"))
            else:
                t.update(kind="custom")
            if t["parent"] is not None:
                assert t["parent"] in tracks, "track %d's parent comes later" % uuid
            tracks[uuid] = t
            recording = uuid if recording is None else recording
        ev = pkt.sub(P_TRACK_EVENT)
        if ev:
            assert pkt.has(P_TIMESTAMP), "a TrackEvent with no time"
            assert ev.one(11) in tracks, "an event on an undescribed track"
            if ev.has(10) or ev.has(3) or ev.has(4):
                assert flags & SEQ_NEEDS_STATE, "interned names without SEQ_NEEDS_INCREMENTAL_STATE"
            events.append((pkt.one(P_TIMESTAMP), order, ev, resolve(ev, interned)))
        sample = pkt.sub(P_PERF_SAMPLE)
        if sample:
            assert flags & SEQ_NEEDS_STATE, "a sample without SEQ_NEEDS_INCREMENTAL_STATE"
            samples.append((pkt.one(P_TIMESTAMP), sample, stack(sample.one(4), interned)))

    for t in tracks.values():
        assert t["parent"] is None or tracks[t["parent"]]["ordering"] == EXPLICIT, \
            "track %r's siblings are not ordered by rank" % t["name"]
    parents = {t["parent"] for t in tracks.values() if t["kind"] == "custom"}
    keys = {}
    for uuid, t in tracks.items():
        if t["kind"] == "thread":
            keys[uuid] = t["tid"]
            s.tracks[uuid] = (t["tid"], "thread", t["name"])
        elif t["kind"] in ("process", "counter"):
            continue
        elif t["kind"] == "custom" and t["parent"] is not None and uuid in parents:
            owner = tracks[t["parent"]]
            s.groups.append((t["name"], owner.get("pid", 0)))
        elif t["kind"] == "custom" and t["parent"] is None and uuid != recording:
            s.devices.add(t["name"])
        elif t["kind"] == "custom" and t["parent"] is not None:
            keys[uuid] = (1 << 32) + uuid
            s.tracks[uuid] = (keys[uuid], "lane", t["name"])
            if tracks[t["parent"]]["kind"] == "thread":
                s.under.append((keys[uuid], tracks[t["parent"]]["tid"]))
            if t["parent"] in parents:
                s.grouped.append((t["name"], tracks[t["parent"]]["name"]))
        else:
            keys[uuid] = 0       # the recording's own track, as pid 0 in Chrome
            s.processes[0] = t["name"]

    # The reader orders events by time, keeping file order among equal times.
    events.sort(key=lambda e: (e[0], e[1]))
    open_slices = collections.defaultdict(list)
    for ts, _, ev, (name, args, category) in events:
        uuid, kind = ev.one(11), ev.one(9)
        for flow in ev.all(47):
            s.flow_out.add(flow)
        for flow in ev.all(48):
            s.flow_in.add(flow)
            s.flow_to[flow] = (ts, args)
        if kind == BEGIN:
            open_slices[uuid].append((ts, name, args, category, ev.all(47)))
        elif kind == END:
            assert open_slices[uuid], "a slice end with no begin on track %d" % uuid
            start, name, args, category, flows = open_slices[uuid].pop()
            for flow in flows:
                s.flow_from[flow] = (category, start, ts, None)
            s.seen(start, ts)
            s.slices[keys[uuid]].append((start, ts))
            s.args.setdefault(name, args)
            if tracks[uuid]["kind"] == "custom" and "origin.tid" in args:
                s.callers[keys[uuid]].add(args["origin.tid"])
        elif kind == INSTANT:
            for flow in ev.all(47):
                s.flow_from[flow] = (category, ts, ts, None)
            s.seen(ts, ts)
            s.instants[keys[uuid]] += 1
            if name == "recording":
                s.meta.update(args)
        elif kind == COUNTER and tracks[uuid]["parent"] == recording:
            s.counters[tracks[uuid]["name"]] = ev.one(30)
        elif kind == COUNTER and QUEUE_TRACK.match(tracks[uuid]["name"]):
            s.queues[tracks[uuid]["name"]].append(ev.one(30))
        elif kind == COUNTER:
            t = tracks[uuid]
            value = ev.one(30) if ev.has(30) else pftrace.double(ev.one(44))
            s.series[(t["name"], t["unit"], tracks[t["parent"]]["name"])].append(value)
        else:
            raise ValueError("TrackEvent type %r" % kind)
    for uuid, left in open_slices.items():
        assert not left, "%d slices never end on track %d" % (len(left), uuid)
    if clocks and "clock-start" in s.meta:
        real, mono = map(int, s.meta["clock-start"].split())
        assert clocks[REALTIME] - clocks[MONOTONIC] == real - mono, \
            "the snapshot's clocks are not those of meta clock-start"

    names = {t["tid"]: t["name"] for t in tracks.values() if t["kind"] == "thread"}
    for ts, sample, frames in samples:
        s.seen(ts, ts)
        s.samples[sample.one(3)] += 1
        s.sample_times.append(ts)
        thread = names.get(sample.one(3), ":%d" % sample.one(3))
        s.folded[";".join([thread] + frames)] += 1


def resolve(ev, interned):
    """A TrackEvent's name, attributes and (last) category, through the
    interned data as it stands when the event is read."""
    name = interned[2][ev.one(10)].text(2) if ev.has(10) else None
    category = None
    for iid in ev.all(3):
        category = interned[1][iid].text(2)
    args = {}
    for a in ev.subs(4):
        key = interned[3][a.one(1)].text(2)
        if a.has(6):
            args[key] = a.text(6)
        elif a.has(5):
            args[key] = pftrace.double(a.one(5))
        else:
            args[key] = a.one(3)
    return name, args, category


def stack(iid, interned):
    """The function names of interned callstack iid, outermost first."""
    frames = []
    for frame_iid in interned[7][iid].all(2):
        frame = interned[6][frame_iid]
        frames.append(interned[5][frame.one(2)].text(2))
        mapping = interned[19][frame.one(3)]
        for path in mapping.all(7):
            interned[17][path].text(2)
    return frames


def main():
    data = open(sys.argv[1], "rb").read()
    s = Summary()
    try:
        if data[:1] == b"{":
            chrome(data.decode("utf-8"), s)
        else:
            perfetto(data, s)
    except (ValueError, KeyError, AssertionError) as err:
        print("tracesum: %s does not decode: %r" % (sys.argv[1], err), file=sys.stderr)
        return 1
    s.print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
