# SPDX-License-Identifier: MIT
"""Checks the Python frames of folded stacks (gtrace flame --folded) on stdin.

usage: python3 pyframes.py [--min-share PERCENT] SCRIPT RULE...

A rule NAME=REGEX=FUNCTION=CALL takes the samples with a frame matching
REGEX (the C routine NAME) and wants at least PERCENT (default 95) of them to show FUNCTION
as their innermost Python frame of SCRIPT (a library's Python wrapper may
be inside it), at the line of SCRIPT that holds the text CALL. Prints one line per rule; exits 1 when a rule fails or has no samples.
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
    min_share = 95.0
    if args[:1] == ["--min-share"]:
        min_share, args = float(args[1]), args[2:]
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
        share = 100.0 * right / total if total else 0.0
        print(f"{name}: {right} of {total} samples show {func} at line {want_line} "
              f"({share:.1f}%), {wrong} another line ({100.0 * wrong / max(total, 1):.1f}%)")
        ok = ok and total > 0 and share >= min_share
    sys.exit(0 if ok else 1)


main()
