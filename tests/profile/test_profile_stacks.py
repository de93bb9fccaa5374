#!/usr/bin/env python3
"""Stacks frame by frame against linux-perf, on the same samples.

perf record samples hotprog (cpu-clock, IP|TID|TIME|CALLCHAIN, user and
kernel); perf_stacks puts the records of that perf.data through lib/profile
(ntl_profile_perf_next and _feed, as the live sampler does) and prints each
sample's stack; perf script prints the same samples' callchains. Every
sample must be there (matched by time and thread) with the same depth, and
every frame ntlens names must carry perf's name for it (glibc's internal
aliases aside: getppid is __GI___getppid). Each entry is named at its own
address, as perf names it (an outermost entry that is _start's first byte is
_start, not the padding before it). An address no module holds is
perf's [unknown]. ntlens names functions from
.symtab/.dynsym only; perf also reads debug files and names PLT entries
from relocations (getppid@plt), so ntlens leaves a frame as module+0xOFFSET
only in a stripped module (libc), the vDSO, or where perf says @plt or
[unknown].
usage: test_profile_stacks.py PERF_STACKS HOTPROG"""
import os
import re
import struct
import subprocess
import sys
import tempfile

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL: " + what)


def data_section(path, out):
    """Writes the records of a perf.data (its data section) to out; returns
    the first event's sample_type."""
    with open(path, "rb") as f:
        raw = f.read()
    magic, _, attr_size, attrs_off, _, data_off, data_size = struct.unpack_from("<8sQQQQQQ", raw)
    if magic != b"PERFILE2":
        sys.exit("%s: not a perf.data file" % path)
    sample_type = struct.unpack_from("<Q", raw, attrs_off + 24)[0]
    with open(out, "wb") as f:
        f.write(raw[data_off:data_off + data_size])
    return sample_type


def perf_script(path):
    """[(time ns, tid, [frame names, innermost first])] from perf script."""
    text = subprocess.run(["perf", "script", "-i", path, "-F", "tid,time,ip,sym", "--ns"],
                          check=True, capture_output=True, text=True).stdout
    samples = []
    for block in text.split("\n\n"):
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        frames = []
        for l in lines[1:]:
            m = re.match(r"\s*[0-9a-f]+ (.*)$", l)
            frames.append(re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)) if m else "?")
        tid, secs = lines[0].split()[:2]
        whole, frac = secs.rstrip(":").split(".")
        samples.append((int(whole) * 10**9 + int(frac), int(tid), frames))
    return sorted(samples)


def ours(perf_stacks, records):
    args = [perf_stacks, records]
    # The kernel as the live sampler adds it (a container may lack /proc/modules).
    args += [f for f in ("/proc/kallsyms", "/proc/modules") if os.access(f, os.R_OK)]
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    out = []
    for line in text.splitlines():
        time, tid, frames = line.split(" ", 2)
        out.append((int(time), int(tid), frames.split(";")))
    return sorted(out)


def kernel_addresses():
    """Kernel function name -> address: names at one address are aliases
    (__do_sys_getppid, __x64_sys_getppid), and perf and ntlens may choose
    either."""
    out = {}
    with open("/proc/kallsyms") as f:
        for line in f:
            addr, _, name = line.split()[:3]
            out[name] = addr
    return out


KERNEL = kernel_addresses()

def same_function(x, y):
    """Equal names but for perf's symbol version (clock_nanosleep@GLIBC_2.2.5),
    glibc's internal aliases (__GI___getppid is getppid, from the debug file
    perf reads), kernel aliases at one address; an address in no module is perf's
    [unknown]."""
    def plain(n):
        return n.split("@")[0].removeprefix("__GI_").lstrip("_")
    if x.startswith("0x"):
        return y == "[unknown]"
    return (plain(x) == plain(y) or
            (x in KERNEL and y in KERNEL and KERNEL[x] == KERNEL[y] != "0000000000000000"))


# Modules ntlens reads no symbols from: stripped ones, and the vDSO (no file;
# perf names its functions from a copy it saves, or says [unknown]).
STRIPPED = ("libc.so.6+", "ld-linux-x86-64.so.2+", "[vdso]+")


def compare(mine, theirs):
    check(len(mine) == len(theirs), "ntlens has %d samples, perf script %d"
          % (len(mine), len(theirs)))
    named = unnamed = 0
    for i, ((t, tid, a), (pt, ptid, b)) in enumerate(zip(mine, theirs)):
        if (t, tid, len(a)) != (pt, ptid, len(b)):
            check(False, "sample %d: ntlens %d %d %s, perf %d %d %s" % (i, t, tid, a, pt, ptid, b))
            continue
        for k, (x, y) in enumerate(zip(a, b)):
            if re.search(r"\+0x[0-9a-f]+$", x):
                unnamed += 1
                check(x.startswith(STRIPPED) or y.endswith("@plt") or y == "[unknown]",
                      "sample %d frame %d: ntlens %s, perf %s" % (i, k, x, y))
            else:
                named += 1
                check(same_function(x, y), "sample %d frame %d: ntlens %s, perf %s"
                      % (i, k, x, y))
    return named, unnamed


def main():
    perf_stacks, hotprog = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "perf.data")
        subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-c", "250000", "-g", "-o",
                        data, "--", hotprog, "2000"], check=True, capture_output=True)
        records = os.path.join(tmp, "records")
        check(data_section(data, records) == 0x27, "perf recorded IP|TID|TIME|CALLCHAIN")
        mine, theirs = ours(perf_stacks, records), perf_script(data)
    named, unnamed = compare(mine, theirs)
    hot = sum(1 for _, _, a in mine if a[0] in ("hot_lib", "hot_exe") and "main" in a)
    print("%d samples, %d frames compared by name, %d left as offsets, %d in hot_lib/hot_exe "
          "under main" % (len(mine), named, unnamed, hot))
    check(len(mine) >= 100, "at least 100 samples")
    check(hot >= len(mine) // 2, "most samples are in hot_lib or hot_exe, called from main")
    # How many frames stay offsets depends on the machine's libc and vDSO (a
    # fresh root leaves one a sample); the comparison must still name frames.
    check(named >= len(mine), "at least one frame compared by name per sample (%d)" % named)
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
