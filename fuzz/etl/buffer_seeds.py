#!/usr/bin/env python3
"""Seeds for fuzz_etl_buffer from real traces: each trace's events, cut into
groups of 16 (at most 64 groups per trace), rewritten in the harness's input format (a flags byte, then per
event a header-type selector, a UINT16 payload length and the event's bytes).

    buffer_seeds.py OUTDIR TRACE...

Compressed traces are skipped (their events are not readable without
decompressing); the seeds are written outside the repository, since they are
the shared data's bytes."""
import os
import struct
import sys

# Header type -> (selector in the harness's kinds table, fixed header size).
KINDS = {0x02: (0, 0x20), 0x01: (1, 0x20), 0x04: (2, 0x18), 0x03: (3, 0x18),
         0x11: (4, 0x10), 0x10: (5, 0x10), 0x14: (6, 0x30), 0x0A: (7, 0x30),
         0x15: (8, 0x48), 0x0B: (9, 0x48), 0x13: (10, 0x50), 0x12: (11, 0x50)}
MESSAGE = (12, 8)
KERNEL = {0x01, 0x02, 0x03, 0x04, 0x10, 0x11}
GROUP = 16
MAX_SEEDS = 64  # per trace, spread over it


def events(data):
    off = 0
    while off + 0x48 <= len(data):
        bsize, saved = struct.unpack_from('<II', data, off)
        flags = struct.unpack_from('<H', data, off + 0x34)[0]
        if bsize < 0x48 or off + bsize > len(data):
            return
        if not flags & 0x0040:  # not compressed
            end, pos = min(max(saved, 0x48), bsize), 0x48
            while pos + 8 <= end and data[off + pos:off + pos + 4] != b'\xff' * 4:
                p = off + pos
                htype, mflags = data[p + 2], data[p + 3]
                if mflags & 0xC0 == 0xC0 and htype in KINDS:
                    sel, hdr = KINDS[htype]
                    size = struct.unpack_from('<H', data, p + (4 if htype in KERNEL else 0))[0]
                elif mflags & 0xC0 == 0x80:
                    (sel, hdr), size = MESSAGE, struct.unpack_from('<H', data, p)[0]
                else:
                    break
                if size < hdr or pos + size > end:
                    break
                yield sel, hdr, data[p:p + size]
                pos += (size + 7) & ~7
        off += bsize


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for path in sys.argv[2:]:
        with open(path, 'rb') as f:
            data = f.read()
        evs = list(events(data))[1:]  # the harness writes its own header event
        starts = range(0, len(evs), GROUP)
        stride = max(1, len(starts) // MAX_SEEDS)
        for i in starts[::stride]:
            group = evs[i:i + GROUP]
            big = any(len(e) > 4096 - 0x48 for _, _, e in group)
            seed = bytearray([4 if big else 0])
            for sel, hdr, e in group:
                seed += bytes([sel]) + struct.pack('<H', len(e) - hdr) + e
            name = '%s-%05d' % (os.path.basename(path), i // GROUP)
            with open(os.path.join(out, name), 'wb') as f:
                f.write(seed)


if __name__ == '__main__':
    main()
