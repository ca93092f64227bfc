# SPDX-License-Identifier: MIT
"""Two Python threads at once, each in a C routine of its own that lets go
of the GIL: compress_loop in zlib, hash_loop in SHA-256, while the main
thread waits in join. Each sample's Python stack must be its own thread's.

usage: python3 pythreads.py [SECONDS]   (default 1)
"""
import hashlib
import sys
import threading
import time
import zlib

DATA = bytes(range(256)) * 4096


def compress_loop(until):
    while time.monotonic() < until:
        zlib.compress(DATA, 9)


def hash_loop(until):
    while time.monotonic() < until:
        hashlib.sha256(DATA * 4).digest()


def main():
    until = time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
    workers = [threading.Thread(target=f, args=(until,)) for f in (compress_loop, hash_loop)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


main()
