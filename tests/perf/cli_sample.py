#!/usr/bin/python3
"""Script tests of `ntlens sample` through the real binary: values worked
out by hand from the real Samba answers in ../shared/data/hkpd, typeperf's
CSV and TSV layouts and its option spellings (-si [[hh:]mm:]ss, -sc, -cf,
-o, -f CSV, -s), the writer's formats, every usage error's wording, and on
the live local source: a path from a CSV header read back, and Ctrl-C or
SIGTERM leaving the output whole."""
import csv
import io
import json
import os
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




def run(*args, ok=0, env=ENV):
    p = subprocess.run([NTLENS] + list(args), capture_output=True, text=True, env=env,
                       timeout=120, stdin=subprocess.DEVNULL)
    check(p.returncode == ok, f"exit {p.returncode} (wanted {ok}) for {args}: {p.stderr.strip()}")
    return p


def usage_error(args, names):
    """Exit 2, one error line naming `names`, then the pointer to --help."""
    p = run(*args, ok=2)
    lines = p.stderr.splitlines()
    check(len(lines) == 2 and lines[0].startswith("ntlens sample: ") and names in lines[0]
          and lines[1] == "Try 'ntlens sample --help'." and not p.stdout,
          f"usage error for {args}: {p.stderr!r}")
    return lines[0] if lines else ""


tmp = tempfile.mkdtemp(prefix="ntlens-sample-")
cap = os.path.join(tmp, "samba.ntlcap")
run("capture", "--import", os.path.join(DATA, "samba_Global.bin"),
    os.path.join(DATA, "samba_230.bin"), "--titles", os.path.join(DATA, "samba_Counter_009.bin"),
    "-o", cap)

# --- typeperf's layouts: values worked out by hand from the two answers ---
# cpu0 % User (PERF_100NSEC_TIMER): 100 * (21445 - 21358) / (71377 - 71281) = 90.625
# Logical Disk(/) Writes/sec (PERF_COUNTER_COUNTER, DWORD in 8 bytes):
#   (0x00b5a52a - 0x00b593fa) / ((765 - 764) / 100) = 440000
PATHS = ["\\Processor(cpu0)\\% User CPU Utilization", "\\Logical Disk(/)\\Writes/sec",
         "\\Memory\\Available Physical Kilobytes"]
want = ('"(PDH-CSV 4.0)","\\\\HKPDTEST\\Processor(cpu0)\\% User CPU Utilization",'
        '"\\\\HKPDTEST\\Logical Disk(/)\\Writes/sec",'
        '"\\\\HKPDTEST\\Memory\\Available Physical Kilobytes"\n'
        '"11/22/2026 02:09:56.000","90.625000","440000.000000","23667204.000000"\n')
p = run("sample", "-S", cap, *PATHS)
check(p.stdout == want, "typeperf CSV:\n" + p.stdout)
for spelling in (["-f", "CSV"], ["-f", "csv"], ["--format", "Csv"], ["--format=csv"]):
    p = run("sample", "-S", cap, *spelling, *PATHS)
    check(p.stdout == want, f"{spelling} is typeperf's CSV")
p = run("sample", "-S", cap, "-f", "TSV", *PATHS)
check(p.stdout == want.replace('","', '"\t"').replace("PDH-CSV", "PDH-TSV"),
      "typeperf TSV:\n" + p.stdout)
rows = list(csv.reader(io.StringIO(p.stdout), delimiter="\t"))
check(rows[0][0] == "(PDH-TSV 4.0)" and float(rows[1][1]) == 90.625, f"TSV reads back {rows}")
rows = list(csv.reader(io.StringIO(run("sample", "-S", cap, *PATHS).stdout)))
check(len(rows) == 2 and all(len(r) == 4 for r in rows) and float(rows[1][2]) == 440000,
      f"CSV reads back {rows}")

# raw counters need no priming: one row per snapshot; the count's spellings
p = run("sample", "-S", cap, "\\Processes\\Process Count")
check(p.stdout.splitlines()[1:] == ['"11/22/2026 02:09:55.000","120.000000"',
                                    '"11/22/2026 02:09:56.000","122.000000"'], p.stdout)
for spelling in (["-sc", "1"], ["-n", "1"], ["--count=1"], ["-n1"]):
    p = run("sample", "-S", cap, *spelling, "\\Processes\\Process Count")
    check(len(p.stdout.splitlines()) == 2, f"{spelling}: one row")
