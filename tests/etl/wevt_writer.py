#!/usr/bin/env python3
"""A writer of compiled manifests for the tests: an instrumentation manifest
(.man) read with ElementTree and written as the WEVT_TEMPLATE blob mc.exe
builds into a provider binary, plus the message table holding its texts,
following the layout of Joachim Metz's "Windows Event manifest binary
format" (libfwevt) and, for the template item fields it leaves unknown,
TDH's EVENT_PROPERTY_INFO, as lib/etl/wevt.c reads them. With --dll, the
two resources are linked into a DLL by llvm-rc and lld-link.

    wevt_writer.py MAN WEVT.bin MSG.bin [--dll OUT.dll LLVM_RC LLD_LINK]"""
import os
import struct
import subprocess
import sys
import tempfile
import uuid
import xml.etree.ElementTree as ET

IN_TYPES = ["win:UnicodeString", "win:AnsiString", "win:Int8", "win:UInt8", "win:Int16",
            "win:UInt16", "win:Int32", "win:UInt32", "win:Int64", "win:UInt64", "win:Float",
            "win:Double", "win:Boolean", "win:Binary", "win:GUID", "win:Pointer", "win:FILETIME",
            "win:SYSTEMTIME", "win:SID", "win:HexInt32", "win:HexInt64", "win:CountedString",
            "win:CountedAnsiString"]
# TDH's _TDH_OUT_TYPE numbers, by the manifest's names.
OUT_TYPES = ["xs:string", "xs:dateTime", "xs:byte", "xs:unsignedByte", "xs:short",
             "xs:unsignedShort", "xs:int", "xs:unsignedInt", "xs:long", "xs:unsignedLong",
             "xs:float", "xs:double", "xs:boolean", "xs:GUID", "xs:hexBinary", "win:HexInt8",
             "win:HexInt16", "win:HexInt32", "win:HexInt64", "win:PID", "win:TID", "win:Port",
             "win:IPv4", "win:IPv6", "win:SocketAddress", "win:CIMDateTime", "win:ETWTIME",
             "win:Xml", "win:ErrorCode", "win:Win32Error", "win:NTSTATUS", "win:HResult",
             "win:DateTimeCultureInsensitive", "win:Json", "win:Utf8", "win:Pkcs7WithTypeInfo",
             "win:CodePointer", "win:DateTimeUtc"]
WIN_OPCODES = {"win:Info": 0, "win:Start": 1, "win:Stop": 2, "win:DC_Start": 3, "win:DC_Stop": 4,
               "win:Extension": 5, "win:Reply": 6, "win:Resume": 7, "win:Suspend": 8,
               "win:Send": 9, "win:Receive": 240}
F_STRUCT, F_LENGTH_REF, F_COUNT_REF, F_LENGTH, F_COUNT = 1, 2, 4, 0x10, 0x20


def local(tag):
    return tag.rsplit("}", 1)[-1]


def kids(e, name):
    return [c for c in e if local(c.tag) == name]


def num(s):
    return int(s, 0)


class Blob:
    """The CRIM blob: offsets are patched in once what they name is placed."""

    def __init__(self):
        self.b = bytearray()
        self.strings = []      # (where to patch, text)

    def here(self):
        return len(self.b)

    def put(self, fmt, *v):
        at = len(self.b)
        self.b += struct.pack("<" + fmt, *v)
        return at

    def patch(self, at, v):
        struct.pack_into("<I", self.b, at, v)

    def string_ref(self, at, text):
        self.strings.append((at, text))

    def place_strings(self):
        for at, text in self.strings:
            data = (text + "\0").encode("utf-16-le")
            size = 4 + len(data)
            self.patch(at, self.here())
            self.put("I", size)
            self.b += data
            self.b += b"\0" * (-len(self.b) % 8)


