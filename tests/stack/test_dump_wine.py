#!/usr/bin/python3
"""`ntlens stacks DUMP --modules DIR` on a minidump Windows' own API wrote.

stack_target.exe (mingw-w64) runs under Wine, records its threads' return
addresses with RtlCaptureStackBackTrace (Wine's RtlVirtualUnwind: the peer)
and writes a minidump of itself with dbghelp's MiniDumpWriteDump. Each
recorded sequence must appear in the thread's walk, in order, found by
unwind data (cfi), right above a frame named after the function the thread
sits in. The dump holds stacks only, so the modules folder holds the
program, its DLL and Wine's PE DLLs. A second dump of the same moment that
also holds every module's image (added by the program, dump_images.c: Wine's
dbghelp writes images only with all of the process's memory) must give the
same frames with no modules folder: unwind data and export names come from
the images in the dump.

Then the bad inputs: a folder whose stack_target.exe is another build (it
must not be used: the program's callers are scanned for, marked scan, and a
walk ending in it says the file does not match); no --modules (notes say
where the unwind data is missing); the dump cut short.

Breakpad's minidump_stackwalk (the prebuilt binary in the npm package
`minidump`) is a second peer, a weak one: it has no unwind data for PE files
(its dump_syms reads ELF only), so it walks by scanning the stack and adds
or skips frames a scan cannot tell apart. Where it can be right it must
agree: each thread's context frame and its caller, and whole walks on the
threads whose stacks hold no stale return addresses.

    test_dump_wine.py NTLENS STACK_TARGET_EXE STACK_DLL BUILD_DIR"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

WINE_DLLS = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows"
BREAKPAD = ("minidump", "0.26.0", "sha512-1CJ6kQDd1UawXgmht3pHKzLPuZPb8xrZlgrN+H6/3zKWsUKapTSF2FE7"
            "g2Nji/NnVi+GOsVwM8sm2md6BjJUgg==", "bin/linux-x64/minidump_stackwalk")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from npm_pack import npm_package  # noqa: E402
failures = []
checks = [0]


def check(cond, what):
    checks[0] += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def folder(path, files):
    os.mkdir(path)
    for name, src in files.items():
        os.symlink(os.path.abspath(src), os.path.join(path, name))
    return path


def stacks(ntlens, dump, *args):
    """{tid: (frames, note)} from the JSON rows (one per frame; a thread
    without frames is one row with its note)."""
    run = subprocess.run([ntlens, "stacks", dump, "--format", "json", *args],
                         capture_output=True, text=True, timeout=60)
    check(run.returncode == 0, f"ntlens stacks {args}: exit {run.returncode}: {run.stderr}")
    threads = {}
    for row in json.loads(run.stdout or "[]"):
        frames, _ = threads.setdefault(row["tid"], ([], row["note"]))
        threads[row["tid"]] = (frames, row["note"])
        if row["depth"] is not None:
            frames.append(row)
    return threads


def recorded(path):
    """[(tid, function, [return addresses])]; Wine's capture runs past the
    outermost frame, so each list ends at its first 0."""
    out = []
    for line in open(path):
        tid, function, *addrs = line.split()
        seq = []
        for a in addrs:
            if int(a, 16) == 0:
                break
            seq.append(int(a, 16))
        out.append((int(tid), function, seq))
    return out


def show(tid, frames, note):
    print(f"thread {tid}: {note}")
    for f in frames:
        print(f"  {f['how']:13} {f['pc']} {f['module']}!{f['function']}+{f['offset']}")


def check_recorded(threads, rec):
    check(len(rec) == 5, f"5 recorded threads, got {len(rec)}")
    for tid, function, seq in rec:
        frames, note = threads.get(tid, ([], "missing"))
        pcs = [int(f["pc"], 16) for f in frames]
        at = next((i for i in range(1, len(pcs) - len(seq) + 1) if pcs[i:i + len(seq)] == seq), 0)
        if not at:
            show(tid, frames, note)
            print("  recorded:", " ".join(hex(a) for a in seq))
        check(at and len(seq) >= 2, f"thread {tid}: the recorded frames are in the walk")
        if at:
            check(frames[at - 1]["function"] == function and
                  frames[at - 1]["module"] == "stack_target.exe",
                  f"thread {tid}: sits in {function}")
            check(all(f["how"] == "cfi" for f in frames[at:at + len(seq)]),
                  f"thread {tid}: recorded frames found by unwind data")
    for tid, (frames, note) in threads.items():
        check(frames or note, f"thread {tid}: frames or a note")


def check_mismatch(threads):
    scanned = 0
    for tid, (frames, note) in threads.items():
        for k in range(1, len(frames)):
            if frames[k - 1]["module"] == "stack_target.exe":
                check(frames[k]["how"] == "scan", f"thread {tid}: frame {k} past another build is a scan")
                scanned += 1
        if frames and frames[-1]["module"] == "stack_target.exe":
            check("does not match" in note, f"thread {tid}: note says the file does not match: {note}")
    check(scanned >= 5, f"scanned frames past another build: {scanned}")


def breakpad_walks(build_dir, dump):
    """Breakpad's frames of each thread of dump (in the dump's order), as addresses."""
    name, version, integrity, tool = BREAKPAD
    stackwalk = os.path.join(npm_package(build_dir, name, version, integrity, tool), tool)
    run = subprocess.run([stackwalk, "-m", dump], capture_output=True, text=True, timeout=120)
    check(run.returncode == 0, f"minidump_stackwalk: exit {run.returncode}")
    bases, walks = {}, {}
    for line in run.stdout.splitlines():
        f = line.split("|")
        if f[0] == "Module" and len(f) > 5:
            bases[f[1].lower()] = int(f[5], 16)
        elif len(f) == 7 and f[0].isdigit():  # thread|frame|module|function|file|line|offset
            walks.setdefault(int(f[0]), []).append(bases.get(f[2].lower(), 0) + int(f[6], 16))
    return walks


def check_breakpad(threads, walks):
    whole = 0
    for i, (tid, (frames, _)) in enumerate(threads.items()):
        ours, theirs = [int(f["pc"], 16) for f in frames], walks.get(i, [])
        if len(theirs) >= 2:
            check(ours[:2] == theirs[:2], f"thread {tid}: Breakpad's first two frames are ours "
                  f"({[hex(a) for a in theirs[:2]]} vs {[hex(a) for a in ours[:2]]})")
        whole += len(ours) >= 3 and theirs[:len(ours)] == ours
    check(whole >= 2, f"Breakpad's walk starts with our whole walk on {whole} threads (2 at least)")


def main():
    ntlens, exe, dll, build_dir = sys.argv[1:5]
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(exe, tmp)
        shutil.copy(dll, tmp)
        dump, frames = os.path.join(tmp, "t.dmp"), os.path.join(tmp, "t.frames")
        env = dict(os.environ, WINEDEBUG="-all")
        full = os.path.join(tmp, "full.dmp")
        run = subprocess.run(["wine", os.path.join(tmp, os.path.basename(exe)), dump, frames, "0", full],
                             env=env, timeout=90, capture_output=True, text=True)
        if run.returncode != 0 or not os.path.exists(dump):
            print("stack_target.exe under Wine failed:", run.returncode, run.stderr)
            return 1
        wine = {os.path.basename(p): p for p in glob.glob(WINE_DLLS + "/*.dll")}
        mods = folder(os.path.join(tmp, "mods"),
                      dict(wine, **{"stack_target.exe": exe, "stack_dll.dll": dll}))
        wrong = folder(os.path.join(tmp, "wrong"),
                       dict(wine, **{"stack_target.exe": dll, "stack_dll.dll": dll}))

        walked = stacks(ntlens, dump, "--modules", mods)
        check_recorded(walked, recorded(frames))
        check_breakpad(walked, breakpad_walks(build_dir, dump))
        check_recorded(stacks(ntlens, full), recorded(frames))
        check_mismatch(stacks(ntlens, dump, "--modules", wrong))
        bare = stacks(ntlens, dump)
        check(any("give its folder with --modules" in note for _, note in bare.values()),
              "without --modules a note says where unwind data is missing")
        cut = os.path.join(tmp, "cut.dmp")
        with open(dump, "rb") as f, open(cut, "wb") as g:
            g.write(f.read()[:0x600])
        run = subprocess.run([ntlens, "stacks", cut, "--modules", mods], capture_output=True,
                             text=True, timeout=60)
        check(run.returncode in (0, 1) and "Traceback" not in run.stderr and run.returncode >= 0,
              f"a cut dump: a clean exit ({run.returncode}: {run.stderr.strip()})")
    print(f"{checks[0]} checks, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
