#!/usr/bin/python3
"""The measuring half of bench/prom/exporter.sh: starts the exporter with one
module per simulated target (each module a distinct connection to the same
smbd), then measures. argv: NTLENS DIR SMBD_PORT TARGETS DIRECT_RATE."""
import os
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "prom"))
from proctree import cpu_s, free_port, rollup, tree  # noqa: E402

ntlens, d, smbd_port, ntargets, direct = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), float(sys.argv[5])
target = "127.0.0.1:%d" % smbd_port


def scrape(port, module):
    with urllib.request.urlopen("http://127.0.0.1:%d/probe?target=%s&module=%s"
                                % (port, target, module), timeout=60) as r:
        body = r.read()
    return b"probe_success 1" in body


with open(os.path.join(d, "bench.pass"), "w") as f:
    f.write(os.environ["NTLENS_PASSWORD"] + "\n")
cfg = os.path.join(d, "bench.yml")
with open(cfg, "w") as f:
    f.write("auths:\n  a:\n    user: ntltest\n    password_file: %s/bench.pass\nmodules:\n" % d)
    for i in range(ntargets):
        f.write("  m%d:\n    auth: a\n    collectors: [cpu, memory, process, system]\n" % i)
port = free_port()
exp = subprocess.Popen([ntlens, "exporter", "--config", cfg, "--listen", "127.0.0.1:%d" % port,
                        "--concurrency", "16"], stderr=subprocess.DEVNULL)
try:
    for _ in range(50):
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=5).read()
            break
        except OSError:
            time.sleep(0.1)
    base_pss = rollup(tree(exp.pid), "Pss")
    scrape(port, "m0")
    n = 200
    c0, t0 = cpu_s(tree(exp.pid)), time.monotonic()
    ok = sum(scrape(port, "m0") for _ in range(n))
    took, cpu = time.monotonic() - t0, cpu_s(tree(exp.pid)) - c0
    print("one target, %d scrapes in turn: %.2f ms per scrape, %.2f ms CPU per scrape "
          "(exporter + its SMB helper), %d ok" % (n, 1000 * took / n, 1000 * cpu / n, ok))
    if direct > 0:
        print("reading the same data directly (msrpc-bench rate): %.2f ms per snapshot; "
              "exporter/direct = %.2fx" % (1000 / direct, (took / n) / (1 / direct)))
    with ThreadPoolExecutor(16) as ex:
        ok = sum(ex.map(lambda i: scrape(port, "m%d" % i), range(ntargets)))
    pids = tree(exp.pid)
    total = rollup(pids, "Pss")
    print("%d targets connected (%d ok): %d processes, %.1f MB PSS in all, %.2f MB per target "
          "(idle exporter %.1f MB)" % (ntargets, ok, len(pids), total,
                                      (total - base_pss) / ntargets, base_pss))
    rounds = 5
    c0, t0 = cpu_s(pids), time.monotonic()
    with ThreadPoolExecutor(16) as ex:
        ok = sum(ex.map(lambda i: scrape(port, "m%d" % (i % ntargets)),
                        range(rounds * ntargets)))
    took, cpu = time.monotonic() - t0, cpu_s(tree(exp.pid)) - c0
    after = rollup(tree(exp.pid), "Pss")
    print("%d targets x %d rounds, 16 in parallel: %.0f target-scrapes/s, %.0f per CPU-second "
          "(exporter and helpers; smbd not counted), %d ok" % (
              ntargets, rounds, rounds * ntargets / took, rounds * ntargets / max(cpu, 1e-9), ok))
    print("PSS after the rounds: %.1f MB (%+.1f MB)" % (after, after - total))
finally:
    exp.terminate()
    exp.wait(timeout=30)
