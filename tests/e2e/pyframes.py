# SPDX-License-Identifier: MIT
"""Checks the Python frames of folded stacks (gtrace flame --folded) on stdin.

usage: python3 pyframes.py [--min-share PERCENT] [--min-read PERCENT] SCRIPT RULE...

A rule NAME=REGEX=FUNCTION=CALL takes the samples with a frame matching
REGEX (the C routine NAME) and wants at least PERCENT (--min-share,
default 90) of those with Python frames of SCRIPT to show FUNCTION as
their innermost one (a library's Python wrapper may be inside it), at the
line of SCRIPT that holds the text CALL; and at least --min-read PERCENT
(default 75) of them to have Python frames. The recorder reads a Python
stack when it takes the sample from the ring, after it was taken: a
sample has none when the thread had moved on to another call depth by
then (diagnose's python.mismatch), and shows the next call of the same
depth when it had moved on to that, as many samples at the end of a
routine's run as milliseconds the recorder ran late (35 of 489 seen on a
loaded machine). How late is for the machine's load to decide. Prints
one line per rule; exits 1 when a rule fails or has no samples.
"""
import re
import sys

FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^ ()]+):(?P<line>\d+)\)$")


def python_frames(frames, script):
    base = script.rsplit("/", 1)[-1]
    return [m for m in map(FRAME.match, frames) if m and m["file"] == base]


def line_of(script, text):
    with open(script) as f:
        for number, line in enumerate(f, 1):
            if text in line:
                return number
    sys.exit(f"no line of {script} holds {text!r}")


def main():
    args = sys.argv[1:]
    min_share, min_read = 90.0, 75.0
    while args[:1] in (["--min-share"], ["--min-read"]):
        if args[0] == "--min-share":
            min_share = float(args[1])
        else:
            min_read = float(args[1])
        args = args[2:]
    script, rules = args[0], [r.split("=", 3) for r in args[1:]]
    stacks = []
    for line in sys.stdin:
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        stacks.append((stack.split(";"), int(count)))
    ok = True
    for name, regex, func, call in rules:
        routine, want_line = re.compile(regex), line_of(script, call)
        total = right = wrong = 0
        for frames, count in stacks:
            if not any(routine.search(f) for f in frames):
                continue
            total += count
            py = python_frames(frames, script)
            if py and py[-1]["func"] == func and int(py[-1]["line"]) == want_line:
                right += count
            elif py:
                wrong += count
        read = right + wrong
        share = 100.0 * right / max(read, 1)
        read_share = 100.0 * read / max(total, 1)
        print(f"{name}: {read} of {total} samples with Python frames ({read_share:.1f}%): "
              f"{right} show {func} at line {want_line} ({share:.1f}%), {wrong} another line")
        ok = ok and read > 0 and share >= min_share and read_share >= min_read
    sys.exit(0 if ok else 1)


main()
