#!/usr/bin/env python3
"""`ntlens etl` commands against the shared traces and generated ones:
counts and image lists must match the independent reader (etl_ref.py);
`etl ipt` output must match unwrapping computed here; exit codes; formats;
and the decompressors against Samba's and wimlib's compressors.

    test_etl_cli.py GEN_TOOL DECOMPRESS_TOOL
"""
import ctypes
import ctypes.util
import csv as csv_module
import io
import json
import os
import random
import shutil
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import etl_ref  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
DATA = os.path.join(os.environ["NTLENS_SHARED_DATA"], "etl")
GEN, DECOMP = sys.argv[1], sys.argv[2]




def run(*args, expect=0):
    p = subprocess.run([NTLENS, *args], capture_output=True, text=True)
    check(p.returncode == expect, "%s exited %d, expected %d: %s" % (" ".join(args), p.returncode,
                                                                       expect, p.stderr.strip()))
    return p


def info(path):
    rows = json.loads(run("etl", "info", "--format", "json", path).stdout)
    check(isinstance(rows, list) and len(rows) == 1, "etl info --format json is one record")
    return rows[0]


def test_shared():
    for name in sorted(os.listdir(DATA)):
        if not name.endswith(".etl"):
            continue
        path = os.path.join(DATA, name)
        ref = etl_ref.read(path)
        got = info(path)
        check(got["logger_name"] == ref["logger"], name + " logger")
        check(got["buffers"] == ref["buffers"], name + " buffers")
        check(got["buffers_compressed"] == ref["compressed"], name + " compressed buffers")
        check(got["events"] == ref["events"], name + " events")
        for kind, n in ref["kinds"].items():
            check(got["events_" + kind] == n, "%s %s events: %d != %d" % (name, kind,
                                                                          got["events_" + kind], n))
        check(got["buffers_bad"] == 0, name + " bad buffers")
        imgs = json.loads(run("etl", "images", "--format", "json", path).stdout)
        check(len(imgs) == len(ref["images"]), "%s image count %d != %d" % (name, len(imgs),
                                                                            len(ref["images"])))
        for a, b in zip(imgs, ref["images"]):
            same = (a["kind"] == b["kind"] and int(a["base"], 16) == b["base"]
                    and a["size"] == b["size"] and a["pid"] == b["pid"]
                    and a["checksum"] == b["checksum"] and a["time_date_stamp"] == b["time_date_stamp"]
                    and a["name"] == b["name"])
            check(same, "%s image %s != %s" % (name, a, b))
            if not same:
                break
    # Known facts from the data README.
    diag = os.path.join(DATA, "ShutdownPerfDiagLogger.etl")
    got = info(diag)
    check(got["buffers"] == 49 and got["buffer_size"] == 65536 and got["cpus_seen"] == 2,
          "PerfDiag buffers/CPUs")
    check(got["compressed"] is False, "PerfDiag uncompressed")
    net = info(os.path.join(DATA, "net.4.5.2.x64.etl"))
    check(net["buffers"] == 360 and net["buffers_compressed"] == 359, "net buffers")
    check(net["compressed"] is True and net["compression"] == "xpress", "net compression")
    check(net["log_file_mode"] == "0x04010001", "net LogFileMode")
    rows = json.loads(run("etl", "info", "--buffers", "--format", "json",
                          os.path.join(DATA, "net.4.5.2.x64.etl")).stdout)
    check(len(rows) == 360 and sum(r["events"] for r in rows) == net["events"], "--buffers counts")
    check(rows[1]["offset"] == "0x200" and rows[1]["size"] == 15016 and rows[1]["saved_offset"] == 65456
          and rows[1]["cpu"] == 7 and rows[1]["compressed"] is True, "--buffers fields")
    kmap = run("etl", "images", "--kernel", "--map", diag).stdout.splitlines()
    check(any(line.startswith("0xfffff802424ab000 0xab6000 ") and line.endswith("ntoskrnl.exe")
              for line in kmap), "ntoskrnl in the kernel map")
    check(all(int(line.split()[0], 16) >= 0xffff800000000000 for line in kmap), "map is kernel only")
    check(len(kmap) == len(set(kmap)), "map lines unique")