p = run("sample", "-S", cap, "--scale", "\\Memory\\Available Physical Kilobytes", "-sc", "1")
check('"23.671108"' in p.stdout, "--scale applies DefaultScale -6: " + p.stdout)

# --- the writer's formats: an ISO 8601 timestamp, one column per path ---
p = run("sample", "-S", cap, "--format", "json", "\\12(*)\\14", "\\26(/)\\30")
doc = json.loads(p.stdout)
check(isinstance(doc, list) and len(doc) == 1 and doc[0]["timestamp"] == "2026-11-22T02:09:56.000Z",
      f"JSON document with its timestamp: {doc}")
v = doc[0]
check(abs(v["\\\\HKPDTEST\\Processor(cpu1)\\% User CPU Utilization"] - 5500 / 96) < 1e-9,
      "cpu1: 100 * 55 / 96 by index")
check(v["\\\\HKPDTEST\\Logical Disk(/)\\Writes/sec"] == 440000, "Writes/sec by index")
check(len(v) == 1 + 4, "wildcard instances: three processors and the disk")
p = run("sample", "-S", cap, "-f", "jsonl", "\\Processes\\Process Count")
rows = [json.loads(line) for line in p.stdout.splitlines()]
check([(r["timestamp"], r["\\\\HKPDTEST\\Processes\\Process Count"]) for r in rows] ==
      [("2026-11-22T02:09:55.000Z", 120), ("2026-11-22T02:09:56.000Z", 122)], f"jsonl {rows}")
p = run("sample", "-S", cap, "-f", "jsonl", "--local-time", "\\Processes\\Process Count",
        env=dict(ENV, TZ="CET-1"))
check(json.loads(p.stdout.splitlines()[0])["timestamp"] == "2026-11-22T03:09:55.000+01:00",
      "--local-time: " + p.stdout)
p = run("sample", "-S", cap, "--format", "table", "\\Processes\\*")
lines = p.stdout.splitlines()
check(lines[0].split() == ["Timestamp", "\\\\HKPDTEST\\Processes\\Process", "Count"] and
      lines[2].split() == ["2026-11-22T02:09:56.000Z", "122.000000"], "table:\n" + p.stdout)
# several sources at once (typeperf's several machines); a \\MACHINE picks
# the -S source whose system name it is
p = run("sample", "-S", cap, "-S", cap, "\\Processes\\Process Count",
        "\\\\HKPDTEST\\Memory\\Total Physical Kilobytes")
lines = p.stdout.splitlines()
check(lines[0].count("HKPDTEST") == 4 and lines[2].endswith(
    '"122.000000","24684084.000000","122.000000","24684084.000000"'), "two sources: " + p.stdout)

# --- typeperf's -si [[hh:]mm:]ss (a capture is not paced, so any interval runs at once) ---
for si in ("0", "0.2", "5", "1:30", "00:00:05", "1:00:00", "24:00:00"):
    p = run("sample", "-S", cap, "-si", si, "-sc", "1", "\\Processes\\Process Count")
    check(len(p.stdout.splitlines()) == 2, f"-si {si}")
run("sample", "-S", cap, "--interval", "2:30", "-n", "1", "\\Processes\\Process Count")
run("sample", "-S", cap, "-i", "0:05", "-n", "1", "\\Processes\\Process Count")
for si in ("x", "1:60", "60:00:00:00", "24:00:01", "86401", "-1", "1:", ":5", "1::2", "5s"):
    usage_error(["sample", "-S", cap, "-si", si, "\\Memory\\*"], "'-si' needs SECONDS")
usage_error(["sample", "-S", cap, "--interval=1:99", "\\Memory\\*"], "'--interval' needs SECONDS")

# --- typeperf's -cf FILE: one path per line ---
cf = os.path.join(tmp, "counters.txt")
with open(cf, "wb") as f:
    f.write(("\ufeff" + PATHS[0] + "\r\n\r\n  " + PATHS[1] + "  \n\n" + PATHS[2]).encode())
p = run("sample", "-S", cap, "-cf", cf)
check(p.stdout == want, "-cf FILE (BOM, CR LF, blank lines, spaces):\n" + p.stdout)
p = run("sample", "-S", cap, "--counter-file", cf, "\\Processes\\Process Count", "-sc", "1")
check(p.stdout.splitlines()[0].split('","')[1] == "\\\\HKPDTEST\\Processes\\Process Count" and
      p.stdout.splitlines()[0].count("HKPDTEST") == 4, "operands first, then the file's paths")