class Writer:
    def __init__(self, path):
        self.root = ET.parse(path).getroot()
        self.strings = {}
        for e in self.root.iter():
            if local(e.tag) == "string" and e.get("id") not in self.strings:
                self.strings[e.get("id")] = e.get("value")
        self.messages = []     # message id - 1 -> text
        self.o = Blob()

    def message(self, text):
        if text.startswith("$(string.") and text.endswith(")"):
            text = self.strings.get(text[9:-1], text)
        self.messages.append(text)
        return len(self.messages)

    def element(self, sig, defs):
        """A SIG element: size, count, then what defs() writes."""
        o = self.o
        start = o.put("4sII", sig, 0, 0)
        n = defs()
        o.patch(start + 4, o.here() - start)
        o.patch(start + 8, n)
        return start

    def maps(self, prov):
        o = self.o
        maps = [m for ms in kids(prov, "maps") for m in ms if local(m.tag) in ("valueMap", "bitMap")]
        self.map_off = {}
        start = o.put("4sII", b"MAPS", 0, len(maps))
        slots = [o.put("I", 0) for _ in maps[1:]]
        for i, m in enumerate(maps):
            if i:
                o.patch(slots[i - 1], o.here())
            self.map_off[m.get("name")] = at = o.put("4sIII", b"BMAP" if local(m.tag) == "bitMap"
                                                     else b"VMAP", 0, 0, len(kids(m, "map")))
            o.string_ref(at + 8, m.get("name"))
            for e in kids(m, "map"):
                o.put("II", num(e.get("value")), self.message(e.get("message")))
            o.patch(at + 4, o.here() - at)
        o.patch(start + 4, o.here() - start)
        return start

    def items(self, t):
        """The template's data and structs, members after their struct."""
        out = []

        def walk(parent):
            for e in parent:
                if local(e.tag) not in ("data", "struct"):
                    continue
                i = len(out)
                out.append([e, 0])
                if local(e.tag) == "struct":
                    walk(e)
                    out[i][1] = sum(1 for c in e if local(c.tag) in ("data", "struct"))
        walk(t)
        return out

    def item(self, items, i):
        e, members = items[i]
        flags, a, b, count, length = 0, 0, 0, 0, 0
        if local(e.tag) == "struct":
            flags, a, b = F_STRUCT, i + 1, members
            fmt_types = struct.pack("<HH", a, b)
        else:
            a = IN_TYPES.index(e.get("inType")) + 1
            b = OUT_TYPES.index(e.get("outType")) + 1 if e.get("outType") in OUT_TYPES else 0
            fmt_types = struct.pack("<BBH", a, b, 0)
        for attr, fixed, ref in (("count", F_COUNT, F_COUNT_REF), ("length", F_LENGTH, F_LENGTH_REF)):
            v = e.get(attr)
            if v is None:
                continue
            try:
                v, f = num(v), fixed
            except ValueError:
                v, f = max(k for k in range(i) if items[k][0].get("name") == v
                           and local(items[k][0].tag) == "data"), ref
            flags |= f
            if attr == "count":
                count = v
            else:
                length = v
        mp = self.map_off[e.get("map")] if e.get("map") else 0
        at = self.o.put("I", flags)
        self.o.b += fmt_types
        self.o.put("IHHI", mp, count, length, 0)
        self.o.string_ref(at + 16, e.get("name"))

    def templates(self, prov):
        o = self.o
        self.tmpl_off = {}

        def defs():
            ts = [t for ts in kids(prov, "templates") for t in kids(ts, "template")]
            for t in ts:
                items = self.items(t)
                at = self.tmpl_off[t.get("tid")] = o.put("4sIIIII16s", b"TEMP", 0, len(items),
                                                         len(items), 0, 1, uuid.uuid4().bytes_le)
                o.patch(at + 16, o.here())
                for i in range(len(items)):
                    self.item(items, i)
                o.patch(at + 4, o.here() - at)
            return len(ts)
        return self.element(b"TTBL", defs)

    def tasks(self, prov):
        o = self.o
        self.task = {}
        self.opcode = {}        # (task name or None, opcode name) -> (offset, value)

        def task_defs():
            ts = [t for ts in kids(prov, "tasks") for t in kids(ts, "task")]
            for t in ts:
                at = o.put("II16sI", num(t.get("value")), 0xffffffff, b"\0" * 16, 0)
                o.string_ref(at + 24, t.get("name"))
                self.task[t.get("name")] = (at, num(t.get("value")))
            return len(ts)

        def opcode_defs():
            ops = [(None, 0, op) for ops in kids(prov, "opcodes") for op in kids(ops, "opcode")]
            for ts in kids(prov, "tasks"):
                for t in kids(ts, "task"):
                    ops += [(t.get("name"), num(t.get("value")), op)
                            for os_ in kids(t, "opcodes") for op in kids(os_, "opcode")]
            for task, tv, op in ops:
                at = o.put("III", tv << 16 | num(op.get("value")), 0xffffffff, 0)
                o.string_ref(at + 8, op.get("name"))
                self.opcode[(task, op.get("name"))] = (at, num(op.get("value")))
            return len(ops)
        return [self.element(b"TASK", task_defs), self.element(b"OPCO", opcode_defs)]

    def keywords_levels(self, prov):
        """KEYW (mask, message, name: 16 bytes each) and LEVL (value, message, name: 12)."""
        o = self.o

        def defs(group, tag, fmt, key):
            def write():
                es = [e for g in kids(prov, group) for e in kids(g, tag)]
                for e in es:
                    at = o.put(fmt, num(e.get(key)), 0xffffffff, 0)
                    o.string_ref(at + struct.calcsize("<" + fmt) - 4, e.get("name"))
                return len(es)
            return write
        return [self.element(b"KEYW", defs("keywords", "keyword", "QII", "mask")),
                self.element(b"LEVL", defs("levels", "level", "III", "value"))]

    def events(self, prov):
        o = self.o

        def defs():
            evs = [e for es in kids(prov, "events") for e in kids(es, "event")]
            for e in evs:
                task_off, task_v = self.task.get(e.get("task"), (0, 0))
                op = e.get("opcode")
                if op is None:
                    op_off, op_v = 0, 0
                elif op in WIN_OPCODES:
                    op_off, op_v = 0, WIN_OPCODES[op]
                else:
                    op_off, op_v = self.opcode.get((e.get("task"), op)) or self.opcode[(None, op)]
                tmpl = self.tmpl_off[e.get("template")] if e.get("template") else 0
                o.put("HBBBBHQIIIIIIII", num(e.get("value")), num(e.get("version") or "0"), 0, 0,
                      op_v, task_v, 0, 0xffffffff, tmpl, op_off, 0, task_off, 0, 0, 0)
            return len(evs)
        start = o.put("4sIII", b"EVNT", 0, 0, 0)
        n = defs()
        o.patch(start + 4, o.here() - start)
        o.patch(start + 8, n)
        return start

    def provider(self, prov, desc_at):
        o = self.o
        o.patch(desc_at + 16, o.here())
        wevt = o.put("4sIIII", b"WEVT", 0, self.message(prov.get("name")), 7, 0)
        slots = [o.put("II", 0, 0) for _ in range(7)]
        elements = [self.maps(prov), self.templates(prov), *self.tasks(prov), self.events(prov),
                    *self.keywords_levels(prov)]
        for slot, at in zip(slots, elements):
            o.patch(slot, at)
        o.patch(wevt + 4, o.here() - wevt)

    def write(self):
        o = self.o
        provs = [p for p in self.root.iter() if local(p.tag) == "provider"]
        o.put("4sIHHI", b"CRIM", 0, 3, 1, len(provs))
        descs = [o.put("16sI", uuid.UUID(p.get("guid").strip("{}")).bytes_le, 0) for p in provs]
        for p, d in zip(provs, descs):
            self.provider(p, d)
        o.place_strings()
        o.patch(4, o.here())
        return bytes(o.b)

    def message_table(self):
        """MESSAGE_RESOURCE_DATA: one block, Unicode entries ending in CR LF."""
        entries = bytearray()
        for text in self.messages:
            data = (text + "\r\n\0").encode("utf-16-le")
            data += b"\0" * (-(4 + len(data)) % 4)
            entries += struct.pack("<HH", 4 + len(data), 1) + data
        return struct.pack("<IIII", 1, 1, len(self.messages), 16) + bytes(entries)


def link(wevt, msgs, dll, llvm_rc, lld_link):
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in (("wevt.bin", wevt), ("msg.bin", msgs)):
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
        with open(os.path.join(tmp, "res.rc"), "w") as f:
            f.write('1 WEVT_TEMPLATE "wevt.bin"\n1 11 "msg.bin"\n')
        subprocess.run([llvm_rc, "/fo", os.path.join(tmp, "res.res"), os.path.join(tmp, "res.rc")],
                       check=True, cwd=tmp)
        subprocess.run([lld_link, "/dll", "/noentry", "/machine:x64", "/out:" + os.path.abspath(dll),
                        os.path.join(tmp, "res.res")], check=True, cwd=tmp)


def main():
    w = Writer(sys.argv[1])
    wevt = w.write()
    msgs = w.message_table()
    for path, data in ((sys.argv[2], wevt), (sys.argv[3], msgs)):
        with open(path, "wb") as f:
            f.write(data)
    if len(sys.argv) > 4 and sys.argv[4] == "--dll":
        link(wevt, msgs, *sys.argv[5:8])


if __name__ == "__main__":
    main()
