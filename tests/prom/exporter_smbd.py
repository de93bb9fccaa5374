#!/usr/bin/python3
"""ntlens exporter against real peers: a private smbd filled by
`ntlens samba-provider` (tests/msrpc/smbd_tests.py's helpers), a real
Prometheus scraping the exporter (PromQL), promtool on every page, values that agree with `ntlens ps` on the same host, one SMB
connection reused across scrapes, reconnection after the server drops it,
fail-fast probes for a target that is down or refuses the password, bad query
strings, config errors with FILE:LINE, and SIGHUP reloads."""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "msrpc"))
from checks import check, finish  # noqa: E402
import smbd_tests  # noqa: E402
from proctree import children, zombie  # noqa: E402

NTLENS = os.environ["NTLENS"]


def get(port, path, headers=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def promtool_ok(page, what):
    r = subprocess.run(["promtool", "check", "metrics"], input=page.encode(), capture_output=True)
    if not check(r.returncode == 0, "promtool accepts " + what):
        print(r.stdout.decode() + r.stderr.decode(), file=sys.stderr)


def samples(page, name):
    """{labels string: value} of one metric."""
    out = {}
    for line in page.splitlines():
        m = re.match(r"^%s(\{.*\})? (\S+)$" % re.escape(name), line)
        if m:
            out[m.group(1) or ""] = float(m.group(2))
    return out


def label(labels, key):
    m = re.search(r'%s="([^"]*)"' % key, labels)
    return m.group(1) if m else None


def write_config(d, password, smbd_port):
    with open(os.path.join(d, "pass"), "w") as f:
        f.write(password + "\n")
    with open(os.path.join(d, "wrong"), "w") as f:
        f.write("not-the-password\n")
    cfg = os.path.join(d, "exporter.yml")
    with open(cfg, "w") as f:
        f.write("""auths:
  lab:
    user: ntltest
    password_file: %s/pass
  wrong:
    user: ntltest
    password_file: %s/wrong
targets:
  "127.0.0.1":
    port: %d
    auth: lab
modules:
  win:
    auth: lab
    collectors: [cpu, memory, process, system]
    generic: true
    objects: [2]
    timeout: 5
    call_timeout: 2
  os:
    auth: lab
    collectors: [memory, system, os]
  other:
    auth: lab
    collectors: [system]
  smbd:
    auth: lab
    collectors: [process]
    instances: "^smbd$"
  badpass:
    auth: wrong
    collectors: [system]
""" % (d, d, smbd_port))
    return cfg


def start(cfg, port):
    p = subprocess.Popen([NTLENS, "exporter", "--config", cfg, "--listen",
                          "127.0.0.1:%d" % port, "--concurrency", "4"],
                         stderr=subprocess.PIPE, text=True)
    for _ in range(50):
        try:
            get(port, "/")
            return p
        except OSError:
            time.sleep(0.1)
    return p


def check_example_config(d):
    """docs/exporter.example.yml stays valid (its secret files made here)."""
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "docs", "exporter.example.yml")) as f:
        text = f.read()
    for name in ("corp.password", "lab.auth", "monitor.keytab"):
        with open(os.path.join(d, name), "w") as f:
            f.write("username=u\npassword=p\n" if name.endswith(".auth") else "p\n")
        text = text.replace("/etc/ntlens/" + name, os.path.join(d, name))
    example = os.path.join(d, "example.yml")
    with open(example, "w") as f:
        f.write(text)
    r = subprocess.run([NTLENS, "exporter", "--config", example, "--check-config"],
                       capture_output=True, text=True)
    check(r.returncode == 0, "docs/exporter.example.yml is valid (%s)" % r.stderr.strip())