with open(cf, "w") as f:
    f.write(PATHS[0] + "\n\nProcessor\n")
line = usage_error(["sample", "-S", cap, "-cf", cf], cf + ":3: bad counter path 'Processor'")
p = run("sample", "-S", cap, "-cf", os.path.join(tmp, "none.txt"), ok=1)
check("cannot open" in p.stderr and "none.txt" in p.stderr and "No such file" in p.stderr,
      "-cf a missing file: " + p.stderr)
with open(cf, "wb") as f:
    f.write("\\Memory\\*\n".encode("utf-16"))
p = run("sample", "-S", cap, "-cf", cf, ok=1)
check("UTF-16" in p.stderr, "-cf a UTF-16 file: " + p.stderr)

# --- typeperf's -o FILE ---
out = os.path.join(tmp, "out.csv")
p = run("sample", "-S", cap, "-o", out, *PATHS)
with open(out) as f:
    check(f.read() == want and not p.stdout, "-o FILE holds the rows, stdout nothing")
p = run("sample", "-S", cap, "--output", out, "-f", "json", *PATHS)
with open(out) as f:
    check(len(json.load(f)) == 1, "--output FILE as JSON")
p = run("sample", "-S", cap, "-o", os.path.join(tmp, "no", "dir.csv"), *PATHS, ok=1)
check("cannot open" in p.stderr and "No such file" in p.stderr, "-o into no folder: " + p.stderr)

# --- typeperf's -s HOST is -S \\HOST: the source named is the one opened ---
p = run("sample", "-s", "nohost.invalid", "-N", "--timeout", "2", "\\Memory\\*", ok=1)
check("nohost.invalid" in p.stderr and "unknown option" not in p.stderr, "-s HOST: " + p.stderr)

# --- errors ---
p = run("sample", "-S", cap, "\\\\OTHER\\Memory\\*", ok=1)
check("no source is that machine" in p.stderr, p.stderr)
usage_error(["sample", "-S", cap], "give at least one counter path")
usage_error(["sample", "-S", cap, "Processor"], "bad counter path 'Processor'")
usage_error(["sample", "-S", cap, "--frmat", "json", "\\Memory\\*"], "unknown option '--frmat'")
usage_error(["sample", "-S", cap, "-cf"], "option '-cf' needs FILE")
usage_error(["sample", "-S", cap, "\\Memory\\*", "-n"], "option '-n' needs N")
usage_error(["sample", "-S", cap, "-sc", "0", "\\Memory\\*"], "option '-sc' needs N")
usage_error(["sample", "-S", cap, "-f", "xml", "\\Memory\\*"],
            "option '-f' needs FORMAT, one of table, csv, tsv, json, jsonl")
usage_error(["sample", "-S", cap, "--lang", "xyz", "\\Memory\\*"], "option '--lang' needs ID")
usage_error(["sample", "-p", "secret", "\\Memory\\*"], "option '-p' is not accepted")
p = run("sample", "-S", cap, "\\Processor\\% Idle CPU", ok=1)
check("has instances" in p.stderr, p.stderr)
p = run("sample", "-S", cap, "\\Process(*)\\ID Process", ok=1)
check("no counter matches" in p.stderr, p.stderr)
p = run("sample", "-S", os.path.join(tmp, "missing.ntlcap"), "\\Memory\\*", ok=1)
check("cannot open" in p.stderr, p.stderr)
p = run("sample", "--help")
check(p.stdout.startswith("usage: ntlens sample") and "-si" in p.stdout and "-cf" in p.stdout
      and not p.stderr, "--help on stdout, with typeperf's spellings")

# an import without titles: names stay the source's own, so a Windows name
# does not pick another counter; --std-titles fills them in
bare = os.path.join(tmp, "bare.ntlcap")
run("capture", "--import", os.path.join(DATA, "samba_Global.bin"),
    os.path.join(DATA, "samba_230.bin"), "-o", bare)
p = run("sample", "-S", bare, "\\Memory\\*", ok=1)
check("no counter matches" in p.stderr and "--std-titles" in p.stderr, p.stderr)
p = run("sample", "-S", bare, "-sc", "1", "\\22\\*")
check(p.stdout.splitlines()[0].endswith('"\\\\HKPDTEST\\22\\24"'), "indices shown as numbers: "
      + p.stdout)
