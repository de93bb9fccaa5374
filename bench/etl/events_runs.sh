#!/usr/bin/env bash
# `ntlens etl events -f json` as a user runs it: a fresh process per run
# (process start and page faults included, which bench_etl_events leaves
# out), output to /dev/null, CPU time of the child (user + system) and wall
# time over N runs, min and median (with a second thread the two differ;
# the wall time is what a user waits). Given a second ntlens (main's build), the two run
# interleaved, so both see the same load.
#   bench/etl/events_runs.sh BUILD_DIR [OTHER_NTLENS [N]]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-bench}
data=${NTLENS_SHARED_DATA:-$root/../shared/data}/etl
/usr/bin/python3 - "$build/tools/ntlens/ntlens" "${2:-}" "${3:-15}" "$data" <<'EOF'
import os, resource, statistics, subprocess, sys, time
this, other, n, data = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
bins = [("this", this)] + ([("other", other)] if other else [])
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for f in ["ShutdownPerfDiagLogger.etl", "net.4.5.2.x64.etl"]:
    path, times = os.path.join(data, f), {k: [] for k, _ in bins}
    walls = {k: [] for k, _ in bins}
    size = os.path.getsize(path)
    for _ in range(n):
        for k, b in bins:
            t0, w0 = cpu(), time.perf_counter()
            subprocess.run([b, "etl", "events", "-f", "json", path], stdout=subprocess.DEVNULL,
                           check=True)
            walls[k].append(time.perf_counter() - w0)
            times[k].append(cpu() - t0)
    for k, _ in bins:
        lo, med = min(times[k]), statistics.median(times[k])
        print(f"{f:28s} {k:5s} etl events -f json  {lo * 1e3:6.1f} / {med * 1e3:6.1f} ms CPU"
              f"  {size / lo / 1e6:6.1f} / {size / med / 1e6:6.1f} MB/s (min / median of {n})")
        lo, med = min(walls[k]), statistics.median(walls[k])
        print(f"{'':28s} {'':5s} {'':19s} {lo * 1e3:6.1f} / {med * 1e3:6.1f} ms wall"
              f" {size / lo / 1e6:6.1f} / {size / med / 1e6:6.1f} MB/s")
EOF