def test_events():
    path = os.path.join(DATA, "net.4.5.2.x64.etl")
    lines = run("etl", "events", "--format", "jsonl", "--group", "Image", path).stdout.splitlines()
    evs = [json.loads(line) for line in lines]
    check(len(evs) > 0 and all(e["group"] == "Image" for e in evs), "--group Image")
    check(sum(e["opcode_name"] == "DCStart" for e in evs) > 0, "Image DCStart names")
    sorted_rows = json.loads(run("etl", "events", "--format", "json", "--sorted", path).stdout)
    ts = [r["clock"] for r in sorted_rows]
    check([r["timestamp"] for r in sorted_rows] == sorted(r["timestamp"] for r in sorted_rows),
          "--sorted: ISO times in order")
    check(len(ts) == 179474 and ts == sorted(ts), "--sorted order")
    guid = "b3e675d7-2554-4f18-830b-2762732560de"  # the trace's most common classic class
    prov = run("etl", "events", "--format", "csv", "--provider", guid.upper(), path).stdout.splitlines()
    check(len(prov) == 1 + 7885 and all(guid in line for line in prov[1:]), "--provider filter")
    pid = run("etl", "events", "--format", "jsonl", "--pid", "4", "-n", "50", path).stdout.splitlines()
    check(len(pid) == 50 and all(json.loads(line)["pid"] == 4 for line in pid), "--pid filter, -n")
    pid = run("etl", "events", "--format", "jsonl", "--pid", "4", "--count", "7", path).stdout.splitlines()
    check(len(pid) == 7, "--count")
    pid = run("etl", "events", "--format", "jsonl", "--limit", "3", path).stdout.splitlines()
    check(len(pid) == 3, "--limit, the old spelling of --count")
    hexed = run("etl", "events", "--hex", "-n", "2", os.path.join(DATA, "lxcore_kernel.etl")).stdout
    check("|..l.x.c.o.r.e._." in hexed or "l.x.c.o.r.e" in hexed, "--hex dump")
    # TraceLogging events carry provider traits (12) and their schema (11);
    # the CLR events of net.4.5.2 some 64-bit stacks (6) and related activity ids (1).
    tl = json.loads(run("etl", "events", "--format", "json", "--kind", "event",
                        os.path.join(DATA, "primitive-types.etl")).stdout)
    check(len(tl) == 5 and all(e["extended_types"] == "12,11" for e in tl), "TraceLogging extended data")
    ext = [r["extended_types"] for r in json.loads(run("etl", "events", "--format", "json", "--kind",
                                                         "event", path).stdout)]
    check(sum(e == "6" for e in ext) == 652 and sum(e == "1,6" for e in ext) == 3, "stack trace items")
    table = run("etl", "events", os.path.join(DATA, "primitive-types.etl")).stdout.splitlines()
    check(table[0].startswith("Timestamp") and len(table) == 8, "table output")
    check(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z ", table[1]), "ISO 8601 UTC times: " + table[1])
    check(table[1].index(" ") == table[0].index(" CPU"), "fixed-width streamed columns")


def test_generated(tmp):
    etl = os.path.join(tmp, "ipt.etl")
    subprocess.run([GEN, "ipt", etl], check=True)
    out = os.path.join(tmp, "out")
    p = run("etl", "ipt", "--format", "json", etl, "-o", out)
    summary = json.loads(p.stdout)
    check(len(summary) == 5, "five IPT events")
    check("holds no PSB" in p.stderr, "warning for the wrapped trace without PSB")
    raw = open(etl, "rb").read()

    def trace_bytes(i):
        # The n-th IPT payload: locate it through its sidecar's file offset.
        side = json.load(open(os.path.join(out, "ipt-%04d.json" % i)))
        return side

    psb = bytes([2, 0x82] * 8)

    def expected_unwrap(buf, pos):
        size = len(buf)
        k = buf.find(psb, pos)
        if k >= 0:
            return buf[k:] + buf[:pos]
        k = buf.find(psb, 0, pos)
        return buf[k:pos]

    # Rebuild the traces the generator made (same recipe as gen_tool.c).
    def fill(n, seed):
        b = bytearray(n)
        for i in range(n):
            seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
            b[i] = 0x10 + (seed >> 24) % 0x70
        return b
    t = [fill(8192, i + 1) for i in range(5)]
    t[0][0:16] = psb
    t[1][1500:1516] = psb
    t[1][3000:3016] = psb
    t[2][200:216] = psb
    t[4][6000:6016] = psb
    want = [bytes(t[0][:300]), expected_unwrap(bytes(t[1][:4096]), 1000),
            expected_unwrap(bytes(t[2][:4096]), 3500), bytes(t[3][:4096]),
            expected_unwrap(bytes(t[4][:8192]), 7000)]
    sizes = [300, 4096, 4096, 4096, 8192]
    positions = [300, 1000, 3500, 10, 7000]
    for i in range(5):
        got = open(os.path.join(out, "ipt-%04d.pt" % (i + 1)), "rb").read()
        check(got == want[i], "trace %d bytes (%d vs %d)" % (i + 1, len(got), len(want[i])))
        side = trace_bytes(i + 1)
        check(side["TraceSize"] == sizes[i] and side["TracePosition"] == positions[i],
              "sidecar %d size/position" % (i + 1))
        check(side["wrapped"] == (i > 0), "sidecar %d wrapped" % (i + 1))
        check(side["unwrapped"] == (i in (1, 2, 4)), "sidecar %d unwrapped" % (i + 1))
        check(side["IptOptionFields"]["TraceCodeMode"] == 2 and side["code_mode"] == "kernel",
              "sidecar %d code mode" % (i + 1))
        check(side["IptOptionFields"]["MTCFreq"] == 3 and side["IptOptionFields"]["TimeMode"] == 1,
              "sidecar %d option fields" % (i + 1))
        check(side["IptOptionFields"]["BufferSize"] == (1 if i == 4 else 0), "sidecar %d buffer" % (i + 1))
        check(side["written_bytes"] == len(want[i]), "sidecar %d written" % (i + 1))
        check(side["event_kind"] == ("event" if i in (1, 4) else "classic"), "sidecar %d kind" % (i + 1))
    check(json.load(open(os.path.join(out, "ipt-0002.json")))["psb_offset"] == 1500, "psb offset")
    check(summary[2]["pid"] == 1234 and summary[2]["tid"] == 102, "summary pid/tid")
    # --hook reads a kernel event with that hook id as one more trace.
    out3 = os.path.join(tmp, "hook")
    rows = json.loads(run("etl", "ipt", "--hook", "0x1f20", "--format", "json", etl, "-o", out3).stdout)
    check(len(rows) == 6 and rows[5]["pid"] == 77 and rows[5]["tid"] == 78 and rows[5]["trace_size"] == 64,
          "--hook event")
    check(open(os.path.join(out3, "ipt-0006.pt"), "rb").read() == bytes(t[0][:64]), "--hook trace bytes")
    check(json.load(open(os.path.join(out3, "ipt-0006.json")))["hook_id"] == "0x1f20", "--hook sidecar")
    # --raw keeps wrapped traces as recorded.
    out2 = os.path.join(tmp, "raw")
    run("etl", "ipt", "--raw", etl, "-o", out2)
    check(open(os.path.join(out2, "ipt-0002.pt"), "rb").read() == bytes(t[1][:4096]), "--raw")
    check(raw.count(psb) >= 5, "generated file holds the PSBs")

    imgs = os.path.join(tmp, "images.etl")
    subprocess.run([GEN, "images", imgs], check=True)
    rows = json.loads(run("etl", "images", "--format", "json", imgs).stdout)
    check([r["kind"] for r in rows] == ["DCStart", "DCStart", "Load", "Load", "Unload", "DCEnd"],
          "generated image kinds")
    check(rows[3]["base"] == "0x0000000077100000" and rows[3]["kernel"] is False, "32-bit image")
    kmap = run("etl", "images", "--map", "--kernel", imgs).stdout
    check(kmap == "0xfffff80312400000 0x1046000 \\SystemRoot\\system32\\ntoskrnl.exe\n"
                  "0xfffff80313000000 0x9f000 \\SystemRoot\\System32\\drivers\\tcpip.sys\n", "kernel map")
    umap = run("etl", "images", "--map", "--pid", "4242", imgs).stdout.splitlines()
    check(len(umap) == 2 and umap[0].endswith("Program Files\\App\\app.exe"), "pid map")
    csv = run("etl", "images", "--format", "csv", imgs).stdout.splitlines()
    check(csv[0].startswith("kind,timestamp,pid,base,size") and len(csv) == 7, "csv images")
    mapj = json.loads(run("etl", "images", "--map", "--kernel", "--format", "json", imgs).stdout)
    check(mapj == [{"base": "0xfffff80312400000", "size": "0x1046000",
                    "name": "\\SystemRoot\\system32\\ntoskrnl.exe"},
                   {"base": "0xfffff80313000000", "size": "0x9f000",
                    "name": "\\SystemRoot\\System32\\drivers\\tcpip.sys"}], "map as JSON records: %s" % mapj)

    bad = os.path.join(tmp, "corrupt.etl")
    subprocess.run([GEN, "corrupt", bad], check=True)
    p = run("etl", "events", bad, expect=1)
    check("offset 0x1048" in p.stderr and "--keep-going" in p.stderr, "error names the offset")
    p = run("etl", "events", "--keep-going", "--format", "jsonl", bad)
    # The header event and the third buffer's; the second buffer's only event is bad.
    check(len(p.stdout.splitlines()) == 2 and "skipping" in p.stderr, "--keep-going continues")
    got = json.loads(run("etl", "info", "--format", "json", "--keep-going", bad).stdout)[0]
    check(got["buffers_bad"] == 1 and got["events"] == 2, "info counts a bad buffer")
    rows = json.loads(run("etl", "info", "--buffers", "--keep-going", "--format", "json", bad).stdout)
    check([(r["index"], r["events"], r["status"]) for r in rows] == [(0, 1, "ok"), (1, 0, "bad"), (2, 1, "ok")],
          "info --buffers marks the bad buffer")


def test_real_ring(tmp):
    """Real Intel PT recordings put into 16 and 32 KiB ETW ring buffers: `etl ipt`
    must give back the recording from the first whole PSB in the ring on."""
    root = os.path.join(os.environ["NTLENS_SHARED_DATA"], "ipt", "real")
    psb = bytes([2, 0x82] * 8)
    for name, code in (("kafl-foo", 2), ("kafl-avscript32", 3), ("kafl-unzip", 2)):
        trace = open(os.path.join(root, name, "trace.pt"), "rb").read()
        size = 4096 << code
        etl = os.path.join(tmp, name + ".etl")
        subprocess.run([GEN, "ring", etl, os.path.join(root, name, "trace.pt"), str(code)], check=True)
        out = os.path.join(tmp, name)
        run("etl", "ipt", etl, "-o", out)
        got = open(os.path.join(out, "ipt-0001.pt"), "rb").read()
        k = trace.find(psb, len(trace) - size)
        check(k >= 0 and got == trace[k:], "%s: ring unwrapped to the recording's tail (%d bytes, want %d)"
              % (name, len(got), len(trace) - k))
        side = json.load(open(os.path.join(out, "ipt-0001.json")))
        check(side["wrapped"] and side["unwrapped"] and side["TracePosition"] == len(trace) % size,
              name + " sidecar")


def test_pipeline(tmp):
    """Seed 002's analysis: the module map from the trace's image rundown, the
    IPT data from its ProcessorTrace event, then `ntlens ipt modules`."""
    etl = os.path.join(tmp, "modules.etl")
    subprocess.run([GEN, "modules", etl], check=True)
    mp = os.path.join(tmp, "kernel.map")
    open(mp, "w").write(run("etl", "images", "--kernel", "--map", etl).stdout)
    out = os.path.join(tmp, "modules")
    run("etl", "ipt", etl, "-o", out)
    got = json.loads(run("ipt", "modules", "--modules", mp, "--format", "json",
                         os.path.join(out, "ipt-0001.pt")).stdout)
    per = {m["name"].rsplit("\\", 1)[-1]: m["targets"] for m in got["modules"]}
    check(per.get("ntoskrnl.exe") == 3 and per.get("tcpip.sys") == 1 and per.get("(no module)") == 1,
          "ipt modules over the etl map: %s" % per)


def test_usage(tmp):
    for cmd in ("info", "events", "images", "ipt"):
        p = run("etl", cmd, "--help")
        check(p.stdout.startswith("usage: ntlens etl " + cmd), cmd + " --help")
        run("etl", cmd, expect=2)
        run("etl", cmd, "--bogus", "x.etl", expect=2)
    run("etl", "events", "--format", "xml", "x.etl", expect=2)
    run("etl", "events", "--provider", "", "x.etl", expect=2)
    run("etl", "events", "--compression", "zip", "x.etl", expect=2)
    run("etl", "ipt", os.path.join(DATA, "lxcore_kernel.etl"), expect=2)  # no -o
    p = run("etl", "info", os.path.join(tmp, "missing.etl"), expect=1)
    check("cannot open" in p.stderr, "missing file message")
    notetl = os.path.join(tmp, "not.etl")
    open(notetl, "wb").write(b"\x00" * 100)
    p = run("etl", "info", notetl, expect=1)
    check("WMI_BUFFER_HEADER at offset 0x0" in p.stderr, "not an etl: " + p.stderr.strip())


def one_error(args, option):
    """A usage mistake: exit 2, one line naming the option, then the pointer to --help."""
    p = run("etl", *args, expect=2)
    lines = p.stderr.splitlines()
    check(len(lines) == 2 and "'%s'" % option in lines[0] and
          lines[1] == "Try 'ntlens etl %s --help'." % args[0], "%s: one error line: %r" % (args, p.stderr))


def test_options(tmp):
    """docs/cli.md's letters and the parser's one wording; every --format of every command."""
    etl = os.path.join(DATA, "ShutdownPerfDiagLogger.etl")
    for args, opt in ((["events", "-k", "event"], "-k"), (["events", "-x"], "-x"),
                      (["images", "-k"], "-k"), (["images", "-m"], "-m"), (["info", "-b"], "-b"),
                      (["ipt", "-r", "-o", tmp], "-r"), (["ipt", "-k", "0x1f20", "-o", tmp], "-k")):
        one_error(args + [etl], opt)  # letters docs/cli.md gives to other meanings
    for cmd in ("info", "events", "images", "ipt"):
        one_error([cmd, "--no-such", etl], "--no-such")
        one_error([cmd, "--format", "xml", etl], "--format")
        one_error([cmd, etl, "--compression"], "--compression")
        one_error([cmd, "--compression", "zip", etl], "--compression")
        man = run("etl", cmd, "--help-man").stdout
        check("keep\\-going" in man and "sorted" in man and "compression" in man, cmd + ": man page has the etl options")
    one_error(["events", "--provider", "", etl], "--provider")
    one_error(["events", "--group", "Nope", etl], "--group")
    one_error(["events", "--kind", "nope", etl], "--kind")
    one_error(["events", "-n", "x", etl], "-n")
    one_error(["images", "--pid", "4294967296", etl], "--pid")
    one_error(["ipt", "--hook", "0x10000", "-o", tmp, etl], "--hook")
    gen = os.path.join(tmp, "opts-ipt.etl")
    subprocess.run([GEN, "ipt", gen], check=True)
    for fmt in ("table", "csv", "tsv", "json", "jsonl"):
        runs = [["info", etl], ["info", "--buffers", etl], ["events", "-n", "20", etl], ["images", etl],
                ["images", "--map", etl], ["ipt", gen, "-o", os.path.join(tmp, "fmt-" + fmt)]]
        for args in runs:
            out = run("etl", *args, "--format", fmt).stdout
            what = "%s --format %s" % (" ".join(args[:2]), fmt)
            if fmt == "json":
                doc = json.loads(out)
                check(isinstance(doc, list) and all(isinstance(r, dict) for r in doc) and doc, what)
            elif fmt == "jsonl":
                check(all(isinstance(json.loads(line), dict) for line in out.splitlines()) and out, what)
            elif fmt in ("csv", "tsv"):
                rows = list(csv_module.reader(io.StringIO(out), delimiter="," if fmt == "csv" else "\t"))
                check(rows and all(re.fullmatch(r"[a-z][a-z0-9_]*", k) for k in rows[0]) and
                      all(len(r) == len(rows[0]) for r in rows), what)
    rows = json.loads(run("etl", "ipt", gen, "-o", os.path.join(tmp, "rec"), "--format", "json").stdout)
    check(rows[0]["path"] == os.path.join(tmp, "rec", "ipt-0001.pt") and rows[0]["bytes"] == 300 and
          "cpu" in rows[0], "etl ipt records what it wrote: %s" % rows[0])


def test_times():
    """ISO 8601 times, never raw FILETIMEs; time zones by name."""
    iso = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}(Z|[+-]\d\d:\d\d)$")
    want = {"ShutdownPerfDiagLogger.etl": ("Romance Standard Time", "Romance Daylight Time"),
            "net.4.5.2.x64.etl": ("Pacific Standard Time", "Pacific Daylight Time"),
            "lxcore_kernel.etl": ("China Standard Time", "China Daylight Time"),
            "primitive-types.etl": ("FLE Standard Time", "FLE Daylight Time")}
    for name, (std, dlt) in want.items():
        got = info(os.path.join(DATA, name))
        check((got["time_zone"], got["time_zone_daylight"]) == (std, dlt), "%s time zone: %s" % (
            name, (got["time_zone"], got["time_zone_daylight"])))
        check(all(iso.match(got[k]) for k in ("start_time", "end_time", "first_event")), name + " ISO times")
    path = os.path.join(DATA, "net.4.5.2.x64.etl")
    rows = json.loads(run("etl", "info", "--buffers", "--format", "json", path).stdout)
    check(all(iso.match(r["timestamp"]) for r in rows), "--buffers timestamps are ISO 8601")
    table = run("etl", "info", "--buffers", path).stdout.splitlines()
    check(iso.match(table[1].split()[6]), "--buffers table time: " + table[1])
    local = run("etl", "info", "--format", "json", "--local-time", path).stdout
    check(iso.match(json.loads(local)[0]["start_time"]), "--local-time")


