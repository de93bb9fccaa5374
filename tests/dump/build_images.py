#!/usr/bin/env python3
"""Builds the test kernel images with clang-14 and lld-link-14:

  ntoskrnl.exe  exports the routines the driver imports (one alias, one
                ordinal-only export) and has a DIR64 base relocation
  hal.dll       one routine of its own and a forwarder to ntoskrnl
  x86dll.dll    a PE32 DLL: exports, HIGHLOW relocations, a 32-bit load config
                and DVRT
  testdrv.sys   a driver whose import calls are retpoline-style sites listed
                in a dynamic value relocation table (see testdrv.s), with a
                load config pointing at it and a CodeView record

Linking testdrv.sys with hal.lib before ntoskrnl.lib makes it import
KeStallExecutionProcessor from HAL.dll, as real drivers do. After linking,
fill_iat_index.py writes each DVRT entry's IATIndex.

    build_images.py OUTDIR
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = ["clang-14", "lld-link-14"]


def missing_tools():
    return [t for t in TOOLS if not shutil.which(t)]


def run(*cmd, cwd):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def build(out):
    os.makedirs(out, exist_ok=True)
    for name in ("ntoskrnl", "hal", "testdrv"):
        run("clang-14", "--target=x86_64-pc-windows-msvc", "-c", os.path.join(HERE, name + ".s"),
            "-o", name + ".obj", cwd=out)
    common = ["/subsystem:native", "/nodefaultlib", "/debug"]
    run("lld-link-14", "/dll", "/entry:KiSystemStartup", "/base:0x140000000",
        "/def:" + os.path.join(HERE, "ntoskrnl.def"), "/out:ntoskrnl.exe", "/pdb:ntoskrnl.pdb",
        "ntoskrnl.obj", *common, cwd=out)
    run("lld-link-14", "/dll", "/entry:HalEntry", "/base:0x180000000",
        "/def:" + os.path.join(HERE, "hal.def"), "/out:hal.dll", "/pdb:hal.pdb", "hal.obj",
        *common, cwd=out)
    run("lld-link-14", "/driver", "/entry:DriverEntry", "/base:0x140000000", "/out:testdrv.sys",
        "/pdb:testdrv.pdb", "testdrv.obj", "hal.lib", "ntoskrnl.lib", *common, cwd=out)
    run(sys.executable, os.path.join(HERE, "fill_iat_index.py"), "testdrv.sys", cwd=out)
    run("clang-14", "--target=i686-pc-windows-msvc", "-c", os.path.join(HERE, "x86dll.s"),
        "-o", "x86dll.obj", cwd=out)
    run("lld-link-14", "/dll", "/machine:x86", "/safeseh:no", "/entry:X86Entry", "/base:0x10000000",
        "/def:" + os.path.join(HERE, "x86dll.def"), "/out:x86dll.dll", "/pdb:x86dll.pdb",
        "x86dll.obj", *common, cwd=out)
    return {n: os.path.join(out, n) for n in ("ntoskrnl.exe", "hal.dll", "testdrv.sys", "x86dll.dll")}


if __name__ == "__main__":
    if missing_tools():
        sys.exit("missing: " + " ".join(missing_tools()))
    print(build(sys.argv[1]))
