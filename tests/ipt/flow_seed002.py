#!/usr/bin/env python3
"""Seed 002 end to end, through the real binary: a kernel trace's Intel PT
event decoded through the modules of a dump that `ntlens dump build` made
from the same trace.

  1. tests/dump/build_images.py builds ntoskrnl.exe, hal.dll and a driver
     (testdrv.sys) whose import calls are retpoline-style sites listed in
     its DVRT (clang-14 and lld-link-14).
  2. The path DriverEntry takes once the kernel has applied import
     optimization is written down from pefile's reading of the files and
     `dump build`'s report of the sites (independent of ipt flow): three
     optimized calls and one left indirect (IATIndex 0x7FFFF), each into a
     two-instruction ntoskrnl routine, then a jump to DrvHelper whose tail
     jump is optimized too and returns to a caller outside the trace.
  3. libipt's own encoder (pt_enc_next, tests/ipt/ipt_encode.c) writes the
     trace of that path: a TNT bit per compressed return, a TIP for the one
     indirect call, a TIP.PGD for the last return.
  4. mkipt_etl wraps it in an ETW ProcessorTrace event after image loads of
     the three modules at kernel addresses (once as recorded, once as a full
     4 KiB ring whose write position is in the middle).
  5. (Also: process 4's user-mode module beside the kernel's, from
     `--etl --event --modules`.)
  6. `dump build --etl` makes the dump; `ipt flow --etl T --event 1 --dump D`
     must print exactly the path's addresses; --calls the four calls by
     export name with their returns matched; --functions the counts.
     `--pe` at the same bases with --import-optimization, and `--etl T
     --modules DIR --import-optimization`, give the same path; `--pe`
     without it (the files as linked) fails at the first optimized site,
     whose address the error names: the trace has a TNT bit where the
     unoptimized indirect call needs a TIP.

    flow_seed002.py IPT_ENCODE MKIPT_ETL
Exit 77 (skip) when clang-14, lld-link-14 or pefile is missing."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("NTLENS_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "dump"))
sys.path.insert(0, os.path.join(SRC, "tests"))
import build_images  # noqa: E402
from checks import check, finish  # noqa: E402

try:
    import pefile
except ImportError:
    print("pefile missing (Debian python3-pefile)")
    sys.exit(77)

NTLENS = os.environ.get("NTLENS", "ntlens")
KBASE = 0xFFFFF80312400000
HBASE = 0xFFFFF80312200000
DBASE = 0xFFFFF80356780000
HEX_LINE = re.compile(r"^([0-9a-f]{16})$")


def run(*args, ok=0):
    p = subprocess.run([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    check(p.returncode == ok, f"{' '.join(map(str, args))} exited {p.returncode}, want {ok}: "
          f"{p.stderr[-2000:]}")
    return p


def flow(*args, ok=0):
    return run(NTLENS, "ipt", "flow", *args, ok=ok)


def addresses(text):
    """The instruction addresses of ptxed's --no-inst lines."""
    return [int(m.group(1), 16) for m in map(HEX_LINE.match, text.splitlines()) if m]


def exports(path):
    pe = pefile.PE(path)
    return {e.name.decode(): e.address for e in pe.DIRECTORY_ENTRY_EXPORT.symbols if e.name}


def expected_path(imgs, sites):
    """Addresses of the instructions DriverEntry runs, optimized."""
    entry = DBASE + pefile.PE(imgs["testdrv.sys"]).OPTIONAL_HEADER.AddressOfEntryPoint
    k = {name: KBASE + rva for name, rva in exports(imgs["ntoskrnl.exe"]).items()}
    calls = sorted((s for s in sites if s["kind"] == "call"), key=lambda s: s["rva"])
    tail = [s for s in sites if s["kind"] == "jmp"][0]
    path = [entry]  # sub rsp, 40 (4 bytes)
    check(calls[0]["rva"] == entry - DBASE + 4, "the first site follows DriverEntry's sub rsp")
    for s in calls:
        site = DBASE + s["rva"]
        routine = k[s["import"]]
        if s["patched"]:  # mov r10, [rip+IAT] (7 bytes); call rel32 (5)
            path += [site, site + 7, routine, routine + 5]
        else:  # call [rip+IAT] (7 bytes); the 5-byte nop after it
            path += [site, routine, routine + 5, site + 7]
    after = DBASE + calls[-1]["rva"] + 12
    helper = DBASE + tail["rva"] - 2  # xor eax, eax (2 bytes) before the tail site
    site = DBASE + tail["rva"]
    path += [after, after + 4, helper, site, site + 7, k[tail["import"]], k[tail["import"]] + 5]
    return path, entry


def build(tmp, imgs):
    """The dump build report's sites: rva, kind, import, patched."""
    p = run(NTLENS, "dump", "build", "--format", "json", "--base", f"ntoskrnl.exe={KBASE:#x}",
            "--base", f"testdrv.sys={DBASE:#x}", "--base", f"hal.dll={HBASE:#x}",
            "--module", imgs["ntoskrnl.exe"], imgs["testdrv.sys"], imgs["hal.dll"],
            "-o", os.path.join(tmp, "bases.dmp"))
    sites = []
    for s in json.loads(p.stdout or "[]"):
        rva = int(s["rva"], 16)
        sites.append({"rva": rva, "kind": s["kind"], "import": import_at(imgs["testdrv.sys"], rva),
                      "patched": s["result"] == "patched"})
    return sites