def test_progress(tmp):
    """On a terminal the bar shares no line with output; into a pipe there is none."""
    if not shutil.which("script"):
        check(False, "script(1) is needed for the terminal test (util-linux)")
        return
    path = os.path.join(DATA, "net.4.5.2.x64.etl")
    log = os.path.join(tmp, "pty.log")
    for cmd, bar_expected in (("%s etl events --sorted -n 5 %s" % (NTLENS, path), True),
                              ("%s etl events %s | head -5" % (NTLENS, path), False),
                              ("%s etl info %s" % (NTLENS, path), True)):
        subprocess.run(["script", "-qec", cmd, log], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       check=False, timeout=120)
        raw = open(log, "rb").read().decode("utf-8", "replace")
        body = raw.split("\n", 1)[1] if raw.startswith("Script started") else raw
        lines = [l for l in body.replace("\r\n", "\n").split("\n") if l and not l.startswith("Script ")]
        seen_bar = "reading [" in body
        check(seen_bar == bar_expected, "%s: bar shown %s, want %s" % (cmd, seen_bar, bar_expected))
        for line in lines:
            # What the terminal shows: each \r returns to column 0 and overwrites.
            shown = ""
            for part in line.split("\r"):
                shown = part + shown[len(part):]
            shown = shown.rstrip()
            check("reading [" not in shown or re.fullmatch(r"reading \[#* *\] +\d+%", shown),
                  "%s: the bar shares a line with output: %r" % (cmd, shown))
        out = [l for l in lines if "Timestamp" in l or "logger_name" in l]
        check(out, "%s: output reached the terminal" % cmd)


