#!/usr/bin/env python3
"""`ntlens ipt dump` and `ntlens ipt modules` end to end on the real
recordings: the quick analysis against the last-IP column of `dump --lastip`
(two separate reconstructions), module attribution, --wrapped on circular
buffers built from the recordings, JSON output, and usage errors."""
import collections
import json
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
    return doc, collections.Counter({int(a["address"], 16): a["count"] for a in doc["addresses"]})


def image_map(folder):
    lines = ["# from %s" % folder]
    img = os.path.join(folder, "image")
    for name in sorted(os.listdir(img)):
        base = int(name.split(".")[0], 16)
        lines.append("0x%x 0x%x page-%s" % (base, os.path.getsize(os.path.join(img, name)), name))
    return "\n".join(lines) + "\n"


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
        check(doc["targets"] == sum(want.values()), "%s: target total" % name)
        # Attribution: module counts add up, and agree with the addresses.
        mp = os.path.join(tmp, name + ".map")
        open(mp, "w").write(image_map(folder))
        out, _ = run("modules", "--format", "json", "-m", mp, "--addresses", trace)
        doc = json.loads(out)
        total = sum(m["targets"] for m in doc["modules"])
        check(total == doc["targets"], "%s: module targets sum %d != %d" % (name, total, doc["targets"]))
        inside = sum(a["count"] for a in doc["addresses"] if a["module"] is not None)
        nomod = [m for m in doc["modules"] if m["module"] == "(no module)"][0]
        check(nomod["targets"] == doc["targets"] - inside, "%s: (no module) count" % name)
        check(sum(u["count"] for u in doc["unmatched"]) == nomod["targets"], "%s: unmatched list" % name)

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

    # JSON dump: one object per packet, same count as the table.
    trace = os.path.join(root, "kafl-foo", "trace.pt")
    out, _ = run("dump", "--format", "json", trace)
    objs = [json.loads(l) for l in out.splitlines()]
    table, _ = run("dump", trace)
    check(len(objs) == len(table.splitlines()), "json packet count")
    check(objs[0]["type"] == "psb" and objs[0]["offset"] == 0, "json first packet")
    json_ips = collections.Counter(int(o["ip"], 16) for o in objs if "ip" in o)
    check(json_ips == lastip_targets(trace), "json ip fields differ from --lastip")

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
            out, _ = run("modules", "--all", "--format", "json", "-m", mp, trace)
            doc = json.loads(out)
            check(len(doc["modules"]) == len(lines) + 1, "etl images --map: %d modules for %d lines"
                  % (len(doc["modules"]), len(lines)))

    # Errors: usage 2, failures 1, help 0.
    run("dump", code=2)
    run("dump", "--bogus", trace, code=2)
    run("dump", "--mtc-freq", "99", trace, code=2)
    run("dump", "--cpu", "six", trace, code=2)
    run("dump", os.path.join(tmp, "missing.pt"), code=1)
    out, _ = run("dump", "--help")
    check("--wrapped" in out, "dump --help")
    run("modules", trace, code=2)
    out, _ = run("modules", "--help")
    check("--modules" in out, "modules --help")
    bad = os.path.join(tmp, "bad.map")
    open(bad, "w").write("0x1000 0x10 ok\nzz 10 bad\n")
    _, err = run("modules", "-m", bad, trace, code=1)
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
