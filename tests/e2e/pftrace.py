# SPDX-License-Identifier: MIT
"""Protocol Buffers' wire format, read without any package: enough to
decode the Perfetto traces gtrace export writes (tests/e2e/pftrace.proto
lists the messages and field numbers it uses)."""

import struct

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5


class DecodeError(ValueError):
    pass


def varint(buf, pos):
    """The varint at pos and the position after it."""
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("varint runs past the end")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("varint longer than 10 bytes")


def double(bits):
    """The double whose IEEE 754 bits a fixed64 field held."""
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def fields(buf):
    """Each field of a message: (number, wire type, value), the value an
    int for the numeric types and bytes for a length-delimited one."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise DecodeError("field number 0")
        if wire == VARINT:
            value, pos = varint(buf, pos)
        elif wire == FIXED64:
            value = int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
        elif wire == FIXED32:
            value = int.from_bytes(buf[pos:pos + 4], "little")
            pos += 4
        elif wire == LEN:
            size, pos = varint(buf, pos)
            value = bytes(buf[pos:pos + size])
            if len(value) != size:
                raise DecodeError("field %d runs past the end" % number)
            pos += size
        else:
            raise DecodeError("wire type %d" % wire)
        if pos > len(buf):
            raise DecodeError("field %d runs past the end" % number)
        yield number, wire, value


class Message:
    """A decoded message: its fields by number, each a list in order."""

    def __init__(self, buf):
        self.f = {}
        self.wire = {}
        for number, wire, value in fields(buf):
            if self.wire.setdefault(number, wire) != wire:
                raise DecodeError("field %d with two wire types" % number)
            self.f.setdefault(number, []).append(value)

    def has(self, number):
        return number in self.f

    def all(self, number):
        return self.f.get(number, [])

    def one(self, number, default=None):
        values = self.f.get(number)
        return values[-1] if values else default

    def sub(self, number):
        """The nested message of field number, or None."""
        value = self.one(number)
        return Message(value) if value is not None else None

    def subs(self, number):
        return [Message(v) for v in self.all(number)]

    def text(self, number, default=None):
        value = self.one(number)
        return value.decode("utf-8") if value is not None else default


def packets(buf):
    """The TracePackets of a Trace (field 1, repeated), as Messages."""
    for number, wire, value in fields(buf):
        if number != 1 or wire != LEN:
            raise DecodeError("a Trace holds field %d (wire type %d)" % (number, wire))
        yield Message(value)