def test_truncated(tmp):
    """A real trace cut inside its 11th buffer: each command says where the
    file ends and what it read (exit 1); --keep-going keeps every whole buffer
    before the cut (exit 0, a warning). Also a compressed trace, sorted."""
    for name, keep, extra in (("ShutdownPerfDiagLogger.etl", 10, []),
                              ("net.4.5.2.x64.etl", 10, ["--sorted"])):
        src = os.path.join(DATA, name)
        bufs = json.loads(run("etl", "info", "--buffers", "--format", "json", src).stdout)
        cut_at = int(bufs[keep]["offset"], 16) + bufs[keep]["size"] // 2
        cut = os.path.join(tmp, "cut-" + name)
        open(cut, "wb").write(open(src, "rb").read()[:cut_at])
        want_events = sum(b["events"] for b in bufs[:keep])
        what = "%s cut at 0x%x" % (name, cut_at)

        p = run("etl", "info", *extra, cut, expect=1)
        msg = p.stderr
        check("ends early, at offset 0x%x" % cut_at in msg and "buffer %d" % keep in msg and
              "%d whole buffers and %d events" % (keep, want_events) in msg, what + ": " + msg)
        check(msg.count(cut) == 1 and "--keep-going" in msg, what + ": names the file once: " + msg)
        p = run("etl", "info", "--format", "json", "--keep-going", *extra, cut)
        got = json.loads(p.stdout)[0]
        check(got["truncated"] is True, what + ": info says truncated")
        table = run("etl", "info", *extra, cut, expect=1).stdout
        check(re.search(r"^truncated +true$", table, re.M), what + ": the table says truncated")
        check(got["buffers"] == keep and got["events"] == want_events, what + " --keep-going counts")
        check("warning" in p.stderr and "ends early" in p.stderr, what + " --keep-going warns")

        # Streaming (--stream; etl events sorts by default) prints the events
        # before the cut; sorted mode reads all first.
        p = run("etl", "events", "--format", "csv", *(extra or ["--stream"]), cut, expect=1)
        check(len(p.stdout.splitlines()) == 1 + (0 if extra else want_events) and
              "ends early" in p.stderr, what + ": events printed before the error")
        p = run("etl", "events", "--format", "csv", "--keep-going", *extra, cut)
        check(len(p.stdout.splitlines()) == 1 + want_events, what + ": events --keep-going")
        if extra:
            times = [int(line.split(",")[1]) for line in p.stdout.splitlines()[1:]]  # clock
            check(times == sorted(times), what + ": sorted after the cut")
        full = json.loads(run("etl", "images", "--format", "json", "--keep-going", *extra, cut).stdout)
        run("etl", "images", *extra, cut, expect=1)
        whole = os.path.join(tmp, "whole-" + name)
        open(whole, "wb").write(open(src, "rb").read()[:int(bufs[keep]["offset"], 16)])
        want = len(etl_ref.read(whole)["images"])
        check(len(full) == want, what + ": images --keep-going (%d, want %d)" % (len(full), want))

    rows = json.loads(run("etl", "info", "--buffers", "--keep-going", "--format", "json", cut).stdout)
    check(len(rows) == 10 and all(r["status"] == "ok" for r in rows), "--buffers stops at the cut")


