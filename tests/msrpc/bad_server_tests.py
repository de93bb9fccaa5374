#!/usr/bin/python3
"""A remote client that survives bad servers: a real smbd (scripts/
smbd-test-server) whose winreg pipe is served by a misbehaving DCE/RPC
server of our own. smbd hands a named pipe to whatever listens on
<ncalrpc dir>/np/<pipe> (the socket samba-dcerpcd would create), after a
short handshake (named_pipe_auth, level 7 in Samba 4.17); from then on the
bytes are the pipe's. So everything below SMB (negotiation, logon, SMB2
reads that return short) is the real thing, and the DCE/RPC answers are ours.

    bad_server_tests.py  (needs NTLENS, MSRPC_FETCH, NTLENS_SOURCE_ROOT)
"""
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

ROOT = os.environ.get("NTLENS_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
NTLENS = os.environ["NTLENS"]
FETCH = os.environ["MSRPC_FETCH"]
SERVER = os.path.join(ROOT, "scripts", "smbd-test-server")
USER = "ntltest"

# smbd's side of the handshake is a named_pipe_auth_req; the answer below is
# what Samba 4.17's samba-dcerpcd sends (captured): length 32 (big-endian),
# "NPAM", level 7 twice (level and union arm), file_type, device_state
# 0x05ff, allocation_size 4096, status 0. samba-dcerpcd says file_type 2
# (message mode), under which smbd frames each message on this socket; we
# say 1 (byte mode) so the socket carries the PDUs' bytes as they are. The
# client sees the same SMB2 pipe either way.
NPA_REPLY = bytes.fromhex("00000020" "4e50414d" "07000000" "07000000" "0100" "ff05"
                          "00000000" "0010000000000000" "00000000")
NDR_SYNTAX = bytes.fromhex("045d888aeb1cc9119fe808002b104860") + struct.pack("<I", 2)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def header(ptype, length, call_id, flags=3):
    return bytes([5, 0, ptype, flags, 0x10, 0, 0, 0]) + struct.pack("<HHI", length, 0, call_id)


def bind_ack(call_id, max_xmit=4280, max_recv=4280):
    addr = b"\\PIPE\\winreg\0"
    body = struct.pack("<HHIH", max_xmit, max_recv, 0x1234, len(addr)) + addr
    body += b"\0" * (-(24 + len(body)) % 4)
    body += struct.pack("<B3xHH", 1, 0, 0) + NDR_SYNTAX
    return header(12, 16 + len(body), call_id) + body


def bind_nak(call_id):
    # provider_reject_reason 4: proposed transfer syntaxes not supported
    return header(13, 20, call_id) + struct.pack("<HH", 4, 0)


def response(call_id, stub, flags=3, alloc_hint=None):
    hint = len(stub) if alloc_hint is None else alloc_hint
    return header(2, 24 + len(stub), call_id, flags) + struct.pack("<IHBB", hint, 0, 0, 0) + stub


HANDLE_REPLY = b"\0" * 4 + b"H" * 16 + struct.pack("<I", 0)  # policy handle, WERR_OK
# QueryValue: type REG_BINARY, no data, *lpcbData 0xFFFFFFFF, *lpcbLen 0,
# ERROR_MORE_DATA (234).
MORE_DATA_REPLY = struct.pack("<IIIIIIII", 0x20000, 3, 0, 0x20008, 0xFFFFFFFF, 0x2000C, 0, 234)


def recvn(c, n):
    data = b""
    while len(data) < n:
        chunk = c.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


class BadServer:
    """A private smbd whose \\PIPE\\winreg is served by `behave`:
    behave(conn, pdu) answers one PDU from the client."""

    def __init__(self, fake=True):
        self.dir = tempfile.mkdtemp(prefix="ntlens-bad-")
        self.port = free_port()
        subprocess.run([SERVER, "start", self.dir, "--port", str(self.port)], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(self.dir, "password")) as f:
            self.password = f.read()
        if not fake:
            return
        np_dir = os.path.join(self.dir, "ncalrpc", "np")
        os.makedirs(np_dir, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(os.path.join(np_dir, "winreg"))
        self.sock.listen(16)
        self.behave = None
        self.chunk = 0       # > 0: send every answer in pieces this small
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self.connection, args=(conn,), daemon=True).start()

    def connection(self, conn):
        try:
            length = struct.unpack(">I", recvn(conn, 4))[0]
            recvn(conn, length)
            conn.sendall(NPA_REPLY)
            while True:
                hdr = recvn(conn, 16)
                pdu = hdr + recvn(conn, struct.unpack("<H", hdr[8:10])[0] - 16)
                self.behave(self, conn, pdu)
        except (EOFError, OSError):
            pass
        finally:
            conn.close()

    def send(self, conn, data):
        if not self.chunk:
            conn.sendall(data)
            return
        for i in range(0, len(data), self.chunk):
            conn.sendall(data[i:i + self.chunk])
            time.sleep(0.02)

    def env(self):
        return dict(os.environ, NTLENS_PASSWORD=self.password)

    def spec(self):
        return "smb://%s@127.0.0.1:%d" % (USER, self.port)

    def stop(self):
        subprocess.run([SERVER, "stop", self.dir], stdout=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def call_id(pdu):
    return struct.unpack("<I", pdu[12:16])[0]


def opnum(pdu):
    return struct.unpack("<H", pdu[22:24])[0]


def winreg(answer):
    """A server that binds normally and answers each request with answer(pdu)."""
    def behave(srv, conn, pdu):
        if pdu[2] == 11:
            srv.send(conn, bind_ack(call_id(pdu)))
        elif answer is not None:
            srv.send(conn, answer(pdu))
    return behave


def fetch(srv, *args, timeout=60):
    start = time.monotonic()
    r = subprocess.run([FETCH, "-U", USER] + list(args) + ["127.0.0.1:%d" % srv.port, "Global"],
                       capture_output=True, text=True, env=srv.env(), timeout=timeout)
    return r, time.monotonic() - start


def expect_error(srv, what, words, *args):
    r, _ = fetch(srv, "-t", "5000", *args)
    err = r.stderr.strip()
    check(r.returncode != 0 and all(w in err for w in words),
          "%s: fails naming %s (%s)" % (what, ", ".join(words), err))
    return err


def test_protocol_errors(srv):
    srv.behave = lambda s, c, pdu: s.send(c, bind_nak(call_id(pdu)))
    expect_error(srv, "bind_nak", ["bind", "rejected"])

    srv.behave = lambda s, c, pdu: s.send(c, bind_ack(call_id(pdu), max_recv=20))
    expect_error(srv, "bind_ack with 20-byte fragments", ["max_recv_frag 20", "1432", "offset 0x12"])

    srv.behave = winreg(lambda pdu: header(2, 5000, call_id(pdu)) + b"\0" * 4984)
    expect_error(srv, "frag_length beyond the negotiated size", ["frag_length 5000", "4280"])

    srv.behave = winreg(lambda pdu: b"GARBAGE!" * 8)
    expect_error(srv, "garbage after bind", ["not a DCE/RPC PDU", "offset 0x44"])

    srv.behave = winreg(lambda pdu: bind_ack(call_id(pdu)))
    expect_error(srv, "a bind_ack answering a request", ["bind_ack", "expected response",
                                                         "offset 0x46"])

    srv.behave = winreg(lambda pdu: response(call_id(pdu), HANDLE_REPLY if opnum(pdu) == 3
                                             else MORE_DATA_REPLY))
    expect_error(srv, "ERROR_MORE_DATA asking for 0xFFFFFFFF bytes",
                 ["4294967295 bytes", "--max-block"])

    # Every answer in 3-byte pieces: SMB2 reads return short, and the client
    # still reaches the QueryValue answer (the same error as above).
    srv.chunk = 3
    expect_error(srv, "short reads on the real socket path", ["4294967295 bytes"])
    srv.chunk = 0


def slow_loris(srv, conn, pdu):
    """Binds, then sends the OpenHKPD answer in 6 fragments 1.2 s apart:
    each inside a 2 s per-read timeout, 7 s in all."""
    if pdu[2] == 11:
        srv.send(conn, bind_ack(call_id(pdu)))
        return
    for i in range(6):
        flags = (1 if i == 0 else 0) | (2 if i == 5 else 0)
        time.sleep(1.2)
        conn.sendall(response(call_id(pdu), HANDLE_REPLY[i * 4:i * 4 + 4], flags, 24 - i * 4))


def test_slow_loris(srv):
    srv.behave = slow_loris
    r, took = fetch(srv, "-t", "2000")
    check(r.returncode != 0 and "2 s" in r.stderr and took < 5.5,
          "slow loris: the call fails at its 2 s deadline, not per read (%.1f s: %s)"
          % (took, r.stderr.strip()))


def test_stalled_among_parallel(srv, good):
    srv.behave = winreg(None)  # binds, then never answers
    start = time.monotonic()
    r = subprocess.run([NTLENS, "ps", "--call-timeout", "3", "--format", "csv",
                        "-S", good.spec(), "-S", srv.spec()],
                       capture_output=True, text=True, env=good.env(), timeout=60)
    took = time.monotonic() - start
    check("127.0.0.1:%d" % srv.port in r.stderr and "3 s" in r.stderr,
          "stalled source fails with its own error (%s)" % r.stderr.strip())
    check(len(r.stdout.splitlines()) > 2, "the other source's processes are listed")
    check(took < 12, "ps returns within the call timeout (%.1f s)" % took)


def test_stalled_sources_open_at_once(srv):
    """Commands that need every source open them at once: two stalled
    sources cost one call timeout, not two, and each fails with its own error."""
    srv.behave = winreg(None)
    start = time.monotonic()
    r = subprocess.run([NTLENS, "counters", "--call-timeout", "3", "-S", srv.spec(),
                        "-S", srv.spec()],
                       capture_output=True, text=True, env=srv.env(), timeout=60)
    took = time.monotonic() - start
    errors = [l for l in r.stderr.splitlines() if "127.0.0.1:%d" % srv.port in l]
    check(r.returncode == 1 and len(errors) == 2,
          "each stalled source fails with its own error (%s)" % r.stderr.strip())
    check(took < 5.5, "two stalled sources cost one 3 s timeout, not two (%.1f s)" % took)


def test_not_smb():
    """Below SMB2: a TCP peer that answers the negotiation with garbage."""
    for name, answer in (("an SMB1-looking reply", b"\0\0\0\x10\xffSMB" + b"x" * 12),
                         ("an HTTP reply", b"HTTP/1.0 400 Bad Request\r\n\r\n" * 4)):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)

        def serve(s=s, answer=answer):
            held = []
            while True:
                c, _ = s.accept()
                held.append(c)
                try:
                    c.recv(4096)
                    c.sendall(answer)
                except OSError:
                    pass

        threading.Thread(target=serve, daemon=True).start()
        r = subprocess.run([NTLENS, "ps", "--timeout", "3", "--call-timeout", "3", "-S",
                            "smb://%s@127.0.0.1:%d" % (USER, s.getsockname()[1])],
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, NTLENS_PASSWORD="x"))
        check(r.returncode == 1 and ("negotiation is malformed" in r.stderr or
                                     "not an SMB server" in r.stderr) and
              "Invalid argument" not in r.stderr,
              "%s to the SMB negotiation: a clear error (%s)" % (name, r.stderr.strip()))


def main():
    if not os.path.exists("/usr/sbin/smbd"):
        print("smbd not installed")
        sys.exit(77)
    # One password for both servers: ntlens ps reads one NTLENS_PASSWORD.
    os.environ["NTLENS_TEST_PASSWORD"] = "Bad%d!" % os.getpid()
    test_not_smb()
    srv = BadServer()
    good = None
    try:
        test_protocol_errors(srv)
        test_slow_loris(srv)
        test_stalled_sources_open_at_once(srv)
        good = BadServer(fake=False)
        subprocess.run([NTLENS, "samba-provider", "--state-dir",
                        os.path.join(good.dir, "state"), "--once"], check=True,
                       capture_output=True)
        test_stalled_among_parallel(srv, good)
    finally:
        srv.stop()
        if good:
            good.stop()
    finish()


if __name__ == "__main__":
    main()