# Windows' name for 24 belongs to a Memory counter: what --std-titles asks for
p = run("sample", "-S", bare, "-sc", "1", "--std-titles", "\\22\\*")
check(p.stdout.splitlines()[0].endswith('"\\\\HKPDTEST\\22\\Available Bytes"'),
      "--std-titles names indices from Windows' table: " + p.stdout)

# --- the live local source (Linux provider), when present ---
live_ok = subprocess.run([NTLENS, "sample", "-si", "0", "-sc", "1", "\\Memory\\Available Bytes"],
                         capture_output=True, text=True, env=ENV, timeout=120).returncode == 0
if live_ok:
    live = os.path.join(tmp, "live.ntlcap")
    run("capture", "-o", live, "-n", "2", "-i", "0.2")
    doc = json.loads(run("sample", "-S", live, "--format", "json", "\\230(*)\\784",
                         "\\Process(*)\\1410").stdout)
    check(len(doc) == 2, "two rows from a two-snapshot local capture")
    pids = {int(v) for k, v in doc[0].items() if k.endswith("\\ID Process") and v is not None}
    check(1 in pids, "pid 1 is in the local Process object")
    # rates from the live source: % Processor Time is a percentage of all CPUs
    p = run("sample", "-si", "0.2", "-sc", "1", "--format", "jsonl",
            "\\Processor(_Total)\\% Processor Time")
    row = json.loads(p.stdout.splitlines()[0])
    val = [v for k, v in row.items() if k != "timestamp"][0]
    check(val is not None and -0.5 <= val <= 100.5, f"_Total % Processor Time {val}")
    # a path naming this machine, as the CSV header writes it, reads the
    # local source (typeperf does the same) instead of asking for a password
    p = run("sample", "-si", "0", "-sc", "1", "\\Memory\\Available Bytes")
    header = p.stdout.splitlines()[0].split('","')[1].rstrip('"')
    check(header.startswith("\\\\") and header.endswith("\\Memory\\Available Bytes"),
          "the header names the machine: " + header)
    p = run("sample", "-si", "0", "-sc", "1", header, env=dict(ENV, NTLENS_PASSWORD="x"))
    check(p.stdout.splitlines()[0].endswith(header + '"'), f"{header} reads the local source")
    upper = "\\\\" + header[2:].split("\\")[0].upper() + "\\Memory\\Available Bytes"
    p = run("sample", "-si", "0", "-sc", "1", upper)
    check(len(p.stdout.splitlines()) == 2, "the machine's name in capitals: " + upper)
    with open(cf, "w") as f:
        f.write(header + "\n")
    p = run("sample", "-si", "0", "-sc", "1", "-cf", cf)
    check(p.stdout.splitlines()[0].endswith(header + '"'), "the header's path through -cf")

    # -si in typeperf's form paces a live source: a second row after 1 s
    start = time.monotonic()
    p = run("sample", "-si", "0:00:01", "-sc", "2", "\\Memory\\Available Bytes")
    took = time.monotonic() - start
    check(len(p.stdout.splitlines()) == 3 and 0.95 <= took < 30, f"-si 0:00:01 took {took:.2f} s")

    # Ctrl-C or SIGTERM mid-run: exit 0, what was printed whole
    def interrupted(fmt, sig):
        p = subprocess.Popen([NTLENS, "sample", "-si", "0.2", "-f", fmt,
                              "\\Memory\\Available Bytes", "\\Processor(_Total)\\% Processor Time"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
        time.sleep(1.5)
        p.send_signal(sig)
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        check(p.returncode == 0 and not err, f"{fmt} after {sig!r}: exit {p.returncode} {err}")
        return out

    out = interrupted("json", signal.SIGINT)
    try:
        doc = json.loads(out)
    except ValueError:
        doc = []
    check(len(doc) >= 2 and all(len(r) == 3 for r in doc), "JSON closed on SIGINT: " + out[-200:])
    out = interrupted("csv", signal.SIGTERM)
    rows = list(csv.reader(io.StringIO(out)))
    check(out.endswith("\n") and len(rows) >= 3 and all(len(r) == 3 for r in rows),
          "CSV lines whole on SIGTERM: " + out[-200:])
    out = interrupted("jsonl", signal.SIGINT)
    check(out.endswith("\n") and len([json.loads(line) for line in out.splitlines()]) >= 2,
          "JSON lines whole on SIGINT")
else:
    print("local source unavailable; live checks skipped", file=sys.stderr)

finish()