def test_errors(tmp):
    """Error text names the file once and says why it cannot be opened; an
    error after the first buffer keeps the file name; `etl ipt` makes its
    folder only for a trace."""
    missing = os.path.join(tmp, "missing.etl")
    p = run("etl", "events", missing, expect=1)
    check(p.stderr.count(missing) == 1 and "No such file or directory" in p.stderr,
          "missing file: " + p.stderr)
    bad = os.path.join(tmp, "corrupt.etl")
    subprocess.run([GEN, "corrupt", bad], check=True)
    for cmd in ("events", "images", "info"):
        p = run("etl", cmd, bad, expect=1)
        check(p.stderr.count(bad) == 1 and "offset 0x1048" in p.stderr, cmd + ": later error names the file")
    out = os.path.join(tmp, "no-ipt")
    p = run("etl", "ipt", os.path.join(DATA, "lxcore_kernel.etl"), "-o", out)
    check(not os.path.exists(out) and "no Intel PT events" in p.stderr, "etl ipt without traces makes no folder")
    run("etl", "ipt", missing, "-o", out, expect=1)
    check(not os.path.exists(out), "etl ipt on a missing trace makes no folder")


def decompress(fmt, blob, size):
    p = subprocess.run([DECOMP, fmt, str(size)], input=blob, capture_output=True)
    check(p.returncode == 0, "%s decompress: %s" % (fmt, p.stderr.decode().strip()))
    return p.stdout


