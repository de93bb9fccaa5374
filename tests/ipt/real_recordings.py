#!/usr/bin/env python3
"""`ntlens ipt dump` on the real recordings in ../shared/data/ipt/real/ against
libipt's ptdump: byte for byte where the reference output is there
(ptdump.out, ptdump.out.gz), and always its sha256, line count and packet
counts from reference.txt."""
import gzip
import hashlib
import os
import re
import subprocess
import sys
from collections import Counter

root = os.path.join(os.environ.get("NTLENS_SHARED_DATA", "../shared/data"), "ipt", "real")
ntlens = os.environ.get("NTLENS", "ntlens")


def main():
    failures = 0
    checked = 0
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        ref_path = os.path.join(d, "reference.txt")
        if not os.path.exists(ref_path):
            continue
        ref = open(ref_path).read()
        opts = []
        m = re.search(r"^decoder options: (.*)$", ref, re.M)
        if m:
            opts = m.group(1).split()
        out = subprocess.run([ntlens, "ipt", "dump"] + opts + [os.path.join(d, "trace.pt")],
                             stdout=subprocess.PIPE, check=True).stdout
        problems = []
        m = re.search(r"^ptdump_sha256: (\w+)", ref, re.M)
        if m and hashlib.sha256(out).hexdigest() != m.group(1):
            problems.append("sha256 differs")
        m = re.search(r"^ptdump_lines: (\d+)", ref, re.M)
        if m and out.count(b"\n") != int(m.group(1)):
            problems.append("%d lines, expected %s" % (out.count(b"\n"), m.group(1)))
        counts = Counter(line.split()[1].decode() for line in out.splitlines()
                         if len(line.split()) > 1 and not line.startswith(b"["))
        for n, kind in re.findall(r"^\s+(\d+) (\S+)$", ref, re.M):
            if counts[kind] != int(n):
                problems.append("%s: %d, expected %s" % (kind, counts[kind], n))
        for f in ("ptdump.out", "ptdump.out.gz"):
            p = os.path.join(d, f)
            if os.path.exists(p):
                want = gzip.open(p).read() if f.endswith(".gz") else open(p, "rb").read()
                if want != out:
                    problems.append("differs from " + f)
        checked += 1
        if problems:
            failures += 1
            print("%s: %s" % (name, "; ".join(problems)))
        else:
            print("%s: identical to libipt's ptdump (%d lines)" % (name, out.count(b"\n")))
    print("%d/%d recordings identical" % (checked - failures, checked))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
