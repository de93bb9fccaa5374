#!/usr/bin/env python3
"""Irregular traces lose nothing silently: real traces from ../shared/data,
each given one irregularity seen in the field, read with `ntlens etl events`
and `etl info`: every event is still read once, and a warning names the
field and its offset.
- A buffer whose Offset is 0xFFFFFFFF and whose SavedOffset ends before its
  last event (the reader used to stop at SavedOffset and drop that event).
- A buffer written twice (same sequence number, same bytes): its events are
  read once, not twice.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
DATA = os.path.join(os.environ["NTLENS_SHARED_DATA"], "etl")
KERNEL = {0x01, 0x02, 0x03, 0x04, 0x10, 0x11}


def run(*args):
    return subprocess.run([NTLENS, *args], capture_output=True, text=True, timeout=120)


def events(path):
    """The events `etl events --stream` reads, and its stderr."""
    p = run("etl", "events", "--stream", "--raw", "-f", "jsonl", path)
    return [json.loads(l) for l in p.stdout.splitlines()], p.stderr, p.returncode


def info(path):
    p = run("etl", "info", "-f", "json", path)
    doc = json.loads(p.stdout)
    return (doc[0] if isinstance(doc, list) else doc), p.stderr


def buffers(data):
    off = 0
    while off + 0x48 <= len(data):
        size = struct.unpack_from("<I", data, off)[0]
        yield off, size
        off += size


def event_starts(data, off):
    """Where each event of the (uncompressed) buffer at off starts."""
    saved = struct.unpack_from("<I", data, off + 4)[0]
    pos, starts = 0x48, []
    while pos + 8 <= saved and data[off + pos:off + pos + 4] != b"\xff" * 4:
        p = off + pos
        htype = data[p + 2]
        size = struct.unpack_from("<H", data, p + (4 if htype in KERNEL and data[p + 3] & 0xC0 == 0xC0
                                                   else 0))[0]
        starts.append(pos)
        pos += (size + 7) & ~7
    return starts


def write(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def test_offset_out_of_range(tmp, trace):
    data = bytearray(open(os.path.join(DATA, trace), "rb").read())
    want, _, _ = events(os.path.join(DATA, trace))
    off, _ = list(buffers(data))[-1]
    last = event_starts(data, off)[-1]
    struct.pack_into("<I", data, off + 4, last)          # SavedOffset: before the last event
    struct.pack_into("<I", data, off + 0x30, 0xFFFFFFFF)  # Offset: out of range
    path = write(tmp, "offset-" + trace, data)
    got, err, rc = events(path)
    check(rc == 0 and len(got) == len(want),
          "%s, Offset 0xFFFFFFFF: all %d events read (%d)" % (trace, len(want), len(got)))
    check(got == want, "%s, Offset 0xFFFFFFFF: the same events" % trace)
    check("Offset 0xffffffff" in err and "offset 0x%x" % (off + 0x30) in err,
          "%s: a warning names the field and its offset 0x%x (%s)" % (trace, off + 0x30, err.strip()))
    doc, _ = info(path)
    check(doc.get("irregularities") == 1, "%s: etl info says the file is irregular" % trace)


def test_buffer_twice(tmp, trace):
    data = open(os.path.join(DATA, trace), "rb").read()
    want, _, _ = events(os.path.join(DATA, trace))
    off, size = list(buffers(data))[1]
    path = write(tmp, "twice-" + trace, data + data[off:off + size])
    got, err, rc = events(path)
    check(rc == 0 and len(got) == len(want),
          "%s, a buffer twice: its %d events read once (%d)" % (trace, len(want), len(got)))
    check("repeats the buffer at 0x%x" % off in err and "offset 0x%x" % len(data) in err,
          "%s: a warning names both copies (%s)" % (trace, err.strip()))
    doc, _ = info(path)
    check(doc.get("buffers_duplicate") == 1 and doc.get("irregularities") == 1,
          "%s: etl info counts the repeated buffer" % trace)
    # A copy with one byte changed is another buffer, read as such.
    changed = bytearray(data[off:off + size])
    changed[-1] ^= 1
    got, err, _ = events(write(tmp, "changed-" + trace, data + bytes(changed)))
    check("repeats" not in err, "%s: a buffer that differs is not a repeat" % trace)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for trace in ("primitive-types.etl", "lxcore_kernel.etl"):
            test_offset_out_of_range(tmp, trace)
            test_buffer_twice(tmp, trace)
    finish()


if __name__ == "__main__":
    main()