def lznt1_compress(data):
    """A greedy LZNT1 compressor written here from MS-XCA 2.5's description,
    so compressed chunks (not only stored ones) reach our decompressor."""
    out = bytearray()
    for c0 in range(0, len(data), 4096):
        chunk = data[c0:c0 + 4096]
        body = bytearray()
        pos = 0
        while pos < len(chunk):
            flags_at = len(body)
            body.append(0)
            for bit in range(8):
                if pos >= len(chunk):
                    break
                length_bits = 12
                p = pos - 1
                while p >= 0x10:
                    length_bits -= 1
                    p >>= 1
                max_len = (1 << length_bits) + 2
                max_off = 1 << (16 - length_bits)
                best_len, best_off = 0, 0
                for off in range(1, min(pos, max_off) + 1):
                    n = 0
                    while (n < max_len and pos + n < len(chunk)
                           and chunk[pos + n] == chunk[pos + n - off]):
                        n += 1
                    if n > best_len:
                        best_len, best_off = n, off
                if pos > 0 and best_len >= 3:
                    token = ((best_off - 1) << length_bits) | (best_len - 3)
                    body += struct.pack("<H", token)
                    body[flags_at] |= 1 << bit
                    pos += best_len
                else:
                    body.append(chunk[pos])
                    pos += 1
        if len(body) < len(chunk):
            out += struct.pack("<H", 0xB000 | (len(body) - 1)) + body
        else:
            out += struct.pack("<H", 0x3000 | (len(chunk) - 1)) + chunk
    return bytes(out + b"\0\0")


