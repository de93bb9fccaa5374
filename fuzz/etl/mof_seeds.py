#!/usr/bin/env python3
"""Seeds for fuzz_mof_prefix from real traces: the payload of each kernel
layout's first events (at most 4 per kind, group, opcode, version and
pointer size), in the harness's input format (kind, group, opcode, UINT16
version, flags, payload).

    mof_seeds.py OUTDIR TRACE...

Compressed traces' buffers are skipped (buffer_seeds.py reads the events);
the seeds are written outside the repository, since they are the shared
data's bytes."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import buffer_seeds  # noqa: E402

# buffer_seeds' selector -> (kind: system, compact, perfinfo; 64-bit).
KERNEL = {0: (0, 1), 1: (0, 0), 2: (1, 1), 3: (1, 0), 4: (2, 1), 5: (2, 0)}
PER_LAYOUT = 4


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seen = {}
    for path in sys.argv[2:]:
        with open(path, 'rb') as f:
            data = f.read()
        for sel, hdr, e in buffer_seeds.events(data):
            if sel not in KERNEL:
                continue
            kind, is64 = KERNEL[sel]
            version, hook = struct.unpack_from('<H', e, 0)[0], struct.unpack_from('<H', e, 6)[0]
            key = (kind, hook, version, is64)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > PER_LAYOUT:
                continue
            seed = struct.pack('<BBBHB', kind, hook >> 8, hook & 0xff, version, is64) + e[hdr:]
            name = '%s-%d-%04x-%d-%d-%d' % (os.path.basename(path), kind, hook, version, is64,
                                          seen[key])
            with open(os.path.join(out, name), 'wb') as f:
                f.write(seed)


if __name__ == '__main__':
    main()
