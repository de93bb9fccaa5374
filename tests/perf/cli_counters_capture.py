#!/usr/bin/python3
"""Script tests of `ntlens counters` and `ntlens capture` on the shared
option parser and output writer: every --format of every counters view
(--paths included), typeperf's -q and -qx, --std-titles on Samba data
imported without its title database, the parser's one wording for every
mistake, and capture's report, -q, and Ctrl-C / SIGTERM keeping the
snapshots taken so far in a whole file."""
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
DATA = os.path.join(os.environ["NTLENS_SHARED_DATA"], "hkpd")
ENV = dict(os.environ, TZ="UTC")




def run(*args, ok=0):
    p = subprocess.run([NTLENS] + list(args), capture_output=True, text=True, env=ENV,
                       timeout=120, stdin=subprocess.DEVNULL)
    check(p.returncode == ok, f"exit {p.returncode} (wanted {ok}) for {args}: {p.stderr.strip()}")
    return p


def d(name):
    return os.path.join(DATA, name)


def usage_error(cmd, args, names):
    """A mistake: exit 2, nothing on stdout, one line naming the option, then
    the pointer to --help."""
    p = run(cmd, *args, ok=2)
    lines = p.stderr.splitlines()
    check(len(lines) == 2 and lines[0].startswith(f"ntlens {cmd}: ") and names in lines[0]
          and lines[1] == f"Try 'ntlens {cmd} --help'." and not p.stdout,
          f"{cmd} {args}: one error line naming {names!r}: {p.stderr!r}")


def records(p, fmt):
    """The records of one output in fmt, as dicts (table: header words only)."""
    if fmt == "json":
        return json.loads(p.stdout)
    if fmt == "jsonl":
        return [json.loads(line) for line in p.stdout.splitlines()]
    rows = list(csv.reader(io.StringIO(p.stdout), delimiter="\t" if fmt == "tsv" else ","))
    check(all(h == h.lower() and " " not in h for h in rows[0]), f"{fmt} snake_case header {rows[0]}")
    return [dict(zip(rows[0], r)) for r in rows[1:]]


tmp = tempfile.mkdtemp(prefix="ntlens-cc-")
cap = os.path.join(tmp, "samba.ntlcap")
bare = os.path.join(tmp, "samba-bare.ntlcap")
run("capture", "--import", d("samba_Global.bin"), d("samba_230.bin"),
    "--titles", d("samba_Counter_009.bin"), "--help-titles", d("samba_Explain_009.bin"),
    "-o", cap)
# Samba's answers without its title database: its indices are its own
p = run("capture", "--import", d("samba_Global.bin"), "-o", bare)
check(p.stderr == f"wrote {bare}: 1 snapshot, {os.path.getsize(bare)} bytes\n",
      "--import says what it wrote: " + p.stderr)

# --- counters: every view in every format, the same records ---
views = {
    "objects": ([], ["index", "object", "detail", "instances", "counters"], 4),
    "counters": (["Processor"], ["object", "index", "counter", "type", "size", "detail", "scale"], 4),
    "instances": (["--instances", "Processor"],
                  ["object", "number", "instance", "path_name", "parent_object",
                   "parent_instance", "unique_id"], 3),
    "paths": (["--paths", "Processor"], ["path", "object", "instance", "counter", "index", "type"], 4),
    "instance paths": (["--paths", "--instances", "Processor"],
                       ["path", "object", "instance", "counter", "index", "type"], 12),
}
for view, (args, keys, n) in views.items():
    for fmt in ("json", "jsonl", "csv", "tsv"):
        p = run("counters", "-S", cap, *args, "--format", fmt)
        recs = records(p, fmt)
        check(len(recs) == n and all(list(r) == keys for r in recs),
              f"{view} as {fmt}: {n} records keyed {keys}: {recs[:2]}")
p = run("counters", "-S", cap, "--paths", "--format", "json", "22", "12")
recs = json.loads(p.stdout)
check(recs[0] == {"path": "\\Processor(*)\\% User CPU Utilization", "object": "Processor",
                  "instance": "*", "counter": "% User CPU Utilization", "index": 14,
                  "type": "PERF_100NSEC_TIMER"}, f"a path record: {recs[0]}")
check(recs[-1]["path"] == "\\Processes\\Process Count" and recs[-1]["instance"] is None,
      f"an object without instances: {recs[-1]}")
p = run("counters", "-S", cap, "-S", cap, "--paths", "--format", "csv", "22")
check(p.stdout.splitlines() == ["host,path,object,instance,counter,index,type"] +
      ["HKPDTEST,\\\\HKPDTEST\\Processes\\Process Count,Processes,,Process Count,24,"
       "PERF_COUNTER_RAWCOUNT"] * 2, "two sources' paths as CSV: " + p.stdout)
p = run("counters", "-S", cap, "--format", "table")
check(p.stdout.splitlines()[0].split() == ["Index", "Object", "Detail", "Instances", "Counters"],
      "table headings: " + p.stdout)

# typeperf's spellings: -q is --paths, -qx is --paths --instances
for alias, long in ((["-q"], ["--paths"]), (["-qx"], ["--paths", "--instances"])):
    a = run("counters", "-S", cap, *alias, "Processor").stdout
    b = run("counters", "-S", cap, *long, "Processor").stdout
    check(a == b and a.startswith("\\Processor("), f"{alias} is {long}: {a!r}")
check(len(run("counters", "-S", cap, "-qx").stdout.splitlines()) == 4 + 12 + 1 + 3,
      "-qx lists every object's instance paths")