def samples():
    rnd = random.Random(5)
    text = b"".join(rnd.choice([b"the ", b"quick ", b"brown ", b"fox ", b"jumps ", b"\x00\x00\x00\x00",
                                bytes([rnd.randrange(256)])]) for _ in range(20000))
    return [text[:65536], text[:1000], bytes(rnd.randrange(256) for _ in range(5000)),
            b"a" * 65536, bytes(range(256)) * 200]


def test_peers():
    tested = 0
    for s in samples()[1:3] + [b"abcabcabcabd" * 700 + bytes(range(200))]:
        blob = lznt1_compress(s)
        check(decompress("lznt1", blob, len(s)) == s, "lznt1 vs the Python compressor, %d bytes" % len(s))
    samba = "/usr/lib/x86_64-linux-gnu/samba/libndr-samba-samba4.so.0"
    if os.path.exists(samba):
        lib = ctypes.CDLL(samba)
        f = lib.lzxpress_compress
        f.restype = ctypes.c_ssize_t
        f.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint32]
        for s in samples():
            out = ctypes.create_string_buffer(len(s) * 2 + 64)
            n = f(s, len(s), out, len(out))
            check(n > 0, "samba lzxpress_compress")
            if n > 0:
                check(decompress("xpress", out.raw[:n], len(s)) == s, "xpress vs samba, %d bytes" % len(s))
        tested += 1
    wim = ctypes.util.find_library("wim") or "libwim.so.15"
    try:
        lib = ctypes.CDLL(wim)
    except OSError:
        lib = None
    if lib:
        comp = ctypes.c_void_p()
        rc = lib.wimlib_create_compressor(1, 65536, 0, ctypes.byref(comp))  # XPRESS
        check(rc == 0, "wimlib compressor")
        lib.wimlib_compress.restype = ctypes.c_size_t
        lib.wimlib_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                        ctypes.c_size_t, ctypes.c_void_p]
        done = 0
        for s in samples():
            out = ctypes.create_string_buffer(len(s))
            n = lib.wimlib_compress(s, len(s), out, len(out) - 1, comp)
            if n == 0:
                continue  # incompressible: wimlib stores such chunks raw
            check(decompress("xpress-huff", out.raw[:n], len(s)) == s,
                  "xpress-huff vs wimlib, %d bytes" % len(s))
            done += 1
        check(done >= 3, "wimlib compressed several samples")
        tested += 1
    check(tested == 2, "both compression peers available (samba-libs, libwim15)")


