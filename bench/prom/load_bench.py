#!/usr/bin/python3
"""The measuring half of bench/prom/load.sh. argv: NTLENS DIR TARGETS SECONDS
INTERVAL SMBD_PORT... Target i is module m<i> against smbd i % len(ports)."""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

ntlens, d = sys.argv[1], sys.argv[2]
ntargets, seconds, interval = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ports = [int(p) for p in sys.argv[6:]]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def tree(pid):
    """pid and every descendant (zygote and SMB helpers)."""
    kids = {}
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                with open("/proc/%s/stat" % e) as f:
                    st = f.read()
                kids.setdefault(int(st[st.rindex(")") + 2:].split()[1]), []).append(int(e))
            except (OSError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def rollup(pids, key):
    t = 0
    for p in pids:
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    if line.startswith(key + ":"):
                        t += int(line.split()[1])
        except OSError:
            pass
    return t / 1024


def page_tables(pids):
    t = 0
    for p in pids:
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmPTE:"):
                        t += int(line.split()[1])
        except OSError:
            pass
    return t / 1024


def cpu_s(pids):
    t = 0
    for p in pids:
        try:
            with open("/proc/%d/stat" % p) as f:
                st = f.read()
            fields = st[st.rindex(")") + 2:].split()
            t += int(fields[11]) + int(fields[12])
        except (OSError, ValueError):
            pass
    return t / os.sysconf("SC_CLK_TCK")


def get(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=60) as r:
        return r.read().decode()


def promql(port, q):
    body = get(port, "/api/v1/query?query=" + urllib.parse.quote(q))
    return [(r["metric"], float(r["value"][1])) for r in json.loads(body)["data"]["result"]]


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
exp = subprocess.Popen([ntlens, "exporter", "--config", cfg, "--listen", "127.0.0.1:%d" % eport,
                        "--concurrency", "32"], stderr=open(os.path.join(d, "exporter.log"), "w"))
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
        if c0 is None:  # CPU from the end of the first round (the connections made)
            c0, tc = cpu_s(pids), time.monotonic()
        print("t=%4.0fs helpers=%d PSS %.1f MB (%.2f MB/target), private %.1f MB, page tables "
              "%.1f MB" % (samples[-1][0], samples[-1][1], samples[-1][2],
                           (samples[-1][2] - idle) / ntargets, samples[-1][3], samples[-1][4]),
              flush=True)
    cpu = (cpu_s(tree(exp.pid)) - c0) / (time.monotonic() - tc)
    window = "%ds" % (seconds - 2 * interval)
    q = lambda s: promql(pport, s)  # noqa: E731
    scrapes = q("count_over_time(up[%s])" % window)
    expected = (seconds - 2 * interval) // interval
    up = q("sum(up)")
    ok = q("sum(probe_success)")
    dur = q("quantile(0.5, scrape_duration_seconds)"), q("quantile(0.99, scrape_duration_seconds)"), \
        q("max(max_over_time(scrape_duration_seconds[%s]))" % window)
    missed = q("sum(%d - count_over_time(up[%s])) or vector(0)" % (expected, window))
    failed = q("sum(count_over_time(up[%s]) - sum_over_time(up[%s]))" % (window, window))
    print("%d targets, %d smbd, scraped every %d s for %d s: %d targets reported, up %s, "
          "probe_success %s" % (ntargets, len(ports), interval, seconds, len(scrapes),
                                up and up[0][1], ok and ok[0][1]))
    print("last %s: %d scrapes a target expected, fewest %s, most %s; missed %s, failed %s"
          % (window, expected, min(v for _, v in scrapes) if scrapes else None,
             max(v for _, v in scrapes) if scrapes else None, missed and missed[0][1],
             failed and failed[0][1]))
    print("scrape duration: median %.3f s, p99 %.3f s, max %.3f s" % (
        dur[0][0][1], dur[1][0][1], dur[2][0][1]))
    first, last = samples[0], samples[-1]
    print("memory (exporter + zygote + helpers): idle exporter %.1f MB; PSS %.1f -> %.1f MB "
          "(%.2f MB/target, %+.1f MB over the run), private %.1f MB, page tables %.1f MB"
          % (idle, first[2], last[2], (last[2] - idle) / ntargets, last[2] - first[2], last[3],
             last[4]))
    print("CPU (exporter + helpers, smbd not counted): %.1f%% of one core, %.0f target-scrapes "
          "per CPU-second" % (100 * cpu, ntargets / interval / max(cpu, 1e-9)))
finally:
    if prom:
        prom.terminate()
        prom.wait(timeout=30)
    exp.terminate()
    exp.wait(timeout=60)
    if os.environ.get("LOAD_LOG"):
        print(open(os.path.join(d, "exporter.log")).read()[-6000:])
