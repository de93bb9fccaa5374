#!/usr/bin/env python3
"""`etl events --manifest`, through the real binary: every CLR event of the
shared PerfView traces decoded with ClrEtwAll.man and compared, field by
field, with the independent decoder mf_ref.py (which reads the payloads
from --hex); names, stats, level and keyword names and the --level and
--keywords filters, and manifests that do not load."""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mf_ref  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
DATA = os.path.join(os.environ["NTLENS_SHARED_DATA"], "etl")
MAN = os.path.join(DATA, "manifests", "ClrEtwAll.man")
CLR = {"e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", "a669021c-c450-4609-a035-5af59af4df18",
       "763fd754-7086-4dfe-95eb-c01a46faf4ca"}
# Where ClrEtwAll.man does not describe what the runtime writes: CLRStackWalk
# declares Stack with count="2" (the runtime writes FrameCount pointers) and
# the private GCPerHeapHistory v2 template is empty (the runtime writes 433
# bytes). These events are shown raw with the reason, as the issue asks.
LYING = {"CLRStack/CLRStackWalk", "GarbageCollectionPrivate/GCPerHeapHistory"}


def run(*args, expect=0):
    p = subprocess.run([NTLENS, *args], capture_output=True, text=True)
    check(p.returncode == expect, "%s exited %d, expected %d: %s" % (" ".join(args), p.returncode,
                                                                       expect, p.stderr.strip()))
    return p


def rows(*args):
    return [json.loads(line) for line in
            run("etl", "events", "--format", "jsonl", "--manifest", MAN, *args).stdout.splitlines()]


def candidates(ref, r):
    """mf_ref's fields for 64- and 32-bit pointers ("lies" when the payload
    does not fit). The records do not carry the header's pointer-size flag."""
    out = {}
    for is64 in (True, False):
        try:
            out[is64] = ref.decode(r["provider_guid"], r["event_id"], r["version"],
                                   bytes.fromhex(r["payload"]), is64)
        except mf_ref.Lies:
            out[is64] = "lies"
    return out


def pointer_sizes(ref, got):
    """Each process's pointer size, from its events that fit only one."""
    sizes = {}
    for r in got:
        c = candidates(ref, r)
        fits = [k for k, v in c.items() if v != "lies"]
        if len(fits) == 1:
            sizes.setdefault(r["pid"], fits[0])
    return sizes


def test_clr(ref):
    for name, clr_events in (("net.4.5.2.x64.etl", 67368), ("PerfViewData-gcevents.etl", 69)):
        got = [r for r in rows("--hex", os.path.join(DATA, name)) if r["provider_guid"] in CLR]
        same = lies = unknown = 0
        bad = []
        sizes = pointer_sizes(ref, got)
        for r in got:
            want = candidates(ref, r)[sizes.get(r["pid"], True)]
            if want is None:
                unknown += 1
                check(r["fields"] is None and not r["decode_error"], "an event the manifest lacks")
            elif want == "lies":
                lies += 1
                if r["event"] not in LYING or r["fields"] is not None or not r["decode_error"]:
                    bad.append(r)
            elif r["fields"] == want:
                same += 1
            else:
                bad.append(r)
        check(len(got) == clr_events and not bad,
              "%s: %d CLR events, %d as mf_ref decodes them, %d lying, %d unknown; first differing: %s"
              % (name, len(got), same, lies, unknown, bad[:1]))
        if name.startswith("net"):
            check(same == 52121 and lies == 15247 and unknown == 0,
                  "net.4.5.2: every event known, all but the two lying templates exact")


def test_names():
    net = os.path.join(DATA, "net.4.5.2.x64.etl")
    loads = rows("-p", "Microsoft-Windows-DotNETRuntime", "-n", "20000", net)
    verbose = [r["fields"] for r in loads if r["event"] == "CLRMethod/MethodLoadVerbose"]
    check(any(f["MethodNamespace"] == "System.AppDomain" and f["MethodName"] == "SetupDomain" and
              f["MethodFlags"] == "Jitted" for f in verbose),
          "method names readable, MethodFlags through its bitmap")
    ticks = [r["fields"] for r in loads if r["event"] == "GarbageCollection/GCAllocationTick"]
    check(ticks and all(f["AllocationKind"] in ("Small", "Large") and f["TypeName"] for f in ticks),
          "type names and the AllocationKind value map")
    st = json.loads(run("etl", "stats", "--format", "json", "--manifest", MAN, net).stdout)
    rundown = [r for r in st if r["provider"] == "Microsoft-Windows-DotNETRuntimeRundown" and
               r["event"] == "CLRMethodRundown/MethodDCEndVerbose"]
    check(len(rundown) == 1 and rundown[0]["events"] == 16702, "stats: names from the manifest")
    table = run("etl", "events", "--manifest", MAN, "-p", "Microsoft-Windows-DotNETRuntimePrivate",
                "-n", "50", net).stdout
    check("GarbageCollectionPrivate/GCPerHeapHistory" in table and "!manifest event at offset" in table,
          "a lying template: the event shown with the reason in the table")

