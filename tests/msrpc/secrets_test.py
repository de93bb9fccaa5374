#!/usr/bin/env python3
"""NTLENS_PASSWORD never shows in /proc/PID/environ or cmdline of ntlens or
of its SMB helpers: ntlens takes it out of its environment at start (before
it forks a helper), and a helper started by exec from a threaded program gets
only what libsmbclient reads. The server here accepts connections and never
answers, so the processes stay alive to be looked at."""
import os
import secrets
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
FETCH = os.environ["MSRPC_FETCH"]
SECRET = "pw-" + secrets.token_hex(12)
ENV = dict(os.environ, NTLENS_PASSWORD=SECRET)


def silent_server():
    """A TCP server on loopback that accepts and never says a word."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    held = []

    def serve():
        while True:
            conn, _ = s.accept()
            held.append(conn)

    threading.Thread(target=serve, daemon=True).start()
    return s.getsockname()[1]


def children_of(root):
    """root and every process below it, from /proc/*/stat."""
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = open(f"/proc/{name}/stat").read()
                parent[int(name)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    tree, grew = {root}, True
    while grew:
        more = {p for p, pp in parent.items() if pp in tree} - tree
        tree |= more
        grew = bool(more)
    return tree


def leaks(pids):
    found = []
    for pid in pids:
        for what in ("environ", "cmdline"):
            try:
                if SECRET.encode() in open(f"/proc/{pid}/{what}", "rb").read():
                    found.append(f"{pid}/{what}")
            except OSError:
                pass
    return found


def while_connecting(cmd, helpers):
    """Runs cmd against the silent server until `helpers` processes run below
    it, and looks at them while they wait: returns (how many helpers, where
    the root shows the secret, where a helper shows it)."""
    p = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    below = set()
    try:
        deadline = time.time() + 30
        while time.time() < deadline and p.poll() is None and len(below) < helpers:
            time.sleep(0.05)
            below = children_of(p.pid) - {p.pid}
        time.sleep(0.3)  # let each helper reach its connect
        below = children_of(p.pid) - {p.pid}
        alive = p.poll() is None
        return (len(below) if alive else 0), leaks({p.pid}), leaks(below)
    finally:
        p.kill()
        p.wait()


port = silent_server()

# ntlens itself, and the helper it forks (single-threaded: plain fork).
n, in_root, in_helpers = while_connecting(
    [NTLENS, "ps", "-S", f"smb://tester@127.0.0.1:{port}", "--timeout", "30", "--call-timeout", "30"],
    helpers=1)
check(n >= 1, f"ntlens ps is still connecting through its SMB helper ({n} helpers)")
check(not in_root and not in_helpers, f"no ntlens process shows the password: {in_root + in_helpers}")

# Helpers started by exec from a threaded program. msrpc-fetch --threads keeps
# NTLENS_PASSWORD itself (a test tool, not ntlens), so the scan must find the
# secret there: proof that it finds one where it is.
n, in_root, in_helpers = while_connecting(
    [FETCH, "--threads", "2", "-U", "tester", "-t", "30000", f"127.0.0.1:{port}", "Global"],
    helpers=2)
check(n >= 2, f"msrpc-fetch is still connecting through two exec'd SMB helpers ({n})")
check(not in_helpers, f"no exec'd helper shows the password: {in_helpers}")
check(in_root, "the scan finds the password where it is (msrpc-fetch's own environment)")

finish()
