#!/usr/bin/env python3
"""An independent reader of .etl files, for cross-checking ntlens.

Written separately from lib/etl (no shared code or tables), from the public
descriptions of the format: WMI_BUFFER_HEADER, the trace header markers,
TRACE_LOGFILE_HEADER, Image_Load, and MS-XCA's plain LZ77 pseudo-code.
Prints one JSON object: the logger name, buffer and event counts by header
kind, and every image event.

    etl_ref.py FILE.etl
"""
import json
import struct
import sys

HEADER_KIND = {
    1: "system", 2: "system", 3: "compact", 4: "compact",
    0x10: "perfinfo", 0x11: "perfinfo",
    0x0A: "classic", 0x14: "classic", 0x0B: "instance", 0x15: "instance",
    0x12: "event", 0x13: "event",
}
KERNEL_KINDS = ("system", "compact", "perfinfo")
FIXED_HEADER = {"system": 32, "compact": 24, "perfinfo": 16, "classic": 48,
                "instance": 72, "event": 80}
IMAGE_OPS = {10: "Load", 2: "Unload", 3: "DCStart", 4: "DCEnd"}


def lz77_plain_decompress(src, expected):
    """MS-XCA 2.4, transcribed from its pseudo-code."""
    dst = bytearray()
    flags = 0
    flag_count = 0
    ip = 0
    last_half = None
    while True:
        if flag_count == 0:
            if ip + 4 > len(src):
                break
            flags = struct.unpack_from("<I", src, ip)[0]
            ip += 4
            flag_count = 32
        flag_count -= 1
        if not (flags >> flag_count) & 1:
            if ip >= len(src):
                break
            dst.append(src[ip])
            ip += 1
            continue
        if ip >= len(src):
            break
        token = struct.unpack_from("<H", src, ip)[0]
        ip += 2
        length = token & 7
        distance = (token >> 3) + 1
        if length == 7:
            if last_half is None:
                length = src[ip] & 15
                last_half = ip
                ip += 1
            else:
                length = src[last_half] >> 4
                last_half = None
            if length == 15:
                length = src[ip]
                ip += 1
                if length == 255:
                    length = struct.unpack_from("<H", src, ip)[0]
                    ip += 2
                    if length == 0:
                        length = struct.unpack_from("<I", src, ip)[0]
                        ip += 4
                    length -= 15 + 7
                length += 15
            length += 7
        length += 3
        start = len(dst) - distance
        if start < 0:
            raise ValueError("match before start")
        for k in range(length):
            dst.append(dst[start + k])
    if len(dst) != expected:
        raise ValueError("decompressed %d bytes, expected %d" % (len(dst), expected))
    return bytes(dst)


def utf16z(b):
    s = b.decode("utf-16-le", errors="replace")
    return s.split("\0", 1)[0]


def records(data):
    """Yields (kind, header_type, record bytes) for the events of one buffer."""
    pos = 0x48
    while pos + 8 <= len(data):
        marker = struct.unpack_from("<I", data, pos)[0]
        if marker == 0xFFFFFFFF:
            return
        flags = marker >> 24
        htype = (marker >> 16) & 0xFF
        if flags & 0xC0 == 0xC0:
            kind = HEADER_KIND.get(htype)
            if kind is None:
                raise ValueError("header type %d" % htype)
        elif flags & 0xC0 == 0x80:
            kind = "message"
        else:
            raise ValueError("bad marker %08x" % marker)
        if kind in KERNEL_KINDS:
            size = struct.unpack_from("<H", data, pos + 4)[0]
        else:
            size = struct.unpack_from("<H", data, pos)[0]
        if size == 0 or pos + size > len(data):
            raise ValueError("bad size")
        yield kind, htype, data[pos:pos + size]
        pos += (size + 7) & ~7


def image_event(kind, htype, rec):
    if kind not in KERNEL_KINDS:
        return None
    marker_low, hook = struct.unpack_from("<HH", rec, 0)[0], struct.unpack_from("<H", rec, 6)[0]
    group, op = hook >> 8, hook & 0xFF
    if group == 0x14 and op in IMAGE_OPS:
        pass
    elif group == 0x03 and op == 10:
        pass
    else:
        return None
    version = marker_low & 0xFF
    ext = 8 if marker_low & 0x8000 else 0
    ext += 8 * ((marker_low >> 8) & 7)
    body = rec[FIXED_HEADER[kind] + ext:]
    wide = htype in (2, 4, 0x11)
    ptr = "Q" if wide else "I"
    psz = 8 if wide else 4
    base, size = struct.unpack_from("<" + ptr + ptr, body, 0)
    pid = struct.unpack_from("<I", body, 2 * psz)[0]
    if version >= 2:
        checksum, tds = struct.unpack_from("<II", body, 2 * psz + 4)
        name_at = 2 * psz + 16 + psz + 16
    else:
        checksum = tds = 0
        name_at = 2 * psz + 4
    return {"kind": IMAGE_OPS[op], "base": base, "size": size, "pid": pid,
            "checksum": checksum, "time_date_stamp": tds, "name": utf16z(body[name_at:])}


def buffers(path):
    """Yields each buffer's bytes, decompressed."""
    raw = open(path, "rb").read()
    off = 0
    while off < len(raw):
        size, saved = struct.unpack_from("<II", raw, off)
        offset_field = struct.unpack_from("<I", raw, off + 0x30)[0]
        bflags = struct.unpack_from("<H", raw, off + 0x34)[0]
        chunk = raw[off:off + size]
        if bflags & 0x40:
            yield chunk[:0x48] + lz77_plain_decompress(chunk[0x48:], saved - 0x48)
        else:
            yield chunk[:max(saved, offset_field if offset_field <= size else 0)]
        off += size


def all_records(path):
    """Yields (kind, header_type, record bytes) for every event of a file."""
    for data in buffers(path):
        yield from records(data)


def read(path):
    raw = open(path, "rb").read()
    out = {"buffers": 0, "compressed": 0, "events": 0,
           "kinds": {k: 0 for k in ("system", "compact", "perfinfo", "classic",
                                    "instance", "event", "message")},
           "images": [], "logger": None}
    off = 0
    while off < len(raw):
        size, saved = struct.unpack_from("<II", raw, off)
        offset_field = struct.unpack_from("<I", raw, off + 0x30)[0]
        bflags = struct.unpack_from("<H", raw, off + 0x34)[0]
        chunk = raw[off:off + size]
        if bflags & 0x40:
            data = chunk[:0x48] + lz77_plain_decompress(chunk[0x48:], saved - 0x48)
            out["compressed"] += 1
        else:
            end = max(saved, offset_field if offset_field <= size else 0)
            data = chunk[:end]
        out["buffers"] += 1
        for kind, htype, rec in records(data):
            out["events"] += 1
            out["kinds"][kind] += 1
            if out["logger"] is None:
                # TRACE_LOGFILE_HEADER after a 32-byte system header; strings
                # follow the fixed part, whose size depends on PointerSize.
                body = rec[32:]
                psz = struct.unpack_from("<I", body, 44)[0]
                fixed = 0x38 + 2 * psz + 172
                fixed = (fixed + 7) & ~7
                fixed += 32
                out["logger"] = utf16z(body[fixed:])
            img = image_event(kind, htype, rec)
            if img:
                out["images"].append(img)
        off += size
    return out


if __name__ == "__main__":
    json.dump(read(sys.argv[1]), sys.stdout)
    sys.stdout.write("\n")
