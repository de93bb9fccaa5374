#!/usr/bin/env python3
"""An independent SampledProfile reference for `ntlens profile --etl`.

Written apart from lib/profile, from Microsoft's documented kernel event
layouts (the MOF classes SampledProfile, Image_Load, Process_V2..V4_TypeGroup1
and Thread_V2..V3_TypeGroup1); the buffers and records come from
tests/etl/etl_ref.py, itself independent of lib/etl. Events are taken in
timestamp order (file order among equal ones), and each sample is placed in
the module loaded at its address, in its thread's process or the kernel's
space, at that time. Stacks: a StackWalk event (MOF StackWalk_Event,
opcode 32: EventTimeStamp, StackProcess, StackThread, Stack1..N) or the
keys of compressed stack walking (37 kernel, 38 user: EventTimeStamp,
StackProcess, StackThread, StackKey; defined by 34-36: StackKey,
Stack1..N, logged after their use) belong to the sample of that thread and
timestamp. The end rundown (DCEnd, opcode 4) tells what the start did not:
a thread never placed belongs to its process, a process never named gets
its name, a module at a base where none is loaded was there since the start;
samples of such threads, and samples in no module that such a module holds,
are placed as if known at their time. Prints one JSON object: the SampledProfile event count, hits per
(pid, module, base) and per pid, and how many samples have a stack of at
least one frame beyond the sampled IP.

    profile_ref.py FILE.etl
"""
import bisect
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "etl"))
import etl_ref  # noqa: E402

KERNEL = "kernel"
HEADER_SIZE = {"system": 32, "compact": 24, "perfinfo": 16}
WIDE = (2, 4, 0x11)  # header types whose pointers are 8 bytes


def events(path):
    """(timestamp, order, group, opcode, version, is64, payload) of kernel events."""
    raw = open(path, "rb").read()
    off, order = 0, 0
    while off < len(raw):
        size, saved = struct.unpack_from("<II", raw, off)
        offset_field = struct.unpack_from("<I", raw, off + 0x30)[0]
        bflags = struct.unpack_from("<H", raw, off + 0x34)[0]
        chunk = raw[off:off + size]
        if bflags & 0x40:
            data = chunk[:0x48] + etl_ref.lz77_plain_decompress(chunk[0x48:], saved - 0x48)
        else:
            data = chunk[:max(saved, offset_field if offset_field <= size else 0)]
        for kind, htype, rec in etl_ref.records(data):
            order += 1
            if kind not in HEADER_SIZE:
                continue
            marker_low = struct.unpack_from("<H", rec, 0)[0]
            hook = struct.unpack_from("<H", rec, 6)[0]
            ts = struct.unpack_from("<Q", rec, 8 if kind == "perfinfo" else 16)[0]
            ext = (8 if marker_low & 0x8000 else 0) + 8 * ((marker_low >> 8) & 7)
            yield (ts, order, hook >> 8, hook & 0xFF, marker_low & 0xFF, htype in WIDE,
                   kind, htype, rec, rec[HEADER_SIZE[kind] + ext:])
        off += size


def process_name(body, version, is64):
    psz = 8 if is64 else 4
    pid = struct.unpack_from("<I", body, psz)[0]
    sid = psz + 16 + (psz if version >= 3 else 0) + (4 if version >= 4 else 0)
    if struct.unpack_from("<I", body, sid)[0] == 0:
        name = sid + 4
    else:
        name = sid + 2 * psz + 8 + 4 * body[sid + 2 * psz + 1]
    return pid, body[name:].split(b"\0", 1)[0].decode("latin-1")


class Space:
    """Loaded modules of one address space: sorted, disjoint (base, end, key)."""

    def __init__(self):
        self.mods = []

    def load(self, base, size, key):
        end = base + size
        self.mods = [m for m in self.mods if m[1] <= base or m[0] >= end]
        bisect.insort(self.mods, (base, end, key))

    def unload(self, base):
        self.mods = [m for m in self.mods if m[0] != base]

    def find(self, addr):
        i = bisect.bisect_right(self.mods, (addr, float("inf"), "")) - 1
        if i >= 0 and self.mods[i][0] <= addr < self.mods[i][1]:
            return self.mods[i][2]
        return None


