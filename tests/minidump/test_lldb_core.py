#!/usr/bin/env python3
"""lldb-14 writes a minidump of a live process (`process save-core
--plugin-name=minidump --style=stack`; lldb-14 cannot write --style=full
minidumps); ntlens reads it: the module list holds the program at the base
lldb reports, the thread list its thread, and the stack memory at the
marker's address holds the marker's bytes.

    test_lldb_core.py NTLENS MD_TARGET
Exit 77 (skip) when lldb-14 is missing or cannot launch a process here.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARKER = b"ntlens-minidump-marker:0123456789abcdef"


def main():
    ntlens, target = sys.argv[1], os.path.abspath(sys.argv[2])
    if not shutil.which("lldb-14"):
        print("lldb-14 missing")
        return 77
    tmp = tempfile.mkdtemp(prefix="ntlens-lldb-")
    failures = []
    try:
        dump = os.path.join(tmp, "lldb.dmp")
        out = subprocess.run(
            ["lldb-14", "-b", "-o", "breakpoint set -n stop_here", "-o", "process launch",
             "-o", "image list -h " + os.path.basename(target),
             "-o", "expression -f x -- (unsigned long long)p",
             "-o", "process save-core --plugin-name=minidump --style=stack " + dump, target],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120).stdout
        if "stopped" not in out or not os.path.exists(dump):
            print("lldb could not run and dump a process here:\n" + out)
            return 77
        base = int(re.search(r"\]\s+(0x[0-9a-f]+)", out.split("image list", 1)[1]).group(1), 16)
        marker = int(re.search(r"= (0x[0-9a-f]+)", out.split("expression", 1)[1]).group(1), 16)
        pid = int(re.search(r"Process (\d+) launched", out).group(1))

        show = json.loads(subprocess.run([ntlens, "dump", "show", "--format", "json", dump],
                                         stdout=subprocess.PIPE, check=True, text=True).stdout)
        mods = {m["name"]: int(m["base"], 16) for m in show["modules"]}
        if mods.get(target) != base:
            failures.append(f"module {target} at {base:#x}: {mods}")
        if not any(t["tid"] == pid for t in show["threads"]):
            failures.append(f"thread {pid} missing: {show['threads']}")
        if show["system"][0]["architecture"] != "AMD64":
            failures.append("architecture")
        p = subprocess.run([ntlens, "dump", "show", "--read", f"{marker:#x}:{len(MARKER)}", dump],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        got = bytes.fromhex("".join(re.findall(r"^\S+:\s+((?:[0-9a-f]{2} ?)+)", p.stdout, re.M))
                            .replace(" ", ""))
        if got != MARKER:
            failures.append(f"marker at {marker:#x}: {got!r} ({p.stderr})")
        # An address the dump does not hold is a clear failure.
        p = subprocess.run([ntlens, "dump", "show", "--read", "0x10:4", dump],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 1 or "0x10" not in p.stderr:
            failures.append(f"unmapped read: {p.returncode} {p.stderr}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
