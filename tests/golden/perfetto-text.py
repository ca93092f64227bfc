# SPDX-License-Identifier: MIT
"""Prints a Perfetto trace that gtrace export wrote as text, every field of
every packet, for the golden tests (tests/golden/README):

    python3 perfetto-text.py <FILE

Fields come in the file's order, one a line, named and typed by
tests/e2e/pftrace.proto (protoc's text format, more or less: nested
messages in braces, enums by name, strings quoted); a field the schema
does not name is printed by number, so that nothing the file holds is
left out. Needs nothing but the standard library (tests/e2e/pftrace.py
reads the wire format). Exit status 1 with a message when the file does
not decode.
"""

import os
import re
import struct
import sys

E2E = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e")
sys.path.insert(0, E2E)
import pftrace  # noqa: E402



def schema(path):
    """The messages of a .proto file: {message: {number: (name, type)}},
    and its enums: {enum: {value: name}}, enums known by their own name."""
    messages, enums, scopes = {}, {}, []
    for line in open(path, encoding="utf-8"):
        line = line.split("//")[0].strip()
        opened = re.match(r"(message|enum) (\w+) \{", line)
        field = re.match(r"(?:optional|repeated) (\w+) (\w+) = (\d+);", line)
        value = re.match(r"(\w+) = (\d+);", line)
        if opened:
            kind, name = opened.groups()
            (messages if kind == "message" else enums)[name] = {}
            scopes.append((kind, name))
        elif line == "}":
            scopes.pop()
        elif field and scopes and scopes[-1][0] == "message":
            messages[scopes[-1][1]][int(field.group(3))] = (field.group(2), field.group(1))
        elif value and scopes and scopes[-1][0] == "enum":
            enums[scopes[-1][1]][int(value.group(2))] = value.group(1)
    return messages, enums


def quoted(raw):
    """A string or bytes field as a quoted, escaped string (UTF-8 kept)."""
    text = raw.decode("utf-8", errors="backslashreplace")
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def scalar(kind, wire, value, enums):
    if kind in enums:
        return enums[kind].get(value, str(value))
    if kind in ("int64", "int32") and value >= 1 << 63:
        return str(value - (1 << 64))
    if kind == "double" and wire == pftrace.FIXED64:
        return repr(pftrace.double(value))
    if kind in ("string", "bytes") or wire == pftrace.LEN:
        return quoted(value)
    return str(value)


def packed(buf):
    """The varints of a packed repeated field."""
    pos, values = 0, []
    while pos < len(buf):
        value, pos = pftrace.varint(buf, pos)
        values.append(value)
    return values


def lines(buf, message, messages, enums):
    """The fields of a message, a line each: "name: value", or a nested
    message, on one line "name { a: 1 b: 2 }" when it holds no message,
    else over several, indented."""
    fields = messages.get(message, {})
    out = []
    for number, wire, value in pftrace.fields(buf):
        name, kind = fields.get(number, (str(number), None))
        if kind in messages:
            inner = lines(value, kind, messages, enums)
            if any(messages.get(kind, {}).get(n, (0, 0))[1] in messages
                   for n, _, _ in pftrace.fields(value)):
                out.append(["%s {" % name] + inner + ["}"])
            else:
                out.append("%s { %s }" % (name, " ".join(inner)) if inner else name + " {}")
        elif wire == pftrace.LEN and kind is not None and kind not in ("string", "bytes"):
            out += ["%s: %s" % (name, scalar(kind, pftrace.VARINT, v, enums))
                    for v in packed(value)]
        else:
            out.append("%s: %s" % (name, scalar(kind, wire, value, enums)))
    return out


def write(items, depth, out):
    """Lines as lines() made them, nested blocks indented."""
    for item in items:
        if isinstance(item, list):
            out.append("  " * depth + item[0])
            write(item[1:-1], depth + 1, out)
            out.append("  " * depth + item[-1])
        else:
            out.append("  " * depth + item)


def main():
    messages, enums = schema(os.path.join(E2E, "pftrace.proto"))
    data = sys.stdin.buffer.read()
    out = []
    try:
        for number, wire, value in pftrace.fields(data):
            if number != 1 or wire != pftrace.LEN:
                raise pftrace.DecodeError("a Trace holds field %d (wire type %d)" % (number, wire))
            write([["packet {"] + lines(value, "TracePacket", messages, enums) + ["}"]], 0, out)
    except (pftrace.DecodeError, struct.error) as e:
        sys.stderr.write("perfetto-text: the trace does not decode: %s\n" % e)
        return 1
    sys.stdout.write("\n".join(out) + "\n" if out else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
