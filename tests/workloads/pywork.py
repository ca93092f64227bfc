# SPDX-License-Identifier: MIT
"""A Python workload whose functions each spend their time in a C routine of
their own, so that a sample's native leaf says which Python function must be
running: compress_work in zlib, hash_work in hashlib's SHA-256, bzip_work in
bz2, sort_work in sorted() (calling back into Python for its keys), and
recurse, DEPTH Python calls deep, in zlib again at the bottom.

usage: python3 pywork.py [ROUNDS]   (default 1: about a second of CPU)
"""
import bz2
import hashlib
import sys
import zlib

DATA = bytes(range(256)) * 4096
DEPTH = 20


def compress_work(n):
    for _ in range(n):
        zlib.compress(DATA, 9)


def hash_work(n):
    for _ in range(n):
        hashlib.sha256(DATA * 4).digest()


def bzip_work(n):
    for _ in range(n):
        bz2.compress(DATA, 9)


def sort_work(n):
    values = list(range(200000, 0, -1))
    for _ in range(n):
        sorted(values, key=lambda v: -v)


def recurse(depth, n):
    if depth > 1:
        return recurse(depth - 1, n)
    return compress_work(n)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    for _ in range(rounds):
        compress_work(20)
        hash_work(100)
        bzip_work(2)
        sort_work(3)
        recurse(DEPTH, 20)


main()
