#!/usr/bin/env python3
"""`ntlens ipt dump` and `ntlens ipt modules` end to end on the real
recordings: the quick analysis against the last-IP column of `dump --lastip`
(two separate reconstructions), module attribution, --wrapped on circular
buffers built from the recordings, ptdump's --no-timing, --cpu and
FILE:FROM-TO, the records of every --format (addresses as hex strings), and
usage errors."""
import collections
import csv
import io
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile

root = os.path.join(os.environ.get("NTLENS_SHARED_DATA", "../shared/data"), "ipt", "real")
ntlens = os.environ.get("NTLENS", "ntlens")
failures = []


def run(*args, code=0):
    p = subprocess.run([ntlens, "ipt"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != code:
        failures.append("%s: exit %d, expected %d: %s" % (" ".join(args), p.returncode, code,
                                                          p.stderr.decode(errors="replace")))
    return p.stdout.decode(), p.stderr.decode()


def check(cond, what):
    if not cond:
        failures.append(what)


def lastip_targets(trace):
    out, _ = run("dump", "--lastip", trace)
    c = collections.Counter()
    for line in out.splitlines():
        f = line.split()
        if (len(f) >= 2 and f[1] in ("tip", "tip.pge", "tip.pgd", "fup") and f[-2] == "ip"
                and not f[-1].startswith("<")):
            c[int(f[-1], 16)] += 1
    return c


def modules_targets(trace, *extra):
    out, _ = run("modules", "--addresses", "--format", "json", trace, *extra)
    doc = json.loads(out)
    check(all(isinstance(a["address"], str) for a in doc["addresses"]), "addresses are strings")
    return doc, collections.Counter({int(a["address"], 16): a["count"] for a in doc["addresses"]})


def image_map(folder):
    lines = ["# from %s" % folder]
    img = os.path.join(folder, "image")
    for name in sorted(os.listdir(img)):
        base = int(name.split(".")[0], 16)
        lines.append("0x%x 0x%x page-%s" % (base, os.path.getsize(os.path.join(img, name)), name))
    return "\n".join(lines) + "\n"


def usage_error(args, option):
    p = subprocess.run([ntlens, "ipt"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = p.stderr.decode(errors="replace").splitlines()
    what = " ".join(args)
    check(p.returncode == 2, "%s: exit %d, want 2" % (what, p.returncode))
    check(len(lines) == 2 and "'%s'" % option in lines[0]
          and lines[1] == "Try 'ntlens ipt %s --help'." % args[0], "%s: one error line: %r" % (what, lines))
    check(p.stdout == b"", "%s: nothing on stdout" % what)


def packet_lines(text):
    """(offset, packet) of each of ptdump's packet lines."""
    return [(int(l.split()[0], 16), l.split()[1]) for l in text.splitlines() if not l.startswith("[")]


def check_records(trace, extra=()):
    """Every --format: one record per packet of ptdump's lines, addresses as
    hex strings, the resolved IPs those of --lastip."""
    text, _ = run("dump", *extra, trace)
    want = packet_lines(text)
    out, _ = run("dump", "--format", "jsonl", *extra, trace)
    objs = [json.loads(l) for l in out.splitlines()]
    check([(o["offset"], o["packet"]) for o in objs] == want, "jsonl: the packets of ptdump's lines")
    check(objs and objs[0]["packet"] == "psb" and objs[0]["offset"] == 0, "jsonl first packet")
    check(all(isinstance(o[k], str) for o in objs for k in ("ip", "cr3", "vmcs") if o[k] is not None),
          "jsonl: addresses are hex strings")
    ips = collections.Counter(int(o["ip"], 16) for o in objs if o["ip"] is not None)
    check(ips == lastip_targets(trace), "records' ip differ from --lastip")
    out, _ = run("dump", "--format", "json", *extra, trace)
    check(json.loads(out) == objs, "json: one document holding the jsonl records")
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        out, _ = run("dump", "--format", fmt, *extra, trace)
        rows = list(csv.reader(io.StringIO(out), delimiter=sep))
        check(rows and rows[0][:3] == ["offset", "packet", "size"], "%s header: %r" % (fmt, rows[:1]))
        check([(int(r[0]), r[1]) for r in rows[1:]] == want, "%s: the packets of ptdump's lines" % fmt)
    out, _ = run("dump", "--format", "table", *extra, trace)
    lines = out.splitlines()
    check(lines and lines[0].split()[:3] == ["Offset", "Packet", "Size"] and len(lines) == len(want) + 1,
          "table: a heading and one line per packet")


def check_time_records():
    """--time and --tcal: the records carry the TSC and calibration ptdump prints."""
    d = os.path.join(root, "hase-loopy")
    opts = open(os.path.join(d, "reference.txt")).read().split("decoder options: ")[1].split("\n")[0].split()
    trace = os.path.join(d, "trace.pt")
    for show, key in (("--time", "tsc"), ("--tcal", "fcr")):
        text, _ = run("dump", *opts, show, trace)
        want = [l.split()[-1] for l in text.splitlines() if not l.startswith("[") and l.split()[-2:-1] == [key]]
        out, _ = run("dump", *opts, show, "--format", "jsonl", trace)
        got = [json.loads(l)[key] for l in out.splitlines()]
        got = [g for g in got if g is not None]
        if key == "tsc":
            got = ["%016x" % int(g, 16) for g in got]
        else:
            got = ["%.3f" % g for g in got]
        check(got and got == [w for w in want if not w.startswith("<")], "%s records differ from ptdump's column" % show)


def check_ptdump_options(tmp):
    """ptdump's --no-timing and --cpu none|auto; -q."""
    trace = os.path.join(root, "hase-loopy", "trace.pt")
    full, _ = run("dump", trace)
    timing = ("tsc", "mtc", "cyc", "cbr", "tma")
    want = "".join(l + "\n" for l in full.splitlines() if l.startswith("[") or l.split()[1] not in timing)
    out, _ = run("dump", "--no-timing", trace)
    check(out == want and out != full, "--no-timing drops the timing packets' lines only")
    none, _ = run("dump", "--cpu", "none", trace)
    check(none == full, "--cpu none is the default")
    run("dump", "--cpu", "auto", trace)
    out, _ = run("dump", "-q", trace)
    check(out == "", "--quiet prints diagnostics only, and this trace has none")
    # Diagnostics beside records go to stderr: stdout stays one table.
    bad = os.path.join(os.environ.get("NTLENS_SHARED_DATA", "../shared/data"), "ipt", "libipt-corpus",
                       "tests", "ptdump-bad_opc-resync.pt")
    text, _ = run("dump", bad)
    out, err = run("dump", "--format", "jsonl", bad)
    check("error decoding packet" in text and "warning: offset 0x" in err and "error decoding packet" in err,
          "records: a decode error is a warning on stderr: " + err)
    check(all(json.loads(l) for l in out.splitlines()), "records: stdout holds records only")
    check_time_records()


def check_range(trace, tmp):
    """ptdump's TRACE:FROM-TO: the bytes [FROM, TO) only, offsets from FROM."""
    data = open(trace, "rb").read()
    cut = os.path.join(tmp, "cut.pt")
    for spec, lo, hi in (("0x100-0x2000", 0x100, 0x2000), ("256", 256, len(data)),
                         ("256-", 256, len(data)), ("-8000", 0, 8000)):
        open(cut, "wb").write(data[lo:hi])
        want, _ = run("dump", "--raw", cut)
        got, _ = run("dump", "--raw", "%s:%s" % (trace, spec))
        check(got == want and got, "%s:%s is the dump of those bytes" % (trace, spec))
    usage_error(["dump", trace + ":0x20-0x10"], trace + ":0x20-0x10")
    usage_error(["dump", "--wrapped", "5", trace + ":0-100"], "--wrapped")
    _, err = run("dump", "%s:%d" % (trace, len(data)), code=1)
    check("past the end" in err, "a range after the end: " + err)
    _, err = run("dump", "%s:0-%d" % (trace, len(data) + 1), code=1)
    check("past the end" in err, "a range beyond the end: " + err)
    # A ':' not followed by a range is part of the name, as in ptdump.
    colon = os.path.join(tmp, "a:b.pt")
    shutil.copy(trace, colon)
    out, _ = run("dump", colon)
    full, _ = run("dump", trace)
    check(out == full, "a name with ':'")


def check_modules_formats(trace, mp):
    """ipt modules in every --format: sections in a table and JSON, one table
    (the addresses with -a, else the modules) in CSV, TSV and JSON lines;
    snake_case keys, addresses as hex strings."""
    doc = json.loads(run("modules", "--format", "json", "--modules", mp, "-a", trace)[0])
    check(sorted(doc) == ["addresses", "modules", "summary", "unmatched"], "json sections: %r" % sorted(doc))
    table, _ = run("modules", "--format", "table", "--modules", mp, "-a", trace)
    check(table.startswith("Targets") and "\nName " in table and "\nAddress " in table, "table sections")
    for args, rows, key in ((["-a"], doc["addresses"], "address"), ([], doc["modules"], "name")):
        for fmt, sep in (("csv", ","), ("tsv", "\t")):
            out, _ = run("modules", "--format", fmt, "--modules", mp, *args, trace)
            got = list(csv.DictReader(io.StringIO(out), delimiter=sep))
            check([r[key] for r in got] == [r[key] for r in rows], "modules %s %s: one table" % (fmt, args))
            check(all(re.match(r"[a-z_]+$", k) for k in (got[0] if got else {"": 0})), "%s headers" % fmt)
        out, _ = run("modules", "--format", "jsonl", "--modules", mp, *args, trace)
        check([json.loads(l) for l in out.splitlines()] == rows, "modules jsonl %s" % args)
    check(all(isinstance(a["address"], str) and (a["offset"] is None or a["offset"].startswith("0x"))
              for a in doc["addresses"]), "modules: addresses and offsets are hex strings")


def check_recover_loop(tmp):
    """A trace whose error recurs where recovery left off (found by
    fuzz_ipt_flow_split): --resync-on-error went on printing the same error for
    ever, on one thread and on two; now the next PSB is the way on."""
    src = os.environ.get("NTLENS_SOURCE_ROOT", ".")
    data = open(os.path.join(src, "fuzz/corpus/ipt_flow/recover-loop-same-offset"), "rb").read()
    n = min(data[0] * 16, len(data) - 1)
    code, trace = os.path.join(tmp, "loop.bin"), os.path.join(tmp, "loop.pt")
    open(code, "wb").write(data[1:1 + n])
    open(trace, "wb").write(data[1 + n:])
    for jobs in ("1", "2"):
        try:
            p = subprocess.run([ntlens, "ipt", "flow", "--raw", code + ":0x1000", "--raw",
                                code + ":0x100000", "--resync-on-error", "--no-inst", "--pt",
                                trace, "--jobs", jobs], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
        except subprocess.TimeoutExpired:
            check(False, "--resync-on-error --jobs %s: still decoding after 60 s" % jobs)
            continue
        lines = (p.stdout + p.stderr).decode(errors="replace").splitlines()
        check(p.returncode == 0 and len(lines) < 10,
              "--resync-on-error --jobs %s: exit %d, %d lines" % (jobs, p.returncode, len(lines)))


def check_seam_error(tmp):
    """An error right after a PSB+ where --jobs cuts the trace (found by
    fuzz_ipt_flow_split): the part before the seam and the part after it both
    told it, so three threads printed it twice."""
    src = os.environ.get("NTLENS_SOURCE_ROOT", ".")
    data = open(os.path.join(src, "fuzz/corpus/ipt_flow_split/seam-error-told-twice"), "rb").read()
    code, trace = os.path.join(tmp, "seam.bin"), os.path.join(tmp, "seam.pt")
    open(code, "wb").write(b"\x90")
    open(trace, "wb").write(data[1:])
    outs = [run("flow", "--raw", code + ":0x1000", "--pt", trace, "--offset", "--event:ip",
                "--resync-on-error", "--jobs", jobs) for jobs in ("1", "3")]
    check(outs[0] == outs[1], "--jobs 3 differs from one thread after a seam: %r" % (outs,))
    check(outs[0][0].count("[66, 100000: error") == 1, "the error after the seam once: %r" % outs[0][0])


def main():
    tmp = tempfile.mkdtemp(prefix="ntlens-ipt-")
    names = sorted(n for n in os.listdir(root) if n.startswith("kafl-"))
    for name in names:
        folder = os.path.join(root, name)
        trace = os.path.join(folder, "trace.pt")
        want = lastip_targets(trace)
        doc, got = modules_targets(trace)
        check(got == want, "%s: quick analysis targets differ from dump --lastip (%d vs %d distinct)"
              % (name, len(got), len(want)))
        check(doc["summary"][0]["targets"] == sum(want.values()), "%s: target total" % name)
        # Attribution: module counts add up, and agree with the addresses.
        mp = os.path.join(tmp, name + ".map")
        open(mp, "w").write(image_map(folder))
        out, _ = run("modules", "--format", "json", "--modules", mp, "--addresses", trace)
        doc = json.loads(out)
        targets = doc["summary"][0]["targets"]
        total = sum(m["targets"] for m in doc["modules"])
        check(total == targets, "%s: module targets sum %d != %d" % (name, total, targets))
        inside = sum(a["count"] for a in doc["addresses"] if a["module"] is not None)
        nomod = [m for m in doc["modules"] if m["name"] == "(no module)"][0]
        check(nomod["targets"] == targets - inside, "%s: (no module) count" % name)
        for m in doc["modules"]:
            check(m["name"] == "(no module)" or isinstance(m["base"], str) and isinstance(m["size"], str),
                  "%s: module base and size are hex strings: %r" % (name, m))
        for a in doc["addresses"]:
            check(a["module"] is None or isinstance(a["offset"], str), "%s: offsets are hex strings" % name)
        check(sum(u["count"] for u in doc["unmatched"]) == nomod["targets"], "%s: unmatched list" % name)
        if name == "kafl-foo":
            check_modules_formats(trace, mp)

        # Circular buffers: the whole trace rotated so that it ends just
        # before POS; and the last 3/4 of it (its start overwritten).
        data = open(trace, "rb").read()
        n = len(data)
        ref, _ = run("dump", "--no-offset", trace)
        for pos in (1, n // 3, n - 5):
            ring = bytearray(n)
            for i in range(n):
                ring[(pos + i) % n] = data[i]
            rp = os.path.join(tmp, "ring.pt")
            open(rp, "wb").write(ring)
            out, _ = run("dump", "--no-offset", "--wrapped", str(pos), rp)
            check(out == ref, "%s: --wrapped %d differs from the linear dump" % (name, pos))
            _, got = modules_targets(rp, "--wrapped", str(pos))
            check(got == want, "%s: modules --wrapped %d" % (name, pos))
        if data.find(b"\x02\x82" * 8, n // 4) < 0:
            continue  # no PSB in the part that survives
        tail = data[n // 4:]
        ring = bytearray(len(tail))
        pos = len(tail) // 2
        for i in range(len(tail)):
            ring[(pos + i) % len(tail)] = tail[i]
        tp, rp = os.path.join(tmp, "tail.pt"), os.path.join(tmp, "ring.pt")
        open(tp, "wb").write(tail)
        open(rp, "wb").write(ring)
        a, _ = run("dump", "--no-offset", tp)
        b, _ = run("dump", "--no-offset", "--wrapped", str(pos), rp)
        check(a == b and a, "%s: overwritten ring differs" % name)
        # Offsets of a wrapped dump are offsets in the file.
        b, _ = run("dump", "--wrapped", str(pos), rp)
        first = int(b.split()[0], 16) if b else -1
        check(ring[first:first + 2] == b"\x02\x82", "%s: wrapped offsets" % name)

    trace = os.path.join(root, "kafl-foo", "trace.pt")
    check_records(trace)
    check_ptdump_options(tmp)
    check_recover_loop(tmp)
    check_seam_error(tmp)
    check_range(trace, tmp)

    # The map `ntlens etl images --map` prints (when the etl command and its
    # data are there): every line is one module.
    etl = os.path.join(os.path.dirname(os.path.dirname(root)), "etl", "ShutdownPerfDiagLogger.etl")
    if os.path.exists(etl):
        p = subprocess.run([ntlens, "etl", "images", "--map", etl], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        lines = [l for l in p.stdout.decode().splitlines() if l and not l.startswith("#")]
        if p.returncode == 0 and lines:
            mp = os.path.join(tmp, "etl.map")
            open(mp, "w").write(p.stdout.decode())
            out, _ = run("modules", "-x", "--format", "json", "--modules", mp, trace)
            doc = json.loads(out)
            check(len(doc["modules"]) == len(lines) + 1, "etl images --map: %d modules for %d lines"
                  % (len(doc["modules"]), len(lines)))

    # Errors: usage 2 (one line naming the option, then the pointer to
    # --help), failures 1, help 0.
    run("dump", code=2)
    usage_error(["dump", "--bogus", trace], "--bogus")
    usage_error(["dump", "--mtc-freq", "99", trace], "--mtc-freq")
    usage_error(["dump", "--cpu", "six", trace], "--cpu")
    usage_error(["dump", "--cpu"], "--cpu")
    usage_error(["dump", "--wrapped", "x", trace], "--wrapped")
    usage_error(["dump", "--cpuid-0x15.eax", "0x100000000", trace], "--cpuid-0x15.eax")
    usage_error(["dump", "--time", "--tcal", trace], "--tcal")  # ptdump: either --time or --tcal
    usage_error(["dump", "--format", "xml", trace], "--format")
    run("dump", os.path.join(tmp, "missing.pt"), code=1)
    out, _ = run("dump", "--help")
    check("--wrapped" in out and "--no-timing" in out, "dump --help")
    run("modules", trace, code=2)
    usage_error(["modules", "-m", "x.map", trace], "-m")  # -m is ps's --memory: long only here
    out, _ = run("modules", "--help")
    check("--modules" in out and "-x, --all" in out, "modules --help")
    _, err = run("modules", "--modules", os.path.join(tmp, "missing.map"), trace, code=1)
    check(err.count("missing.map") == 1, "a missing map is named once: " + err)
    bad = os.path.join(tmp, "bad.map")
    open(bad, "w").write("0x1000 0x10 ok\nzz 10 bad\n")
    _, err = run("modules", "--modules", bad, trace, code=1)
    check("line 2" in err, "bad map error names the line: " + err)
    junk = os.path.join(tmp, "junk.pt")
    open(junk, "wb").write(bytes(range(256)) * 4)
    _, err = run("dump", junk, code=1)
    check("no PSB" in err, "no-PSB error: " + err)
    _, err = run("dump", "--wrapped", "5", junk, code=1)
    check("no PSB" in err, "wrapped no-PSB error: " + err)
    run("dump", "--wrapped", "99999", junk, code=1)

    shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
