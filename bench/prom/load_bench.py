#!/usr/bin/python3
"""The measuring half of bench/prom/load.sh. argv: NTLENS DIR TARGETS SECONDS
INTERVAL SMBD_PORT... Target i is module m<i> against smbd i % len(ports)."""
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "prom"))
from proctree import children, cpu_s, free_port, page_tables, rollup, tree  # noqa: E402

ntlens, d = sys.argv[1], sys.argv[2]
ntargets, seconds, interval = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ports = [int(p) for p in sys.argv[6:]]


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
        return r.read().decode()


def promql(port, q):
    body = get(port, "/api/v1/query?query=" + urllib.parse.quote(q))
    return [(r["metric"], float(r["value"][1])) for r in json.loads(body)["data"]["result"]]


def missed_scrapes(port, seconds, interval):
    """Scrapes Prometheus missed: from each target's first scrape on, every
    gap between two of its scrapes longer than 1.5 intervals counts the
    intervals lost; the last scrape must be within 1.5 intervals of now."""
    body = get(port, "/api/v1/query?query=" + urllib.parse.quote("up[%ds]" % (seconds + 60)))
    res = json.loads(body)["data"]["result"]
    now, missed, scrapes = time.time(), 0, 0
    for r in res:
        ts = [float(t) for t, _ in r["values"]] + [now]
        scrapes += len(ts) - 1
        missed += sum(max(0, round((b - a) / interval) - 1) for a, b in zip(ts, ts[1:])
                      if b - a > 1.5 * interval)
    return len(res), scrapes, missed


cfg = os.path.join(d, "exporter.yml")
with open(cfg, "w") as f:
    f.write("auths:\n  a:\n    user: ntltest\n    password_file: %s/pass\nmodules:\n" % d)
    for i in range(ntargets):
        f.write("  m%d:\n    auth: a\n    collectors: [cpu, memory, process, system]\n" % i)
eport, pport = free_port(), free_port()
pcfg = os.path.join(d, "prometheus.yml")
with open(pcfg, "w") as f:
    f.write("global: {scrape_interval: %ds, scrape_timeout: %ds}\nscrape_configs:\n"
            "  - job_name: fleet\n    metrics_path: /probe\n    static_configs:\n"
            % (interval, min(interval, 10)))
    for i in range(ntargets):
        f.write("      - {targets: ['127.0.0.1:%d'], labels: {__param_module: m%d}}\n"
                % (ports[i % len(ports)], i))
    f.write("    relabel_configs:\n"
            "      - {source_labels: [__address__], target_label: __param_target}\n"
            "      - {source_labels: [__param_module], target_label: module}\n"
            "      - {target_label: __address__, replacement: '127.0.0.1:%d'}\n" % eport)
# NTLENS_BENCH_CONCURRENCY: --concurrency (default: the exporter's own)
conc = os.environ.get("NTLENS_BENCH_CONCURRENCY")
exp = subprocess.Popen([ntlens, "exporter", "--config", cfg, "--listen", "127.0.0.1:%d" % eport]
                       + (["--concurrency", conc] if conc else []),
                       stderr=open(os.path.join(d, "exporter.log"), "w"))
