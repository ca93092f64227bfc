#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Writes the seeds of tests/fuzz/fuzz-ingest.c (packets of the span
# channel, src/contract/wire.h: a 16-bit length before each, 0 for a new
# connection) and tests/fuzz/fuzz-kregions.c (a number of regions, then a
# kernel-regions buffer's words, include/gtrace/target.h), host order
# (little-endian), into OUTDIR/ingest and OUTDIR/kregions. Needs python3.
#
# usage: tests/fuzz/make-span-corpora.sh OUTDIR
set -eu

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1/ingest" "$1/kregions"
python3 - "$1" <<'PY'
import struct, sys

out = sys.argv[1]
HELLO, STRING, LANE, SPANS, DROPS, SPANS_ATTRS, COUNTERS, META, CUBIN, PC_SAMPLES = range(1, 11)
CUBIN_PART = 4000  # parts of any length: the recorder takes them in order

def packet(kind, count, body, version=1):
    p = struct.pack("<HHI", kind, version, count) + body
    return struct.pack("<H", len(p)) + p

def hello(instance=0, pid=0):
    return packet(HELLO, 1, struct.pack("<II", pid, instance))

def string(sid, text):
    return packet(STRING, 1, struct.pack("<II", sid, len(text)) + text)

def lane(lid, kind, name):
    return packet(LANE, 1, struct.pack("<IIII", lid, kind, name, 0))

def span(lid, name, start, end, nattrs=0, origin_tid=0, origin_ns=0):
    return struct.pack("<IIQQIIQ", lid, name, start, end, origin_tid, nattrs, origin_ns)

def attrs(keys, values):
    keys, values = keys + [0] * (3 - len(keys)), values + [0] * (3 - len(values))
    return struct.pack("<IIII", *keys, 0) + struct.pack("<QQQ", *values)

def spans(*entries, kind=SPANS, version=1):
    return packet(kind, len(entries), b"".join(entries), version)

def meta(key, value):
    return packet(META, 1, struct.pack("<II", len(key), len(value)) + key + value)

def cubin(crc, size, offset, part):
    return packet(CUBIN, 1, struct.pack("<QQQ", crc, size, offset) + part)

NEW_CONNECTION = struct.pack("<H", 0)
names = hello() + string(1, b"queue") + string(2, b"queue 0") + string(3, b"job") + lane(1, 1, 2)
seeds = {
    "good": names + spans(span(1, 3, 1000, 1500, origin_tid=42, origin_ns=990),
                          span(1, 3, 2000, 2100))
        + string(4, b"grid.x") + string(5, b"cuda.records.kernel")
        + spans(span(1, 3, 3000, 3100, nattrs=2), attrs([4, 4], [7, 8]), kind=SPANS_ATTRS)
        + packet(COUNTERS, 1, struct.pack("<IIQ", 5, 0, 17))
        + meta(b"cuda.status", b"active") + packet(DROPS, 1, struct.pack("<QQ", 3, 1)),
    "cubins": names + string(6, b"pc_hot") + string(7, b"stall_wait")
        + cubin(0xa11ce, CUBIN_PART + 100, 0, b"\x7f" * CUBIN_PART)
        + cubin(0xa11ce, CUBIN_PART + 100, CUBIN_PART, b"\x01" * 100)
        + cubin(0xb0b, 3000, 0, b"\x02" * 1000) + cubin(0xc0ffee, 2 << 20, 0, b"\x03" * 10)
        + packet(PC_SAMPLES, 1, struct.pack("<QQIIII", 0xa11ce, 0x40, 7, 6, 7, 30)),
    "invalid": names + spans(*[span(99, 3, 10, 20)] * 4) + spans() + packet(PC_SAMPLES, 0, b"")
        + spans(span(1, 3, 10, 20), version=2) + packet(SPANS, 3, span(1, 3, 10, 20))
        + spans(span(1, 3, 50, 40)) + packet(77, 1, b"") + struct.pack("<H", 3) + b"\x01\x00\x01"
        + spans(span(1, 3, 10, 20, nattrs=30), kind=SPANS_ATTRS),
    "strings": hello() + string(0, b"zero") + string(5, b"x" * 1025) + string(6, b"x" * 1024)
        + meta(b"k" * 1025, b"v") + meta(b"nodot", b"v") + meta(b"a.b", b"\x00")
        + lane(0x7fffffff, 6, 6) + lane(2, 9, 9),
    "instances": b"".join(NEW_CONNECTION + hello(i) + string(0xfffffffe, b"copy")
                          + lane(0xfffffffe, 0xfffffffe, 0xfffffffe)
                          + spans(span(0xfffffffe, 0xfffffffe, 10, 20)) for i in range(10)),
    "reconnect": names + spans(span(1, 3, 10, 20)) + NEW_CONNECTION + names
        + lane(1, 3, 3) + spans(span(1, 3, 30, 40)) + NEW_CONNECTION + hello(pid=1)
        + names + spans(span(1, 3, 50, 60)),
}
for name, data in seeds.items():
    open(f"{out}/ingest/{name}", "wb").write(data)

