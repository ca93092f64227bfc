# SPDX-License-Identifier: MIT
# The call frame information reader (src/unwind/cfi.c) against binutils:
# test-cfi --emit writes each entry of its table (one per call frame
# instruction, address encoding, augmentation and CIE form) as an ELF file
# holding those bytes, with the rows cfi.c reads of them; readelf
# --debug-dump=frames-interp must say the same of every address. cfi.c
# keeps what a walk through rsp, rbp and the return address needs, so a
# readelf row is reduced to that first: CFA rsp or rbp plus a constant,
# return address and rbp at constant offsets from it (rbp may have no
# rule), no rule for rsp, else "other"; an undefined return address is
# "outermost", and a signal frame's rows are all "other".
. "$SRCDIR/tests/e2e/lib.sh"

command -v readelf >/dev/null 2>&1 || skip "no readelf (binutils) to hold the rows against"
command -v python3 >/dev/null 2>&1 || skip "no python3"

mkdir cases
"$BUILD/tests/test-cfi" --emit cases || fail "test-cfi --emit failed"
n=0
for object in cases/*.o; do
	readelf --debug-dump=frames-interp "$object" >"${object%.o}.readelf" 2>&1 ||
		fail "readelf failed on $object"
	n=$((n + 1))
done
[ "$n" -ge 40 ] || fail "test-cfi wrote $n cases, expected 40 or more"

python3 - cases <<'PY' || fail "cfi.c and readelf disagree (see above)"
import os, re, sys

def reduce(cfa, cols, signal):
    """A readelf row as cfi.c keeps it (tests/unit/test-cfi.c's row_text)."""
    if cols.get("ra") == "u":
        return "outermost" + (" signal" if signal else "")
    if signal:
        return "other signal"
    m = re.fullmatch(r"(rsp|rbp)([+-]\d+)", cfa)
    ra = cols.get("ra", "u")
    bp = cols.get("rbp", "u")
    if not m or cols.get("rsp", "u") != "u" or not re.fullmatch(r"c[+-]\d+", ra):
        return "other"
    if bp in ("u", "s"):
        bp = "s"
    elif not re.fullmatch(r"c[+-]\d+", bp):
        return "other"
    return "step %s%+d %s %s" % (m.group(1), int(m.group(2)), ra, bp)

def readelf_rows(path):
    """The FDE's rows: (address, reduced row), and its range."""
    text = open(path).read()
    signal = re.search(r'CIE "[^"]*S[^"]*"', text) is not None
    fde = re.search(r"FDE cie=\w+ pc=([0-9a-f]+)\.\.([0-9a-f]+)\n(.*?)(?:\n\n|\Z)", text, re.S)
    if not fde:
        sys.exit("%s: readelf shows no FDE:\n%s" % (path, text))
    lines = fde.group(3).split("\n")
    names = lines[0].split()[2:]            # LOC CFA reg...
    rows = []
    for line in lines[1:]:
        if not re.match(r"[0-9a-f]{16} ", line):
            sys.exit("%s: readelf says: %s" % (path, line))
        # A register column may read "r3 (rbx)": split at the column starts.
        fields = re.findall(r"r\d+ \(\w+\)|\S+", line)
        cols = dict(zip(names, fields[2:]))
        rows.append((int(fields[0], 16), reduce(fields[1], cols, signal)))
    return rows, int(fde.group(1), 16), int(fde.group(2), 16)

def row_at(rows, addr):
    at = [row for start, row in rows if start <= addr]
    return at[-1] if at else "none"

bad = 0
for name in sorted(os.listdir(sys.argv[1])):
    if not name.endswith(".rows"):
        continue
    base = os.path.join(sys.argv[1], name[:-5])
    ours = [(int(a, 16), r) for a, r in
            (line.rstrip("\n").split(" ", 1) for line in open(base + ".rows"))]
    theirs, lo, hi = readelf_rows(base + ".readelf")
    theirs.append((hi, "none"))
    for addr in sorted({a for a, _ in ours} | {a for a, _ in theirs}):
        if lo <= addr <= hi and row_at(ours, addr) != row_at(theirs, addr):
            print("%s at 0x%x: cfi.c '%s', readelf '%s'" %
                  (name[:-5], addr, row_at(ours, addr), row_at(theirs, addr)))
            bad += 1
    if ours[0][0] != lo:
        print("%s: cfi.c starts at 0x%x, readelf at 0x%x" % (name[:-5], ours[0][0], lo))
        bad += 1
sys.exit(1 if bad else 0)
PY
