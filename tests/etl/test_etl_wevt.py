#!/usr/bin/env python3
"""`etl events --manifest-from`: ClrEtwAll.man compiled by wevt_writer.py
into a WEVT_TEMPLATE resource and a message table, linked into a DLL by
llvm-rc and lld-link, decodes every event of the shared PerfView traces as
the XML does (provider, event name, fields, errors); compiled manifests
that lie are refused with the reason, never a crash.

    test_etl_wevt.py LLVM_RC LLD_LINK"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wevt_writer  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
DATA = os.path.join(os.environ["NTLENS_SHARED_DATA"], "etl")
MAN = os.path.join(DATA, "manifests", "ClrEtwAll.man")
RC, LINK = sys.argv[1:3]


def run(*args, expect=0):
    p = subprocess.run([NTLENS, *args], capture_output=True, text=True)
    check(p.returncode == expect, "%s exited %d, expected %d: %s" % (" ".join(args), p.returncode,
                                                                       expect, p.stderr.strip()))
    return p


def rows(how, path, trace):
    out = run("etl", "events", "--format", "jsonl", how, path, trace).stdout.splitlines()
    got = [json.loads(line) for line in out]
    for r in got:  # compiled templates have no tid: they are named by offset
        if r.get("decode_error"):
            r["decode_error"] = re.sub(r"\(template [^,]*,", "(template T,", r["decode_error"])
    return got


def test_same(dll):
    for name, decoded in (("net.4.5.2.x64.etl", 52121), ("PerfViewData-gcevents.etl", 51)):
        trace = os.path.join(DATA, name)
        xml, binary = rows("--manifest", MAN, trace), rows("--manifest-from", dll, trace)
        differ = [(a, b) for a, b in zip(xml, binary) if a != b]
        fields = sum(1 for r in binary if r["fields"] and (r["provider_guid"] or "").startswith(
            ("e13c0d23", "a669021c", "763fd754")))
        check(len(xml) == len(binary) and not differ and fields == decoded,
              "%s: %d events from the DLL as from the XML (%d differ, first %s), %d CLR events "
              "with fields" % (name, len(binary), len(differ), differ[:1], fields))
    st = json.loads(run("etl", "stats", "--format", "json", "--manifest-from", dll,
                        os.path.join(DATA, "PerfViewData-gcevents.etl")).stdout)
    check(any(r["event"] == "GarbageCollection/GCCreateSegment" and r["events"] == 7 for r in st),
          "etl stats names events from the DLL")


def elements(blob):
    """Offsets of the first provider's elements by signature."""
    wevt = struct.unpack_from("<I", blob, 16 + 16)[0]
    n = struct.unpack_from("<I", blob, wevt + 12)[0]
    offs = [struct.unpack_from("<I", blob, wevt + 20 + 8 * i)[0] for i in range(n)]
    return {bytes(blob[o:o + 4]): o for o in offs}


def patched(blob, what):
    b = bytearray(blob)
    el = elements(b)
    maps, ttbl = el[b"MAPS"], el[b"TTBL"]
    nmaps = struct.unpack_from("<I", b, maps + 8)[0]
    first_map = maps + 12 + 4 * (nmaps - 1)
    items = struct.unpack_from("<I", b, ttbl + 12 + 16)[0]
    if what == "truncated":
        return b[:len(b) // 3]
    if what == "signature":
        b[0:4] = b"CRIX"
    elif what == "huge map":
        struct.pack_into("<I", b, first_map + 12, 0x7fffffff)
    elif what == "in-type":
        b[items + 4] = 99
    elif what == "forward count":
        struct.pack_into("<IBBHIHHI", b, items, 4, 8, 0, 0, 0, 5, 0,
                         struct.unpack_from("<I", b, items + 16)[0])
    elif what == "items outside":
        struct.pack_into("<I", b, ttbl + 12 + 16, len(b) - 8)
    return b


def test_bad(tmp, blob, msgs):
    cases = [("truncated", "WEVT_TEMPLATE"), ("signature", "no CRIM signature"),
             ("huge map", "map entries"), ("in-type", "unknown in-type 99"),
             ("forward count", "not earlier"), ("items outside", "template items")]
    for what, says in cases:
        dll = os.path.join(tmp, what.replace(" ", "-") + ".dll")
        wevt_writer.link(patched(blob, what), msgs, dll, RC, LINK)
        p = run("etl", "events", "--manifest-from", dll, os.path.join(DATA, "primitive-types.etl"),
                expect=1)
        check(says in p.stderr and os.path.basename(dll) in p.stderr and p.stdout == "",
              "%s: refused with %r: %s" % (what, says, p.stderr.strip()))
    p = run("etl", "events", "--manifest-from", MAN, os.path.join(DATA, "primitive-types.etl"),
            expect=1)
    check("ClrEtwAll.man" in p.stderr, "a file that is not a PE: %s" % p.stderr.strip())
    # A binary without the resource: the message table alone, as type 11.
    bare = os.path.join(tmp, "bare.dll")
    with open(os.path.join(tmp, "msg.bin"), "wb") as f:
        f.write(msgs)
    with open(os.path.join(tmp, "bare.rc"), "w") as f:
        f.write('1 11 "msg.bin"\n')
    subprocess.run([RC, "/fo", os.path.join(tmp, "bare.res"), os.path.join(tmp, "bare.rc")],
                   check=True, cwd=tmp)
    subprocess.run([LINK, "/dll", "/noentry", "/machine:x64", "/out:" + bare,
                    os.path.join(tmp, "bare.res")], check=True, cwd=tmp)
    p = run("etl", "events", "--manifest-from", bare, os.path.join(DATA, "primitive-types.etl"),
            expect=1)
    check("no WEVT_TEMPLATE" in p.stderr, "a binary without WEVT_TEMPLATE: %s" % p.stderr.strip())


def test_levels(tmp):
    """LEVL and KEYW: a provider's own level names, as from its XML."""
    man = os.path.join(tmp, "solar.man")
    open(man, "w").write(SOLAR)
    w = wevt_writer.Writer(man)
    dll = os.path.join(tmp, "solar.dll")
    wevt_writer.link(w.write(), w.message_table(), dll, RC, LINK)
    for how, path in (("--manifest", man), ("--manifest-from", dll)):
        got = rows(how, path, os.path.join(DATA, "primitive-types.etl"))
        deep = [r for r in got if r["level_name"] == "Deep"]
        check(len(deep) == 5, "%s: the provider's <level> names 5 events (%d)" % (how, len(deep)))
    p = run("etl", "events", "--manifest-from", dll, "--keywords", "Planets,Deep",
              os.path.join(DATA, "primitive-types.etl"), expect=2)
    check("'Deep'" in p.stderr, "a level name is no keyword")


SOLAR = """<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">
<instrumentation><events>
<provider name="solar_system" guid="{d3dd3dd4-aac2-4e2a-8dd4-a8fb61b77615}" symbol="S">
<levels><level name="Deep" value="5"/></levels>
<keywords><keyword name="Planets" mask="0x10"/></keywords>
</provider></events></instrumentation></instrumentationManifest>
"""


def main():
    w = wevt_writer.Writer(MAN)
    blob = w.write()
    msgs = w.message_table()
    with tempfile.TemporaryDirectory() as tmp:
        dll = os.path.join(tmp, "clretw.dll")
        wevt_writer.link(blob, msgs, dll, RC, LINK)
        test_same(dll)
        test_bad(tmp, blob, msgs)
        test_levels(tmp)
    finish()


if __name__ == "__main__":
    main()