# Kernel-regions buffers: events as (kind, region, group, thread, block, ts).
BEGIN, END, FINISH = 1, 2, 3

def buffer(events, regions, grid=(4, 1, 1), capacity=None, lost=0, claimed=None):
    capacity = len(events) if capacity is None else capacity
    claimed = len(events) if claimed is None else claimed
    words = [0x67746b7200000001, capacity, claimed, lost,
             grid[0] | grid[1] << 32 | grid[2] << 48, 64, 0, 0]
    for kind, region, group, thread, block, ts in events:
        words += [ts, kind | region << 2 | group << 12 | thread << 18 | block << 28]
    words += [0, 0] * (capacity - len(events))
    return struct.pack("<H", regions) + struct.pack(f"<{len(words)}Q", *words)

nested = []
for block in range(4):
    for kind, region, at in ((BEGIN, 0, 0), (BEGIN, 1, 10), (END, 1, 30), (BEGIN, 2, 40),
                             (END, 2, 70), (END, 0, 100), (FINISH, 0, 101)):
        nested.append((kind, region, 0, 0, block, 1000 * block + at))
kr = {
    "nested": buffer(nested, 3),
    "unmatched": buffer([(BEGIN, 0, 0, 0, 0, 10), (BEGIN, 1, 0, 0, 0, 20), (END, 0, 0, 0, 0, 30),
                         (FINISH, 0, 0, 0, 0, 40), (END, 0, 0, 0, 0, 50), (BEGIN, 2, 0, 0, 1, 10),
                         (END, 1, 0, 0, 2, 5)], 3),
    "self-nesting": buffer([(BEGIN, 1, 0, 0, 0, 100), (BEGIN, 1, 0, 0, 0, 110),
                            (END, 1, 0, 0, 0, 120), (END, 1, 0, 0, 0, 200)], 3),
    "collision": buffer([(BEGIN, 0, 1, 32, 0, 10), (BEGIN, 0, 1, 33, 0, 11),
                         (END, 0, 1, 32, 0, 20)], 3),
    "bad-events": buffer([(BEGIN, 5, 0, 0, 0, 10), (BEGIN, 0, 63, 0, 0, 10),
                          (BEGIN, 0, 0, 0, 9, 10), (0, 0, 0, 0, 0, 0), (END, 0, 0, 0, 0, 5)], 3),
    "overflow": buffer([(BEGIN, 0, 0, 0, 0, 10)] * 4, 1, capacity=4, claimed=9, lost=5),
    "short": buffer([(BEGIN, 0, 0, 0, 0, 10)], 1, capacity=8, claimed=8)[:-16 * 3],
    "flood": buffer([(BEGIN, 0, 0, 0, 0, t) for t in range(300)]
                    + [(END, 1, 0, 0, 0, 300 + t) for t in range(300)], 2),
    "no-grid": buffer([(BEGIN, 0, 0, 0, 1 << 30, 10), (END, 0, 0, 0, 1 << 30, 20)], 1,
                      grid=(0, 0, 0)),
}
for name, data in kr.items():
    open(f"{out}/kregions/{name}", "wb").write(data)
PY
