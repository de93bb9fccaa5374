#!/usr/bin/env python3
"""`ntlens profile --etl --modules DIR` with real PE files, against pefile.

The trace's modules are Windows 8's; the only real PE files here are
Wine's (wine64: ntoskrnl.exe, hal.dll, ntdll.dll, ... built as PE images
with export tables), so the names are Wine's exports at Windows' offsets:
meaningless as a profile, but every step is the real one: finding the file
by the module's name (case-insensitive), parsing the image and its exports,
and naming each bucket by the export at or below its RVA. pefile reads the
same files independently: every bucket of the zoomed modules must be named
with a non-forwarded export at the greatest RVA at or below the bucket's
(any of the names at that RVA), and its displacement must be the distance.
usage: test_profile_modules.py"""
import bisect
import json
import os
import re
import subprocess
import sys

import pefile  # Debian's python3-pefile

NTLENS = os.environ["NTLENS"]
TRACE = os.path.join(os.environ["NTLENS_SHARED_DATA"], "etl", "net.4.5.2.x64.etl")
WINE = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows"
# Kernel modules (one base each in the trace) and a user module of a 64-bit process.
ZOOM = {"ntoskrnl.exe": None, "hal.dll": None, "ntdll.dll": 3676}
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL: " + what)


def exports(path):
    """Sorted RVAs and the names at each, of the named, non-forwarded exports."""
    pe = pefile.PE(path, fast_load=True)
    pe.parse_data_directories(directories=[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_EXPORT"]])
    by_rva = {}
    for e in pe.DIRECTORY_ENTRY_EXPORT.symbols:
        if e.name and e.address and not e.forwarder:
            by_rva.setdefault(e.address, set()).add(e.name.decode())
    rvas = sorted(by_rva)
    return rvas, by_rva


def ntlens(*args):
    r = subprocess.run([NTLENS, "profile", "--etl", TRACE, "--modules", WINE] + list(args),
                       capture_output=True, text=True)
    check(r.returncode == 0, "%s: exit %d: %s" % (args, r.returncode, r.stderr))
    return json.loads(r.stdout)


def main():
    zoom = [a for m in ZOOM for a in ("--zoom", m)]
    mods = ntlens("--report", "modules", "-f", "json")
    buckets = ntlens("--report", "buckets", "--buckets", "-f", "json", *zoom)
    named = 0
    for name, pid in ZOOM.items():
        base = [int(m["base"], 16) for m in mods if m["name"] == name and m["pid"] == pid]
        check(len(base) == 1, "%s of %s loaded once: %s" % (name, pid, base))
        rvas, by_rva = exports(os.path.join(WINE, name))
        rows = [b for b in buckets if b["module"] == name and b["pid"] == pid]
        check(rows, "%s has buckets" % name)
        for b in rows:
            off = int(b["address"], 16) - base[0]
            i = bisect.bisect_right(rvas, off) - 1
            want = (by_rva[rvas[i]], off - rvas[i]) if i >= 0 else None
            m = re.fullmatch(r"(.+?)(?:\+0x([0-9a-f]+))?", b["symbol"] or "")
            got = (m.group(1), int(m.group(2) or "0", 16)) if b["symbol"] else None
            ok = got is None and want is None or (
                want is not None and got is not None and got[0] in want[0] and got[1] == want[1])
            check(ok, "%s+0x%x: ntlens %s, pefile %s" % (name, off, b["symbol"], want))
            named += got is not None
    check(named > 100, "only %d buckets named" % named)
    print("%d buckets of %s named as pefile reads the exports" % (named, ", ".join(ZOOM)))
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