def stack_of(refs, defs):
    """The frames of one sample's StackWalk refs: kernel key, then user key."""
    frames = []
    for kind, ts, value in sorted(refs, key=lambda r: r[0]):
        if kind == 32:
            frames += value
            continue
        later = [d for d in defs.get(value, []) if d[0] >= ts]
        if later:
            frames += min(later)[1]
    return frames


def main(path):
    spaces, thread_pid, names = {}, {}, {}
    modules, processes, samples = {}, {}, 0
    placed, late = [], set()   # (pid or None, module key or None, tid, ip); DCEnd-only keys
    sample_at, refs, defs = {}, {}, {}
    ordered = sorted(events(path), key=lambda e: e[:2])
    for ts, _, group, op, version, is64, kind, htype, rec, body in ordered:
        img = etl_ref.image_event(kind, htype, rec)
        if img:
            top = 1 << (63 if is64 else 31)
            space = KERNEL if img["base"] & top else img["pid"]
            sp = spaces.setdefault(space, Space())
            if img["kind"] == "Unload":
                sp.unload(img["base"])
            elif img["kind"] == "DCEnd" and img["size"] and sp.find(img["base"]) is None:
                key = "%s|%s|0x%x" % ("" if space == KERNEL else space,
                                      img["name"].replace("/", "\\").split("\\")[-1], img["base"])
                sp.load(img["base"], img["size"], key)
                late.add(key)
            elif img["kind"] in ("Load", "DCStart") and img["size"]:
                key = "%s|%s|0x%x" % ("" if space == KERNEL else space,
                                      img["name"].replace("/", "\\").split("\\")[-1], img["base"])
                sp.load(img["base"], img["size"], key)
        elif group == 0x03 and op in (1, 3, 4):
            pid, name = process_name(body, version, is64)
            if op != 4 or pid not in names:
                names[pid] = name
        elif group == 0x05 and op in (1, 3, 4):
            pid, tid = struct.unpack_from("<II", body, 0)
            if op != 4 or tid not in thread_pid:
                thread_pid[tid] = pid
        elif group == 0x18 and op in (32, 34, 35, 36, 37, 38):
            ptr, psz = ("<Q", 8) if is64 else ("<I", 4)
            if op in (34, 35, 36):
                key = struct.unpack_from(ptr, body, 0)[0]
                frames = [struct.unpack_from(ptr, body, i)[0]
                          for i in range(psz, len(body) - psz + 1, psz)]
                defs.setdefault(key, []).append((ts, frames))
                continue
            event_ts, _, tid = struct.unpack_from("<QII", body, 0)
            if op == 32:
                value = [struct.unpack_from(ptr, body, i)[0]
                         for i in range(16, len(body) - psz + 1, psz)]
            else:
                value = struct.unpack_from(ptr, body, 16)[0]
            refs.setdefault((tid, event_ts), []).append((op, event_ts, value))
        elif group == 0x0F and op == 46:
            samples += 1
            ip = struct.unpack_from("<Q" if is64 else "<I", body, 0)[0]
            tid = struct.unpack_from("<I", body, 8 if is64 else 4)[0]
            sample_at.setdefault((tid, ts), ip)
            pid = thread_pid.get(tid)
            key = None
            if pid is not None and pid in spaces:
                key = spaces[pid].find(ip)
            if key is None and KERNEL in spaces:
                key = spaces[KERNEL].find(ip)
            placed.append((pid, key, tid, ip))
    for pid, key, tid, ip in placed:
        if pid is None:
            pid = thread_pid.get(tid)
        if key is None:
            for space in (pid, KERNEL):
                found = spaces[space].find(ip) if space in spaces else None
                if found in late:
                    key = found
                    break
        key = key or "|unknown|"
        modules[key] = modules.get(key, 0) + 1
        pkey = "" if pid is None else str(pid)
        processes[pkey] = processes.get(pkey, 0) + 1
    with_stack = 0
    for key, ip in sample_at.items():
        frames = stack_of(refs.get(key, []), defs)
        if frames and frames[0] == ip:
            frames = frames[1:]
        with_stack += bool(frames)
    json.dump({"samples": samples, "modules": modules, "processes": processes,
               "with_stack": with_stack,
               "names": {str(k): v for k, v in names.items()}}, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
