#!/usr/bin/env python3
"""`ntlens profile --etl` on net.4.5.2.x64.etl for one or more builds (say the
base commit's and this one's), interleaved: the least wall time of N runs
(the run least slowed by a loaded machine) and the median CPU time (user +
system of every thread), with MB/s of trace. lib/etl's own scan of the trace
is bench/etl's bench_etl.
usage: bench/profile/etl_wall.py N NTLENS [NTLENS...]"""
import os
import resource
import subprocess
import sys
import time

data = os.environ.get("NTLENS_SHARED_DATA",
                      os.path.join(os.path.dirname(__file__), "../../../shared/data"))
trace = os.path.join(data, "etl", "net.4.5.2.x64.etl")
size = os.path.getsize(trace) / 1e6
n = int(sys.argv[1])
runs = [(b, ["profile", "--etl", trace]) for b in sys.argv[2:]]
wall = [[] for _ in runs]
cpu = [[] for _ in runs]
for _ in range(n):
    for i, (b, args) in enumerate(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([b] + args, stdout=subprocess.DEVNULL, check=True)
        wall[i].append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[i].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
for i, (b, args) in enumerate(runs):
    w, c = min(wall[i]), sorted(cpu[i])[n // 2]
    print("%-40s %-12s least wall %6.1f ms %6.1f MB/s   median CPU %6.1f ms %6.1f MB/s"
          % (b, args[0] + " " + args[1], w * 1e3, size / w, c * 1e3, size / c))
