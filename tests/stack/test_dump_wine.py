#!/usr/bin/python3
"""stack_target.exe (mingw-w64) runs under Wine, records its threads' return
addresses with RtlCaptureStackBackTrace and writes a minidump of itself with
dbghelp; check_dump_frames walks the dump with lib/stack and must find them.
The modules folder holds the program, its DLL and Wine's PE DLLs (the dump
holds stacks only, not code or unwind data); a second folder holds another
build under the program's name, which must not be used.

    test_dump_wine.py STACK_TARGET_EXE STACK_DLL CHECK_DUMP_FRAMES"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

WINE_DLLS = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows"


def folder(path, files):
    os.mkdir(path)
    for name, src in files.items():
        os.symlink(os.path.abspath(src), os.path.join(path, name))
    return path


def main():
    exe, dll, check = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(exe, tmp)
        shutil.copy(dll, tmp)
        dump, frames = os.path.join(tmp, "t.dmp"), os.path.join(tmp, "t.frames")
        env = dict(os.environ, WINEDEBUG="-all")
        run = subprocess.run(["wine", os.path.join(tmp, os.path.basename(exe)), dump, frames],
                             env=env, timeout=150, capture_output=True, text=True)
        if run.returncode != 0 or not os.path.exists(dump):
            print("stack_target.exe under Wine failed:", run.returncode, run.stderr)
            return 1
        wine = {os.path.basename(p): p for p in glob.glob(WINE_DLLS + "/*.dll")}
        mods = folder(os.path.join(tmp, "mods"),
                      dict(wine, **{"stack_target.exe": exe, "stack_dll.dll": dll}))
        wrong = folder(os.path.join(tmp, "wrong"),
                       dict(wine, **{"stack_target.exe": dll, "stack_dll.dll": dll}))
        return subprocess.run([check, dump, frames, mods, wrong], timeout=60).returncode


if __name__ == "__main__":
    sys.exit(main())
