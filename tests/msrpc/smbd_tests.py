#!/usr/bin/python3
"""Integration tests of the remote source against a real smbd on 127.0.0.1.

Each test starts its own private smbd (scripts/smbd-test-server) on a free
unprivileged port, fills its perfmon store with `ntlens samba-provider`, and
stops the server by pid at the end, pass or fail.

    smbd_tests.py provider-cli | remote-ps | impacket-bytes | buffer-growth |
                  errors | server-modes | anonymous | server-death

Needs NTLENS (the CLI), MSRPC_FETCH (tests/msrpc/msrpc-fetch) and
NTLENS_SOURCE_ROOT; impacket from Debian's python3-impacket (run with
/usr/bin/python3). Exits 77 (skip) when smbd is not installed.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.environ.get("NTLENS_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
NTLENS = os.environ.get("NTLENS")
FETCH = os.environ.get("MSRPC_FETCH")
SERVER = os.path.join(ROOT, "scripts", "smbd-test-server")
USER = "ntltest"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    else:
        print("ok:", what, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Smbd:
    def __init__(self, mode="default", listen=()):
        self.dir = tempfile.mkdtemp(prefix="ntlens-smbd-")
        self.port = free_port()
        extra = [a for addr in listen for a in ("--listen", addr)]
        subprocess.run([SERVER, "start", self.dir, "--port", str(self.port), "--mode", mode] +
                       extra, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(self.dir, "password")) as f:
            self.password = f.read()
        self.spec = "smb://%s@127.0.0.1:%d" % (USER, self.port)

    def env(self, password=None):
        e = dict(os.environ)
        e["NTLENS_PASSWORD"] = self.password if password is None else password
        return e

    def provide(self):
        r = subprocess.run([NTLENS, "samba-provider", "--state-dir",
                            os.path.join(self.dir, "state"), "--once"],
                           capture_output=True, text=True)
        check(r.returncode == 0, "samba-provider --once exits 0 (%s)" % r.stderr.strip())

    def main_pid(self):
        with open(os.path.join(self.dir, "pids", "smbd.pid")) as f:
            return int(f.read())

    def connection_pids(self):
        """smbd processes serving a client: children of the main smbd named smbd."""
        main = self.main_pid()
        pids = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
                comm = st[st.index("(") + 1:st.rindex(")")]
                ppid = int(st[st.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                continue
            if ppid == main and comm == "smbd":
                pids.append(int(d))
        return pids

    def stop(self):
        subprocess.run([SERVER, "stop", self.dir], stdout=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def run(args, env=None, timeout=60):
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)


def fetch(srv, *args, env=None):
    return run([FETCH, "-U", USER] + list(args), env=env or srv.env())


def fetch_bytes(srv, value, *extra):
    out = os.path.join(srv.dir, "fetch.bin")
    r = fetch(srv, "-o", out, *extra, "127.0.0.1:%d" % srv.port, value)
    check(r.returncode == 0, "msrpc-fetch %s %s (%s)" % (value, " ".join(extra), r.stderr.strip()))
    with open(out, "rb") as f:
        return f.read(), r.stdout


def stat(line, key):
    for part in line.split():
        if part.startswith(key + "="):
            return int(part.split("=", 1)[1])
    return -1


def mask_time(block):
    """PERF_DATA_BLOCK.SystemTime (16 bytes at 36) is the time of the answer."""
    return block[:36] + b"\0" * 16 + block[52:] if len(block) >= 52 else block


def impacket_fetch(srv, value, size):
    """impacket sends the whole lpData buffer in the request; size it to fit."""
    from impacket.dcerpc.v5 import rrp, transport
    t = transport.DCERPCTransportFactory(r"ncacn_np:127.0.0.1[\pipe\winreg]")
    t.set_dport(srv.port)
    t.set_credentials(USER, srv.password, "", "", "")
    dce = t.get_dce_rpc()
    dce.connect()
    dce.bind(rrp.MSRPC_UUID_RRP)
    handle = rrp.hOpenPerformanceData(dce)["phKey"]
    req = rrp.BaseRegQueryValue()
    req["hKey"] = handle
    req["lpValueName"] = value + "\x00"
    req["lpData"] = b" " * size
    req["lpcbData"] = size
    req["lpcbLen"] = size
    resp = dce.request(req)
    dce.disconnect()
    return b"".join(resp["lpData"]) if isinstance(resp["lpData"], list) else bytes(resp["lpData"])


def ps_tree(args, env=None, view=("-t",)):
    r = run([NTLENS, "ps"] + list(view) + ["--format", "json"] + args, env=env)
    check(r.returncode == 0, "ntlens ps %s exits 0 (%s)" % (" ".join(args), r.stderr.strip()[:300]))
    try:
        return {p["pid"]: p for p in json.loads(r.stdout)}
    except ValueError:
        return {}


def test_remote_ps():
    srv = Smbd()
    try:
        srv.provide()
        remote = ps_tree(["-S", srv.spec], env=srv.env())
        local = ps_tree([])
        common = set(remote) & set(local)
        check(len(remote) > 3, "remote ps lists processes (%d)" % len(remote))
        # Other processes come and go between the two snapshots.
        check(len(common) >= 0.8 * len(remote),
              "%d of %d remote pids are running locally" % (len(common), len(remote)))
        same_name = sum(remote[p]["name"] == local[p]["name"] for p in common)
        for p in sorted(common):
            if remote[p]["name"] != local[p]["name"]:
                print("  pid %d: remote %r, local %r" % (p, remote[p]["name"], local[p]["name"]))
        same_parent = sum(remote[p]["ppid"] == local[p]["ppid"] for p in common)
        close_threads = sum(abs(remote[p]["thd"] - local[p]["thd"]) <= 2 for p in common)
        # Processes started by this test exec between the two snapshots.
        check(same_name >= len(common) - 5, "names equal (%d/%d)" % (same_name, len(common)))
        # Orphans are adopted by their reaper between the snapshots.
        check(same_parent >= len(common) - 5, "parents equal (%d/%d)" % (same_parent, len(common)))
        check(close_threads >= 0.95 * len(common),
              "thread counts within 2 (%d/%d)" % (close_threads, len(common)))
        # Samba's title database names several counters alike; each value must
        # still come from the index the Process object defines.
        remote = ps_tree(["-S", srv.spec], env=srv.env(), view=[])
        local = ps_tree([], view=[])
        for col in ("pri", "priv_kb", "cpu_time", "elapsed_time"):
            have = sum(remote[p].get(col) is not None for p in remote)
            check(have == len(remote), "remote %s in every row (%d/%d)" % (col, have, len(remote)))
        common = set(remote) & set(local)
        for col in ("cpu_time", "elapsed_time"):
            top = max(common, key=lambda p: local[p].get(col) or 0)
            check(abs(remote[top][col] - local[top][col]) <= 0.05 * local[top][col] + 2,
                  "%s of pid %d: remote %.2f, local %.2f" % (col, top, remote[top][col], local[top][col]))
        # Sources used from many threads at once (libsmbclient alone aborts).
        r = fetch(srv, "--threads", "24", "127.0.0.1:%d" % srv.port, "Global")
        check(r.returncode == 0 and "ok=24" in r.stdout,
              "24 sources in 24 threads (%s %s)" % (r.stdout.strip(), r.stderr.strip()[:200]))
        # Host tagging with two sources: the same server twice.
        r = run([NTLENS, "ps", "--format", "json", "-S", srv.spec, "-S", srv.spec], env=srv.env())
        check(r.returncode == 0, "ntlens ps with two remote sources (%s)" % r.stderr.strip()[:200])
    finally:
        srv.stop()


def test_impacket_bytes():
    srv = Smbd()
    try:
        srv.provide()
        for value in ("Counter 009", "Global"):
            ours, _ = fetch_bytes(srv, value)
            theirs = impacket_fetch(srv, value, len(ours) + 4096)
            if value == "Global":
                ours, theirs = mask_time(ours), mask_time(theirs)
            check(len(ours) > 100 and ours == theirs,
                  "%s: ntlens and impacket fetch the same %d/%d bytes" %
                  (value, len(ours), len(theirs)))
    finally:
        srv.stop()


def test_buffer_growth():
    srv = Smbd()
    try:
        srv.provide()
        full, line = fetch_bytes(srv, "Global", "-s", str(1 << 20))
        check(stat(line, "attempts") == 1, "1 MiB buffer: one QueryValue")
        # Samba answers a short buffer with success and a header followed by
        # zeros (also when the buffer is exactly the size needed).
        for size in ("512", str(len(full))):
            data, line = fetch_bytes(srv, "Global", "-s", size)
            check(stat(line, "attempts") == 2, "buffer %s: retried once (%s)" % (size, line.strip()))
            check(mask_time(data) == mask_time(full), "buffer %s: the whole block" % size)
        # The title database: Samba answers a short buffer with no bytes.
        titles, _ = fetch_bytes(srv, "Counter 009")
        data, line = fetch_bytes(srv, "Counter 009", "-s", "16")
        check(stat(line, "attempts") >= 2 and data == titles, "Counter 009 from a 16-byte buffer")
        # Repeated snapshots on one handle: one round trip each once sized.
        # The block holds this machine's processes: one that grows past the
        # buffer's margin between two snapshots (a busy machine starting
        # processes) costs one more, so a few are allowed; a fetcher that
        # re-sized every time would take 40.
        r = fetch(srv, "-n", "20", "127.0.0.1:%d" % srv.port, "Global")
        check(r.returncode == 0 and 20 <= stat(r.stdout, "round_trips") <= 23,
              "20 snapshots in 20 round trips, 23 at most (%s)" % r.stdout.strip())
        # The cap: a block larger than --max-block fails clearly.
        r = fetch(srv, "-s", "4096", "-m", "8192", "127.0.0.1:%d" % srv.port, "Global")
        check(r.returncode == 1 and "does not fit in 8192 bytes" in r.stderr,
              "cap of 8192 bytes: clear failure (%s)" % r.stderr.strip())
        r = run([NTLENS, "ps", "-S", srv.spec, "--max-block", "8192"], env=srv.env())
        check(r.returncode == 1 and "8192" in r.stderr, "ntlens ps --max-block 8192 fails clearly")
    finally:
        srv.stop()


def test_errors():
    srv = Smbd()
    try:
        srv.provide()
        wrong = "Wrong-Secret-%d" % os.getpid()
        r = run([NTLENS, "ps", "-S", srv.spec], env=srv.env(wrong))
        check(r.returncode == 1 and "logon failure" in r.stderr,
              "wrong password: logon failure (%s)" % r.stderr.strip())
        check(wrong not in r.stderr and wrong not in r.stdout, "the password never appears")
        # -k without a ticket cache (none here: no KDC runs in the tests).
        env = srv.env()
        env["KRB5CCNAME"] = "FILE:" + os.path.join(srv.dir, "no-such-ccache")
        r = run([NTLENS, "ps", "-k", "-S", srv.spec], env=env)
        check(r.returncode == 1 and "Kerberos logon failure" in r.stderr,
              "-k without a ticket (%s)" % r.stderr.strip())
        r = run([NTLENS, "ps", "-S", "smb://%s@no-such-host.invalid" % USER], env=srv.env())
        check(r.returncode == 1 and "cannot resolve host" in r.stderr,
              "unknown host (%s)" % r.stderr.strip())
        closed = free_port()
        r = run([NTLENS, "ps", "-S", "smb://%s@127.0.0.1:%d" % (USER, closed)], env=srv.env())
        check(r.returncode == 1 and "refused" in r.stderr, "closed port (%s)" % r.stderr.strip())
        start = time.monotonic()
        r = run([NTLENS, "ps", "--timeout", "1", "-S", "smb://%s@10.255.255.1" % USER],
                env=srv.env())
        took = time.monotonic() - start
        # Sandboxes may answer for any address; then SMB negotiation fails.
        check(r.returncode == 1 and took < 8 and "10.255.255.1" in r.stderr,
              "unreachable host fails within the connect timeout (%.1f s: %s)" %
              (took, r.stderr.strip()))
        r = fetch(srv, "--opnum", "200", "127.0.0.1:%d" % srv.port, "Global")
        check("fault=0x1c010002" in r.stdout and "nca_s_op_rng_error" in r.stdout,
              "an unknown opnum gets a named fault (%s)" % r.stdout.strip())
        r = fetch(srv, "-P", "nosuchpipe", "127.0.0.1:%d" % srv.port, "Global")
        check(r.returncode == 1 and "not available" in r.stderr,
              "a missing pipe (%s)" % r.stderr.strip())
        r = fetch(srv, "--hklm", r"SOFTWARE\Microsoft\Windows NT\CurrentVersion\Perflib",
                  "127.0.0.1:%d" % srv.port, "Last Counter", "Last Help")
        check(r.returncode == 0 and r.stdout.count("type=4 bytes=4") == 2,
              "HKLM Perflib Last Counter/Last Help are DWORDs (%s)" % r.stdout.strip())
        r = run([NTLENS, "ps", "-S", "smb://%s@127.0.0.1:%d/share" % (USER, srv.port)],
                env=srv.env())
        # a malformed spec is a usage error, refused before connecting
        check(r.returncode == 2 and "no path" in r.stderr, "a spec with a path is refused")
    finally:
        srv.stop()


def test_server_modes():
    srv = Smbd("smb1-only")
    try:
        r = run([NTLENS, "ps", "-S", srv.spec], env=srv.env())
        check(r.returncode == 1 and "SMB1" in r.stderr,
              "SMB1-only server: clear failure (%s)" % r.stderr.strip())
    finally:
        srv.stop()
    srv = Smbd("encrypt")
    try:
        # An empty perfmon store: no bytes at any buffer size, believed after
        # three tries rather than grown to the cap.
        r = fetch(srv, "127.0.0.1:%d" % srv.port, "Global")
        check(r.returncode == 1 and "no performance data" in r.stderr,
              "empty store: Global fails clearly (%s)" % r.stderr.strip())
        r = fetch(srv, "127.0.0.1:%d" % srv.port, "Counter 009")
        check(r.returncode == 0 and stat(r.stdout, "bytes") == 0 and
              stat(r.stdout, "attempts") == 3, "empty store: Counter 009 is empty (%s)" %
              r.stdout.strip())
        srv.provide()
        remote = ps_tree(["-S", srv.spec], env=srv.env())
        check(len(remote) > 3, "SMB3 server requiring encryption serves ps (%d rows)" % len(remote))
    finally:
        srv.stop()
    if not ipv6_loopback():
        print("skip: no ::1 on this machine, IPv6 literal not tested")
        return
    srv = Smbd(listen=("::1",))
    try:
        srv.provide()
        spec = "smb://%s@[::1]:%d" % (USER, srv.port)
        v6 = ps_tree(["-S", spec], env=srv.env(), view=())
        v4 = ps_tree(["-S", srv.spec], env=srv.env(), view=())
        check(len(v6) > 3 and set(v6) & set(v4),
              "an IPv6 literal host serves ps (%d rows, %d pids also over IPv4)" %
              (len(v6), len(set(v6) & set(v4))))
    finally:
        srv.stop()


def ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def test_anonymous():
    srv = Smbd("no-anonymous")
    try:
        srv.provide()
        r = run([NTLENS, "ps", "-N", "-S", "smb://127.0.0.1:%d" % srv.port])
        check(r.returncode == 1 and "access denied" in r.stderr,
              "anonymous with restrict anonymous = 2: access denied (%s)" % r.stderr.strip())
        remote = ps_tree(["-S", srv.spec], env=srv.env())
        check(len(remote) > 3, "the test user still reads it (%d rows)" % len(remote))
    finally:
        srv.stop()


def stop_server_under(srv, args, settle=0.0):
    """Runs args until its first line of output, stops (SIGSTOP) the smbd
    processes serving it, and waits for it to give up. Returns its first
    line, exit code, seconds from the stop to its exit, stderr, and the
    stopped pids (killed afterwards)."""
    p = subprocess.Popen(args, env=srv.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    first = p.stdout.readline()
    time.sleep(settle)
    victims = srv.connection_pids()
    for pid in victims:
        os.kill(pid, signal.SIGSTOP)
    start = time.monotonic()
    try:
        _, err = p.communicate(timeout=40)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    took = time.monotonic() - start
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass
    return first, p.returncode, took, err, victims


def test_server_death():
    srv = Smbd()
    try:
        srv.provide()
        # Killed mid-call: the client fails at once, naming the broken reply.
        p = subprocess.Popen([FETCH, "-U", USER, "--ready", "-n", "100000",
                              "127.0.0.1:%d" % srv.port, "Global"], env=srv.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        p.stdout.readline()
        time.sleep(0.5)
        victims = srv.connection_pids()
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        try:
            out, err = p.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        check(victims and p.returncode == 1 and ("reply" in err or "writing" in err),
              "server killed mid-call: exit 1 (%s)" % err.strip())
        # Stopped mid-call: the per-call timeout ends the wait.
        first, code, took, err, victims = stop_server_under(
            srv, [FETCH, "-U", USER, "--ready", "-t", "2000", "-n", "100000",
                  "127.0.0.1:%d" % srv.port, "Global"], settle=0.5)
        check(victims and code == 1 and took < 15,
              "server stopped mid-call: timeout after %.1f s (%s)" % (took, err.strip()))
        # The same through the CLI: --call-timeout, not the 30 s default, ends
        # a sampling run whose server stopped answering.
        first, code, took, err, victims = stop_server_under(
            srv, [NTLENS, "sample", "-si", "1", "--call-timeout", "2", "-S", srv.spec,
                  "\\Process(*)\\ID Process"])
        check(first and victims and code == 1 and took < 12 and "stopped answering" in err,
              "sample --call-timeout 2, server stopped: exit 1 after %.1f s (%s)" %
              (took, err.strip()))
    finally:
        srv.stop()


def tdb_records(path):
    """Keys and values of a tdb, through tdbdump (Debian tdb-tools)."""
    out = run(["tdbdump", path]).stdout
    recs, key = {}, None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("key("):
            key = line.split("= ", 1)[1].strip('"')
        elif line.startswith("data(") and key is not None:
            recs[key] = line.split("= ", 1)[1].strip('"')
    return recs


def test_provider_cli():
    r = run([NTLENS, "samba-provider", "--help"])
    check(r.returncode == 0 and "--state-dir" in r.stdout, "--help: exit 0 on stdout")
    for args, names in (([], "--state-dir DIR is required"),
                        (["--state-dir", "/tmp", "--interval", "0"],
                         "option '--interval' needs SECONDS, a whole number from 1 to 86400"),
                        (["--state-dir", "/tmp", "x"], "unexpected argument 'x'"),
                        (["--state-dir", "/tmp", "--bogus"], "unknown option '--bogus'"),
                        (["--state-dir"], "option '--state-dir' needs DIR"),
                        (["--state-dir", "/tmp", "-S", "a", "-S", "b"], "one source at a time")):
        r = run([NTLENS, "samba-provider"] + args)
        lines = r.stderr.splitlines()
        check(r.returncode == 2 and len(lines) == 2 and names in lines[0] and
              lines[1] == "Try 'ntlens samba-provider --help'.",
              "usage error %s: exit 2, one line naming it (%s)" % (args, r.stderr.strip()))
    # Titles: the source's own, unless --std-titles fills the rest from
    # Windows' table. A Samba answer imported without titles has none, so
    # Samba's index 2 (Memory there) keeps a name by number, not Windows' System.
    hkpd = os.path.join(os.environ["NTLENS_SHARED_DATA"], "hkpd")
    d = tempfile.mkdtemp(prefix="ntlens-provider-")
    try:
        cap = os.path.join(d, "bare.ntlcap")
        run([NTLENS, "capture", "--import", os.path.join(hkpd, "samba_Global.bin"), "-o", cap])
        for flags, want in (([], "Counter 2"), (["--std-titles"], "System")):
            r = run([NTLENS, "samba-provider", "--state-dir", d, "--once", "-S", cap] + flags)
            names = tdb_records(os.path.join(d, "perfmon", "names.tdb"))
            check(r.returncode == 0 and names.get("2") == want,
                  "samba-provider %s: index 2 named %r (%s)" % (flags, names.get("2"),
                                                                 r.stderr.strip()))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    r = run([NTLENS, "samba-provider", "--state-dir", "/proc/no/such/dir", "--once"])
    check(r.returncode == 1 and "/proc/no/such/dir" in r.stderr,
          "unwritable state dir: exit 1 (%s)" % r.stderr.strip())
    d = tempfile.mkdtemp(prefix="ntlens-provider-")
    try:
        p = subprocess.Popen([NTLENS, "samba-provider", "--state-dir", d, "--interval", "1",
                              "-v"], stderr=subprocess.PIPE, text=True)
        names = os.path.join(d, "perfmon", "names.tdb")
        data = os.path.join(d, "perfmon", "data.tdb")
        first = 0
        for _ in range(100):
            if os.path.exists(names) and os.path.exists(data):
                first = os.stat(data).st_ino
                break
            time.sleep(0.1)
        time.sleep(2.5)
        refreshed = os.path.exists(data) and os.stat(data).st_ino != first
        p.send_signal(signal.SIGTERM)
        try:
            _, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        check(p.returncode == 0, "SIGTERM ends the refresh loop with exit 0")
        check(refreshed and err.count("objects") >= 2,
              "the store is replaced at each refresh (%d refreshes)" % err.count("objects"))
        n, dd = tdb_records(names), tdb_records(data)
        check(n.get("230") == "Process" and n.get("230rel") == "p",
              "names.tdb: Process object at 230")
        check(n.get("784") == "ID Process" and n.get("784rel", "").startswith("c[230"),
              "names.tdb: ID Process 784 is a counter of Process")
        check(int(n.get("230inst", "0")) > 3 and "230i0name" in n, "names.tdb: process instances")
        check("0PerfTime" in dd and "230i0" in dd and "0PerfFreq" in n, "data.tdb: values")
        check(not [f for f in os.listdir(os.path.join(d, "perfmon")) if f.startswith(".")],
              "no temporary files left behind")
    finally:
        shutil.rmtree(d, ignore_errors=True)


TESTS = {
    "provider-cli": test_provider_cli,
    "remote-ps": test_remote_ps,
    "impacket-bytes": test_impacket_bytes,
    "buffer-growth": test_buffer_growth,
    "errors": test_errors,
    "server-modes": test_server_modes,
    "anonymous": test_anonymous,
    "server-death": test_server_death,
}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in TESTS:
        sys.exit("usage: smbd_tests.py " + "|".join(TESTS))
    # meson stops a test that times out with SIGTERM: unwind, so that every
    # `finally` stops its server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    if not os.path.exists("/usr/sbin/smbd"):
        print("smbd is not installed (scripts/setup)")
        sys.exit(77)
    TESTS[sys.argv[1]]()
    print("%s: %d failure(s)" % (sys.argv[1], len(failures)))
    sys.exit(1 if failures else 0)
