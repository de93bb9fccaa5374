#!/usr/bin/env python3
"""Fills the IATIndex fields of a linked image's IMPORT_CONTROL_TRANSFER
dynamic relocations (see testdrv.s): for every entry whose IATIndex is 0, the
index of the IAT slot the instruction at the site reads. Entries marked
0x7FFFF ("do not optimize") are kept. Self-contained on purpose (struct only),
so it shares no code with the readers the tests compare: ntlens and pefile.

    fill_iat_index.py IMAGE
"""
import struct
import sys


def main(path):
    data = bytearray(open(path, "rb").read())
    nt = struct.unpack_from("<I", data, 0x3C)[0]
    nsec, optsize = struct.unpack_from("<H", data, nt + 6)[0], struct.unpack_from("<H", data, nt + 20)[0]
    opt = nt + 24
    assert struct.unpack_from("<H", data, opt)[0] == 0x20B, "PE32+ only"
    dirs = [struct.unpack_from("<II", data, opt + 112 + 8 * i) for i in range(16)]
    secs = []
    for i in range(nsec):
        h = opt + optsize + 40 * i
        vsize, va, rsize, roff = struct.unpack_from("<IIII", data, h + 8)
        secs.append((va, max(vsize, rsize), roff, rsize))

    def off(rva):
        for va, vs, ro, rs in secs:
            if va <= rva < va + vs and rva - va < rs:
                return ro + rva - va
        raise SystemExit(f"RVA {rva:#x} not in file")

    lc = off(dirs[10][0])
    dvrt_off, dvrt_sec = struct.unpack_from("<IH", data, lc + 224)
    table = off(secs[dvrt_sec - 1][0] + dvrt_off)
    version, size = struct.unpack_from("<II", data, table)
    assert version == 1
    iat = dirs[12][0]
    pos, end, filled = table + 8, table + 8 + size, 0
    while pos < end:
        symbol, relsize = struct.unpack_from("<QI", data, pos)
        pos += 12
        blk, bend = pos, pos + relsize
        while blk < bend:
            page, bsize = struct.unpack_from("<II", data, blk)
            for e in range(blk + 8, blk + bsize, 4 if symbol == 3 else 2):
                if symbol != 3:
                    continue
                v = struct.unpack_from("<I", data, e)[0]
                if v >> 13:
                    continue
                site = page + (v & 0xFFF)
                disp = struct.unpack_from("<i", data, off(site) + 3)[0]
                slot = site + 7 + disp
                index = (slot - iat) // 8
                assert (slot - iat) % 8 == 0 and 0 <= index < 0x7FFFF
                struct.pack_into("<I", data, e, v | (index << 13))
                filled += 1
            blk += bsize
        pos = bend
    open(path, "wb").write(data)
    print(f"{path}: filled {filled} IATIndex fields")


if __name__ == "__main__":
    main(sys.argv[1])
