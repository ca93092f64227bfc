#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Turns the recordings of a job's ranks into one input of
# tests/fuzz/fuzz-ranks.c: each recording as make-offline-corpus.sh turns
# it (with -z, its chunks kept compressed), after its length as a
# little-endian u32. Needs python3, and zstd(1) without -z.
#
# usage: tests/fuzz/make-ranks-corpus.sh [-z] OUTFILE RECORDING...
set -eu

z=
[ "${1:-}" = -z ] && { z=-z; shift; }
[ $# -ge 2 ] || { echo "usage: $0 [-z] OUTFILE RECORDING..." >&2; exit 2; }
out=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
for rec in "$@"; do
	mkdir "$tmp/$i"
	sh "$(dirname "$0")/make-offline-corpus.sh" $z "$tmp/$i" "$rec"
	i=$((i + 1))
done
python3 - "$out" "$tmp"/*/* <<'PY'
import struct, sys

with open(sys.argv[1], "wb") as out:
    for path in sys.argv[2:]:
        data = open(path, "rb").read()
        out.write(struct.pack("<I", len(data)) + data)
PY
