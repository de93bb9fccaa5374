#!/usr/bin/env python3
"""End-to-end test of lib/pe, import optimization and the dump commands on
real PE images built with clang-14 and lld-link-14 (tests/dump/), checked by
independent readers:

  * Python's pefile parses the same headers, sections, exports (forwarders,
    aliases, ordinals), imports, base relocations, CodeView record, load
    config and dynamic value relocations as lib/pe (pe_inspect).
  * `ntlens dump build` patches exactly the sites it should, to the export
    addresses pefile reports at the chosen bases, and skips the 0x7FFFF one.
  * lldb-14 opens the dump: `image list` shows every module at its kernel
    address, and disassembling each optimized site shows `mov r10, qword ptr
    [rip + ...]` then a direct call/jmp to the right export.
  * `dump build --etl` takes the bases from a generated trace's image events;
    `dump relocate` moves a module; `--no-import-optimization` leaves the code.

    test_images.py NTLENS PE_INSPECT [MKETL]
Exit 77 (skip) when clang-14, lld-link-14 or pefile is missing.
"""
import csv
import datetime
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

SRC = os.environ.get("NTLENS_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "dump"))
import build_images  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

try:
    import pefile
except ImportError:
    print("pefile missing (Debian python3-pefile)")
    sys.exit(77)





def run(*cmd, ok=0):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == ok, f"{' '.join(cmd)} exited {p.returncode}, want {ok}: {p.stderr}")
    return p


FORMATS = ["table", "csv", "tsv", "json", "jsonl"]
SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*$")
# Keys whose values are addresses or hex identifiers: strings in every format (docs/cli.md).
HEX_KEYS = {"base", "start", "end", "teb", "stack_start", "address", "target", "rva", "from", "to",
                "checksum", "time_date_stamp"}


