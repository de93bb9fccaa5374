#!/usr/bin/python3
"""Connection setup bounded by the scrape: a target that accepts TCP but
answers slowly (a relay in front of a private smbd that holds each new
connection's bytes for a few seconds) answers within its scrape timeout
with probe_success 0 and error_kind connecting; the connection carries on
in the background and the next scrape uses it (no new TCP connection). A
server that never answers fails its background attempt with error_kind
timeout; a reload while a connection is being set up drops nothing else
and does not crash. A query whose reply comes late (the relay holds one
reply past the scrape timeout) fails that scrape as timeout but keeps the
connection: the next scrape reads its own reply over the same TCP
connection, not the late one; a reply later than the call timeout drops
the connection and the target reconnects. A probe that comes while a setup
is still reading the title database (the relay holds that reply) answers
connecting and leaves the setup's pipe alone."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "msrpc"))
from checks import check, finish  # noqa: E402
import smbd_tests  # noqa: E402
from exporter_smbd import get, start  # noqa: E402

NTLENS = os.environ["NTLENS"]
HDR = {"X-Prometheus-Scrape-Timeout-Seconds": "1.5"}


class SlowRelay:
    """Accepts at once; relays to upstream (None: nowhere, never answers)
    after holding each connection for `delay` seconds. Setting `hold`
    holds the next bytes the server sends (and all behind them) that many
    seconds; `hold_on = (BYTES, SECONDS)` sets it when the client sends
    BYTES, and `held_at` tells when that happened."""

    def __init__(self, upstream, delay):
        self.upstream, self.delay, self.accepted, self.hold = upstream, delay, 0, 0
        self.hold_on, self.held_at = None, None
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self.relay, args=(c,), daemon=True).start()

    def relay(self, c):
        time.sleep(self.delay)
        if self.upstream is None:
            time.sleep(3600)
            return
        try:
            u = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            c.close()
            return
        for a, b, held in ((c, u, False), (u, c, True)):
            threading.Thread(target=self.pump, args=(a, b, held), daemon=True).start()

    def pump(self, a, b, held):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                if not held and self.hold_on and self.hold_on[0] in data:
                    self.hold, self.hold_on = self.hold_on[1], None
                    self.held_at = time.monotonic()
                if held and self.hold:
                    hold, self.hold = self.hold, 0
                    time.sleep(hold)
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def write_config(d, password):
    with open(os.path.join(d, "pass"), "w") as f:
        f.write(password + "\n")
    cfg = os.path.join(d, "exporter.yml")
    with open(cfg, "w") as f:
        f.write("""auths:
  lab:
    user: ntltest
    password_file: %s/pass
modules:
  slow:
    auth: lab
    collectors: [system]
    timeout: 20
    call_timeout: 20
  quick:
    auth: lab
    collectors: [system]
    timeout: 3
    call_timeout: 3
