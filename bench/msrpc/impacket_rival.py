#!/usr/bin/python3
"""The impacket side of bench/msrpc/msrpc.sh (python3-impacket's rrp):
    impacket_rival.py first|rate|parallel PORT N   (password: NTLENS_PASSWORD)
Same operations as msrpc-bench: OpenHKPD then QueryValue("Global"), with
the lpData buffer sized by the caller (BENCH_BUFFER) to fit the block."""
import os
import resource
import statistics
import sys
import threading
import time

from impacket.dcerpc.v5 import rrp, transport

USER = os.environ.get("NTLENS_TEST_USER", "ntltest")
PASSWORD = os.environ["NTLENS_PASSWORD"]


def connect(port):
    t = transport.DCERPCTransportFactory(r"ncacn_np:127.0.0.1[\pipe\winreg]")
    t.set_dport(port)
    t.set_credentials(USER, PASSWORD, "", "", "")
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(rrp.MSRPC_UUID_RRP)
    return dce, rrp.hOpenPerformanceData(dce)["phKey"]


def query(dce, handle, size):
    req = rrp.BaseRegQueryValue()
    req["hKey"] = handle
    req["lpValueName"] = "Global\x00"
    req["lpData"] = b" " * size
    req["lpcbData"] = size
    req["lpcbLen"] = size
    resp = dce.request(req)
    return len(b"".join(resp["lpData"]))


def main():
    mode, port, n = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    size = int(os.environ.get("BENCH_BUFFER", "262144"))
    if mode == "first":
        times = []
        for _ in range(int(n)):
            t0 = time.monotonic()
            dce, h = connect(port)
            got = query(dce, h, size)
            times.append(time.monotonic() - t0)
            dce.disconnect()
        print("first_ms=%.2f bytes=%d" % (statistics.median(times) * 1e3, got))
    elif mode == "rate":
        dce, h = connect(port)
        query(dce, h, size)
        count, t0 = 0, time.monotonic()
        while time.monotonic() < t0 + n:
            got = query(dce, h, size)
            count += 1
        print("snapshots_per_s=%.1f bytes=%d" % (count / (time.monotonic() - t0), got))
    elif mode == "parallel":
        failed = []

        def work():
            try:
                dce, h = connect(port)
                query(dce, h, size)
                dce.disconnect()
            except Exception as e:  # noqa: BLE001 - counted and reported
                failed.append(e)
        t0 = time.monotonic()
        threads = [threading.Thread(target=work) for _ in range(int(n))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        total = time.monotonic() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        print("total_s=%.3f peak_rss_mb=%.1f pss_with_helpers_mb=%.1f failed=%d" %
              (total, rss, rss, len(failed)))


main()