def iso(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def no_rounding(text):
    """parse_int hook: an integer a JSON reader would round is a failure."""
    check(abs(int(text)) <= 2**53, f"integer {text} beyond 2^53 in JSON")
    return int(text)


def no_float(text):
    """parse_float hook: the dump commands print no fraction; sizes and indexes are integers."""
    check(False, f"float {text} in JSON where an integer belongs")
    return float(text)


def check_records(what, rows):
    for r in rows:
        check(isinstance(r, dict), f"{what}: a record is an object: {r!r}")
        for k, v in r.items():
            check(SNAKE.match(k), f"{what}: key {k!r} is not snake_case")
            if k in HEX_KEYS and v is not None:
                check(isinstance(v, str) and re.fullmatch(r"0x[0-9a-f]+", v), f"{what}: {k} {v!r} is no hex string")


def check_formats(what, args, ok=0):
    """Every --format value parses back: one JSON document, JSON lines, one CSV/TSV table."""
    for fmt in FORMATS:
        p = run(*args, "--format", fmt, ok=ok)
        if fmt == "json":
            doc = json.loads(p.stdout, parse_int=no_rounding, parse_float=no_float)
            for rows in (doc.values() if isinstance(doc, dict) else [doc]):
                check(isinstance(rows, list), f"{what} json: records or sections of records")
                check_records(f"{what} json", rows)
        elif fmt == "jsonl":
            check_records(f"{what} jsonl", [json.loads(line, parse_int=no_rounding, parse_float=no_float)
                                            for line in p.stdout.splitlines()])
        elif fmt in ("csv", "tsv"):
            rows = list(csv.reader(io.StringIO(p.stdout), delimiter="," if fmt == "csv" else "\t"))
            check(rows and all(SNAKE.match(k) for k in rows[0]), f"{what} {fmt}: snake_case header {rows[:1]}")
            check(rows and all(len(r) == len(rows[0]) for r in rows), f"{what} {fmt}: one table")
        else:
            check(p.stdout.strip() != "", f"{what} table: empty")


def usage_error(words, args, option):
    """One line naming the option, then the pointer to --help; exit 2; nothing on stdout."""
    p = run(*words, *args, ok=2)
    lines = p.stderr.splitlines()
    check(len(lines) == 2 and f"'{option}'" in lines[0] and lines[1] == f"Try 'ntlens {' '.join(words[1:])} --help'.",
          f"{' '.join(words[1:] + list(args))}: one error line naming {option}: {p.stderr!r}")
    check(p.stdout == "", f"{' '.join(words[1:] + list(args))}: nothing on stdout")
    return p


def addr(v):
    return int(v, 16)


KBASE = 0xFFFFF80312400000
DBASE = 0xFFFFF80356780000
HBASE = 0xFFFFF80312200000


def compare_with_pefile(inspect, path):
    ours = json.loads(run(inspect, path).stdout)
    pe = pefile.PE(path)
    name = os.path.basename(path)
    oh = pe.OPTIONAL_HEADER
    check(ours["machine"] == pe.FILE_HEADER.Machine, f"{name}: machine")
    check(ours["image_base"] == oh.ImageBase, f"{name}: image base")
    check(ours["size_of_image"] == oh.SizeOfImage, f"{name}: SizeOfImage")
    check(ours["entry"] == oh.AddressOfEntryPoint, f"{name}: entry")
    check(ours["timestamp"] == pe.FILE_HEADER.TimeDateStamp, f"{name}: TimeDateStamp")
    theirs = [(s.Name.rstrip(b"\0").decode(), s.VirtualAddress, s.Misc_VirtualSize,
               s.PointerToRawData, s.SizeOfRawData) for s in pe.sections]
    mine = [(s["name"], s["va"], s["vsize"], s["raw_offset"], s["raw_size"]) for s in ours["sections"]]
    check(mine == theirs, f"{name}: sections {mine} != {theirs}")

    if hasattr(pe, "DIRECTORY_ENTRY_EXPORT"):
        theirs = sorted((e.ordinal, e.address if not e.forwarder else None,
                         e.name.decode() if e.name else None,
                         e.forwarder.decode() if e.forwarder else None)
                        for e in pe.DIRECTORY_ENTRY_EXPORT.symbols)
        mine = sorted((e["ordinal"], e["rva"] if not e["forwarder"] else None, e["name"],
                       e["forwarder"]) for e in ours["exports"] if e["rva"])
        check(mine == theirs, f"{name}: exports {mine} != {theirs}")
    else:
        check(not ours["exports"], f"{name}: exports without a directory")

    theirs = []
    for d in getattr(pe, "DIRECTORY_ENTRY_IMPORT", []):
        for i in d.imports:
            theirs.append((d.dll.decode(), i.name.decode() if i.name else None,
                           i.address - oh.ImageBase))
    mine = [(i["dll"], i["name"], i["iat_rva"]) for i in ours["imports"]]
    check(mine == theirs, f"{name}: imports {mine} != {theirs}")

    theirs = []
    for b in getattr(pe, "DIRECTORY_ENTRY_BASERELOC", []):
        theirs += [[e.rva, e.type] for e in b.entries if e.type != 0]
    check(ours["relocs"] == theirs, f"{name}: base relocations {ours['relocs']} != {theirs}")

    cv = [d.entry for d in getattr(pe, "DIRECTORY_ENTRY_DEBUG", []) if d.struct.Type == 2]
    if cv:
        e = cv[0]
        guid = (e.Signature_Data1.to_bytes(4, "little") + e.Signature_Data2.to_bytes(2, "little")
                + e.Signature_Data3.to_bytes(2, "little") + e.Signature_Data4.to_bytes(1, "little")
                + e.Signature_Data5.to_bytes(1, "little") + e.Signature_Data6).hex()
        check(ours["codeview"] and ours["codeview"]["guid"] == guid, f"{name}: CodeView GUID")
        check(ours["codeview"]["age"] == e.Age, f"{name}: CodeView age")
        check(ours["codeview"]["pdb"] == e.PdbFileName.rstrip(b"\0").decode(), f"{name}: PDB name")
    else:
        check(ours["codeview"] is None, f"{name}: CodeView without a debug directory")

    lc = getattr(pe, "DIRECTORY_ENTRY_LOAD_CONFIG", None)
    check(ours["load_config"]["present"] == (lc is not None), f"{name}: load config presence")
    if lc is None:
        check(ours["dvrt"] is None, f"{name}: DVRT without load config")
        return ours
    s = lc.struct
    check(ours["load_config"]["size"] == s.Size, f"{name}: load config Size")
    check(ours["load_config"]["guard_flags"] == s.GuardFlags, f"{name}: GuardFlags")
    check(ours["load_config"]["dvrt_offset"] == s.DynamicValueRelocTableOffset, f"{name}: DVRT offset")
    check(ours["load_config"]["dvrt_section"] == s.DynamicValueRelocTableSection, f"{name}: DVRT section")
    theirs = []
    for d in lc.dynamic_relocations or []:
        fixups = [(e.rva, e.struct.IndirectCall, e.struct.IATIndex)
                  for b in d.relocations for e in b.entries]
        theirs.append((d.symbol, d.struct.BaseRelocSize, len(d.relocations), fixups))
    mine = [(r["symbol"], r["size"], r["blocks"],
             [(f["rva"], f["indirect_call"], f["iat_index"]) for f in r["fixups"]])
            for r in (ours["dvrt"] or {}).get("relocs", [])]
    check(mine == theirs and len(mine) > 0, f"{name}: dynamic relocations {mine} != {theirs}")
    return ours


def export_rvas(path):
    pe = pefile.PE(path)
    return {e.name.decode(): e.address for e in pe.DIRECTORY_ENTRY_EXPORT.symbols if e.name}


def check_cli(ntlens, imgs, dump, tmp):
    """The dump commands' options and formats through the real binary: help,
    one wording per mistake, the letters of docs/cli.md, every --format."""
    show, build, reloc = [ntlens, "dump", "show"], [ntlens, "dump", "build"], [ntlens, "dump", "relocate"]
    for words in (show, build, reloc):
        p = run(*words, "--help")
        check(p.stdout.startswith(f"usage: ntlens {' '.join(words[1:])} ") and p.stderr == "",
              f"{words[1:]} --help")
        usage_error(words, ["--no-such-option"], "--no-such-option")
        usage_error(words, [dump, "--format", "xml"], "--format")
        usage_error(words, [dump, "--format"], "--format")
    # Letters docs/cli.md does not give these meanings are long-only now.
    for letter in ("-e", "-m", "-s", "-a"):
        usage_error(build, [letter, "x", "-o", os.path.join(tmp, "x.dmp")], letter)
    for letter in ("-s", "-r"):
        usage_error(show, [letter, "modules", dump], letter)
    usage_error(build, ["-b", "nobase", imgs["testdrv.sys"], "-o", os.path.join(tmp, "x.dmp")], "-b")
    usage_error(build, ["--os-version", "10.0", imgs["testdrv.sys"], "-o", os.path.join(tmp, "x.dmp")],
                "--os-version")
    usage_error(build, ["--all-kernel", "-o", os.path.join(tmp, "x.dmp")], "--all-kernel")
    usage_error(show, ["--section", "heap", dump], "--section")
    usage_error(show, ["--read", "0x1000:0", dump], "--read")
    usage_error(show, ["--read", "0x1000", "--section", "modules", dump], "--read")
    usage_error(show, ["--read"], "--read")
    usage_error(show, [dump, "second.dmp"], "second.dmp")
    # CSV, TSV and JSON lines hold one table: the error names the choices.
    for fmt in ("csv", "tsv", "jsonl"):
        p = usage_error(show, ["--format", fmt, dump], "--format")
        check("'--section' (streams, system, threads, modules, memory or irregularities)" in p.stderr,
              p.stderr)
    # Every format of every section, of --read, and of the build report.
    for section in ("streams", "system", "threads", "modules", "memory", "irregularities"):
        check_formats(f"dump show --section {section}", show + ["--section", section, dump])
    doc = json.loads(run(*show, "--format", "json", dump).stdout, parse_int=no_rounding, parse_float=no_float)
    check(sorted(doc) == ["irregularities", "memory", "modules", "streams", "system", "threads"],
          f"sections {sorted(doc)}")
    check(doc["irregularities"] == [], f"a regular dump has no irregularities: {doc['irregularities']}")
    for rows in doc.values():
        check_records("dump show json", rows)
    table = run(*show, dump).stdout
    check(all(f"\n{t}\n" in "\n" + table
              for t in ("Streams", "System", "Threads", "Modules", "Memory", "Irregularities")),
          f"table of every section under its title:\n{table}")
    check_formats("dump show --read", show + ["--read", f"{KBASE:#x}:40", dump])
    rows = json.loads(run(*show, "--read", f"{KBASE:#x}:20", "--format", "json", dump).stdout)
    check([r["address"] for r in rows] == [f"{KBASE:#018x}", f"{KBASE + 16:#018x}"] and
          rows[0]["bytes"].startswith("4d 5a ") and rows[0]["text"].startswith("MZ") and
          len(rows[1]["bytes"].split()) == 4, f"--read records {rows}")
    check_formats("dump build", build + ["-b", f"ntoskrnl.exe={KBASE:#x}", "-b", f"testdrv.sys={DBASE:#x}",
                                         "-b", f"hal.dll={HBASE:#x}", imgs["ntoskrnl.exe"], imgs["testdrv.sys"],
                                         imgs["hal.dll"], "-o", os.path.join(tmp, "formats.dmp")])


def check_irregular(ntlens, dump, tmp):
    """Copies of a real dump with one oddity each: `dump show` warns with the
    file offset, reads on, loses nothing and lists the oddity in its output."""
    data = open(dump, "rb").read()
    info = json.loads(run(ntlens, "dump", "show", "--format", "json", dump).stdout)
    count, dir_rva = struct.unpack_from("<II", data, 8)
    index = {st["name"]: st["index"] for st in info["streams"]}
    mods = [st for st in info["streams"] if st["name"] == "ModuleListStream"][0]["offset"]

    def show(name, patch, ok=0):
        path = os.path.join(tmp, name)
        buf = bytearray(data)
        for off, raw in patch:
            buf[off:off + len(raw)] = raw
        open(path, "wb").write(bytes(buf))
        p = run(ntlens, "dump", "show", "--format", "json", path, ok=ok)
        return p, (json.loads(p.stdout) if ok == 0 else None)

    # The Memory64ListStream entry copied over the ThreadListStream entry.
    mem, thr = index["Memory64ListStream"], index["ThreadListStream"]
    entry = data[dir_rva + 12 * mem:dir_rva + 12 * mem + 12]
    p, got = show("twice.dmp", [(dir_rva + 12 * thr, entry)])
    at = dir_rva + 12 * max(mem, thr)
    check(f"irregular dump: at offset {at:#x}: stream {max(mem, thr)} lists Memory64ListStream again"
          in p.stderr, f"stream listed twice: warned with its offset: {p.stderr}")
    check(got["memory"] == info["memory"] and got["modules"] == info["modules"],
          "stream listed twice: its ranges once, nothing lost")
    check([r["offset"] for r in got["irregularities"]] == [at], f"listed: {got['irregularities']}")

    p, got = show("nostreams.dmp", [(8, b"\0\0\0\0")])
    check("irregular dump: at offset 0x8: NumberOfStreams is 0" in p.stderr and got["streams"] == []
          and [r["offset"] for r in got["irregularities"]] == [8], f"NumberOfStreams 0: {p.stderr}")

    first = mods + 4
    p, got = show("size0.dmp", [(first + 8, b"\0\0\0\0")])
    name = info["modules"][0]["name"]
    check(f"irregular dump: at offset {first + 8:#x}: module {name} has SizeOfImage 0" in p.stderr,
          f"SizeOfImage 0 warned with its offset: {p.stderr}")
    # Its ranges stay (no longer attributed to it: no address lies in it).
    spans = [[(r["start"], r["size"]) for r in d["memory"]] for d in (got, info)]
    check(len(got["modules"]) == len(info["modules"]) and spans[0] == spans[1] and
          [r["offset"] for r in got["irregularities"]] == [first + 8], "SizeOfImage 0: nothing lost")

    # A bad RVA is a value, not where the error is: the field's offset is.
    p, _ = show("badrva.dmp", [(first + 20, struct.pack("<I", 0x80000000))], ok=1)
    check(f"ModuleNameRva at offset {first + 20:#x}: MINIDUMP_STRING at RVA 0x80000000 "
          f"(outside the file of size {len(data):#x})" in p.stderr, f"bad RVA: {p.stderr}")


def lldb(dump, *commands):
    cmd = ["lldb-14", "-b", "-c", dump, "-o", "settings set target.x86-disassembly-flavor intel"]
    for c in commands:
        cmd += ["-o", c]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                       cwd=os.path.dirname(dump))
    return p.stdout


