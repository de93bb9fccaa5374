#!/usr/bin/python3
"""ntlens exporter's Kerberos credential sets against a real MIT KDC and an
smbd trusting it (tests/msrpc/kerberos_test.py's Realm, all on loopback
under a temporary directory).

A set with a keytab gets its ticket by kinit into a private cache that the
SMB helpers use (the exporter's own KRB5CCNAME names no cache at all), and
again when that cache is gone; a set with a ccache uses it; the KDC issued
the service ticket and smbd logged the Kerberos principal. A principal the
keytab lacks fails as auth, the log names the credential set, and neither
pages nor logs carry the keytab's path. Config errors name line and key;
the private directory is gone after SIGTERM."""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "msrpc"))
from checks import check, failed, finish  # noqa: E402
import kerberos_test as krb  # noqa: E402
import smbd_tests  # noqa: E402
from exporter_smbd import get  # noqa: E402

NTLENS = os.environ["NTLENS"]
krb.check = check  # the Realm's own checks count here


def write_config(d, realm):
    cfg = os.path.join(d, "exporter.yml")
    keytab = os.path.join(d, "monitor.keytab")
    with open(cfg, "w") as f:
        f.write("""auths:
  kt:
    keytab: %(kt)s
    principal: %(user)s@%(realm)s
  cc:
    user: %(user)s
    ccache: %(cc)s
  stranger:
    keytab: %(kt)s
    principal: stranger@%(realm)s
modules:
  kt:
    auth: kt
    collectors: [system, process]
  kt2:
    auth: kt
    collectors: [system]
  cc:
    auth: cc
    collectors: [system]
  stranger:
    auth: stranger
    collectors: [system]
""" % {"kt": keytab, "user": krb.USER, "realm": krb.REALM,
       "cc": os.path.join(realm.dir, "given")})
    return cfg, keytab


def config_errors(d, keytab):
    cases = [("keytab: %s/none.keytab\n    principal: a@B" % d,
              "auths.a.keytab: cannot read the keytab"),
             ("keytab: %s\n    ccache: /tmp/x" % keytab, "keytab and ccache exclude each other"),
             ("keytab: %s" % keytab, "a keytab needs principal"),
             ("principal: a@B", "principal and ticket_renew go with keytab"),
             ("ccache: /tmp/x", "a ccache set needs user"),
             ("keytab: %s\n    principal: a@B\n    ticket_renew: 5" % keytab,
              "auths.a.ticket_renew: must be a whole number from 60")]
    bad = os.path.join(d, "bad.yml")
    for body, want in cases:
        with open(bad, "w") as f:
            f.write("auths:\n  a:\n    %s\nmodules:\n  m:\n    auth: a\n" % body)
        r = subprocess.run([NTLENS, "exporter", "--config", bad, "--check-config"],
                           capture_output=True, text=True)
        check(r.returncode == 1 and "bad.yml:" in r.stderr and want in r.stderr,
              "config error %r (%s)" % (want, r.stderr.strip()))


def start(cfg, port, env):
    p = subprocess.Popen([NTLENS, "exporter", "--config", cfg, "--listen",
                          "127.0.0.1:%d" % port], stderr=subprocess.PIPE, text=True, env=env)
    for _ in range(50):
        try:
            get(port, "/")
            break
        except OSError:
            time.sleep(0.1)
    return p


def probes(port, target, d, realm):
    code, page = get(port, "/probe?target=%s&module=kt" % target)
    check("probe_success 1" in page and "windows_system_processes " in page,
          "a keytab credential set reads the target over Kerberos (%s)"
          % [x for x in page.splitlines() if x.startswith("probe_success")])
    issued = "%s@%s for cifs/%s@%s" % (krb.USER, krb.REALM, realm.host, krb.REALM)
    kdc_log = realm.log(os.path.join(realm.kdc_dir, "kdc.log"))
    check(any("TGS_REQ" in x and "ISSUE" in x and issued in x for x in kdc_log.splitlines()),
          "the KDC issued %s" % issued)
    check("Kerberos ticket principal name is [%s@%s]" % (krb.USER, krb.REALM)
          in realm.smbd_log(), "smbd accepted the ticket of %s@%s" % (krb.USER, krb.REALM))
    caches = glob.glob(os.path.join(d, "ntlens-exporter-*", "krb5cc-*"))
    check(len(caches) == 1 and oct(os.stat(os.path.dirname(caches[0])).st_mode & 0o777)
          == "0o700", "one private ticket cache, in a 0700 directory (%s)" % caches)
    for c in caches:
        os.unlink(c)
    code, page = get(port, "/probe?target=%s&module=kt2" % target)
    check("probe_success 1" in page and os.path.exists(caches[0] if caches else "/"),
          "a cache that is gone is filled again from the keytab")
    realm.kinit(krb.USER, realm.password, ccache="given")
    code, page = get(port, "/probe?target=%s&module=cc" % target)
    check("probe_success 1" in page, "a ccache credential set reads the target")
    code, page = get(port, "/probe?target=%s&module=stranger" % target)
    check('probe_success{error_kind="auth"} 0' in page,
          "a principal the keytab lacks fails as auth (%s)"
          % [x for x in page.splitlines() if x.startswith("probe_success")])
    return page


def main():
    missing = [p for p in krb.REQUIRED if not os.path.exists(p)]
    if missing:
        print("not installed: %s (scripts/setup)" % " ".join(missing))
        sys.exit(77)
    names, tried = krb.loopback_names()
    if not names:
        print("SKIP: none of %s resolves only to loopback addresses" % " ".join(tried))
        sys.exit(77)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    realm = krb.Realm()
    d = tempfile.mkdtemp(prefix="ntlens-exporter-krb5-")
    p = None
    try:
        realm.start(names)
        realm.provide()
        cfg, keytab = write_config(d, realm)
        realm.kadmin("ktadd -k %s -norandkey %s" % (keytab, krb.USER))
        config_errors(d, keytab)
        env = realm.env("no-such-ccache")  # only the sets' own caches can work
        env["TMPDIR"] = d
        port = smbd_tests.free_port()
        p = start(cfg, port, env)
        target = "%s:%d" % (realm.host, realm.port)
        pages = probes(port, target, d, realm)
        code, metrics = get(port, "/metrics")
        pages += metrics
        check(keytab not in pages, "no keytab path in the pages")
    finally:
        err = ""
        if p:
            p.send_signal(signal.SIGTERM)
            try:
                _, err = p.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            check(p.returncode == 0, "SIGTERM stops the exporter (%s)" % p.returncode)
        fails = [x for x in err.splitlines() if "connect failed" in x and "stranger" in x]
        check(fails and "credential set 'stranger'" in fails[0] and "kinit -k for stranger@"
              in fails[0], "the log names the credential set and kinit's failure (%s)"
              % (fails[:1] or err[-600:]))
        check(keytab not in err and realm.password not in err, "no keytab path in the log")
        check(not glob.glob(os.path.join(d, "ntlens-exporter-*")),
              "the private cache directory is gone after SIGTERM")
        if failed():
            print("exporter log:\n" + err[-3000:])
        realm.stop()
        shutil.rmtree(d, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
