#!/usr/bin/env python3
"""`etl events` with names and fields, through the real binary: every field
of every TraceLogging event of the shared traces against the independent
decoder tl_ref.py, provider names and -p NAME, --raw, and a schema that
lies (the event shown with the reason, the run going on)."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mof_ref  # noqa: E402
import tl_ref  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
DATA = os.path.join(os.environ["NTLENS_SHARED_DATA"], "etl")


def run(*args, expect=0):
    p = subprocess.run([NTLENS, *args], capture_output=True, text=True)
    check(p.returncode == expect, "%s exited %d, expected %d: %s" % (" ".join(args), p.returncode,
                                                                       expect, p.stderr.strip()))
    return p


def rows(*args):
    return [json.loads(line) for line in run("etl", "events", "--format", "jsonl", *args).stdout.splitlines()]


def test_tracelogging():
    for name, n in (("primitive-types.etl", 5), ("SelfDescribingSingleEvent.etl", 1)):
        path = os.path.join(DATA, name)
        want = list(tl_ref.events(path))
        got = [{"provider": r["provider"], "event": r["event"], "fields": r["fields"]}
               for r in rows(path) if r["fields"] is not None and r["group"] is None]
        check(len(want) == n and got == want, "%s: fields as tl_ref decodes them:\n%s\n%s" % (name, got, want))
    table = run("etl", "events", os.path.join(DATA, "SelfDescribingSingleEvent.etl")).stdout
    check("MySource" in table and "TestEvent" in table and "a.b=Hello a.c=World!" in table,
          "table: provider, event, struct members as name=value")
    table = run("etl", "events", os.path.join(DATA, "primitive-types.etl")).stdout
    check("string_type=Mercury boolean_type=false char_type=M int16_type=-51" in table, "table fields")


def test_names():
    net = os.path.join(DATA, "net.4.5.2.x64.etl")
    clr = rows("-p", "Microsoft-Windows-DotNETRuntime", net)
    check(len(clr) == 32730 and all(r["provider_guid"] == "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4"
                                    for r in clr), "-p NAME from the well-known table")
    check(len(rows("-p", "E13C0D23-CCBC-4E12-931B-D9CC2EEE27E4", "-n", "5", net)) == 5, "-p GUID")
    check(len(rows("-p", "solar_system", os.path.join(DATA, "primitive-types.etl"))) == 5,
          "-p NAME from TraceLogging provider traits")
    check(rows("-p", "nobody-has-this", net) == [], "-p an unknown name matches nothing")
    images = rows("--group", "Image", "-n", "3", net)
    check(all(r["provider"] == "Windows Kernel" and r["event"].startswith("Image/") for r in images),
          "kernel events: provider and Group/Opcode event names")
    raw = rows("--raw", "-n", "400", os.path.join(DATA, "PerfViewData-gcevents.etl"))
    check(all("fields" not in r and "event" not in r for r in raw) and
          raw[-1]["provider"] == "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", "--raw: the header-only records")
    run("etl", "events", "-p", "", net, expect=2)


def test_table_names():
    """The table's Provider/Group and Event cells are the names the JSON records give (kernel
    Group/Opcode, the provider table's, TraceLogging's, a manifest's), else the GUID and the
    opcode, row by row on every shared trace."""
    man = os.path.join(DATA, "manifests", "ClrEtwAll.man")
    for name in sorted(f for f in os.listdir(DATA) if f.endswith(".etl")):
        path = os.path.join(DATA, name)
        for extra in ([], ["--manifest", man]):
            recs = rows(*extra, path)
            lines = run("etl", "events", *extra, path).stdout.splitlines()[1:]
            bad = []
            for r, line in zip(recs, lines):
                provider = r["provider"] or r["provider_guid"] or ""
                event = r["event"] if r["event"] is not None else str(r["opcode"])
                # Cells are padded to their widths (8, 40, 16) unless longer.
                want = " %s %s %s " % (r["kind"].ljust(8), provider.ljust(40), event.ljust(16))
                if want not in line + " ":
                    bad.append((want, line))
            kernel = sum(1 for r in recs if r["provider"] == "Windows Kernel")
            check(len(lines) == len(recs) and not bad,
                  "%s %s: table names as JSON's, %d of %d rows differ (%d kernel): %s" %
                  (name, " ".join(extra), len(bad), len(recs), kernel, bad[:2]))


def test_json_templates():
    """JSON rows of one trace come from per-layout templates; with a file column (several
    traces) they go cell by cell. The same trace given twice must give each row twice, byte
    for byte but for the file member."""
    man = os.path.join(DATA, "manifests", "ClrEtwAll.man")
    net = ["--kind", "event", "--manifest", man]
    cases = [[], ["--raw"], ["--local-time"], ["--stream", "--manifest", man]]
    for name in sorted(f for f in os.listdir(DATA) if f.endswith(".etl")):
        # net: its first 2 s hold 30 kernel layouts (rows from fragments MOF templates keep).
        nets = (net, ["-g", "PerfInfo", "--raw"], ["--end", "+2"])
        for extra in nets if name.startswith("net.") else cases:
            path = os.path.join(DATA, name)
            for fmt in ("jsonl", "json"):
                one = run("etl", "events", "-f", fmt, *extra, path).stdout.splitlines()
                two = run("etl", "events", "-f", fmt, *extra, path, path).stdout.splitlines()
                if fmt == "json":  # "[", rows each ending "," but the last, "]"
                    one = [r.rstrip(",") for r in one[1:-1]]
                    two = [r.rstrip(",") for r in two[1:-1]]
                prefix = '{"file":%s,' % json.dumps(path)
                cut = ["{" + r[len(prefix):] for r in two if r.startswith(prefix)]
                check(len(one) > 0 and len(cut) == len(two) and sorted(cut) == sorted(one * 2),
                      "%s %s -f %s: template rows equal cell rows (%d rows, %d with the file)" %
                      (name, " ".join(extra), fmt, len(one), len(two)))


def test_kernel_event_names():
    """A kernel event's name is its group and opcode cells joined (the name is kept in the
    event's MOF template, the cells in its row layout's fragments: two keyed apart)."""
    for name in sorted(f for f in os.listdir(DATA) if f.endswith(".etl")):
        got = [r for r in rows(os.path.join(DATA, name)) if r["group"] is not None]
        bad = [r for r in got if r["event"] != "%s/%s" % (r["group"], r["opcode_name"])]
        check(not bad, "%s: %d of %d kernel events named apart from their cells: %s" %
              (name, len(bad), len(got), [(r["event"], r["group"], r["opcode_name"]) for r in bad[:2]]))


def test_kernel():
    for name in ("ShutdownPerfDiagLogger.etl", "net.4.5.2.x64.etl"):
        path = os.path.join(DATA, name)
        want = list(mof_ref.events(path))  # in file order
        got = [r for r in rows("--stream", path) if r["group"] is not None]
        decoded = [r["fields"] for r in got if r["fields"] is not None]
        check(len(want) > 5000 and decoded == want,
              "%s: kernel fields as mof_ref decodes them (%d, %d)" % (name, len(decoded), len(want)))
        check(not any(r["decode_error"] for r in got), name + ": no decode errors")
        dcstart = [r for r in got if r["event"] == "Process/DCStart"]
        check(any(r["fields"]["ImageFileName"] == "System" and r["fields"]["ProcessId"] == 4 for r in dcstart),
              name + ": System is process 4")
        check(all(r["kind"] != "perfinfo" or r["pid"] == r["fields"]["ProcessId"] for r in dcstart),
              name + ": PERFINFO events take their pid from the payload")
    perfdiag = rows("--group", "Image", os.path.join(DATA, "ShutdownPerfDiagLogger.etl"))
    nt = [r["fields"] for r in perfdiag if r["event"] == "Image/DCStart" and
          r["fields"]["FileName"].lower().endswith("ntoskrnl.exe")]
    check(len(nt) == 1 and nt[0]["ImageBase"] == "0xfffff802424ab000" and
          nt[0]["ImageSize"] == "0x0000000000ab6000", "ntoskrnl's base and size from its DCStart event")
    net = os.path.join(DATA, "net.4.5.2.x64.etl")
    check(len(rows("--pid", "4", "--group", "Process", net)) > 0, "--pid matches a pid taken from the payload")
    udp = rows("--group", "UdpIp", net)
    check(any(r["fields"]["saddr"] == "10.128.0.55" and r["fields"]["dport"] == 138 and r["pid"] == 4
              for r in udp), "UdpIp: IPv4 addresses, ports as numbers, the pid from PID")
    stacks = [r for r in rows("--group", "StackWalk", net) if r["event"] == "StackWalk/Stack"]
    check(len(stacks) == 252 and all(r["pid"] == r["fields"]["StackProcess"] and r["fields"]["Stack"]
                                     for r in stacks), "StackWalk: the stack as an array, the pid from StackProcess")
    services = [r["fields"] for r in rows("--event", "Config/Services", net)]
    check(len(services) == 157 and {"ServiceName": "Appinfo", "ProcessName": "svchost.exe",
                                     "ProcessId": 144, "ServiceState": 4}.items() <=
          next(f for f in services if f["ServiceName"] == "Appinfo").items(),
          "SystemConfig Services: the service rundown, Appinfo running in svchost.exe")
    keys = rows("--stream", "--group", "StackWalk", net)
    defined = {r["fields"]["StackKey"] for r in keys if r["event"] in ("StackWalk/KeyDelete", "StackWalk/KeyRundown")}
    refs = [r["fields"]["StackKey"] for r in keys if r["event"].startswith("StackWalk/StackKey")]
    check(len(refs) == 9107 and all(k in defined for k in refs),
          "compressed stacks: every key a StackKeyKernel/User event names is defined by a key event")
    files = [r["fields"]["FileName"] for r in rows("--group", "FileIo", net) if r["fields"]]
    check(len(files) == 3084 and any(f.lower().endswith(".dll") for f in files), "FileIo names")


def test_filters_and_order():
    net = os.path.join(DATA, "net.4.5.2.x64.etl")
    every = rows(net)
    ts = [r["clock"] for r in every]
    stream = [r["clock"] for r in rows("--stream", net)]
    check(len(ts) == 179474 and ts == sorted(ts), "time order by default")
    check(sorted(stream) == ts and stream != ts, "--stream: file order (the same events)")
    run("etl", "events", "--stream", "--sorted", net, expect=2)
    tid = next(r["tid"] for r in every[5000:] if r["tid"] is not None)
    check(rows("--tid", str(tid), net) == [r for r in every if r["tid"] == tid], "--tid")
    level = [r for r in every if r["kind"] == "event" and r["level"] <= 3]
    check(rows("--level", "3", net) == level, "--level: that level or more severe")
    kw = [r for r in every if r["kind"] == "event" and int(r["keyword"], 16) & 0x8]
    check(len(kw) > 0 and rows("--keywords", "0x8", net) == kw, "--keywords MASK")
    check(rows("--event", "image/dcstart", net) == [r for r in every if r["event"] == "Image/DCStart"],
          "--event NAME, any case")
    # The trace starts at 00:07:00.6236167 (its header).
    second = [r for r in every if "2020-07-29T00:07:01.6236167Z" <= r["timestamp"] < "2020-07-29T00:07:02.1236167Z"]
    check(len(second) > 1000 and rows("--start", "+1", "--end", "+1.5", net) == second,
          "--start/--end as offsets from the trace start")
    check(rows("--start", "2020-07-29T00:07:01.6236167Z", "--end", "2020-07-29T00:07:02.1236167", net) == second,
          "--start/--end as ISO 8601 times")
    run("etl", "events", "--start", "yesterday", net, expect=2)
    a, b = os.path.join(DATA, "primitive-types.etl"), os.path.join(DATA, "lxcore_kernel.etl")
    merged, one, two = rows(a, b), rows(a), rows(b)
    check(len(merged) == len(one) + len(two) and
          [r["timestamp"] for r in merged] == sorted(r["timestamp"] for r in one + two) and
          {r["file"] for r in merged} == {a, b} and "file" not in one[0],
          "several traces: merged in time order, each event naming its file")
    check([r["event"] for r in merged if r["file"] == a] == [r["event"] for r in one],
          "several traces: each trace's events as it gives them alone")


def test_stats():
    net = os.path.join(DATA, "net.4.5.2.x64.etl")
    st = json.loads(run("etl", "stats", "--format", "json", net).stdout)
    check(sum(r["events"] for r in st) == 179474, "stats: every event counted once")
    check([r["events"] for r in st] == sorted((r["events"] for r in st), reverse=True), "stats: most first")
    clr = [r for r in st if r["provider"] == "Microsoft-Windows-DotNETRuntime"]
    check(sum(r["events"] for r in clr) == 32730, "stats: the CLR provider's events by id")
    sample = [r for r in st if r["event"] == "PerfInfo/SampleProf"]
    check(len(sample) == 1 and sample[0]["events"] == 79528 and sample[0]["bytes"] == 79528 * 32 and
          abs(sample[0]["percent"] - 100 * 79528 / 179474) < 0.01 and sample[0]["per_second"] > 0,
          "stats: bytes, share and rate of the profile samples: %s" % sample)
    tl = json.loads(run("etl", "stats", "--format", "json", os.path.join(DATA, "primitive-types.etl")).stdout)
    check({"provider": "solar_system", "event": "PrimitiveTypesTest"}.items() <= tl[0].items() and
          tl[0]["events"] == 5, "stats: TraceLogging names")
    run("etl", "stats", expect=2)


def test_unusual_names(tmp):
    """File names that are not printable ASCII (written by the general path after the direct
    one has begun them): a unit at the start, between two 4-unit words, at the end."""
    odd = os.path.join(tmp, "odd.etl")
    data = bytearray(open(os.path.join(DATA, "ShutdownPerfDiagLogger.etl"), "rb").read())
    for old, new in (("ntoskrnl.exe", "\u00e9toskrnl.exe"), ("kernel32.dll", "kern\x01l32.dll"),
                     ("ntdll.dll", "ntdll.dl\u20ac")):
        at = data.index(old.encode("utf-16-le"))
        data[at:at + 2 * len(old)] = new.encode("utf-16-le")
    open(odd, "wb").write(data)
    want = list(mof_ref.events(odd))
    got = [r["fields"] for r in rows("--stream", odd) if r["group"] is not None and r["fields"] is not None]
    names = {f.get("FileName", "").rsplit("\\", 1)[-1] for f in got}
    check(got == want and {"\u00e9toskrnl.exe", "kern\x01l32.dll", "ntdll.dl\u20ac"} <= names,
          "file names with non-ASCII and control units as mof_ref decodes them")


def test_lying_schema(tmp):
    bad = os.path.join(tmp, "lies.etl")
    shutil.copy(os.path.join(DATA, "primitive-types.etl"), bad)
    data = bytearray(open(bad, "rb").read())
    at = data.index(b"string_type\0\x02")
    data[at + len(b"string_type\0")] = 0x1F  # an in-type no header defines
    open(bad, "wb").write(data)
    got = rows(bad)
    broken = [r for r in got if r["decode_error"]]
    check(len(got) == 7 and len(broken) == 1 and broken[0]["fields"] is None and
          "unknown in-type" in broken[0]["decode_error"] and broken[0]["event"] == "PrimitiveTypesTest",
          "a lying schema: that event shown raw with the reason, the others decoded: %s" % broken)
    table = run("etl", "events", bad).stdout
    check("!TraceLogging event at offset" in table, "the table names the reason")


def token_blob():
    """A self-relative TOKEN_ACCESS_INFORMATION (64-bit) written from the
    documented structures: LocalService, two groups, two privileges."""
    b, n = bytearray(1024), 88

    def sid(auth, subs):
        nonlocal n
        at = n
        b[at], b[at + 1], b[at + 7] = 1, len(subs), auth
        for i, v in enumerate(subs):
            struct.pack_into("<I", b, at + 8 + 4 * i, v)
        n = (n + 8 + 4 * len(subs) + 7) & ~7
        return at
    sids = [sid(5, [19]), sid(16, [16384]), sid(5, [32, 545])]
    h, arr = n, n + 16 + 32 * 8
    struct.pack_into("<IIQ", b, h, 3, 0, arr)
    for i, (o, a) in enumerate(zip(sids, [0, 0x60, 7])):
        struct.pack_into("<QQ", b, arr + 16 * i, o, a)
    n = arr + 48
    struct.pack_into("<QQQ", b, 0, h, 0, n)
    struct.pack_into("<IQIQI", b, n, 2, 0x17, 3, 0x1d, 3)
    n += 28
    struct.pack_into("<QIIII", b, 24, 0x3e5, 1, 0, 3, 0x1002800)
    struct.pack_into("<Q", b, 72, sids[1])
    return bytes(b[:n])


def test_format(tmp):
    blob = token_blob()
    p = subprocess.run([NTLENS, "format", "token", "-", "--format", "jsonl"], input=blob.hex(" ", 4),
                       capture_output=True, text=True)
    got = [json.loads(line) for line in p.stdout.splitlines()]
    want = [("SidHash", "S-1-5-19", "0x00000000"), ("SidHash", "S-1-16-16384", "0x00000060"),
            ("SidHash", "S-1-5-32-545", "0x00000007"),
            ("Privilege", "0x17 SeChangeNotifyPrivilege", "0x00000003"),
            ("Privilege", "0x1d SeImpersonatePrivilege", "0x00000003"),
            ("AuthenticationId", "0x3e5", None), ("TokenType", "TokenPrimary", None),
            ("ImpersonationLevel", "SecurityAnonymous", None),
            ("MandatoryPolicy", "NO_WRITE_UP|NEW_PROCESS_MIN", None), ("Flags", "0x1002800", None),
            ("AppContainerNumber", "0", None), ("TrustLevelSid", "S-1-16-16384", None)]
    check(p.returncode == 0 and [(r["field"], r["value"], r["attributes"]) for r in got] == want,
          "format token: a blob as hex on stdin, as seed 002 shows one: %s %s" % (got, p.stderr))
    raw = os.path.join(tmp, "token.bin")
    open(raw, "wb").write(blob)
    check(run("format", "token", raw).stdout.count("SidHash") == 3, "format token: raw bytes from a file")
    lies = bytearray(blob)
    lies[89] = 200  # the first SID claims 200 sub-authorities
    open(raw, "wb").write(lies)
    p = run("format", "token", raw, expect=1)
    check("malformed SID" in p.stderr and "0x58" in p.stderr, "format token: a lying blob, with the offset")
    check(run("format", "sid", "010100000000000512000000").stdout.split()[-1] == "S-1-5-18", "format sid")
    check(json.loads(run("format", "filetime", "132405520209497420", "-f", "json").stdout)[0]["value"] ==
          "2020-07-30T03:07:00.9497420Z", "format filetime")
    run("format", "guid", "00", expect=1)
    run("format", "nonsense", "00", expect=2)


def main():
    test_tracelogging()
    test_names()
    test_table_names()
    test_json_templates()
    test_kernel_event_names()
    test_kernel()
    test_filters_and_order()
    test_stats()
    with tempfile.TemporaryDirectory() as tmp:
        test_lying_schema(tmp)
        test_unusual_names(tmp)
        test_format(tmp)
    finish()


if __name__ == "__main__":
    main()