def import_at(path, rva):
    """The import whose IAT slot the `call/jmp [rip+disp32]` at rva reads."""
    pe = pefile.PE(path)
    code = pe.get_data(rva, 7)
    slot = rva + 7 + int.from_bytes(code[3:7], "little", signed=True)
    for d in pe.DIRECTORY_ENTRY_IMPORT:
        for i in d.imports:
            if i.address - pe.OPTIONAL_HEADER.ImageBase == slot:
                return i.name.decode()
    return None


def trace_script(entry, imgs, sites):
    free = [s for s in sites if not s["patched"]][0]
    k = exports(imgs["ntoskrnl.exe"])
    caller = KBASE + k["ExAllocatePool2"] - 0x10  # any address: DriverEntry's caller
    return "\n".join(["psb", "mode64", "psbend", f"pge {entry:#x}", "tnt 11",
                      f"tip {KBASE + k[free['import']]:#x}", "tnt 11", f"pgd {caller:#x}", ""])


def check_calls(etl, dump):
    p = flow("--etl", etl, "--event", "1", "--dump", dump, "--calls", "--format", "json")
    rows = json.loads(p.stdout or "[]")
    calls = [(r["event"], r["depth"], r["function"], r["insns"]) for r in rows]
    want = [("start", 0, "testdrv.sys+0x1000", None)]
    for f in ("KeAcquireSpinLockAtDpcLevel", "ExAllocatePool2", "ExFreePool",
              "KeStallExecutionProcessor"):
        want += [("call", 1, "ntoskrnl.exe!" + f, None), ("return", 1, "ntoskrnl.exe!" + f, 2)]
    check(calls == want, f"--calls: {calls}")
    check(all(r["from"].startswith("testdrv.sys+0x10") for r in rows if r["event"] == "call"),
          f"calls come from the driver's sites: {rows}")
    p = flow("--etl", etl, "--event", "1", "--dump", dump, "--calls")
    check("  ntoskrnl.exe!ExFreePool" in p.stdout and "\nFunction" not in p.stdout,
          f"--calls as a table, indented by depth: {p.stdout}")
    p = flow("--etl", etl, "--event", "1", "--dump", dump, "--functions", "--format", "csv")
    lines = p.stdout.splitlines()
    # 24 instructions, 2 in each of five ntoskrnl routines.
    check(lines[:2] == ["function,module,insns,visits,share", ",testdrv.sys,14,1,58.33"],
          f"--functions: the driver first (no exports: no function): {lines}")
    check(sorted(lines[2:]) == sorted(f"{f},ntoskrnl.exe,2,1,8.33" for f in (
        "KeAcquireSpinLockAtDpcLevel", "ExAllocatePool2", "ExFreePool",
        "KeStallExecutionProcessor", "IoCompleteRequest")), f"--functions: {lines}")


def check_user(encode, mketl, tmp, imgs, size):
    """--etl --event N --modules DIR also maps the event's process's
    user-mode modules: hal.dll loaded by process 4 (the IPT event's) and by
    process 5 at the same address (which must stay out: both would
    overlap), and the trace runs HalQueryRealTimeClock there."""
    ubase = 0x7FF612340000
    func = ubase + exports(imgs["hal.dll"])["HalQueryRealTimeClock"]
    pt = os.path.join(tmp, "user.pt")
    subprocess.run([encode, pt], input=f"psb\nmode64\npsbend\npge {func:#x}\npgd {ubase:#x}\n",
                   text=True, check=True)
    etl = os.path.join(tmp, "user.etl")
    run(mketl, etl, pt, "0", f"\\SystemRoot\\system32\\ntoskrnl.exe,{KBASE:#x},{size['ntoskrnl.exe']}",
        f"C:\\Windows\\System32\\hal.dll,{ubase:#x},{size['hal.dll']},5",
        f"C:\\Windows\\System32\\hal.dll,{ubase:#x},{size['hal.dll']},4")
    p = flow("--etl", etl, "--event", "1", "--modules", tmp, "--no-inst")
    check(addresses(p.stdout) == [func, func + 5], f"the process's user-mode module: {p.stdout}")
    p = flow("--etl", etl, "--event", "1", "--modules", tmp, "--functions", "--format", "csv")
    check(p.stdout.splitlines()[1:] == ["HalQueryRealTimeClock,hal.dll,2,1,100.00"],
          f"named from its exports: {p.stdout}")