""" % d)
    return cfg


def probe(port, target, module, headers=HDR):
    t0 = time.monotonic()
    code, page = get(port, "/probe?target=%s&module=%s" % (target, module), headers)
    return page, time.monotonic() - t0


def slow_connect_test(port, srv):
    page, _ = probe(port, "127.0.0.1:%d" % srv.port, "slow", {})
    check("probe_success 1" in page, "a direct target connects")
    relay = SlowRelay(srv.port, 3.0)
    target = "127.0.0.1:%d" % relay.port
    page, took = probe(port, target, "slow")
    check('probe_success{error_kind="connecting"} 0' in page and took < 1.5,
          "a slow connection answers within the scrape timeout as connecting (%.2fs)" % took)
    page, took = probe(port, "127.0.0.1:%d" % srv.port, "slow")
    check("probe_success 1" in page and took < 1.5,
          "another target meanwhile is read (%.2fs)" % took)
    page, took = probe(port, target, "slow")
    check('error_kind="connecting"' in page,
          "a second scrape during the same setup still says connecting")
    time.sleep(4.5)
    accepted = relay.accepted
    page, took = probe(port, target, "slow")
    check("probe_success 1" in page and took < 1.0,
          "the next scrape uses the connection set up in the background (%.2fs)" % took)
    check(relay.accepted == accepted and accepted >= 1,
          "no new TCP connection for it (%d before, %d after)" % (accepted, relay.accepted))


def mid_setup_test(port, srv):
    relay = SlowRelay(srv.port, 0)
    relay.hold_on = ("Counter 009".encode("utf-16-le"), 4.0)
    target = "127.0.0.1:%d" % relay.port
    page, took = probe(port, target, "slow")
    check('error_kind="connecting"' in page,
          "a setup whose title query is held answers connecting (%.2fs)" % took)
    deadline = time.monotonic() + 10
    while relay.held_at is None and time.monotonic() < deadline:
        time.sleep(0.05)
    check(relay.held_at is not None, "the setup opened its pipe and asked for the titles")
    accepted = relay.accepted
    page, took = probe(port, target, "slow")
    inside = time.monotonic() < (relay.held_at or 0) + 4.0
    check('probe_success{error_kind="connecting"} 0' in page and inside,
          "a probe while the setup reads the titles over its open pipe still says "
          "connecting (%.2fs, %s, within the hold: %s)"
          % (took, [x for x in page.splitlines() if "probe_success" in x], inside))
    time.sleep(max(0.0, relay.held_at + 4.5 - time.monotonic()))
    page, took = probe(port, target, "slow")
    check("probe_success 1" in page and relay.accepted == accepted,
          "then the setup completes and the next scrape is read over its connection "
          "(%.2fs, %d TCP connections before, %d after)" % (took, accepted, relay.accepted))


def connected_relay(port, srv, module):
    relay = SlowRelay(srv.port, 0)
    target = "127.0.0.1:%d" % relay.port
    page, _ = probe(port, target, module, {})
    check("probe_success 1" in page, "a target behind a relay connects (%s)" % module)
    return relay, target


def late_reply_test(port, srv):
    relay, target = connected_relay(port, srv, "slow")
    accepted = relay.accepted
    relay.hold = 4.0
    page, took = probe(port, target, "slow")
    check('probe_success{error_kind="timeout"} 0' in page and took < 2.0,
          "a reply held past the scrape timeout fails that scrape as timeout (%.2fs)" % took)
    time.sleep(3.5)
    for i in range(3):
        page, took = probe(port, target, "slow")
        check("probe_success 1" in page and "windows_system_processes " in page and
              took < 1.5, "scrape %d after the late reply is read (%.2fs, %s)"
              % (i + 1, took, [x for x in page.splitlines() if "probe_success" in x]))
    check(relay.accepted == accepted,
          "over the same connection: no new TCP connection (%d before, %d after)"
          % (accepted, relay.accepted))


def lost_reply_test(port, srv):
    relay, target = connected_relay(port, srv, "quick")
    accepted = relay.accepted
    relay.hold = 30.0
    page, _ = probe(port, target, "quick")
    check('error_kind="timeout"' in page, "a reply that does not come: timeout")
    time.sleep(3.5)
    page, _ = probe(port, target, "quick")
    check('probe_success{error_kind="io"} 0' in page,
          "still missing past the call timeout, the connection is dropped (%s)"
          % [x for x in page.splitlines() if "probe_success" in x])
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and "probe_success 1" not in page:
        time.sleep(0.5)
        page, _ = probe(port, target, "quick")
    # (a new connection is two: the transport's TCP check, then the session)
    check("probe_success 1" in page and relay.accepted > accepted,
          "and set up again (%d TCP connections before, %d after)"
          % (accepted, relay.accepted))


def black_hole_test(port, lines):
    relay = SlowRelay(None, 0)
    target = "127.0.0.1:%d" % relay.port
    page, took = probe(port, target, "quick")
    check('probe_success{error_kind="connecting"} 0' in page and took < 1.5,
          "a server that never answers: connecting within the scrape (%.2fs)" % took)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not any(
            "connect failed" in x and target in x for x in lines):
        time.sleep(0.1)
    page, took = probe(port, target, "quick")
    check('probe_success{error_kind="timeout"} 0' in page and took < 0.5,
          "after the background attempt timed out, probes fail at once with its kind "
          "(%.2fs, %s)" % (took, [x for x in page.splitlines() if "probe_success" in x]))


def reload_test(port, srv, p):
    relay = SlowRelay(srv.port, 2.0)
    target = "127.0.0.1:%d" % relay.port
    page, _ = probe(port, target, "slow")
    check("connecting" in page, "a connection being set up")
    req = urllib.request.Request("http://127.0.0.1:%d/-/reload" % port, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        check(r.status == 200, "a reload while it is set up")
    time.sleep(3.0)
    check(p.poll() is None, "the exporter lives on after the dropped setup ended")
    page, _ = probe(port, "127.0.0.1:%d" % srv.port, "slow")
    check("probe_success 1" in page, "and serves other targets")
    page, _ = probe(port, target, "slow")
    check("connecting" in page, "the reloaded config starts a setup of its own")


def main():
    if not os.path.exists("/usr/sbin/smbd"):
        print("smbd is not installed (scripts/setup)")
        sys.exit(77)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    srv = smbd_tests.Smbd()
    d = tempfile.mkdtemp(prefix="ntlens-exporter-connect-")
    port = smbd_tests.free_port()
    p, lines = None, []
    try:
        srv.provide()
        p = start(write_config(d, srv.password), port)
        threading.Thread(target=lambda: lines.extend(p.stderr), daemon=True).start()
        slow_connect_test(port, srv)
        mid_setup_test(port, srv)
        late_reply_test(port, srv)
        lost_reply_test(port, srv)
        black_hole_test(port, lines)
        reload_test(port, srv, p)
    finally:
        if p:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            check(p.returncode == 0, "SIGTERM stops the exporter with status 0 (%s)"
                  % p.returncode)
        srv.stop()
        shutil.rmtree(d, ignore_errors=True)
    finish()


main()
