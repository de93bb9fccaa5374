"""An independent manifest decoder for the tests: the manifest read with
Python's ElementTree, payloads decoded by the rules of Microsoft's
instrumentation manifest schema (in-types, length and count attributes,
structs, maps), values shown as `etl events --format json` shows them."""
import struct
import uuid
import xml.etree.ElementTree as ET

FIXED = {"win:Int8": "<b", "win:UInt8": "<B", "win:Int16": "<h", "win:UInt16": "<H",
         "win:Int32": "<i", "win:UInt32": "<I", "win:Int64": "<q", "win:UInt64": "<Q",
         "win:HexInt32": "<I", "win:HexInt64": "<Q", "win:Float": "<f", "win:Double": "<d",
         "win:Boolean": "<I"}


class Lies(Exception):
    """The payload does not fit the template."""


def local(tag):
    return tag.rsplit("}", 1)[-1]


class Manifest:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        strings = {}
        for e in root.iter():
            if local(e.tag) == "string" and e.get("id") not in strings:
                strings[e.get("id")] = e.get("value")
        self.events = {}
        self.names = {}
        for prov in (e for e in root.iter() if local(e.tag) == "provider"):
            guid = prov.get("guid").strip("{}").lower()
            self.names[guid] = prov.get("name")
            templates = {t.get("tid"): t for t in prov.iter() if local(t.tag) == "template"}
            maps = {}
            for m in prov.iter():
                if local(m.tag) in ("valueMap", "bitMap"):
                    entries = []
                    for e in m:
                        msg = e.get("message")
                        if msg.startswith("$(string.") and msg[9:-1] in strings:
                            msg = strings[msg[9:-1]]
                        entries.append((int(e.get("value"), 0), msg))
                    maps[m.get("name")] = (local(m.tag) == "bitMap", entries)
            for ev in (e for e in prov.iter() if local(e.tag) == "event"):
                t = templates.get(ev.get("template"))
                self.events[(guid, int(ev.get("value"), 0), int(ev.get("version", "0")))] = (t, maps)

    def decode(self, guid, event_id, version, payload, is64):
        """The fields as a dict, None when the manifest lacks the event; Lies."""
        key = (guid, event_id, version)
        if key not in self.events:
            return None
        template, maps = self.events[key]
        d = Decoder(payload, is64, maps)
        fields = d.items(list(template) if template is not None else [])
        if d.pos != len(payload):
            raise Lies("%d bytes left" % (len(payload) - d.pos))
        return fields


class Decoder:
    def __init__(self, payload, is64, maps):
        self.p, self.pos, self.is64, self.maps, self.values = payload, 0, is64, maps, {}

    def take(self, n):
        if self.pos + n > len(self.p):
            raise Lies("past the end")
        b = self.p[self.pos:self.pos + n]
        self.pos += n
        return b

    def amount(self, text):
        return int(text) if text.isdigit() else self.values[text]

    def string(self, e, unit):
        if e.get("length"):
            return self.take(self.amount(e.get("length")) * unit)
        i = self.pos
        while i + unit <= len(self.p) and self.p[i:i + unit] != b"\0" * unit:
            i += unit
        s = self.take(i - self.pos)
        self.take(unit)
        return s

    def value(self, e):
        t, out = e.get("inType"), e.get("outType", "")
        if t in FIXED:
            size = struct.calcsize(FIXED[t])
            v = struct.unpack(FIXED[t], self.take(size))[0]
            self.values[e.get("name")] = v
            if e.get("map"):
                bitmap, entries = self.maps[e.get("map")]
                names = [m for val, m in entries if (val and v & val == val)] if bitmap else \
                    [m for val, m in entries if val == v][-1:]
                if names:
                    return "|".join(names)
            if t == "win:Boolean":
                return v != 0
            if t.startswith("win:HexInt") or out.startswith("win:HexInt"):
                return "0x%0*x" % (2 * size, v)
            return v
        if t == "win:Pointer":
            size = 8 if self.is64 else 4
            return "0x%0*x" % (2 * size, int.from_bytes(self.take(size), "little"))
        if t == "win:UnicodeString":
            return self.string(e, 2).decode("utf-16-le", "replace")
        if t == "win:AnsiString":
            return self.string(e, 1).decode("latin-1")
        if t == "win:GUID":
            return str(uuid.UUID(bytes_le=bytes(self.take(16))))
        if t == "win:Binary":
            return self.take(self.amount(e.get("length"))).hex()
        raise Lies("in-type %s not in the reference" % t)

    def items(self, elems):
        out = {}
        for e in elems:
            kind = local(e.tag)
            if kind not in ("data", "struct"):
                continue
            one = (lambda e=e: self.items(list(e))) if kind == "struct" else (lambda e=e: self.value(e))
            if e.get("count") is not None:
                out[e.get("name")] = [one() for _ in range(self.amount(e.get("count")))]
            else:
                out[e.get("name")] = one()
        return out
