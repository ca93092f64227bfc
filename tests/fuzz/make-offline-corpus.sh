#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Turns recordings into inputs of tests/fuzz/fuzz-offline.c (and of each
# recording of tests/fuzz/fuzz-ranks.c): the header's features, then each
# TABLES chunk's payload, decompressed, after its length; with -z, its zstd
# frame as it is, after its length with the top bit set (for recordings
# whose chunks decompress to much: tests/hostile/table-bomb). A recording
# without an END chunk gives an input whose last length runs past its end.
# Needs python3, and zstd(1) without -z.
#
# usage: tests/fuzz/make-offline-corpus.sh [-z] OUTDIR RECORDING...
set -eu

frames=0
[ "${1:-}" = -z ] && { frames=1; shift; }
[ $# -ge 2 ] || { echo "usage: $0 [-z] OUTDIR RECORDING..." >&2; exit 2; }
out=$1
shift
mkdir -p "$out"
for rec in "$@"; do
	python3 - "$rec" "$out/$(basename "$rec" .data)" "$frames" <<'PY'
import struct, subprocess, sys

src, dst, frames = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
data = open(src, "rb").read()
features = data[16:24]
at, parts, ended = 32, [features], False
while at + 20 <= len(data):
    kind, clen, raw = struct.unpack_from("<III", data, at)
    frame = data[at + 20:at + 20 + clen]
    if len(frame) < clen:
        break
    if kind == 2:
        ended = True
    elif kind == 1 and frames:
        parts.append(struct.pack("<I", len(frame) | 0x80000000) + frame)
    elif kind == 1:
        payload = subprocess.run(["zstd", "-dc"], input=frame, stdout=subprocess.PIPE,
                                 check=True).stdout
        parts.append(struct.pack("<I", len(payload)) + payload)
    at += 20 + clen
if not ended:
    parts.append(struct.pack("<I", 0xFFFFFFFF))
open(dst, "wb").write(b"".join(parts))
PY
done
