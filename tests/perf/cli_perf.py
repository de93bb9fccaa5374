#!/usr/bin/python3
"""Script tests of `ntlens counters` and `capture` (`sample`: cli_sample.py): captures
imported from the real Samba answers in ../shared/data/hkpd, values worked
out by hand from those bytes, typeperf's CSV layout, error exits, and the
live local source (Linux /proc provider) when it is there."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
DATA = os.path.join(os.environ["NTLENS_SHARED_DATA"], "hkpd")
ENV = dict(os.environ, TZ="UTC")


def run(*args, ok=0):
    p = subprocess.run([NTLENS] + list(args), capture_output=True, text=True, env=ENV,
                       timeout=120)
    check(p.returncode == ok, f"exit {p.returncode} (wanted {ok}) for {args}: {p.stderr.strip()}")
    return p




def d(name):
    return os.path.join(DATA, name)


tmp = tempfile.mkdtemp(prefix="ntlens-perf-")
cap = os.path.join(tmp, "samba.ntlcap")

# --- capture --import from real answers ---
run("capture", "--import", d("samba_Global.bin"), d("samba_230.bin"),
    "--titles", d("samba_Counter_009.bin"), "--help-titles", d("samba_Explain_009.bin"),
    "--description", "Samba 4.17 test", "-o", cap)
with open(cap, "rb") as f:
    check(f.read(8) == b"NTLCAP\r\n", "capture magic")

# the truncated answer is refused, and named as such
p = run("capture", "--import", d("samba_Global_truncated_buf1240.bin"), "-o",
        os.path.join(tmp, "bad.ntlcap"), ok=1)
check("zero" in p.stderr and "offset 0x70" in p.stderr, "zero-filled answer reported: " + p.stderr)
check(not os.path.exists(os.path.join(tmp, "bad.ntlcap")), "no file written on failure")
p = run("capture", "--import", d("samba_2_truncated_buf512.bin"), "-o",
        os.path.join(tmp, "bad.ntlcap"), ok=1)
check("TotalByteLength" in p.stderr, "short answer reported: " + p.stderr)
p = run("capture", "--import", d("samba_Global.bin"), "--titles", d("samba_Global.bin"),
        "-o", os.path.join(tmp, "bad.ntlcap"), ok=1)
check("title database" in p.stderr, "a block is not a title database: " + p.stderr)

# --- counters ---
p = run("counters", "-S", cap, "--format", "json")
objs = json.loads(p.stdout)
check([o["index"] for o in objs] == [2, 12, 22, 26], f"object indices {objs}")
check([o["object"] for o in objs] == ["Memory", "Processor", "Processes", "Logical Disk"],
      "object names")
check([o["instances"] for o in objs] == [None, 3, None, 1], "instance counts")
check([o["counters"] for o in objs] == [4, 4, 1, 3], "counter counts")
check(all(o["detail"] == "novice" for o in objs), "detail levels")

p = run("counters", "-S", cap, "processor", "--explain", "--format", "json")
ctrs = json.loads(p.stdout)
check([c["index"] for c in ctrs] == [14, 16, 18, 20], "Processor counters")
check(ctrs[0]["type"] == "PERF_100NSEC_TIMER" and ctrs[2]["type"] == "0x40510500",
      "symbolic and unknown types")
check(ctrs[0]["size"] == 8 and ctrs[0]["scale"] == 0, "size and scale")
check(ctrs[0]["help"].startswith("% User CPU Utilization is"), "help text from Explain 009")

p = run("counters", "-S", cap, "26", "2", "--format", "csv")
lines = p.stdout.splitlines()
check(lines[0] == "object,index,counter,type,size,detail,scale", "CSV header " + lines[0])
check(len(lines) == 1 + 4 + 3, "Memory and Logical Disk counters by index")
check("Memory,4,Available Physical Kilobytes,PERF_COUNTER_RAWCOUNT,8,novice,-6" in lines,
      "a Samba DWORD counter with CounterSize 8")

p = run("counters", "-S", cap, "--instances", "--format", "json")
inst = json.loads(p.stdout)
check([(i["object"], i["instance"]) for i in inst] ==
      [("Processor", "cpu0"), ("Processor", "cpu1"), ("Processor", "_Total"),
       ("Logical Disk", "/")], f"instances {inst}")

p = run("counters", "-S", cap, "--paths", "Logical*")
check(p.stdout.splitlines() == ["\\Logical Disk(*)\\Megabytes Free",
                                "\\Logical Disk(*)\\Writes/sec", "\\Logical Disk(*)\\Reads/sec"],
      "typeperf -q paths: " + p.stdout)
p = run("counters", "-S", cap, "--paths", "--instances", "Processor")
check(len(p.stdout.splitlines()) == 12 and "\\Processor(_Total)\\% Idle CPU" in p.stdout,
      "typeperf -qx paths")
# several sources: a host column, \\\\HOST paths
p = run("counters", "-S", cap, "-S", cap, "--format", "json", "Processes")
rows = json.loads(p.stdout)
check([(r["host"], r["counter"]) for r in rows] == [("HKPDTEST", "Process Count")] * 2,
      f"two sources: {rows}")
p = run("counters", "-S", cap, "-S", cap, "--paths", "22")
check(p.stdout.splitlines() == ["\\\\HKPDTEST\\Processes\\Process Count"] * 2, p.stdout)
run("counters", "-S", cap, "NoSuchObject", ok=1)
run("counters", "-S", cap, "--detail", "godlike", ok=2)
run("counters", "-S", cap, "--lang", "xyz", ok=2)
run("counters", "--bogus", ok=2)
# a language the capture lacks: indices shown as numbers and a warning;
# with --std-titles Windows' standard names (index 2 is System there), the
# indices nobody names still numbers
p = run("counters", "-S", cap, "--lang", "007", "--format", "json")
names = [o["object"] for o in json.loads(p.stdout)]
check("no title database" in p.stderr and names == ["2", "12", "22", "26"],
      f"missing language: {names}")
p = run("counters", "-S", cap, "--lang", "007", "--std-titles", "--format", "json")
names = [o["object"] for o in json.loads(p.stdout)]
check("standard names" in p.stderr and names[0] == "System" and names[2] == "22",
      f"missing language, --std-titles: {names}")

junk = os.path.join(tmp, "junk.ntlcap")
with open(junk, "wb") as f:
    f.write(b"NTLCAP\r\n\x01\x00\x00\x00\x10\x00\x00\x00" + b"\xff" * 40)
p = run("counters", "-S", junk, ok=1)
check("capture record" in p.stderr and "offset" in p.stderr, "corrupt capture: " + p.stderr)

# --- capture from a capture: a faithful copy ---
copy = os.path.join(tmp, "copy.ntlcap")
run("capture", "-S", cap, "-n", "0", "-o", copy)
a = run("sample", "-S", cap, "\\Processor(*)\\*").stdout
b = run("sample", "-S", copy, "\\Processor(*)\\*").stdout
check(a == b and a, "a copied capture samples the same")
run("capture", "-o", copy, "-n", "x", ok=2)
run("capture", ok=2)
run("capture", "--import", "-o", copy, ok=2)

for c in ("counters", "sample", "capture"):
    p = run(c, "--help")
    check(p.stdout.startswith("usage: ntlens " + c), c + " --help")

# --- the live local source (Linux provider), when present ---
p = subprocess.run([NTLENS, "counters", "--format", "json"], capture_output=True, text=True,
                   env=ENV, timeout=120)
if p.returncode == 0 and '"Process"' in p.stdout:
    objs = {o["index"]: o for o in json.loads(p.stdout)}
    check(230 in objs and 232 in objs and objs[230]["object"] == "Process", "local objects")
    live = os.path.join(tmp, "live.ntlcap")
    run("capture", "-o", live, "-n", "2", "-i", "0.2")
    p = run("counters", "-S", live, "--instances", "Thread", "--format", "json")
    threads = json.loads(p.stdout)
    check(threads and all(t["parent_object"] == "Process" for t in threads),
          "threads resolve to their processes")
else:
    print("local source unavailable; live checks skipped", file=sys.stderr)

# a remote spec without a host is a usage error, before any password prompt
for spec in ("smb://", "smb://user@", "smb://DOM;user@"):
    for c in ("counters", "ps"):
        p = subprocess.run([NTLENS, c, "-S", spec], capture_output=True, text=True, env=ENV,
                           timeout=120, stdin=subprocess.DEVNULL)
        check(p.returncode == 2 and "no host" in p.stderr and "assword" not in p.stderr,
              f"{c} -S {spec}: {p.returncode} {p.stderr.strip()}")

finish()
