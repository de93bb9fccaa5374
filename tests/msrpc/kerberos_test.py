#!/usr/bin/python3
"""`ntlens ps/counters/sample -k` over Kerberos against a real smbd.

A private MIT KDC (scripts/kdc-test-server) and a private smbd accepting its
tickets (scripts/smbd-test-server --mode kerberos) run on loopback addresses
under a temporary directory; KRB5_CONFIG and KRB5CCNAME point there, nothing
in /etc is read for Kerberos or changed, and both servers are stopped by pid
at the end, pass or fail. `ntlens samba-provider` fills smbd's perfmon store.

Checks: with a ticket from kinit, `ps -k` lists the processes `ps` lists
locally, smbd saw a Kerberos logon (not NTLM) and the KDC issued the cifs/
ticket; `counters -k`, `sample -k` and two -k sources at once work. An
expired ticket, no ticket cache (even with a valid NTLM password at hand: no
fallback), a ticket of a user the server does not know, a host named by its
address, and a server whose keytab went stale each fail with the promised
message.

Needs NTLENS (the CLI) and NTLENS_SOURCE_ROOT. Exits 77 (skip) when smbd or
the MIT KDC tools are not installed (scripts/setup installs them), or when no
name of this machine resolves only to loopback.
"""
import ipaddress
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
SMBD_SERVER = os.path.join(ROOT, "scripts", "smbd-test-server")
KDC_SERVER = os.path.join(ROOT, "scripts", "kdc-test-server")
USER = "ntltest"
REALM = "NTLENS.TEST"
PROMISED = "Kerberos logon failure at"
REQUIRED = ["/usr/sbin/smbd", "/usr/sbin/krb5kdc", "/usr/sbin/kdb5_util",
            "/usr/sbin/kadmin.local", "/usr/bin/kinit", "/usr/bin/klist"]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)
    else:
        print("ok:", what, flush=True)


def free_port(udp_too=False):
    """A port free on 127.0.0.1 for TCP (and UDP, for the KDC)."""
    for _ in range(50):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        try:
            if udp_too:
                u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                try:
                    u.bind(("127.0.0.1", port))
                finally:
                    u.close()
            return port
        except OSError:
            continue
        finally:
            s.close()
    raise RuntimeError("no free port on 127.0.0.1")


def loopback_names():
    """Names of this host that resolve only to loopback addresses.

    libsmbclient refuses Kerberos for an address and for "localhost", so the
    SPN needs another name: the host name where it is loopback (containers
    often map it to 127.0.0.1; Debian to 127.0.1.1, an address no interface
    has, which smbd cannot bind), else Debian's ip6-localhost (::1).
    Returns {name: [addresses]} and what was tried.
    """
    names, tried = {}, []
    for name in (socket.gethostname(), socket.getfqdn(), "localhost.localdomain",
                 "ip6-localhost", "ip6-loopback"):
        if not name or name.lower() == "localhost" or name in names or name in tried:
            continue
        tried.append(name)
        try:
            addrs = {ai[4][0] for ai in socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)}
        except OSError:
            continue
        if addrs and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addrs):
            names[name] = sorted(addrs)
    return names, tried


def reachable(addr, port):
    try:
        with socket.create_connection((addr, port), timeout=2):
            return True
    except OSError:
        return False


def run(args, env=None, timeout=60):
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)


