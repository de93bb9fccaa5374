#!/usr/bin/env python3
"""`ntlens ipt flow --no-inst` on the kAFL recordings in ../shared/data/ipt/real/
against libipt's ptxed: the sha256 and line count of reference.txt, byte for
byte where ptxed.out.gz is there, and the decode errors of ptxed-errors.txt.
hase-loopy needs ELF images (--elf), which ipt flow does not load yet; it is
reported as not compared."""
import gzip
import hashlib
import os
import re
import subprocess
import sys

root = os.path.join(os.environ.get("NTLENS_SHARED_DATA", "../shared/data"), "ipt", "real")
ntlens = os.environ.get("NTLENS", "ntlens")


def check(name, d):
    ref = open(os.path.join(d, "reference.txt")).read()
    out = subprocess.run([ntlens, "ipt", "flow", "--no-inst", "--pages", os.path.join(d, "image"),
                          "--pt", os.path.join(d, "trace.pt")], stdout=subprocess.PIPE, check=True).stdout
    problems = []
    m = re.search(r"^ptxed_sha256: (\w+)", ref, re.M)
    if not m or hashlib.sha256(out).hexdigest() != m.group(1):
        problems.append("sha256 differs")
    m = re.search(r"^ptxed_lines: (\d+)", ref, re.M)
    if not m or out.count(b"\n") != int(m.group(1)):
        problems.append("%d lines, expected %s" % (out.count(b"\n"), m and m.group(1)))
    gz = os.path.join(d, "ptxed.out.gz")
    if os.path.exists(gz) and gzip.open(gz).read() != out:
        problems.append("differs from ptxed.out.gz")
    want_errors = open(os.path.join(d, "ptxed-errors.txt"), "rb").read().splitlines()
    errors = [l for l in out.splitlines() if b": error: " in l or b": resync error: " in l]
    if errors != want_errors:
        problems.append("decode errors differ from ptxed-errors.txt")
    return problems, out.count(b"\n")


def main():
    failures = checked = 0
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if not os.path.isdir(os.path.join(d, "image")):
            print("%s: not compared (its image is an ELF file)" % name)
            continue
        problems, lines = check(name, d)
        checked += 1
        if problems:
            failures += 1
            print("%s: %s" % (name, "; ".join(problems)))
        else:
            print("%s: identical to libipt's ptxed (%d lines)" % (name, lines))
    print("%d/%d recordings identical" % (checked - failures, checked))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
