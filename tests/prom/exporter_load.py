#!/usr/bin/python3
"""The issue's load test at CI size: one exporter, 100 targets (each a
distinct SMB connection to one of four private smbd), scraped by a real
Prometheus every 15 s for 90 s: no scrape missed, every target connected
through one zygote's helpers and read, memory flat once all are connected,
under 1 MB PSS a target. The 200- and 1,000-target runs are benches
(bench/prom/load.sh, figures in docs/performance.md): at 200 targets this
2-core machine, running the other tests beside, timed out a third of the
probes and once left a target unread for 90 s."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from checks import check, finish  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
bench = os.path.join(here, "..", "..", "bench", "prom", "load.sh")
TARGETS = 100
if not os.path.exists("/usr/sbin/smbd"):
    print("smbd is not installed (scripts/setup)")
    sys.exit(77)
r = subprocess.run(["bash", bench, "-", str(TARGETS), "90", "15", "4"], capture_output=True,
                   text=True, env=dict(os.environ), timeout=400)
print(r.stdout)
m = re.search(r"^result (.*)$", r.stdout, re.M)
if r.returncode == 0 and not m and "not installed" in r.stdout:
    sys.exit(77)
check(r.returncode == 0 and m, "the load bench ran (%d: %s)" % (r.returncode, r.stderr[-2000:]))
if m:
    v = {k: float(x) for k, x in (kv.split("=") for kv in m.group(1).split())}
    check(v["reported"] == TARGETS, "Prometheus scraped every target (%d)" % v["reported"])
    check(v["missed"] == 0, "no scrape missed (%d)" % v["missed"])
    check(v["helpers"] == TARGETS and v["zygotes"] == 1,
          "%d helpers under one zygote (%d, %d zygotes)" % (TARGETS, v["helpers"], v["zygotes"]))
    # Every target read; how many scrapes read theirs within Prometheus's
    # timeout depends on the machine's load (76% to 100% on this 2-core
    # machine), so it is printed, not checked: bench/prom/load.sh measures it.
    check(v["read"] == TARGETS, "every target read at least once (%d; probe_success 1 in %d of "
          "%d scrapes)" % (v["read"], v["ok"], v["scrapes"]))
    check(v["pss_end"] <= v["pss_connected"] * 1.03,
          "memory flat once all were connected (%.1f -> %.1f MB)"
          % (v["pss_connected"], v["pss_end"]))
    check(v["per_target"] < 1.0, "under 1 MB PSS per target (%.2f MB)" % v["per_target"])
finish()