def check_config_errors(d):
    bad = os.path.join(d, "bad.yml")
    with open(bad, "w") as f:
        f.write("modules:\n  m:\n    collectors: [cpu, disk]\n")
    r = subprocess.run([NTLENS, "exporter", "--config", bad, "--check-config"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "bad.yml:3: modules.m.collectors: unknown collector 'disk'"
          in r.stderr, "config error names line and key (%s)" % r.stderr.strip())
    with open(bad, "w") as f:
        f.write("modules:\n  m:\n    auth: lab\n")
    r = subprocess.run([NTLENS, "exporter", "--config", bad, "--check-config"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "bad.yml:3: modules.m.auth" in r.stderr,
          "unknown credential set named (%s)" % r.stderr.strip())
    with open(bad, "w") as f:
        f.write("modules:\n  m:\n    collectors: [cpu]\n    instances: '(a'\n")
    r = subprocess.run([NTLENS, "exporter", "--config", bad, "--check-config"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "bad.yml:4: modules.m.instances: not a regular expression"
          in r.stderr, "a bad instance regex is named (%s)" % r.stderr.strip())
    with open(bad, "w") as f:
        f.write("auths:\n  a:\n    password: hunter2\nmodules:\n  m: {}\n")
    r = subprocess.run([NTLENS, "exporter", "--config", bad, "--check-config"],
                       capture_output=True, text=True)
    check(r.returncode == 1 and "password_file" in r.stderr and "hunter2" not in r.stderr,
          "a password in the config is refused without echoing it (%s)" % r.stderr.strip())


def remote_ps(srv):
    """ntlens ps on the same smbd: the same snapshot of the store the
    exporter reads, so values must agree exactly (a live local ps would see
    this test's own processes come and go)."""
    return smbd_tests.ps_tree(["-S", srv.spec], env=srv.env(), view=[])


def check_values(page, srv):
    ps = remote_ps(srv)
    procs = samples(page, "windows_process_threads")
    pids = {int(label(k, "process_id")) for k in procs}
    common = pids & set(ps)
    check(len(pids) > 3 and pids == set(ps),
          "the same %d pids as ntlens ps (%d)" % (len(pids), len(ps)))
    nprocs = samples(page, "windows_system_processes").get("", 0)
    # ps lists the Idle process (pid 0), which System\Processes does not count
    real = len([p for p in ps if p != 0])
    check(nprocs == real, "windows_system_processes %d vs ntlens ps %d" % (nprocs, real))
    cpu = {}
    for k, v in samples(page, "windows_process_cpu_time_total").items():
        pid = int(label(k, "process_id"))
        cpu[pid] = cpu.get(pid, 0) + v
    top = max(common, key=lambda p: ps[p].get("cpu_time") or 0)
    check(abs(cpu.get(top, -1) - ps[top]["cpu_time"]) <= 0.01,
          "cpu time of pid %d: exporter %.2f, ps %.2f" % (top, cpu.get(top, -1),
                                                          ps[top]["cpu_time"]))
    ws = samples(page, "windows_process_working_set_bytes")
    # kernel threads have no working set; user processes have one
    check(len(ws) == len(procs) and sum(v > 0 for v in ws.values()) >= 3,
          "a working set for every process, non-zero for user processes")
    check(samples(page, "windows_memory_available_bytes").get("", 0) > 0, "available memory")
    check("windows_perf_system_processes " in page, "generic mapping of the System object")


def promql(port, q):
    url = "/api/v1/query?query=" + urllib.parse.quote(q)
    code, body = get(port, url)
    try:
        res = json.loads(body)["data"]["result"]
    except (ValueError, KeyError):
        return []
    return [(r["metric"], float(r["value"][1])) for r in res]


def real_prometheus(d, exporter_port, target, srv):
    """A real Prometheus scrapes the exporter's /probe, relabelled the way
    blackbox_exporter is; PromQL answers agree with ntlens ps."""
    port = smbd_tests.free_port()
    cfg = os.path.join(d, "prometheus.yml")
    with open(cfg, "w") as f:
        f.write("""global: {scrape_interval: 2s, scrape_timeout: 2s}
scrape_configs:
  - job_name: windows
    metrics_path: /probe
    params: {module: [win]}
    static_configs: [{targets: ['%s']}]
    relabel_configs:
      - {source_labels: [__address__], target_label: __param_target}
      - {source_labels: [__param_target], target_label: instance}
      - {target_label: __address__, replacement: '127.0.0.1:%d'}
""" % (target, exporter_port))
    p = subprocess.Popen(["prometheus", "--config.file=" + cfg,
                          "--storage.tsdb.path=" + os.path.join(d, "tsdb"),
                          "--web.listen-address=127.0.0.1:%d" % port],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        up = []
        for _ in range(100):
            time.sleep(0.3)
            try:
                up = promql(port, 'probe_success{job="windows"}')
            except OSError:
                continue
            if up and up[0][1] == 1:
                break
        check(up and up[0][1] == 1, "Prometheus scraped probe_success 1 (%s)" % up)
        ps = remote_ps(srv)
        n = promql(port, 'count(windows_process_threads{instance="%s"})' % target)
        check(n and n[0][1] == len(ps),
              "PromQL process count %s vs ntlens ps %d" % (n and n[0][1], len(ps)))
        cpu = {int(m["process_id"]): v for m, v in promql(
            port, "sum by (process_id) (windows_process_cpu_time_total)")}
        top = max(set(cpu) & set(ps), key=lambda p: ps[p].get("cpu_time") or 0, default=None)
        check(top is not None and abs(cpu[top] - ps[top]["cpu_time"]) <= 0.01,
              "PromQL cpu time of pid %s: %s vs ntlens ps %s" % (
                  top, cpu.get(top), top and ps[top]["cpu_time"]))
        mem = promql(port, "windows_memory_available_bytes")
        check(mem and mem[0][1] > 0, "PromQL available memory (%s)" % mem)
    finally:
        p.terminate()
        p.wait(timeout=30)


TIMEZONE = "W. Europe Standard Time"


def set_timezone(srv):
    """Samba serves HKLM\\...\\TimeZoneInformation from its registry.tdb, which
    Samba's own `net registry` writes (samba-common-bin); without it the key
    does not exist. Returns whether the value was set."""
    if not shutil.which("net"):
        print("net (samba-common-bin) is not installed: timezone not set")
        return False
    key = r"HKLM\SYSTEM\CurrentControlSet\Control\TimeZoneInformation"
    conf = os.path.join(srv.dir, "smb.conf")
    for args in (["createkey", key], ["setvalue", key, "TimeZoneKeyName", "sz", TIMEZONE]):
        r = subprocess.run(["net", "-s", conf, "registry"] + args, capture_output=True,
                           text=True)
        check(r.returncode == 0, "net registry %s (%s)" % (args[0], r.stderr.strip()))
    return True


def os_test(port, srv, target, tz_set):
    """windows_exporter's os collector against Samba's winreg: the facts
    Samba's registry holds (its Tcpip\\Parameters, the timezone set above),
    none it lacks (its CurrentVersion key has no ProductName or
    CurrentBuildNumber, so no windows_os_info), and the perf-derived metrics
    equal to the memory and system collectors' on the same snapshot."""
    before = len(srv.connection_pids())
    code, page = get(port, "/probe?target=%s&module=os" % target)
    check(code == 200 and "probe_success 1" in page, "the os module probes")
    promtool_ok(page, "the os page")
    tz = samples(page, "windows_os_timezone")
    if tz_set:
        check(list(tz) == ['{timezone="%s"}' % TIMEZONE] and tz[list(tz)[0]] == 1,
              "windows_os_timezone from HKLM TimeZoneKeyName (%s)" % tz)
    else:
        check(not tz, "no windows_os_timezone without the key (%s)" % tz)
    host = samples(page, "windows_os_hostname")
    # smbd's Tcpip\Parameters: Hostname is its lowercased short host name
    name = socket.gethostname().split(".")[0].lower()
    labels = list(host)[0] if len(host) == 1 else ""
    domain = label(labels, "domain")
    check(label(labels, "hostname") == name and label(labels, "fqdn") ==
          name + ("." + domain if domain else ""), "windows_os_hostname (%s)" % labels)
    check("windows_os_info" not in page and "windows_os_install_time" not in page,
          "no windows_os_info or install time: Samba's CurrentVersion key lacks them")
    one = lambda n: samples(page, n).get("")  # noqa: E731
    check(one("windows_os_processes") == one("windows_system_processes") is not None,
          "windows_os_processes %s = windows_system_processes" % one("windows_os_processes"))
    check(one("windows_os_physical_memory_free_bytes") == one("windows_memory_available_bytes")
          is not None, "windows_os_physical_memory_free_bytes = available bytes")
    limit, committed = one("windows_memory_commit_limit"), one("windows_memory_committed_bytes")
    check(limit is not None and one("windows_os_virtual_memory_bytes") == limit and
          one("windows_os_virtual_memory_free_bytes") == limit - committed,
          "windows_os_virtual_memory_bytes and _free_bytes from Commit Limit and Committed Bytes")
    t = one("windows_os_time")
    check(t is not None and abs(t - time.time()) < 120, "windows_os_time is now (%s)" % t)
    code, again = get(port, "/probe?target=%s&module=os" % target)
    check(samples(again, "windows_os_hostname") == host and
          len(srv.connection_pids()) == before + 1,
          "the facts stay across scrapes on one connection")


def hang_test(port, srv, target):
    """A target whose server stops answering mid-scrape fails with
    error_kind timeout after the module's call_timeout, and another
    target scraped meanwhile is not delayed; once the server answers
    again, the late reply is dropped and the connection serves on."""
    before = set(srv.connection_pids())
    code, page = get(port, "/probe?target=%s&module=other" % target)
    check("probe_success 1" in page, "the second module connects")
    other = set(srv.connection_pids()) - before
    check(len(before) == 1 and len(other) == 1, "one connection per module (%s, %s)"
          % (before, other))
    hung = before.pop()
    os.kill(hung, signal.SIGSTOP)
    try:
        with ThreadPoolExecutor(1) as ex:
            t0 = time.monotonic()
            slow = ex.submit(get, port, "/probe?target=%s&module=win" % target)
            time.sleep(0.3)
            t1 = time.monotonic()
            code, page = get(port, "/probe?target=%s&module=other" % target)
            quick = time.monotonic() - t1
            code, hung_page = slow.result()
            took = time.monotonic() - t0
        check("probe_success 1" in page and quick < 1,
              "another target is not delayed by a hung one (%.2fs)" % quick)
        check('probe_success{error_kind="timeout"} 0' in hung_page and took < 5,
              "a server that stops answering fails after call_timeout (%.2fs)" % took)
    finally:
        os.kill(hung, signal.SIGCONT)
    time.sleep(1.2)
    code, page = get(port, "/probe?target=%s&module=win" % target)
    check("probe_success 1" in page, "the hung target is read once it answers again (%s)"
          % [x for x in page.splitlines() if x.startswith("probe_success")])
    check(hung in srv.connection_pids(), "over the connection it had (smbd %d)" % hung)
    scrape_timeout_test(port, srv, other.pop(), target)


def scrape_timeout_test(port, srv, conn, target):
    """Prometheus' X-Prometheus-Scrape-Timeout-Seconds bounds a probe whose
    module allows 30 s a call; a header that is not a duration is refused."""
    hdr = "X-Prometheus-Scrape-Timeout-Seconds"
    path = "/probe?target=%s&module=other" % target
    code, page = get(port, path, {hdr: "1.2"})
    check(code == 200 and "probe_success 1" in page, "a probe within its scrape timeout")
    os.kill(conn, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        code, page = get(port, path, {hdr: "1.2"})
        took = time.monotonic() - t0
    finally:
        os.kill(conn, signal.SIGCONT)
    check('probe_success{error_kind="timeout"} 0' in page and 0.6 < took < 1.2,
          "the scrape timeout, less half a second, bounds a hung call (%.2fs)" % took)
    for bad in ("soon", "-1", "1e9", "nan", ""):
        code, body = get(port, path, {hdr: bad})
        check(code == 400 and hdr in body, "%s: %r is refused (%d)" % (hdr, bad, code))
    time.sleep(1.2)
    before = set(srv.connection_pids())
    code, page = get(port, path, {hdr: "1.2"})
    check("probe_success 1" in page, "the target reconnects after its scrape timed out")
    conn = (set(srv.connection_pids()) - before or {conn}).pop()
    # A probe that waits on a hung target (30 s call timeout, no header)
    # holds up no other connection: sixteen probes of another target on
    # sixteen kept-alive connections (Prometheus keeps one per target), with
    # --concurrency 4, all answer meanwhile. (libmicrohttpd's thread pool,
    # used before, served each thread's connections in turn: about one in
    # four waited for the hung probe.)
    conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=60) for _ in range(17)]

    def on(i, p):
        conns[i].request("GET", p)
        return conns[i].getresponse().read().decode()

    for i in range(17):
        on(i, "/")
    os.kill(conn, signal.SIGSTOP)
    try:
        with ThreadPoolExecutor(17) as ex:
            hung = ex.submit(on, 0, path)
            time.sleep(0.3)
            t0 = time.monotonic()
            pages = list(ex.map(lambda i: on(i, "/probe?target=%s&module=win" % target),
                                range(1, 17)))
            took = time.monotonic() - t0
            os.kill(conn, signal.SIGCONT)
            hung.result()
    finally:
        os.kill(conn, signal.SIGCONT)
    check(all("probe_success 1" in x for x in pages) and took < 5,
          "a hung probe holds up no other connection (16 probes in %.2fs)" % took)


def helper_test(port, p, target):
    """The exporter's SMB helpers are forked by one zygote: a helper that
    dies costs only its own target (which reconnects), and a zygote that
    dies costs nobody (its helpers keep serving; the next connection starts
    a new zygote)."""
    zygotes = children(p.pid)
    helpers = children(zygotes[0]) if len(zygotes) == 1 else []
    check(len(zygotes) == 1 and len(helpers) == 2,
          "one zygote forks the two targets' helpers (%s, %s)" % (zygotes, helpers))
    if len(helpers) != 2:
        return
    os.kill(helpers[0], signal.SIGKILL)
    time.sleep(0.2)
    probe = lambda: [get(port, "/probe?target=%s&module=%s" % (target, m))[1]  # noqa: E731
                     for m in ("win", "other")]
    first = probe()
    # The dead helper's target may fail this probe or already have
    # reconnected; the other target must not notice.
    check(sum("probe_success 1" in x for x in first) >= 1 and os.path.exists("/proc/%d" %
          helpers[1]), "a helper that dies fails its own target only")
    check(until(lambda: all("probe_success 1" in x for x in probe()), 15),
          "its target reconnects (within its backoff, 15 s at most on a loaded machine)")
    helpers = children(zygotes[0])
    os.kill(zygotes[0], signal.SIGKILL)
    time.sleep(0.2)
    kept = probe()
    check(all("probe_success 1" in x for x in kept) and
          all(os.path.exists("/proc/%d" % h) for h in helpers),
          "a zygote that dies leaves its helpers serving (%s)" % helpers)
    code, page = get(port, "/probe?target=%s&module=smbd" % target)
    # The dead zygote stays a child (a zombie) until the exporter reaps it.
    check("probe_success 1" in page and
          until(lambda: [z for z in children(p.pid) if not zombie(z)] not in ([], [zygotes[0]]) and
                len([z for z in children(p.pid) if not zombie(z)]) == 1, 10),
          "the next connection starts a new zygote (%s)" % children(p.pid))


def until(cond, seconds):
    """Whether cond() holds within seconds, asked every 0.2 s."""
    deadline = time.monotonic() + seconds
    while True:
        if cond():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def main():
    if not os.path.exists("/usr/sbin/smbd"):
        print("smbd is not installed (scripts/setup)")
        sys.exit(77)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    srv = smbd_tests.Smbd()
    d = tempfile.mkdtemp(prefix="ntlens-exporter-")
    port = smbd_tests.free_port()
    p = None
    try:
        srv.provide()
        tz_set = set_timezone(srv)
        check_config_errors(d)
        check_example_config(d)
        cfg = write_config(d, srv.password, srv.port)
        r = subprocess.run([NTLENS, "exporter", "--config", cfg, "--check-config"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "--check-config accepts the config (%s)" % r.stderr.strip())
        p = start(cfg, port)
        target = "127.0.0.1:%d" % srv.port
        code, page = get(port, "/probe?target=%s&module=win" % target)
        check(code == 200 and "probe_success 1" in page, "probe succeeds (%d)" % code)
        promtool_ok(page, "the probe page")
        check_values(page, srv)
        code, page = get(port, "/probe?target=%s&module=win" % target)
        check("probe_success 1" in page, "second probe succeeds")
        check(len(srv.connection_pids()) == 1, "one SMB connection across scrapes (%d)"
              % len(srv.connection_pids()))
        real_prometheus(d, port, target, srv)
        check(len(srv.connection_pids()) == 1, "still one SMB connection after Prometheus' "
              "scrapes (%d)" % len(srv.connection_pids()))
        code, page = get(port, "/metrics")
        promtool_ok(page, "/metrics")
        probes = samples(page, "ntlens_exporter_probes_total").get("", 0)
        check(probes >= 3, "own metrics count the probes (%d)" % probes)
        check("windows_process_threads{" in page, "/metrics serves this host too")

        # the server drops the connection: one failed scrape at most, then back
        for pid in srv.connection_pids():
            os.kill(pid, signal.SIGKILL)
        get(port, "/probe?target=%s&module=win" % target)
        time.sleep(1.2)
        code, page = get(port, "/probe?target=%s&module=win" % target)
        check("probe_success 1" in page, "reconnects after the server dropped the connection")
        hang_test(port, srv, target)
        helper_test(port, p, target)
        code, page = get(port, "/probe?target=%s&module=smbd" % target)
        names = {label(k, "process") for k in samples(page, "windows_process_threads")}
        check(names == {"smbd"}, "a module's instance regex keeps only its processes (%s)"
              % sorted(names)[:5])
        os_test(port, srv, target, tz_set)

        t0 = time.monotonic()
        code, page = get(port, "/probe?target=127.0.0.1:%d&module=win" % smbd_tests.free_port())
        took = time.monotonic() - t0
        check('probe_success{error_kind="connect"} 0' in page and took < 2,
              "a target that is down fails fast (%.2fs)" % took)
        promtool_ok(page, "a failed probe's page")
        code, page = get(port, "/probe?target=%s&module=badpass" % target)
        check('probe_success{error_kind="auth"} 0' in page, "a wrong password shows as auth")
        code, page = get(port, "/probe?target=127.0.0.1&module=badpass")
        check("probe_success 1" in page, "a target's overrides (port, auth) apply in any module")

        for path, want in [("/probe", "missing parameter: target"),
                           ("/probe?target=a&target=b", "more than once"),
                           ("/probe?target=x&module=nope", "unknown module"),
                           ("/probe?target=u%40h%2Fx", "host name or address"),
                           ("/probe?target=" + "a" * 5000, "at most 255"),
                           ("/probe?target=h&evil=%22%0a", "unknown parameter")]:
            code, body = get(port, path)
            check(code == 400 and want in body, "%s: 400 %r (%d %r)" % (path[:40], want, code,
                                                                         body.strip()[:80]))
        code, body = get(port, "/nope")
        check(code == 404, "unknown path is 404")

        with open(cfg, "a") as f:
            f.write("  broken:\n    collectors: [nope]\n")
        p.send_signal(signal.SIGHUP)
        time.sleep(0.6)
        code, page = get(port, "/probe?target=%s&module=win" % target)
        check("probe_success 1" in page, "a bad reload keeps the old config")
        code, page = get(port, "/metrics")
        check("ntlens_exporter_config_reload_failures_total 1" in page, "the failed reload counted")
        with open(cfg) as f:
            text = f.read().replace("  broken:\n    collectors: [nope]\n",
                                    "  added:\n    auth: lab\n    collectors: [memory]\n")
        with open(cfg, "w") as f:
            f.write(text)
        req = urllib.request.Request("http://127.0.0.1:%d/-/reload" % port, method="POST")
        with urllib.request.urlopen(req, timeout=60) as r:
            check(r.status == 200, "POST /-/reload of a valid config")
        code, page = get(port, "/probe?target=%s&module=added" % target)
        check("probe_success 1" in page and "windows_memory_available_bytes" in page,
              "a module added by the reload serves")
        code, page = get(port, "/-/reload")
        check(code == 405, "GET /-/reload is refused (%d)" % code)
    finally:
        if p:
            p.send_signal(signal.SIGTERM)
            try:
                _, err = p.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            check(p.returncode == 0, "SIGTERM stops the exporter with status 0 (%s)" % p.returncode)
            check("level=info msg=listening" in err, "logs in logfmt")
            check(srv.password not in err and "not-the-password" not in err,
                  "no password in the log")
            check("config reload failed" in err and "modules.broken.collectors" in err,
                  "the failed reload is logged with its line and key" + ("" if "config reload failed" in err and "modules.broken.collectors" in err else ": " + err[-1500:]))
        srv.stop()
        shutil.rmtree(d, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
