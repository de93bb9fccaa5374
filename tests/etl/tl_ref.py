#!/usr/bin/env python3
"""An independent TraceLogging decoder, for cross-checking `etl events`.

Written from TraceLoggingProvider.h's description of the encoding (no code
shared with lib/etl): the EVENT_SCHEMA_TL extended item holds UINT16 size,
extension bytes (high bit chains), the event name, then per field its name,
in-type byte (0x80: an out-type follows; 0x20 constant count, 0x40 count in
the payload, 0x60 custom), out-type byte (0x80: tag bytes follow), and a
constant count. PROV_TRAITS holds UINT16 size and the provider name. Reads
the buffers with etl_ref. Prints one JSON object per TraceLogging event:
provider, event and fields as `etl events --format jsonl` shows them.

    tl_ref.py FILE.etl
"""
import datetime
import json
import struct
import sys
import uuid

import etl_ref

FIXED = {3: "<b", 4: "<B", 5: "<h", 6: "<H", 7: "<i", 8: "<I", 9: "<q", 10: "<Q",
         11: "<f", 12: "<d", 13: "<I", 20: "<I", 21: "<Q"}
OUT_BOOLEAN, OUT_HEX, OUT_STRING = 3, 4, 2


def cstr(b, pos):
    end = b.index(b"\0", pos)
    return b[pos:end].decode("utf-8", "replace"), end + 1


def fields_of(meta, pos, end, count=None):
    """The field descriptors from pos: (name, in, out, ccount, members)."""
    out = []
    while (count is None and pos < end) or (count is not None and len(out) < count):
        name, pos = cstr(meta, pos)
        intype = meta[pos]
        pos += 1
        outtype = 0
        if intype & 0x80:
            outtype = meta[pos]
            pos += 1
            chain = outtype & 0x80
            while chain:
                chain = meta[pos] & 0x80
                pos += 1
            outtype &= 0x7F
        ccount = None
        if intype & 0x60 == 0x20:
            ccount = struct.unpack_from("<H", meta, pos)[0]
            pos += 2
        members = None
        if intype & 0x1F == 24:
            members, pos = fields_of(meta, pos, end, outtype)
        out.append((name, intype, outtype, ccount, members))
    return out, pos


def filetime(v):
    t = datetime.datetime(1601, 1, 1) + datetime.timedelta(microseconds=v // 10)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%07dZ" % (v % 10000000)


def scalar(p, pos, intype, outtype):
    t = intype & 0x1F
    if t == 2:
        end = p.index(b"\0", pos)
        return p[pos:end].decode("utf-8", "replace"), end + 1
    if t == 1:
        end = pos
        while p[end:end + 2] != b"\0\0":
            end += 2
        return p[pos:end].decode("utf-16-le"), end + 2
    if t == 15:
        return str(uuid.UUID(bytes_le=bytes(p[pos:pos + 16]))), pos + 16
    if t == 17:
        return filetime(struct.unpack_from("<Q", p, pos)[0]), pos + 8
    if t == 18:
        y, mo, _, d, h, mi, s, ms = struct.unpack_from("<8H", p, pos)
        return "%04d-%02d-%02dT%02d:%02d:%02d.%03d" % (y, mo, d, h, mi, s, ms), pos + 16
    if t in (22, 23):
        n = struct.unpack_from("<H", p, pos)[0]
        raw = p[pos + 2:pos + 2 + n]
        return raw.decode("utf-16-le" if t == 22 else "utf-8", "replace"), pos + 2 + n
    fmt = FIXED[t]
    v = struct.unpack_from(fmt, p, pos)[0]
    size = struct.calcsize(fmt)
    if outtype == OUT_BOOLEAN or t == 13:
        v = bool(v)
    elif outtype == OUT_STRING and size == 1:
        v = chr(v)
    elif outtype == OUT_HEX or t in (20, 21):
        v = "0x%0*x" % (2 * size, v)
    return v, pos + size


def values(p, pos, fields):
    obj = {}
    for name, intype, outtype, ccount, members in fields:
        n = ccount
        if intype & 0x60 == 0x40:
            n = struct.unpack_from("<H", p, pos)[0]
            pos += 2
        one = (lambda q: values(p, q, members)) if members is not None else \
              (lambda q: scalar(p, q, intype, outtype))
        if n is None:
            obj[name], pos = one(pos)
        else:
            obj[name] = []
            for _ in range(n):
                v, pos = one(pos)
                obj[name].append(v)
    return obj, pos


def ext_items(rec):
    pos = 0x50
    while True:
        total, typ, link, size = struct.unpack_from("<HHHH", rec, pos)
        yield typ, rec[pos + 8:pos + 8 + size]
        pos += total
        if not link & 1:
            return pos


def events(path):
    for kind, _, rec in etl_ref.all_records(path):
        if kind != "event" or not struct.unpack_from("<H", rec, 4)[0] & 1:
            continue
        items = {}
        it = ext_items(rec)
        try:
            while True:
                typ, data = next(it)
                items.setdefault(typ, data)
        except StopIteration as stop:
            payload = rec[stop.value:]
        if 11 not in items:
            continue
        meta = items[11]
        size = struct.unpack_from("<H", meta, 0)[0]
        pos = 2
        while meta[pos] & 0x80:
            pos += 1
        name, pos = cstr(meta, pos + 1)
        fields, _ = fields_of(meta, pos, size)
        obj, used = values(payload, 0, fields)
        if used != len(payload):
            raise ValueError("%s: %d payload bytes, %d decoded" % (name, len(payload), used))
        provider = cstr(items[12], 2)[0] if 12 in items else None
        yield {"provider": provider, "event": name, "fields": obj}


if __name__ == "__main__":
    for ev in events(sys.argv[1]):
        print(json.dumps(ev))
