#!/usr/bin/env python3
"""`ipt flow --etl TRACE --modules DIR`'s per-process address spaces,
through the real binary:

  * two processes (pids 100 and 200, CR3s from their Process DCStart
    events) have one.dll and two.dll loaded at the same user-mode address,
    with different code (clang-14 and lld-link-14 build them); kern.sys is
    a kernel module, in every space. libipt's encoder (ipt_encode.c) writes
    a trace that starts without a PIP (in the IPT event's process, 100),
    then switches with PIPs: the path must follow each process's code, and
    kern.sys's in both.
  * modules of the moment of the IPT event only: late.dll, loaded by
    process 100 after the event, latek.sys, a kernel module loaded after
    it, and gone.dll, unloaded before it, are not mapped (an error at their
    address); without --event (the trace's end) late.dll and latek.sys
    are, and no space is current before the first PIP.
  * --functions names each process's module (one.dll, two.dll at the same
    address) while its space is current.

    flow_etl_spaces.py IPT_ENCODE MKIPT_ETL
Exit 77 (skip) when clang-14 or lld-link-14 is missing."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ.get("NTLENS", "ntlens")
HEX_LINE = re.compile(r"^([0-9a-f]{16})$")
UBASE = 0x7FF712340000
LATE = 0x7FF712380000
GONE = 0x7FF7123C0000
KBASE = 0xFFFFF80356780000
LATEK = 0xFFFFF80356880000
CR3 = {100: 0x1AA000, 200: 0x2BB000}
# Each module's code at the start of its .text (RVA 0x1000).
CODE = {"one": "nop\n ret", "two": "xorl %eax, %eax\n nop\n ret", "kern": "nop\n nop\n nop\n ret"}


def run(*args, ok=0, stdin=None):
    p = subprocess.run([str(a) for a in args], input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(p.returncode == ok, f"{' '.join(map(str, args))} exited {p.returncode}, want {ok}: "
          f"{p.stderr[-2000:]}")
    return p


def addresses(text):
    return [int(m.group(1), 16) for m in map(HEX_LINE.match, text.splitlines()) if m]


def build(tmp):
    """one.dll, two.dll, kern.sys (and late.dll, gone.dll: copies of one.dll); their sizes."""
    size = {}
    for name, code in CODE.items():
        src = os.path.join(tmp, name + ".s")
        with open(src, "w") as f:
            f.write(f"        .text\n        .globl Entry\nEntry:  {code}\n")
        run("clang-14", "--target=x86_64-pc-windows-msvc", "-c", src, "-o",
            os.path.join(tmp, name + ".obj"))
        out = os.path.join(tmp, name + (".sys" if name == "kern" else ".dll"))
        run("lld-link-14", "/dll", "/entry:Entry", "/subsystem:native", "/nodefaultlib",
            "/out:" + out, os.path.join(tmp, name + ".obj"))
        size[name] = os.path.getsize(out) // 0x1000 * 0x1000 + 0x1000
    for copy in ("late", "gone"):
        shutil.copy(os.path.join(tmp, "one.dll"), os.path.join(tmp, copy + ".dll"))
        size[copy] = size["one"]
    shutil.copy(os.path.join(tmp, "kern.sys"), os.path.join(tmp, "latek.sys"))
    size["latek"] = size["kern"]
    return size


def trace(encode, tmp):
    ue, ke = UBASE + 0x1000, KBASE + 0x1000
    script = ["psb", "mode64", "psbend", f"pge {ue:#x}", "pgd -",
              f"pip {CR3[200]:#x}", f"pge {ue:#x}", "pgd -",
              f"pip {CR3[100]:#x}", f"pge {ue:#x}", "pgd -",
              f"pip {CR3[200]:#x}", f"pge {ke:#x}", "pgd -",
              f"pip {CR3[100]:#x}", f"pge {LATE + 0x1000:#x}", "pgd -",
              "psb", "mode64", "psbend", f"pip {CR3[100]:#x}", f"pge {GONE + 0x1000:#x}", "pgd -",
              "psb", "mode64", "psbend", f"pge {LATEK + 0x1000:#x}", "pgd -", ""]
    pt = os.path.join(tmp, "spaces.pt")
    run(encode, pt, stdin="\n".join(script))
    return pt


def etl(mketl, tmp, pt, size):
    out = os.path.join(tmp, "spaces.etl")
    run(mketl, out, pt, "0", f"\\SystemRoot\\system32\\drivers\\kern.sys,{KBASE:#x},{size['kern']}",
        f"proc:100,{CR3[100]:#x}", f"proc:200,{CR3[200]:#x}",
        f"C:\\app\\one.dll,{UBASE:#x},{size['one']},100",
        f"C:\\app\\two.dll,{UBASE:#x},{size['two']},200",
        f"C:\\app\\gone.dll,{GONE:#x},{size['gone']},100",
        f"C:\\app\\gone.dll,{GONE:#x},{size['gone']},100,2",
        "ipt:100",
        f"C:\\app\\late.dll,{LATE:#x},{size['late']},100",
        f"\\SystemRoot\\system32\\drivers\\latek.sys,{LATEK:#x},{size['latek']}")
    return out


def main():
    missing = [t for t in ("clang-14", "lld-link-14") if not shutil.which(t)]
    if missing:
        print("missing:", " ".join(missing))
        sys.exit(77)
    encode, mketl = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="ntlens-flow-etl-spaces-")
    try:
        size = build(tmp)
        pt = trace(encode, tmp)
        t = etl(mketl, tmp, pt, size)
        ue, ke = UBASE + 0x1000, KBASE + 0x1000
        one, two, kern = [ue, ue + 1], [ue, ue + 2, ue + 3], [ke, ke + 1, ke + 2, ke + 3]
        p = run(NTLENS, "ipt", "flow", "--etl", t, "--event", "1", "--modules", tmp, "--no-inst")
        check(addresses(p.stdout) == one + two + one + kern,
              f"process 100's code (no PIP yet: the event's process), 200's, 100's, then the "
              f"kernel's in 200's space:\n{p.stdout}")
        check(f"[paging, cr3: {CR3[200]:016x}]" in p.stdout, f"the PIPs are told: {p.stdout}")
        errs = [line for line in p.stdout.splitlines() if "error" in line]
        check(len(errs) == 3 and all(e.endswith(": error: no memory mapped at this address]")
                                     for e in errs)
              and f", {LATE + 0x1000:x}: " in errs[0] and f", {GONE + 0x1000:x}: " in errs[1]
              and f", {LATEK + 0x1000:x}: " in errs[2],
              f"late.dll and latek.sys (loaded after the event) and gone.dll (unloaded before) "
              f"unmapped: {errs}")
        # Without --event no process is current before a PIP.
        late = os.path.join(tmp, "late.pt")
        run(encode, late, stdin=f"psb\nmode64\npsbend\npip {CR3[100]:#x}\npge {LATE + 0x1000:#x}\n"
            f"pgd -\npge {LATEK + 0x1000:#x}\npgd -\n")
        p = run(NTLENS, "ipt", "flow", "--etl", t, "--modules", tmp, "--no-inst", late)
        check(addresses(p.stdout) == [LATE + 0x1000, LATE + 0x1001] + [LATEK + 0x1000 + i
                                                                      for i in range(4)],
              f"without --event, the modules at the trace's end (late.dll too):\n{p.stdout}")
        p = run(NTLENS, "ipt", "flow", "--etl", t, "--event", "1", "--modules", tmp,
                "--functions", "--format", "csv")
        insns = {line.split(",")[1]: int(line.split(",")[2]) for line in p.stdout.splitlines()[1:]}
        check(insns == {"one.dll": 4, "two.dll": 3, "kern.sys": 4},
              f"--functions names each process's module in its own space: {p.stdout}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


main()
