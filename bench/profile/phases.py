#!/usr/bin/env python3
"""bench_profile's phases, builds in turn: ROUNDS times, each BENCH_PROFILE given runs
`BENCH_PROFILE 1000000 300 --threads`; prints the min and median of each phase it reports
(CPU of the adding thread, the loader's CPU, the join and report in wall and CPU time, the
whole run), and checks the report's checksum. On a loaded machine the CPU times lead.
  bench/profile/phases.py ROUNDS BENCH_PROFILE [BENCH_PROFILE...]"""
import subprocess, sys, statistics, re
rounds = int(sys.argv[1]); bins = sys.argv[2:]
keys = ["add_cpu", "loader_cpu", "join_wall", "join_cpu", "report_wall", "report_cpu", "total_wall", "total_cpu"]
res = {b: {k: [] for k in keys} for b in bins}
for _ in range(rounds):
    for b in bins:
        out = subprocess.run([b, "1000000", "300", "--threads"], capture_output=True, text=True).stdout
        f = {}
        for line in out.splitlines():
            w = line.split()
            if line.startswith("add samples"): f["add_cpu"] = float(w[5])
            elif line.startswith("tables"): f["loader_cpu"] = float(w[2]); f["join_wall"] = float(w[8]); f["join_cpu"] = float(w[11])
            elif line.startswith("report  "): f["report_wall"] = float(w[1]); f["report_cpu"] = float(w[4])
            elif line.startswith("total"): f["total_wall"] = float(w[1]); f["total_cpu"] = float(w[4])
            elif line.startswith("checksums"): f["sum"] = w[2]
        for k in keys: res[b][k].append(f[k])
        assert f["sum"] == "0bfaa50f80ba1e31", f
for b in bins:
    print(b, f"({rounds} rounds)")
    for k in keys:
        v = res[b][k]
        print(f"  {k:12s} min {min(v):.3f} median {statistics.median(v):.3f}")