class Realm:
    """A KDC and an smbd that trusts it, both private to one directory."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="ntlens-krb5-")
        self.kdc_dir = os.path.join(self.dir, "kdc")
        self.smb_dir = os.path.join(self.dir, "smbd")
        self.started = []

    def start(self, names):
        self.kdc_port = free_port(udp_too=True)
        args = [KDC_SERVER, "start", self.kdc_dir, "--port", str(self.kdc_port), "--realm", REALM]
        for name in names:
            args += ["--host", name]
        r = run(args)
        if r.returncode != 0:
            raise RuntimeError("kdc-test-server: " + r.stderr.strip())
        self.started.append((KDC_SERVER, self.kdc_dir))
        with open(os.path.join(self.kdc_dir, "password")) as f:
            self.password = f.read()
        self.port = free_port()
        args = [SMBD_SERVER, "start", self.smb_dir, "--port", str(self.port), "--mode",
                "kerberos", "--realm", REALM, "--keytab",
                os.path.join(self.kdc_dir, "smb.keytab")]
        for a in sorted({a for addrs in names.values() for a in addrs} - {"127.0.0.1"}):
            args += ["--listen", a]
        env = self.env()
        env["NTLENS_SMBD_LOG_LEVEL"] = "3"  # names the ticket's principal
        r = run(args, env=env)
        if r.returncode != 0:
            raise RuntimeError("smbd-test-server: " + r.stderr.strip())
        self.started.append((SMBD_SERVER, self.smb_dir))
        with open(os.path.join(self.smb_dir, "password")) as f:
            self.ntlm_password = f.read()
        # The first name whose every address smbd listens on.
        self.host = next((n for n, addrs in names.items()
                          if all(reachable(a, self.port) for a in addrs)), None)
        if self.host is None:
            raise RuntimeError("smbd listens on none of %s" % names)
        print("host name for Kerberos: %s (%s)" % (self.host, " ".join(names[self.host])),
              flush=True)
        self.spec = "smb://%s@%s:%d" % (USER, self.host, self.port)

    def env(self, ccache="ccache"):
        """Kerberos settings of this realm only; no NTLM password."""
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("KRB5") and k != "NTLENS_PASSWORD"}
        e["KRB5_CONFIG"] = os.path.join(self.kdc_dir, "krb5.conf")
        e["KRB5CCNAME"] = "FILE:" + os.path.join(self.dir, ccache)
        return e

    def kinit(self, principal, password, ccache="ccache", lifetime=None):
        args = ["/usr/bin/kinit"] + (["-l", lifetime] if lifetime else []) + [principal]
        r = subprocess.run(args, input=password + "\n", capture_output=True, text=True,
                           env=self.env(ccache), timeout=30)
        check(r.returncode == 0, "kinit %s%s (%s)" % (
            principal, " -l " + lifetime if lifetime else "", r.stderr.strip()))

    def kadmin(self, query):
        r = run([KDC_SERVER, "kadmin", self.kdc_dir, query])
        check(r.returncode == 0, "kadmin.local %s (%s)" % (query, r.stderr.strip()[-200:]))

    def kadmin_password(self, principal, password):
        r = subprocess.run([KDC_SERVER, "kadmin", self.kdc_dir, "addprinc " + principal],
                           input="%s\n%s\n" % (password, password), capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 0, "kadmin.local addprinc %s (%s)" % (principal, r.stderr.strip()))

    def provide(self):
        r = run([NTLENS, "samba-provider", "--state-dir", os.path.join(self.smb_dir, "state"),
                 "--once"])
        check(r.returncode == 0, "samba-provider --once exits 0 (%s)" % r.stderr.strip())

    def log(self, path):
        try:
            with open(path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def smbd_log(self):
        d = os.path.join(self.smb_dir, "log")
        return "".join(self.log(os.path.join(d, n)) for n in sorted(os.listdir(d)))

    def stop(self):
        for script, d in reversed(self.started):
            subprocess.run([script, "stop", d], stdout=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def ps_json(args, env):
    r = run([NTLENS, "ps", "-t", "--format", "json"] + args, env=env)
    try:
        return r, {p["pid"]: p for p in json.loads(r.stdout)} if r.returncode == 0 else {}
    except ValueError:
        return r, {}


def expect_failure(what, args, env, secret=None):
    r = run([NTLENS] + args, env=env)
    check(r.returncode == 1 and PROMISED in r.stderr and "kinit" in r.stderr,
          "%s: exit 1, %r (exit %d: %s)" % (what, PROMISED, r.returncode, r.stderr.strip()))
    if secret:
        check(secret not in r.stderr and secret not in r.stdout,
              "%s: the password never appears" % what)


def test_kerberos(realm):
    realm.provide()
    realm.kinit(USER, realm.password)
    env = realm.env()

    # A ticket from the KDC: the remote listing equals the local one.
    r, remote = ps_json(["-k", "-S", realm.spec], env)
    check(r.returncode == 0, "ntlens ps -k -S %s exits 0 (%s)" % (realm.spec, r.stderr.strip()))
    _, local = ps_json([], env)
    common = set(remote) & set(local)
    check(len(remote) > 3, "ps -k lists remote processes (%d)" % len(remote))
    check(len(common) >= 0.8 * max(len(remote), 1),
          "%d of %d remote pids are running locally" % (len(common), len(remote)))
    same = sum(remote[p]["name"] == local[p]["name"] and remote[p]["ppid"] == local[p]["ppid"]
               for p in common)
    check(common and same >= len(common) - 5,
          "names and parents equal (%d/%d)" % (same, len(common)))

    # It was Kerberos: the KDC issued the service ticket and smbd mapped the
    # ticket's principal (an NTLM logon names no principal).
    kdc_log = realm.log(os.path.join(realm.kdc_dir, "kdc.log"))
    issued = "%s@%s for cifs/%s@%s" % (USER, REALM, realm.host, REALM)
    check(any("TGS_REQ" in l and "ISSUE" in l and issued in l for l in kdc_log.splitlines()),
          "the KDC issued %s" % issued)
    check("Kerberos ticket principal name is [%s@%s]" % (USER, REALM) in realm.smbd_log(),
          "smbd accepted the Kerberos ticket of %s@%s" % (USER, REALM))
    r = run(["/usr/bin/klist"], env=env)
    check("cifs/%s@%s" % (realm.host, REALM) in r.stdout,
          "the service ticket is in the test's own cache")

    r = run([NTLENS, "counters", "-k", "-S", realm.spec, "--format", "json"], env=env)
    try:
        objects = {o.get("index"): o for o in json.loads(r.stdout)} if r.returncode == 0 else {}
    except ValueError:
        objects = {}
    check(r.returncode == 0 and 230 in objects and 232 in objects,
          "ntlens counters -k lists Process and Thread (%s)" % r.stderr.strip())
    r = run([NTLENS, "counters", "-k", "-S", realm.spec, "--format", "csv", "Process"], env=env)
    check(r.returncode == 0 and "ID Process" in r.stdout,
          "ntlens counters -k Process lists its counters (%s)" % r.stderr.strip())

    r = run([NTLENS, "sample", "-k", "-S", realm.spec, "-si", "1", "-sc", "2", "--format",
             "jsonl", r"\Process(*)\ID Process"], env=env)
    try:
        lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    except ValueError:
        lines = []
    check(r.returncode == 0 and len(lines) == 2 and
          os.getpid() in [v for k, v in lines[-1].items() if k.endswith("\\ID Process")],
          "ntlens sample -k: 2 samples of ID Process, this test's pid among them (%s)" %
          r.stderr.strip()[:200])

    # Two sources in parallel: each helper finds the ticket cache.
    r = run([NTLENS, "ps", "--format", "json", "-k", "-S", realm.spec, "-S", realm.spec], env=env)
    try:
        rows = json.loads(r.stdout) if r.returncode == 0 else []
    except ValueError:
        rows = []
    # Rows carry the name the server gives itself (smb.conf's netbios name).
    tagged = sum(row.get("host") == "NTLENSTEST" for row in rows)
    check(r.returncode == 0 and tagged >= 2 * 0.8 * len(remote) and tagged == len(rows),
          "ntlens ps -k with two Kerberos sources: %d rows, %d with host NTLENSTEST (%s)" %
          (len(rows), tagged, r.stderr.strip()[:200]))

    # No ticket cache at all, with the right NTLM password at hand: -k does
    # not fall back to NTLM.
    env = realm.env("no-such-ccache")
    env["NTLENS_PASSWORD"] = realm.ntlm_password
    expect_failure("no ticket cache", ["ps", "-k", "-S", realm.spec], env,
                   secret=realm.ntlm_password)
    r = run([NTLENS, "ps", "-S", realm.spec], env=env)
    check(r.returncode == 0, "the same NTLM password works without -k (%s)" % r.stderr.strip())

    # An expired ticket (the next checks run while it ages).
    lifetime = 8
    realm.kinit(USER, realm.password, ccache="short", lifetime="%ds" % lifetime)
    expiry = time.monotonic() + lifetime  # at the latest
    short = realm.env("short")
    r = run([NTLENS, "ps", "-k", "-S", realm.spec], env=short)
    check(r.returncode == 0, "a %d s ticket works while valid (%s)" % (lifetime, r.stderr.strip()))

    # A valid ticket of a principal the server maps to no account.
    stranger_pw = "S%d-%s" % (os.getpid(), realm.password[1:9])
    realm.kadmin_password("stranger", stranger_pw)
    realm.kinit("stranger", stranger_pw, ccache="stranger")
    expect_failure("ticket of an unknown user",
                   ["ps", "-k", "-S", "smb://stranger@%s:%d" % (realm.host, realm.port)],
                   realm.env("stranger"))

    # The host named by its address: no SPN matches, libsmbclient refuses.
    expect_failure("host named by address",
                   ["ps", "-k", "-S", "smb://%s@127.0.0.1:%d" % (USER, realm.port)], realm.env())

    time.sleep(max(0.0, expiry + 1 - time.monotonic()))
    expect_failure("expired ticket", ["ps", "-k", "-S", realm.spec], short)
    expect_failure("expired ticket (counters)", ["counters", "-k", "-S", realm.spec], short)

    # The server's keytab is stale (its key changed at the KDC): the ticket
    # it is given cannot be decrypted. Last, as it breaks the server.
    realm.kadmin("cpw -randkey cifs/%s" % realm.host)
    realm.kinit(USER, realm.password, ccache="rekeyed")
    expect_failure("server keytab out of date", ["ps", "-k", "-S", realm.spec],
                   realm.env("rekeyed"))


def main():
    missing = [p for p in REQUIRED if not os.path.exists(p)]
    if missing:
        print("not installed: %s (scripts/setup)" % " ".join(missing))
        return 77
    names, tried = loopback_names()
    if not names:
        # The machine, not ntlens: no name to give the server's SPN here.
        print("SKIP: none of %s resolves only to loopback addresses (libsmbclient needs a "
              "name other than localhost for Kerberos)" % " ".join(tried))
        return 77
    start = time.monotonic()
    realm = Realm()
    try:
        realm.start(names)
        test_kerberos(realm)
    except RuntimeError as e:
        check(False, str(e))
    finally:
        realm.stop()
    print("kerberos: %d failure(s) in %.1f s" % (len(failures), time.monotonic() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    # meson stops a test that times out with SIGTERM: unwind, so that the
    # `finally` stops both servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
