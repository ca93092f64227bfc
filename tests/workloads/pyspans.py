# SPDX-License-Identifier: MIT
"""A Python program that reports spans through libgtrace-target with ctypes:
queue_work spends a while in zlib, then queues a span named "chunk" on the
lane "py/work" with this thread's origin, so the origin joins to a sample
whose stack shows queue_work.

usage: python3 pyspans.py LIBGTRACE_TARGET [SPANS]   (default 200)
"""
import ctypes
import sys
import zlib

DATA = bytes(range(256)) * 1024


class Origin(ctypes.Structure):
    _fields_ = [("tid", ctypes.c_uint32), ("ts_ns", ctypes.c_uint64)]


lib = ctypes.CDLL(sys.argv[1])
lib.gtrace_lane_get.restype = ctypes.c_void_p
lib.gtrace_lane_get.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
lib.gtrace_current_origin.restype = Origin
lib.gtrace_now_ns.restype = ctypes.c_uint64
lib.gtrace_span.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64,
                            ctypes.c_uint64, ctypes.POINTER(Origin)]
lib.gtrace_flush.argtypes = [ctypes.c_uint]
lib.gtrace_flush.restype = ctypes.c_bool


def queue_work(lane):
    for _ in range(4):
        zlib.compress(DATA, 9)
    origin = lib.gtrace_current_origin()
    start = lib.gtrace_now_ns()
    lib.gtrace_span(lane, b"chunk", start, start + 100000, ctypes.byref(origin))


def main():
    lane = lib.gtrace_lane_get(b"py", b"work")
    for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 200):
        queue_work(lane)
    lib.gtrace_flush(2000)


main()