prom = None
try:
    for _ in range(50):
        try:
            get(eport, "/")
            break
        except OSError:
            time.sleep(0.1)
    idle = rollup(tree(exp.pid), "Pss")
    prom = subprocess.Popen(["prometheus", "--config.file=" + pcfg,
                             "--storage.tsdb.path=" + os.path.join(d, "tsdb"),
                             "--web.listen-address=127.0.0.1:%d" % pport],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.monotonic()
    c0 = None
    samples = []
    while time.monotonic() - t0 < seconds:
        time.sleep(interval)
        pids = tree(exp.pid)
        samples.append((time.monotonic() - t0, len(pids) - 2, rollup(pids, "Pss"),
                        rollup(pids, "Private_Dirty"), page_tables(pids)))
        if c0 is None and samples[-1][1] >= ntargets:  # CPU once every target is connected
            c0, tc = cpu_s(pids), time.monotonic()
        print("t=%4.0fs helpers=%d PSS %.1f MB (%.2f MB/target), private %.1f MB, page tables "
              "%.1f MB" % (samples[-1][0], samples[-1][1], samples[-1][2],
                           (samples[-1][2] - idle) / ntargets, samples[-1][3], samples[-1][4]),
              flush=True)
    cpu = None
    if c0 is not None and time.monotonic() - tc >= 2 * interval:
        cpu = (cpu_s(tree(exp.pid)) - c0) / (time.monotonic() - tc)
    window = "%ds" % (seconds + 60)
    q = lambda s: promql(pport, s)  # noqa: E731
    reported, scrapes, missed = missed_scrapes(pport, seconds, interval)
    up = q("sum(sum_over_time(up[%s]))" % window)
    ok = q("sum(sum_over_time(probe_success[%s]))" % window)
    read = q("count(max_over_time(probe_success[%s]) == 1)" % window)
    dur = [q("quantile_over_time(%s, scrape_duration_seconds[%s])" % (p, window))
           for p in ("0.5", "0.99", "1")]
    pct = lambda i: sorted(v for _, v in dur[i])[len(dur[i]) // 2 if i < 2 else -1]  # noqa: E731
    print("%d targets on %d smbd, scraped every %d s for %d s: %d targets reported, %d "
          "scrapes, %d missed, %d up, %d probe_success 1" % (
              ntargets, len(ports), interval, seconds, reported, scrapes, missed,
              up and up[0][1], ok and ok[0][1]))
    print("scrape duration (median over targets of each one's): median %.3f s, p99 %.3f s; "
          "slowest scrape %.3f s" % (pct(0), pct(1), pct(2)))
    full = next((s for s in samples if s[1] >= ntargets), samples[-1])
    last = samples[-1]
    print("memory (exporter + zygote + helpers): idle exporter %.1f MB; all connected at "
          "t=%.0fs: PSS %.1f MB, at the end %.1f MB (%.2f MB/target, %+.1f MB since all were "
          "connected), private %.1f MB, page tables %.1f MB"
          % (idle, full[0], full[2], last[2], (last[2] - idle) / ntargets, last[2] - full[2],
             last[3], last[4]))
    zygotes = [p for p in children(exp.pid) if children(p)]
    print("result targets=%d reported=%d scrapes=%d missed=%d up=%d ok=%d read=%d helpers=%d "
          "zygotes=%d pss_connected=%.1f pss_end=%.1f per_target=%.3f" % (
              ntargets, reported, scrapes, missed, up[0][1] if up else 0, ok[0][1] if ok else 0,
              read[0][1] if read else 0, last[1], len(zygotes), full[2], last[2], (last[2] - idle) / ntargets))
    # Where the missed scrapes went: the exporter answers every request it
    # gets (its own count), so scrapes Prometheus never sent show as its
    # scrape loops running late (interval quantiles) while it ingests
    # (head series, its own CPU).
    own = lambda page, name: sum(float(x.split()[-1]) for x in page.splitlines()  # noqa: E731
                                 if x.startswith(name + " ") or x.startswith(name + "{"))
    epage, ppage = get(eport, "/metrics"), get(pport, "/metrics")
    print("exporter: %d probes served, %d failed; Prometheus: %d head series, %.0f samples a "
          "scrape, scrape interval p99 %.2f s, CPU %.0f s over the run" % (
              own(epage, "ntlens_exporter_probes_total"),
              own(epage, "ntlens_exporter_probe_failures_total"),
              own(ppage, "prometheus_tsdb_head_series"),
              own(ppage, "scrape_samples_scraped") or
              (sum(v for _, v in q("scrape_samples_scraped")) / max(reported, 1)),
              max([float(x.split()[-1]) for x in ppage.splitlines() if x.startswith(
                  "prometheus_target_interval_length_seconds{") and 'quantile="0.99"' in x]
                  or [0]),
              own(ppage, "process_cpu_seconds_total")))
    if cpu is not None:
        print("CPU once all were connected (exporter + helpers, smbd not counted): %.1f%% of "
              "one core, %.0f target-scrapes per CPU-second"
              % (100 * cpu, ntargets / interval / max(cpu, 1e-9)))
finally:
    # Both stop even when one is slow to (or the run was interrupted).
    for proc in (prom, exp):
        if proc:
            proc.terminate()
    for proc in (prom, exp):
        if proc:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if os.environ.get("LOAD_LOG"):
        print(open(os.path.join(d, "exporter.log")).read()[-6000:])