def test_kernel_classes(tmp):
    """The kernel classes no shared trace has (gen_classes.c builds them from
    the documented layouts), 32- and 64-bit: fields as mof_ref.py decodes
    them, and the pid of PERFINFO events from the payload's PID/ProcessId."""
    import mof_ref
    for size in ("32", "64"):
        path = os.path.join(tmp, "classes%s.etl" % size)
        subprocess.run([GEN, "classes" + size, path], check=True)
        want = list(mof_ref.events(path))
        got = [json.loads(line) for line in run("etl", "events", "--stream", "-f", "jsonl",
                                                 path).stdout.splitlines()]
        check(len(got) == 65 and [r["fields"] for r in got] == want and
              not any(r["decode_error"] for r in got),
              "%s-bit: the header and 64 kernel events (64 classes and versions) decode as "
              "mof_ref says (%d, %d)" % (size, len(got), len(want)))
        check(got[0]["fields"]["PointerSize"] == int(size) // 8 and
              got[0]["fields"]["LogFileNameString"] == "C:\\classes.etl",
              "%s-bit: the EventTrace header in the trace's pointer size" % size)
        perfinfo = [r for r in got if r["kind"] == "perfinfo"]
        check(len(perfinfo) == 14 and all(
            r["pid"] == (r["fields"].get("PID") or r["fields"].get("ProcessId")) for r in perfinfo),
            "%s-bit: PERFINFO Process, TcpIp, UdpIp and VirtualAlloc events take the pid from the "
            "payload, ISR has none" % size)
        names = [r["event"] for r in got]
        check("Alpc/WaitForNewMessage" in names and "TcpIp/AcceptIPV6" in names and
              "Registry/Open" in names and "PageFault/VirtualAlloc" in names and
              "FileIo/Create" in names and "FileIo/OperationEnd" in names, "event names")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_shared()
        test_events()
        test_generated(tmp)
        test_kernel_classes(tmp)
        test_real_ring(tmp)
        test_pipeline(tmp)
        test_usage(tmp)
        test_options(tmp)
        test_times()
        test_progress(tmp)
        test_truncated(tmp)
        test_errors(tmp)
        test_peers()
    finish()


if __name__ == "__main__":
    sys.exit(main())