def main():
    if len(sys.argv) < 3:
        sys.exit(2)
    ntlens, inspect = sys.argv[1], sys.argv[2]
    mketl = sys.argv[3] if len(sys.argv) > 3 else None
    if build_images.missing_tools():
        print("missing:", build_images.missing_tools())
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="ntlens-pe-")
    try:
        imgs = build_images.build(tmp)
        drv = compare_with_pefile(inspect, imgs["testdrv.sys"])
        compare_with_pefile(inspect, imgs["ntoskrnl.exe"])
        compare_with_pefile(inspect, imgs["hal.dll"])
        x86 = compare_with_pefile(inspect, imgs["x86dll.dll"])
        check(not x86["pe32plus"] and x86["relocs"] and all(t == 3 for _, t in x86["relocs"]),
              "PE32 image with HIGHLOW relocations")
        check([(f["iat_index"], f["indirect_call"]) for f in x86["dvrt"]["relocs"][0]["fixups"]]
              == [(0x1234, 1), (0x7FFFF, 0)], "PE32 DVRT entries")
        check(len(drv["dvrt"]["relocs"][0]["fixups"]) == 5, "testdrv: five import sites")

        kexp = export_rvas(imgs["ntoskrnl.exe"])
        dpe = pefile.PE(imgs["testdrv.sys"])
        imports = {i.name.decode(): i.address - dpe.OPTIONAL_HEADER.ImageBase
                   for d in dpe.DIRECTORY_ENTRY_IMPORT for i in d.imports}
        dll_of = {i.name.decode(): d.dll.decode() for d in dpe.DIRECTORY_ENTRY_IMPORT for i in d.imports}
        check(dll_of.get("KeStallExecutionProcessor") == "HAL.dll", "driver imports from HAL.dll")

        out = os.path.join(tmp, "out.dmp")
        p = run(ntlens, "dump", "build", "--format", "json", "--base", f"ntoskrnl.exe={KBASE:#x}",
                "--base", f"testdrv={DBASE:#x}", "--base", f"HAL.dll={HBASE:#x}",
                "--module", imgs["ntoskrnl.exe"], imgs["testdrv.sys"], imgs["hal.dll"], "-o", out)
        sites = json.loads(p.stdout)
        want = {  # rva -> (kind, import, patched)
            0x1004: ("call", "KeAcquireSpinLockAtDpcLevel", True),
            0x1010: ("call", "ExAllocatePool2", True),
            0x101C: ("call", "ExFreePool", False),
            0x1028: ("call", "KeStallExecutionProcessor", True),
            0x2002: ("jmp", "IoCompleteRequest", True),
        }
        for s in sites:
            s["rva"] = addr(s["rva"])
        check(sorted(s["rva"] for s in sites) == sorted(want), f"report sites {sites}")
        for s in sites:
            kind, func, patched = want.get(s["rva"], (None, None, None))
            check(s["kind"] == kind, f"site {s['rva']:#x} kind {s['kind']}")
            check((s["result"] == "patched") == patched, f"site {s['rva']:#x} result {s['result']}")
            if patched:
                check(addr(s["target"]) == KBASE + kexp[func], f"site {s['rva']:#x} target {s['target']}")
                check(s["resolved"] == "ntoskrnl.exe!" + func, f"site {s['rva']:#x} resolved {s['resolved']}")
                check(s["iat_index"] * 8 + dpe.OPTIONAL_HEADER.DATA_DIRECTORY[12].VirtualAddress
                      == imports[func], f"site {s['rva']:#x} IAT index")
            else:
                check(s["iat_index"] == 0x7FFFF and "0x7FFFF" in s["detail"], "do-not-optimize site")
        check("2 patched" not in p.stderr and "4 patched, 1 skipped" in p.stderr, p.stderr)
        check(f"wrote {out}: 3 modules" in p.stderr, f"dump build says what it wrote: {p.stderr}")

        show = json.loads(run(ntlens, "dump", "show", "--format", "json", out).stdout)
        bases = {m["name"].split("\\")[-1]: addr(m["base"]) for m in show["modules"]}
        check(bases == {"ntoskrnl.exe": KBASE, "testdrv.sys": DBASE, "hal.dll": HBASE}, f"bases {bases}")
        check(show["system"][0]["architecture"] == "AMD64", "SystemInfo architecture")
        check(sorted(addr(r["start"]) for r in show["memory"]) == sorted([KBASE, DBASE, HBASE]), "ranges")
        check(any(m["pdb"].endswith("testdrv.pdb") for m in show["modules"]), "CodeView in dump")
        # TimeDateStamp: the hex a symbol server matches, and the time it claims.
        for m in show["modules"]:
            stamp = pefile.PE(imgs[m["name"].split("\\")[-1]]).FILE_HEADER.TimeDateStamp
            check(m["time_date_stamp"] == f"{stamp:#010x}" and m["time"] == (iso(stamp) if stamp else None),
                  f"module TimeDateStamp {m['time_date_stamp']} {m['time']} vs {stamp:#x}")
        check(show["system"][0]["timestamp"] is None, "no trace, no time: the dump's time is null")

        def read64(dump, addr):
            text = run(ntlens, "dump", "show", "--read", f"{addr:#x}:8", dump).stdout
            return int.from_bytes(bytes.fromhex("".join(text.split(":", 1)[1].split("|")[0].split())), "little")

        # Rebased: ntoskrnl's DIR64 pointer now points into the kernel-address image.
        kpe = pefile.PE(imgs["ntoskrnl.exe"])
        ptr_rva = [e.rva for b in kpe.DIRECTORY_ENTRY_BASERELOC for e in b.entries if e.type == 10][0]
        orig = kpe.get_qword_at_rva(ptr_rva)
        check(read64(out, KBASE + ptr_rva) == KBASE + orig - kpe.OPTIONAL_HEADER.ImageBase,
              "base relocation applied at the kernel base")
        # Bound: the driver's IAT slots hold the exports' kernel addresses (HAL via ntoskrnl).
        for func in ("ExAllocatePool2", "KeStallExecutionProcessor"):
            check(read64(out, DBASE + imports[func]) == KBASE + kexp[func], f"IAT slot of {func} bound")

        # lldb: modules at kernel addresses, optimized sites disassemble as the kernel leaves them.
        if shutil.which("lldb-14"):
            text = lldb(out, "image list",
                        *[f"disassemble -s {DBASE + rva:#x} -c 2" for rva in sorted(want)])
            for name, base in (("ntoskrnl.exe", KBASE), ("testdrv.sys", DBASE), ("hal.dll", HBASE)):
                check(re.search(rf"{base:#x} .*{re.escape(name)}", text), f"lldb image list {name}:\n{text}")
            for rva, (kind, func, patched) in want.items():
                m = re.search(rf"{DBASE + rva:#x}(?:\s*<[^>]*>)?:\s*(.*)\n\s*\S*{DBASE + rva + 7:#x}"
                              rf"(?:\s*<[^>]*>)?:\s*(.*)\n", text)
                check(m is not None, f"lldb disassembly at {DBASE + rva:#x}:\n{text}")
                if not m:
                    continue
                first, second = m.group(1), m.group(2)
                if patched:
                    check(re.match(r"mov\s+r10, qword ptr \[rip \+ 0x[0-9a-f]+\]", first), f"lldb: {first}")
                    check(re.match(rf"{kind}\s+{KBASE + kexp[func]:#x}", second), f"lldb: {second}")
                else:
                    check(re.match(r"call\s+qword ptr \[rip \+ 0x[0-9a-f]+\]", first), f"lldb: {first}")
        else:
            check(False, "lldb-14 missing (scripts/setup installs it)")

        # Relocate one module in place; lldb follows it.
        moved = os.path.join(tmp, "moved.dmp")
        p = run(ntlens, "dump", "relocate", "--format", "json", out, f"testdrv.sys={0xFFFFF80400000000:#x}",
                "-o", moved)
        recs = json.loads(p.stdout)
        check(len(recs) == 1 and recs[0]["name"].endswith("testdrv.sys") and addr(recs[0]["from"]) == DBASE
              and recs[0]["to"] == "0xfffff80400000000" and recs[0]["ranges"] == 1, f"relocate records {recs}")
        check(f"wrote {moved}" in p.stderr, f"relocate says what it wrote: {p.stderr}")
        show = json.loads(run(ntlens, "dump", "show", "--format", "json", moved).stdout)
        bases = {m["name"].split("\\")[-1]: addr(m["base"]) for m in show["modules"]}
        check(bases["testdrv.sys"] == 0xFFFFF80400000000 and bases["ntoskrnl.exe"] == KBASE, f"relocated {bases}")
        check(0xFFFFF80400000000 in [addr(r["start"]) for r in show["memory"]] and DBASE not in
              [addr(r["start"]) for r in show["memory"]], "relocated range")
        if shutil.which("lldb-14"):
            text = lldb(moved, "image list")
            check(re.search(r"0xfffff80400000000 .*testdrv\.sys", text), f"lldb after relocate:\n{text}")
        # Dumps are evidence: the input is rewritten only with --in-place.
        before = open(out, "rb").read()
        other = os.path.join(tmp, "other.dmp")
        run(ntlens, "dump", "relocate", out, "nosuch.sys=0x1000", "-o", other, ok=1)
        check(not os.path.exists(other), "a failed relocate writes nothing")
        run(ntlens, "dump", "relocate", out, ok=2)
        p = run(ntlens, "dump", "relocate", out, "testdrv.sys=0x1000", ok=2)
        check("-o FILE" in p.stderr and "--in-place" in p.stderr, f"relocate without -o: {p.stderr}")
        p = run(ntlens, "dump", "relocate", out, "testdrv.sys=0x1000", "-o", out, ok=2)
        check("input" in p.stderr, f"relocate -o INPUT: {p.stderr}")
        alias = os.path.join(tmp, "alias.dmp")
        os.link(out, alias)
        run(ntlens, "dump", "relocate", out, "testdrv.sys=0x1000", "-o", alias, ok=2)
        usage_error([ntlens, "dump", "relocate"], [out, "testdrv.sys=0x1000", "-o", other, "--in-place"], "--output")
        usage_error([ntlens, "dump", "relocate"], [out, "testdrv.sys", "-o", other], "testdrv.sys")
        check(open(out, "rb").read() == before, "the input dump is untouched")
        inplace = os.path.join(tmp, "inplace.dmp")
        shutil.copy(out, inplace)
        p = run(ntlens, "dump", "relocate", "-q", "--in-place", inplace, f"testdrv.sys={0xFFFFF80400000000:#x}")
        check(p.stdout == "" and p.stderr == "", f"relocate -q prints nothing: {p.stdout!r} {p.stderr!r}")
        check(open(inplace, "rb").read() == open(moved, "rb").read(), "--in-place rewrites the input")
        # The relocate report in every format (moving testdrv.sys back and forth).
        check_formats("dump relocate", [ntlens, "dump", "relocate", "--in-place", inplace, f"testdrv.sys={DBASE:#x}"])

        # A cut dump: the streams that read are shown, the one that does not is named.
        info = json.loads(run(ntlens, "dump", "show", "--format", "json", out).stdout)
        mem = [st for st in info["streams"] if st["name"] == "Memory64ListStream"][0]
        ranges = sorted(info["memory"], key=lambda r: r["file_offset"])
        cut_at = ranges[1]["file_offset"] + 0x10  # inside the second range's bytes (file order)
        cut = os.path.join(tmp, "cut.dmp")
        open(cut, "wb").write(before[:cut_at])
        p = run(ntlens, "dump", "show", cut, ok=1)
        check("ModuleListStream" in p.stdout and "ntoskrnl.exe" in p.stdout, f"cut dump shows modules: {p.stdout}")
        check(f"stream {mem['index']} (Memory64ListStream) could not be read" in p.stderr and
              "incomplete dump" in p.stderr and p.stderr.count(cut) == 2, f"cut dump names the stream: {p.stderr}")
        got = json.loads(run(ntlens, "dump", "show", "--format", "json", cut, ok=1).stdout)
        check(len(got["modules"]) == len(info["modules"]) and got["memory"] == ranges[:1],
              f"cut dump keeps the whole ranges before the cut: {got['memory']}")
        p = run(ntlens, "dump", "show", os.path.join(tmp, "missing.dmp"), ok=1)
        check(p.stderr.count("missing.dmp") == 1 and "No such file or directory" in p.stderr,
              f"missing dump: {p.stderr}")

        # Without import optimization the sites keep the compiler's bytes.
        plain = os.path.join(tmp, "plain.dmp")
        p = run(ntlens, "dump", "build", "--no-import-optimization", "-q", "-b", f"ntoskrnl.exe={KBASE:#x}",
                "-b", f"testdrv.sys={DBASE:#x}", "--module", imgs["ntoskrnl.exe"], "--module", imgs["testdrv.sys"],
                "-o", plain)
        check(p.stdout == "", "no report without import optimization")
        if shutil.which("lldb-14"):
            text = lldb(plain, f"disassemble -s {DBASE + 0x1004:#x} -c 1")
            check(re.search(r"call\s+qword ptr \[rip", text), f"unoptimized site:\n{text}")

        # --code-only: headers and executable sections only; the code still disassembles.
        code = os.path.join(tmp, "code.dmp")
        p = run(ntlens, "dump", "build", "-q", "--code-only", "-b", f"ntoskrnl.exe={KBASE:#x}", "-b",
            f"testdrv.sys={DBASE:#x}", "--module", imgs["ntoskrnl.exe"], "--module", imgs["testdrv.sys"], "-o", code)
        check(p.stdout == "" and p.stderr == "", f"dump build -q prints nothing: {p.stdout!r} {p.stderr!r}")
        show = json.loads(run(ntlens, "dump", "show", "--format", "json", code).stdout)
        text_end = max(s.VirtualAddress + s.Misc_VirtualSize for s in dpe.sections
                       if s.Characteristics & 0x20000000)
        check(any(addr(r["start"]) == DBASE and addr(r["end"]) >= DBASE + text_end for r in show["memory"]),
              f"code-only ranges {show['memory']}")
        data_rva = [s.VirtualAddress for s in dpe.sections if s.Name.startswith(b".data")][0]
        check(all(not (addr(r["start"]) <= DBASE + data_rva < addr(r["end"])) for r in show["memory"]),
              ".data left out of a code-only dump")
        run(ntlens, "dump", "show", "--read", f"{DBASE + data_rva:#x}:8", code, ok=1)
        check(os.path.getsize(code) < os.path.getsize(out), "code-only dump is smaller")
        if shutil.which("lldb-14"):
            text = lldb(code, f"disassemble -s {DBASE + 0x1004:#x} -c 2")
            check(re.search(rf"call\s+{KBASE + kexp['KeAcquireSpinLockAtDpcLevel']:#x}", text),
                  f"code-only dump in lldb:\n{text}")

        # Usage and failures.
        run(ntlens, "dump", "build", "--module", imgs["testdrv.sys"], "-o", plain, ok=1)  # no base
        run(ntlens, "dump", "build", "-o", plain, ok=2)
        p = run(ntlens, "dump", "build", "--help")
        check(p.stdout.startswith("usage: ntlens dump build ") and p.stderr == "", "dump build --help on stdout")
        check_cli(ntlens, imgs, out, tmp)
        check_irregular(ntlens, out, tmp)
        run(ntlens, "dump", "show", os.path.join(tmp, "testdrv.obj"), ok=1)
        # Malformed input: a truncated dump and a truncated image fail with the structure and offset.
        cut = os.path.join(tmp, "cut.dmp")
        open(cut, "wb").write(open(out, "rb").read()[:3000])
        p = run(ntlens, "dump", "show", cut, ok=1)
        check(re.search(r"MINIDUMP_\w+ at offset 0x[0-9a-f]+: .*outside the file", p.stderr), p.stderr)
        cutsys = os.path.join(tmp, "cut.sys")
        open(cutsys, "wb").write(open(imgs["testdrv.sys"], "rb").read()[:700])
        p = run(ntlens, "dump", "build", "-b", f"cut.sys={DBASE:#x}", cutsys, "-o", cut, ok=1)
        check(re.search(r"IMAGE_SECTION_HEADER at offset 0x[0-9a-f]+: .*beyond the end of the file", p.stderr),
              p.stderr)

        # Bases from an ETW trace's image events.
        if mketl:
            etl = os.path.join(tmp, "kernel.etl")
            run(mketl, etl, "\\SystemRoot\\system32\\ntoskrnl.exe", f"{KBASE:#x}", "0x5000",
                "\\SystemRoot\\system32\\drivers\\testdrv.sys", f"{DBASE:#x}", "0x7000",
                "\\SystemRoot\\system32\\hal.dll", f"{HBASE:#x}", "0x4000",  # not hal.dll's 0x3000
                "\\SystemRoot\\system32\\drivers\\missing.sys", "0xfffff80370000000", "0x2000")
            fromtrace = os.path.join(tmp, "trace.dmp")
            p = run(ntlens, "dump", "build", "--format", "json", "--etl", etl, "--module", imgs["ntoskrnl.exe"],
                    "--module", imgs["testdrv.sys"], "--module", imgs["hal.dll"], "-o", fromtrace)
            check(sum(s["result"] == "patched" for s in json.loads(p.stdout)) == 4, "patched from trace")
            check("hal.dll: SizeOfImage 0x3000, the trace recorded 0x4000" in p.stderr,
                  f"size mismatch warning: {p.stderr}")
            show = json.loads(run(ntlens, "dump", "show", "--format", "json", fromtrace).stdout)
            names = {m["name"]: addr(m["base"]) for m in show["modules"]}
            check(names == {"\\SystemRoot\\system32\\ntoskrnl.exe": KBASE,
                            "\\SystemRoot\\system32\\drivers\\testdrv.sys": DBASE,
                            "\\SystemRoot\\system32\\hal.dll": HBASE}, f"trace bases {names}")
            check(show["system"][0]["version"] == "10.0.19041", "version from the trace's logfile header")
            check(show["system"][0]["processors"] == 4, "processors from the trace")
            # mketl's StartTime, FILETIME 133000000000000000, is Unix time 1655526400.
            check(show["system"][0]["timestamp"] == iso(1655526400) == "2022-06-18T04:26:40Z",
                  f"dump time from the trace's StartTime: {show['system'][0]['timestamp']}")
            # --all-kernel: every kernel module of the trace found in the search directory.
            alld = os.path.join(tmp, "all.dmp")
            p = run(ntlens, "dump", "build", "-q", "--etl", etl, "--all-kernel", "--search", tmp, "-o", alld)
            check("missing.sys" in p.stderr and "not in the search directories" in p.stderr,
                  f"missing module warning: {p.stderr}")
            show = json.loads(run(ntlens, "dump", "show", "--section", "modules", "--format", "json", alld).stdout)
            check(sorted(m["name"].split("\\")[-1] for m in show) == ["hal.dll", "ntoskrnl.exe", "testdrv.sys"],
                  f"--all-kernel modules {show}")
            # a --module name resolved through --search
            p = run(ntlens, "dump", "build", "-q", "--etl", etl, "--search", tmp, "--module", "TESTDRV.SYS",
                    "--module", "ntoskrnl.exe", "-o", alld)
            run(ntlens, "dump", "build", "-q", "--etl", etl, "--search", tmp, "--module", "nosuch.sys", "-o", alld, ok=1)
            run(ntlens, "dump", "build", "--all-kernel", "-o", alld, ok=2)
            # --base overrides the trace
            p = run(ntlens, "dump", "build", "-q", "--etl", etl, "--module", imgs["testdrv.sys"], "--module",
                    imgs["ntoskrnl.exe"], "-b", "testdrv.sys=0xfffff80500000000", "-o", fromtrace)
            show = json.loads(run(ntlens, "dump", "show", "--section", "modules", "--format", "json", fromtrace).stdout)
            check(show[0]["base"] == "0xfffff80500000000", "--base overrides the trace")

        # The real trace's kernel rundown places ntoskrnl.exe and hal.dll.
        real = os.path.join(os.environ.get("NTLENS_SHARED_DATA", ""), "etl", "ShutdownPerfDiagLogger.etl")
        if os.path.exists(real):
            rundown = json.loads(run(ntlens, "etl", "images", "--kernel", "--format", "json", real).stdout)
            where = {}
            for e in rundown:
                if e["kind"] in ("DCStart", "Load", "DCEnd"):
                    where[e["name"].split("\\")[-1].lower()] = int(str(e["base"]), 0)
            kb = where["ntoskrnl.exe"]
            realdmp = os.path.join(tmp, "real.dmp")
            p = run(ntlens, "dump", "build", "--format", "json", "--etl", real, "--module", imgs["ntoskrnl.exe"],
                    "--module", imgs["hal.dll"], "--module", imgs["testdrv.sys"], "-b", f"testdrv.sys={kb + 0x10000000:#x}",
                    "-o", realdmp)
            sites = json.loads(p.stdout)
            check(sum(s["result"] == "patched" for s in sites) == 4, f"patched against the real trace {sites}")
            check(all(addr(s["target"]) - kb in kexp.values() for s in sites if s["result"] == "patched"),
                  "targets at the real kernel base")
            show = json.loads(run(ntlens, "dump", "show", "--format", "json", realdmp).stdout)
            bases = {m["name"].split("\\")[-1].lower(): addr(m["base"]) for m in show["modules"]}
            check(bases["ntoskrnl.exe"] == kb and bases["hal.dll"] == where["hal.dll"],
                  f"real trace bases {bases} vs {where.get('hal.dll')}")
        else:
            print("skipping the real-trace check:", real, "missing")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    sys.exit(main())
