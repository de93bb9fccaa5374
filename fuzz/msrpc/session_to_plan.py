#!/usr/bin/env python3
"""Rewrites a recorded server byte stream (fuzz/corpus/rpc_client/*) as
fuzz_rpc_server plans: one plan per call, the reply's stub reassembled from
its fragments (a bind_ack becomes a plain "reply" plan).

    session_to_plan.py SESSION OUT"""
import struct
import sys


def plans(data):
    pos, stub = 0, bytearray()
    while pos + 16 <= len(data):
        ptype, flags = data[pos + 2], data[pos + 3]
        frag = struct.unpack_from('<H', data, pos + 8)[0]
        if frag < 16 or pos + frag > len(data):
            return
        if ptype == 12:                       # bind_ack
            yield bytes([0]) + struct.pack('<I', 0)
        elif ptype == 2:                      # response fragment
            stub += data[pos + 24:pos + frag]
            if flags & 2:
                yield bytes([0]) + struct.pack('<I', len(stub)) + bytes(stub)
                stub = bytearray()
        elif ptype == 3:                      # fault
            yield bytes([1]) + struct.pack('<I', 4) + data[pos + 24:pos + 28]
        pos += frag


with open(sys.argv[1], 'rb') as f:
    session = f.read()
with open(sys.argv[2], 'wb') as f:
    f.write(b''.join(plans(session)))
