#!/usr/bin/env python3
"""`ntlens profile --etl` on a real trace against profile_ref.py.

Hits per module and per process must equal the reference's exactly, every
SampledProfile event must be counted once, and the samples that get a stack
from StackWalk events must be the reference's. Then the CLI's own
rules: CSV holds one table, --pid filters, a bad --bucket-size is a usage
error, functions of a zoomed module add up to its hits."""
import json
import os
import subprocess
import sys

NTLENS = os.environ["NTLENS"]
TRACE = os.path.join(os.environ["NTLENS_SHARED_DATA"], "etl", "net.4.5.2.x64.etl")
HERE = os.path.dirname(os.path.abspath(__file__))
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL: " + what)


def ntlens(*args, code=0):
    r = subprocess.run([NTLENS, "profile", "--etl", TRACE] + list(args),
                       capture_output=True, text=True)
    check(r.returncode == code, "%s: exit %d, not %d: %s" % (args, r.returncode, code, r.stderr))
    return r


def main():
    ref = json.loads(subprocess.run([sys.executable, os.path.join(HERE, "profile_ref.py"), TRACE],
                                    capture_output=True, text=True, check=True).stdout)
    check(ref["samples"] == 79528, "reference counts %d SampledProfile events" % ref["samples"])

    mods = json.loads(ntlens("-f", "json", "--report", "modules").stdout)
    got = {}
    for m in mods:
        key = "%s|%s|%s" % ("" if m["pid"] is None else m["pid"], m["name"],
                            "" if m["base"] is None else hex(int(m["base"], 16)))
        got[key] = got.get(key, 0) + m["hits"]
    check(sum(got.values()) == ref["samples"], "module hits add up to %d" % sum(got.values()))
    for key in sorted(set(got) | set(ref["modules"])):
        check(got.get(key) == ref["modules"].get(key),
              "module %s: ntlens %s, reference %s" % (key, got.get(key), ref["modules"].get(key)))

    procs = json.loads(ntlens("-f", "json", "--report", "processes").stdout)
    got = {("" if p["pid"] is None else str(p["pid"])): p["hits"] for p in procs}
    check(got == ref["processes"], "processes: %s != %s" % (got, ref["processes"]))
    for p in procs:
        if p["pid"] is not None and str(p["pid"]) in ref["names"]:
            check(p["name"] == ref["names"][str(p["pid"])], "name of %s" % p["pid"])

    top = max((k for k in ref["processes"] if k), key=lambda k: ref["processes"][k])
    only = json.loads(ntlens("-f", "json", "--report", "processes", "--pid", top).stdout)
    check([str(p["pid"]) for p in only] == [top], "--pid %s keeps only it: %s" % (top, only))

    funcs = json.loads(ntlens("-f", "json", "--report", "functions",
                              "--zoom", "ntoskrnl.exe").stdout)
    kernel = [m["hits"] for m in mods if m["name"] == "ntoskrnl.exe"]
    check(sum(f["hits"] for f in funcs) == sum(kernel), "ntoskrnl functions add up to its hits")
    check(all(f["function"].startswith("ntoskrnl.exe+0x") for f in funcs),
          "without --modules, functions are offsets")

    # --start/--end cut the samples in two halves that add up.
    def hits(*args):
        return sum(m["hits"] for m in json.loads(ntlens("-f", "json", "--report", "modules",
                                                         *args).stdout))
    first, second = hits("--end", "5"), hits("--start", "5")
    check(first > 0 and second > 0 and first + second == ref["samples"],
          "--end 5 and --start 5: %d + %d samples" % (first, second))
    check(hits("--start", "1", "--end", "2") < first, "--start 1 --end 2 is part of --end 5")
    ntlens("--start", "3", "--end", "2", code=2)

    folded = ntlens("-f", "folded").stdout.splitlines()
    total = sum(int(line.rpartition(" ")[2]) for line in folded)
    check(total == ref["samples"], "folded stacks count %d samples" % total)
    stacked = sum(int(line.rpartition(" ")[2]) for line in folded
                  if line.rpartition(" ")[0].count(";") >= 2)
    check(stacked == ref["with_stack"] and stacked > 0,
          "samples with a StackWalk stack: ntlens %d, reference %d" % (stacked, ref["with_stack"]))
    ntlens("-f", "folded", "--report", "modules", code=2)

    csv = ntlens("-f", "csv").stdout.splitlines()
    check(csv[0].startswith("pid,name,base,size,hits,percent"), "csv header: " + csv[0])
    ntlens("-f", "csv", "--report", "all", code=2)
    r = ntlens("--bucket-size", "6", code=2)
    check("power of two" in r.stderr, "bucket-size error: " + r.stderr)
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