def main():
    if build_images.missing_tools():
        print("missing:", " ".join(build_images.missing_tools()))
        sys.exit(77)
    encode, mketl = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="ntlens-seed002-")
    try:
        imgs = build_images.build(tmp)
        sites = build(tmp, imgs)
        check(len(sites) == 5 and sum(s["patched"] for s in sites) == 4, f"sites {sites}")
        path, entry = expected_path(imgs, sites)

        pt = os.path.join(tmp, "trace.pt")
        subprocess.run([encode, pt], input=trace_script(entry, imgs, sites), text=True, check=True)
        size = {n: pefile.PE(p).OPTIONAL_HEADER.SizeOfImage for n, p in imgs.items()}
        mods = [f"\\SystemRoot\\system32\\ntoskrnl.exe,{KBASE:#x},{size['ntoskrnl.exe']}",
                f"\\SystemRoot\\system32\\hal.dll,{HBASE:#x},{size['hal.dll']}",
                f"\\SystemRoot\\system32\\drivers\\testdrv.sys,{DBASE:#x},{size['testdrv.sys']}"]
        etl = os.path.join(tmp, "kernel.etl")
        ring = os.path.join(tmp, "ring.etl")
        run(mketl, etl, pt, "0", *mods)
        run(mketl, ring, pt, "1000", *mods)

        # The seed's dump: module bases from the trace, import optimization on.
        dump = os.path.join(tmp, "kernel.dmp")
        run(NTLENS, "dump", "build", "-q", "--etl", etl, "--module", imgs["ntoskrnl.exe"],
            imgs["hal.dll"], imgs["testdrv.sys"], "-o", dump)

        want = ["[enabled]"] + [f"{a:016x}" for a in path] + ["[disabled]"]
        p = flow("--etl", etl, "--event", "1", "--dump", dump, "--no-inst")
        check(p.stdout.splitlines() == want, f"the path through the dump:\n{p.stdout}\nwant\n"
              + "\n".join(want))
        p = flow("--etl", ring, "--event", "1", "--dump", dump, "--no-inst")
        check(p.stdout.splitlines() == want, f"the wrapped ring's path:\n{p.stdout}")
        p = flow("--etl", etl, "--event", "1", "--dump", dump, "--no-inst", "--stat")
        # A block ends at each return and at the indirect call: six.
        check(p.stdout.endswith(f"insn: {len(path)}.\nblocks:\t6.\n"),
              f"--stat: {len(path)} instructions in 6 blocks: {p.stdout[-40:]!r}")

        pes = ["--pe", f"{imgs['ntoskrnl.exe']}:{KBASE:#x}", "--pe", f"{imgs['hal.dll']}:{HBASE:#x}",
               "--pe", f"{imgs['testdrv.sys']}:{DBASE:#x}"]
        p = flow("--etl", etl, "--event", "1", *pes, "--import-optimization", "--no-inst")
        check(p.stdout.splitlines() == want, f"--pe with --import-optimization:\n{p.stdout}")
        p = flow("--etl", etl, "--event", "1", "--modules", tmp, "--import-optimization", "--no-inst")
        check(p.stdout.splitlines() == want, f"--etl --modules:\n{p.stdout}")

        # As linked: the first site is still `call [rip+IAT]`, which needs a TIP.
        first = DBASE + min(s["rva"] for s in sites)
        p = flow("--etl", etl, "--event", "1", *pes, "--no-inst")
        errs = [line for line in p.stdout.splitlines() if "error" in line]
        check(len(errs) == 1 and re.match(r"\[[0-9a-f]+, ([0-9a-f]+): error: trace stream does not "
                                          r"match query\]$", errs[0])
              and int(errs[0].split(", ")[1].split(":")[0], 16) == first,
              f"unoptimized: one error naming the first optimized site {first:#x}: {errs}")
        check(addresses(p.stdout)[:2] == [entry, first], f"unoptimized: up to the site: {p.stdout}")
        p = flow("--etl", etl, "--event", "1", *pes, "--calls")
        check(f"ip {first:#x} (testdrv.sys+{first - DBASE:#x}): trace stream does not match query"
              in p.stderr, f"unoptimized --calls: the warning names the site: {p.stderr}")

        check_calls(etl, dump)
        check_user(encode, mketl, tmp, imgs, size)

        p = flow("--etl", etl, "--event", "2", "--dump", dump, ok=1)
        check("IPT event 2 asked for, the trace has 1" in p.stderr and etl in p.stderr,
              f"--event past the last: {p.stderr}")
        p = flow("--event", "1", "--dump", dump, ok=2)
        check("'--event' needs '--etl TRACE'" in p.stderr, f"--event alone: {p.stderr}")
        p = flow("--etl", etl, "--dump", dump, pt, ok=2)
        check("'--etl' needs '--event N'" in p.stderr, f"--etl alone: {p.stderr}")
        p = flow(pt, "--pe", imgs["hal.dll"], ok=2)
        check("option '--pe' needs FILE:BASE" in p.stderr, f"--pe without a base: {p.stderr}")
        bad = os.path.join(tmp, "bad.dmp")
        with open(dump, "rb") as f:
            data = bytearray(f.read())
        data[12:16] = (0x7FFFFFF0).to_bytes(4, "little")  # the stream directory's RVA
        with open(bad, "wb") as f:
            f.write(data)
        p = flow(pt, "--dump", bad, ok=1)
        check(bad in p.stderr and "0x7ffffff0" in p.stderr.lower() and "offset" in p.stderr,
              f"a bad dump names the file and the field's offset: {p.stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


main()