# --- --std-titles: names a source's own database lacks ---
p = run("counters", "-S", bare, "--format", "json")
check([o["object"] for o in p.stdout and json.loads(p.stdout)] == ["2", "12", "22", "26"],
      "without a title database, Samba's objects by index: " + p.stdout)
check("no title database" in p.stderr and "--std-titles" in p.stderr, p.stderr)
p = run("counters", "-S", bare, "-q", "12")
check(p.stdout.splitlines()[0] == "\\12(*)\\14", "paths by index: " + p.stdout)
# Windows' standard table names Samba's Processor (12) after another counter:
# what --std-titles asks for, and why it is not the default
p = run("counters", "-S", bare, "--std-titles", "--format", "json")
names = [o["object"] for o in json.loads(p.stdout)]
check(names == ["System", "File Write Operations/sec", "22", "Committed Bytes"],
      f"--std-titles: Windows' standard names: {names}")
# the source's own names win, with or without the flag
for extra in ([], ["--std-titles"]):
    p = run("counters", "-S", cap, "--format", "json", *extra)
    check([o["object"] for o in json.loads(p.stdout)] ==
          ["Memory", "Processor", "Processes", "Logical Disk"], f"own names {extra}")

# --- counters: mistakes, one wording each ---
usage_error("counters", ["-x"], "'-x'")                     # -x is --all elsewhere
usage_error("counters", ["--frmat", "json"], "'--frmat'")
usage_error("counters", ["--format"], "'--format'")
usage_error("counters", ["--format", "xml"], "'--format'")
usage_error("counters", ["--lang", "zz"], "'--lang'")
usage_error("counters", ["--detail", "godlike"], "'--detail'")
usage_error("counters", ["--detail"], "'--detail'")
p = run("counters", "--help")
check(p.stdout.startswith("usage: ntlens counters") and "--std-titles" in p.stdout
      and "(also -q)" in p.stdout and not p.stderr, "counters --help")
p = run("counters", "-S", cap, "--paths", "NoSuchObject", ok=1)
check("no object matches" in p.stderr, p.stderr)

# --- capture: the report, -q, and its options ---
out = os.path.join(tmp, "copy.ntlcap")
p = run("capture", "-S", cap, "-o", out)
check(p.stderr == f"wrote {out}: 2 snapshots, {os.path.getsize(out)} bytes\n",
      "from a capture source without -n: all its snapshots, reported: " + p.stderr)
p = run("capture", "-S", cap, "-n", "1", "--output", out, "--quiet")
check(p.stderr == "" and "1 snapshot" in run("capture", "-S", out, "-o", out + "2").stderr,
      "-q: no report; -n 1 took one: " + p.stderr)
usage_error("capture", ["-n", "x", "-o", out], "'-n'")
usage_error("capture", ["-n", "-o", out], "'-n'")
usage_error("capture", ["-i", "-1", "-o", out], "'-i'")
usage_error("capture", ["-o"], "'-o'")
usage_error("capture", [], "'-o'")
usage_error("capture", ["--bogus", "-o", out], "'--bogus'")
usage_error("capture", ["-o", out, "stray"], "'stray'")
usage_error("capture", ["--import", "-o", out], "--import")
usage_error("capture", ["--import", "-n", "2", "-o", out, d("samba_Global.bin")], "'-n'")
usage_error("capture", ["--titles", d("samba_Counter_009.bin"), "-o", out], "--titles")
usage_error("capture", ["--std-titles", "-o", out], "'--std-titles'")
p = run("capture", "--help")
check(p.stdout.startswith("usage: ntlens capture") and "-q, --quiet" in p.stdout, "capture --help")


# --- capture: Ctrl-C and SIGTERM keep what was taken ---
def interrupted(sig):
    path = os.path.join(tmp, f"live-{sig.name}.ntlcap")
    c = subprocess.Popen([NTLENS, "capture", "-i", "1", "-o", path], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=ENV, stdin=subprocess.DEVNULL)
    time.sleep(2.5)
    check(not os.path.exists(path), f"{sig.name}: nothing written while recording")
    c.send_signal(sig)
    try:
        _, err = c.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        c.kill()
        _, err = c.communicate()
    check(c.returncode == 0, f"{sig.name}: exit {c.returncode}: {err.strip()}")
    check(os.path.exists(path) and not os.path.exists(path + ".tmp"),
          f"{sig.name}: the file is there, no temporary left")
    if not os.path.exists(path):
        return
    # -i 1 for 2.5 s: snapshots at 0, 1 and 2 s (fewer on a loaded machine)
    m = re.fullmatch(r"wrote (.*): (\d+) snapshots?, (\d+) bytes \(interrupted\)\n", err)
    check(m and m[1] == path and 1 <= int(m[2]) <= 3 and int(m[3]) == os.path.getsize(path),
          f"{sig.name}: the report names the file, count and size: {err!r}")
    if m:
        copy = run("capture", "-S", path, "-o", path + ".copy").stderr
        check(f": {m[2]} snapshot" in copy, f"{sig.name}: the file holds {m[2]}: {copy!r}")
    p = run("ps", "-S", path, "--format", "json")
    check(any(r["pid"] == 1 for r in json.loads(p.stdout or "[]")), f"{sig.name}: ps reads it")
    p = run("counters", "-S", path, "--format", "json")
    check(any(o["object"] == "Process" for o in json.loads(p.stdout or "[]")),
          f"{sig.name}: counters reads it")


p = subprocess.run([NTLENS, "counters", "--format", "json"], capture_output=True, text=True,
                   env=ENV, timeout=120)
if p.returncode == 0 and '"Process"' in p.stdout:
    interrupted(signal.SIGINT)
    interrupted(signal.SIGTERM)
else:
    print("local source unavailable; interruption checks skipped", file=sys.stderr)

finish()
