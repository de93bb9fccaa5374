#!/usr/bin/env python3
"""`ntlens ipt flow --no-inst` on the real recordings in ../shared/data/ipt/real/
against libipt's ptxed: the sha256 and line count of reference.txt, byte for
byte where ptxed.out(.gz) is there, and the decode errors of ptxed-errors.txt.
The kAFL recordings load their image/ pages; hase-loopy its ELF file with
the decoder options of reference.txt, and with instructions shown it must
give ptxed-insn.out's addresses and mnemonics (ptxed prints XED's syntax,
ntlens Zydis's), and its branches (taken branches, trace enables and
disables, read off `--format json --event:ip`) must be the ones perf recorded
in loopy.trace (`from to` per line, 0 for outside the trace)."""
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys

root = os.path.join(os.environ.get("NTLENS_SHARED_DATA", "../shared/data"), "ipt", "real")
ntlens = os.environ.get("NTLENS", "ntlens")


def image_args(d, ref):
    if os.path.isdir(os.path.join(d, "image")):
        return ["--pages", os.path.join(d, "image")]
    m = re.search(r"^decoder options: (.*)$", ref, re.M)
    opts = m.group(1).split() if m else []
    m = re.search(r"^image: (\S+)", ref, re.M)
    return opts + ["--elf", os.path.join(d, m.group(1))]


def addresses_and_mnemonics(text):
    return [tuple(l.split()[:2]) for l in text.splitlines() if not l.startswith(b"[")]


def branches(items):
    """perf's branch list from ntlens's flow: a taken branch is an instruction
    followed by one that is not the next in memory; an enable or resume is
    "0 IP", a disable "IP 0" with the last instruction's IP (an asynchronous
    one names its own)."""
    out, last = [], None
    for it in items:
        kind = it["kind"]
        if kind == "insn":
            ip = int(it["ip"], 16)
            if last and ip != last[0] + last[1]:
                out.append((last[0], ip))
            last = (ip, it["size"])
        elif kind in ("enabled", "resumed"):
            out.append((0, int(it["ip"], 16)))
            last = None
        elif kind == "async_disabled":
            out.append((int(re.search(r"at: ([0-9a-f]+)", it["text"]).group(1), 16), 0))
            last = None
        elif kind == "disabled":
            out.append((last[0] if last else 0, 0))
            last = None
    return out


def perf_branches(args, trace):
    want = [tuple(int(x, 16) for x in l.split()) for l in open(trace) if l.strip()]
    js = subprocess.run(args + ["--format", "json", "--event:ip"], stdout=subprocess.PIPE,
                        check=True).stdout
    got = branches(json.loads(js))
    if got == want:
        return []
    first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return ["branches differ from perf's %s at entry %d of %d/%d (ntlens %s, perf %s)"
            % (os.path.basename(trace), first, len(got), len(want),
               got[first:first + 1], want[first:first + 1])]


def check(name, d):
    ref = open(os.path.join(d, "reference.txt")).read()
    args = [ntlens, "ipt", "flow"] + image_args(d, ref) + ["--pt", os.path.join(d, "trace.pt")]
    out = subprocess.run(args[:3] + ["--no-inst"] + args[3:], stdout=subprocess.PIPE, check=True).stdout
    problems = []
    m = re.search(r"^ptxed_sha256: (\w+)", ref, re.M)
    if m and hashlib.sha256(out).hexdigest() != m.group(1):
        problems.append("sha256 differs")
    if not m and not any(os.path.exists(os.path.join(d, f)) for f in ("ptxed.out", "ptxed.out.gz")):
        problems.append("nothing of ptxed's to compare with")
    m = re.search(r"^ptxed_lines: (\d+)", ref, re.M)
    if m and out.count(b"\n") != int(m.group(1)):
        problems.append("%d lines, expected %s" % (out.count(b"\n"), m.group(1)))
    for f in ("ptxed.out", "ptxed.out.gz"):
        p = os.path.join(d, f)
        if os.path.exists(p) and (gzip.open(p).read() if f.endswith(".gz") else open(p, "rb").read()) != out:
            problems.append("differs from " + f)
    insn = os.path.join(d, "ptxed-insn.out")
    if os.path.exists(insn):
        shown = subprocess.run(args, stdout=subprocess.PIPE, check=True).stdout
        if addresses_and_mnemonics(shown) != addresses_and_mnemonics(open(insn, "rb").read()):
            problems.append("addresses or mnemonics differ from ptxed-insn.out")
    trace = os.path.join(d, "loopy.trace")
    if os.path.exists(trace):
        problems += perf_branches(args, trace)
    errs = os.path.join(d, "ptxed-errors.txt")
    want_errors = open(errs, "rb").read().splitlines() if os.path.exists(errs) else []
    errors = [l for l in out.splitlines() if b": error: " in l or b": resync error: " in l]
    if errors != want_errors:
        problems.append("decode errors differ from ptxed-errors.txt")
    return problems, out.count(b"\n")


def main():
    failures = checked = 0
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if not os.path.exists(os.path.join(d, "reference.txt")):
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
