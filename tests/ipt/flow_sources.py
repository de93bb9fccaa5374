#!/usr/bin/env python3
"""`ipt flow`'s address spaces and names, through the real binary, on traces
libipt's encoder writes (tests/ipt/ipt_encode.c) for code built here:

  * --cr3: two processes run different code at the same address 0x1000;
    PIPs switch between them, and the first jumps into the default image
    (shared, like the kernel). The path must follow each space's own bytes
    (which also fails if instructions decoded in one space were kept for
    the other), and a CR3 with no image of its own reads the default only.
  * --calls and --functions over an ELF file linked by gcc, with function
    symbols (.type @function): the call tree with returns matched and
    instruction counts, and the functions' instructions and visits, both
    worked out by hand from the code below.
  * usage errors of the new options.

    flow_sources.py IPT_ENCODE"""
import json
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

# _start calls f, which calls g; then it calls g; then a system call leaves
# the traced (user-mode) code.
ELF_SOURCE = """
        .text
        .globl _start
        .type _start, @function
_start: call f
        call g
        syscall
        .type f, @function
f:      call g
        ret
        .type g, @function
g:      ret
"""


def run(*args, ok=0, stdin=None):
    p = subprocess.run([str(a) for a in args], input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check(p.returncode == ok, f"{' '.join(map(str, args))} exited {p.returncode}, want {ok}: "
          f"{p.stderr[-2000:]}")
    return p


def flow(*args, ok=0):
    return run(NTLENS, "ipt", "flow", *args, ok=ok)


def addresses(text):
    return [int(m.group(1), 16) for m in map(HEX_LINE.match, text.splitlines()) if m]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def check_spaces(encode, tmp):
    # Space 0x1000: nop; jmp 0x3000 (default image: ret). Space 0x2000: nop; nop; ret.
    a = write(os.path.join(tmp, "a.bin"), bytes([0x90, 0xE9]) + (0x3000 - 0x1006).to_bytes(4, "little"))
    b = write(os.path.join(tmp, "b.bin"), bytes([0x90, 0x90, 0xC3]))
    c = write(os.path.join(tmp, "c.bin"), bytes([0xC3]))
    pt = os.path.join(tmp, "spaces.pt")
    run(encode, pt, stdin="psb\nmode64\npsbend\npip 0x1000\npge 0x1000\npgd 0x5000\n"
        "pip 0x2000\npge 0x1000\npgd 0x5000\npip 0x7000\npge 0x1000\npgd 0x5000\n")
    images = ["--raw", f"{c}:0x3000", "--cr3", "1000", "--raw", f"{a}:0x1000",
              "--cr3", "0x2000", "--raw", f"{b}:0x1000"]
    p = flow(pt, "--no-inst", *images)
    got = addresses(p.stdout)
    check(got == [0x1000, 0x1001, 0x3000, 0x1000, 0x1001, 0x1002],
          f"each address space's own code, the default's where it has none: {p.stdout}")
    check("[paging, cr3: 0000000000002000]" in p.stdout, f"the PIPs are told: {p.stdout}")
    errs = [line for line in p.stdout.splitlines() if "error" in line]
    check(len(errs) == 1 and errs[0].endswith(", 1000: error: no memory mapped at this address]"),
          f"CR3 0x7000 has no image of its own, the default none at 0x1000: {errs}")
    # --cr3 any goes back to the default image: c given last, the same path.
    p = flow(pt, "--no-inst", *images[2:], "--cr3", "any", "--raw", f"{c}:0x3000")
    check(addresses(p.stdout) == got, f"--cr3 any: {p.stdout}")
    # Without address spaces the two images overlap: named as such.
    p = flow(pt, "--raw", f"{a}:0x1000", "--raw", f"{b}:0x1000", ok=1)
    check("overlap" in p.stderr, f"overlapping images without --cr3: {p.stderr}")
    p = flow(pt, "--cr3", "xyz", "--raw", f"{a}:0x1000", ok=2)
    check("option '--cr3' needs a CR3 in hex" in p.stderr, f"bad --cr3: {p.stderr}")


def check_names(encode, tmp):
    src = write(os.path.join(tmp, "calls.s"), ELF_SOURCE.encode())
    elf = os.path.join(tmp, "calls")
    if subprocess.run(["gcc", "-nostdlib", "-static", "-no-pie", "-o", elf, src]).returncode:
        check(False, "gcc links the ELF test program")
        return
    sym = {}
    for line in run("nm", elf).stdout.splitlines():
        value, _, name = line.split()
        sym[name] = int(value, 16)
    start, f, g = sym["_start"], sym["f"], sym["g"]
    pt = os.path.join(tmp, "calls.pt")
    run(encode, pt, stdin=f"psb\nmode64\npsbend\npge {start:#x}\ntnt 111\npgd -\n")
    p = flow(pt, "--elf", elf, "--no-inst")
    want = [start, f, g, f + 5, start + 5, g, start + 10]
    check(addresses(p.stdout) == want, f"the ELF's path: {p.stdout}")

    p = flow(pt, "--elf", elf, "--calls", "--format", "json")
    rows = json.loads(p.stdout or "[]")
    got = [(r["event"], r["depth"], r["function"], r["from"], r["insns"]) for r in rows]
    check(got == [("start", 0, "calls!_start", None, None),
                  ("call", 1, "calls!f", "calls!_start", None),
                  ("call", 2, "calls!g", "calls!f", None),
                  ("return", 2, "calls!g", "calls!g", 1),
                  ("return", 1, "calls!f", "calls!f+0x5", 3),
                  ("call", 1, "calls!g", "calls!_start+0x5", None),
                  ("return", 1, "calls!g", "calls!g", 1)], f"--calls: {got}")
    check(all(int(r["address"], 16) for r in rows), f"addresses as hex strings: {rows}")
    p = flow(pt, "--elf", elf, "--calls")
    lines = p.stdout.splitlines()
    check(len(lines) == 8 and lines[3].startswith("    calls!g ") and lines[2].startswith("  calls!f "),
          f"--calls indents by depth: {p.stdout}")

    p = flow(pt, "--elf", elf, "--functions", "--format", "csv")
    check(p.stdout.splitlines() == ["function,module,insns,visits,share",
                                    "_start,calls,3,1,42.86", "g,calls,2,2,28.57",
                                    "f,calls,2,1,28.57"], f"--functions: {p.stdout}")
    p = flow(pt, "--elf", elf, "--functions", "--calls", ok=2)
    check("exclude each other" in p.stderr, f"--calls with --functions: {p.stderr}")


def main():
    encode = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="ntlens-flow-sources-")
    try:
        check_spaces(encode, tmp)
        check_names(encode, tmp)
        p = flow(os.path.join(tmp, "spaces.pt"), "--modules", tmp, ok=2)
        check("'--modules' needs '--etl TRACE'" in p.stderr, f"--modules alone: {p.stderr}")
        p = flow(os.path.join(tmp, "spaces.pt"), "--dump", os.path.join(tmp, "none.dmp"), ok=1)
        check("none.dmp" in p.stderr, f"a missing dump is named: {p.stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


main()