# winmeta.xml's standard levels and keyword bits 48..55, written out here.
STD_LEVELS = ["win:LogAlways", "win:Critical", "win:Error", "win:Warning", "win:Informational",
              "win:Verbose"]
STD_KEYWORDS = {1 << 48: "win:ResponseTime", 1 << 49: "win:WDIContext", 1 << 50: "win:WDIDiag",
                1 << 51: "win:SQM", 1 << 52: "win:AuditFailure", 1 << 53: "win:AuditSuccess",
                1 << 54: "win:CorrelationHint", 1 << 55: "win:EventlogClassic"}


def manifest_keywords(path):
    """{provider guid: {mask: name}} read from the XML with ElementTree."""
    out = {}
    for prov in ET.parse(path).getroot().iter():
        if prov.tag.endswith("}provider") or prov.tag == "provider":
            out[prov.get("guid").strip("{}").lower()] = {
                int(k.get("mask"), 0): k.get("name") for k in prov.iter()
                if k.tag.endswith("keyword") and k.get("mask")}
    return out


def keyword_names(kw, names):
    got, rest = [], 0
    for b in range(64):
        bit = 1 << b
        if kw & bit:
            name = names.get(bit) or STD_KEYWORDS.get(bit)
            if name:
                got.append(name)
            else:
                rest |= bit
    return ",".join(got + (["0x%x" % rest] if rest else []))


def test_levels_keywords(tmp):
    net = os.path.join(DATA, "net.4.5.2.x64.etl")
    kws = manifest_keywords(MAN)
    evs = [r for r in rows(net) if r["kind"] == "event"]
    bad = [r for r in evs if r["level_name"] != (STD_LEVELS[r["level"]] if r["level"] < 6 else None)
           or r["keyword_names"] != keyword_names(int(r["keyword"], 16),
                                                  kws.get(r["provider_guid"], {}))]
    clr = sum(1 for r in evs if r["provider_guid"] in CLR and "Keyword" in r["keyword_names"])
    check(evs and not bad and clr > 50000,
          "level and keyword names of %d events (%d CLR ones with the manifest's keywords) as the "
          "XML and winmeta give them (%d differ, first %s)" % (len(evs), clr, len(bad), bad[:1]))
    gc = sum(1 for r in evs if int(r["keyword"], 16) & 1)
    warn = sum(1 for r in evs if r["level"] <= 3)
    for args, want in ((["--keywords", "GCKeyword"], gc), (["--keywords", "0x1"], gc),
                       (["--keywords", "gckeyword,win:ResponseTime"],
                        sum(1 for r in evs if int(r["keyword"], 16) & (1 | 1 << 48))),
                       (["--level", "win:Warning"], warn), (["--level", "warning"], warn),
                       (["--level", "3"], warn)):
        got = len(rows(*args, net))
        check(got == want, "%s: %d events, %d expected" % (" ".join(args), got, want))
    # A provider's own level and keyword names come first.
    man = os.path.join(tmp, "solar.man")
    open(man, "w").write(SOLAR)
    out = run("etl", "events", "--format", "jsonl", "--manifest", man, "--level", "Deep",
              os.path.join(DATA, "primitive-types.etl")).stdout.splitlines()
    got = [json.loads(line) for line in out]
    check(len(got) == 5 and all(r["level_name"] == "Deep" for r in got),
          "a manifest's <level> names the level and filters by it: %s" % got[:1])
    for arg in ("--level", "--keywords"):
        p = run("etl", "events", arg, "NoSuchName", net, expect=2)
        check("NoSuchName" in p.stderr, "%s with an unknown name: a usage error" % arg)


SOLAR = """<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events">
<instrumentation><events>
<provider name="solar_system" guid="{d3dd3dd4-aac2-4e2a-8dd4-a8fb61b77615}" symbol="S">
<levels><level name="Deep" value="5"/></levels>
<keywords><keyword name="Planets" mask="0x10"/></keywords>
</provider></events></instrumentation></instrumentationManifest>
"""


def test_bad_manifests(tmp):
    cases = [("broken.man", "<instrumentationManifest>\n<events>\n<provider name='x' guid='nope'/>",
              "line 3"),
             ("empty.man", "<a></a>", "no <provider>")]
    for name, text, says in cases:
        path = os.path.join(tmp, name)
        open(path, "w").write(text)
        p = run("etl", "events", "--manifest", path, os.path.join(DATA, "primitive-types.etl"), expect=1)
        check(says in p.stderr and name in p.stderr and p.stdout == "",
              "%s: refused, naming the file and %r: %s" % (name, says, p.stderr.strip()))
    p = run("etl", "events", "--manifest", os.path.join(tmp, "missing.man"),
            os.path.join(DATA, "primitive-types.etl"), expect=1)
    check("missing.man" in p.stderr, "a manifest that is not there")


def main():
    ref = mf_ref.Manifest(MAN)
    test_clr(ref)
    test_names()
    with tempfile.TemporaryDirectory() as tmp:
        test_bad_manifests(tmp)
        test_levels_keywords(tmp)
    finish()


if __name__ == "__main__":
    main()
