#!/usr/bin/env python3
"""`ntlens profile --format speedscope` in speedscope itself.

The file must validate against the schema speedscope ships, and speedscope
(the npm package, pinned by its registry integrity) must load it in headless
Chromium without an error: no exception, no console error, no "Something
went wrong"; its profile selector must name our process, and its sandwich
table must list, by self time, the same top frames as the file says. A
screenshot of each view is left in the build directory.

Chromium is driven over --remote-debugging-pipe (the DevTools protocol,
NUL-separated JSON on fds 3 and 4): no driver library is needed.
usage: test_profile_speedscope.py BUILD_DIR"""
import base64
import http.server
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
import struct
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from npm_pack import npm_package  # noqa: E402

NTLENS = os.environ["NTLENS"]
TRACE = os.path.join(os.environ["NTLENS_SHARED_DATA"], "etl", "net.4.5.2.x64.etl")
VERSION = "1.25.0"
INTEGRITY = ("sha512-cpf9HWTZf1ijLXBJrk87Ve/54tnYx6rlf0gUThvn3ook6h63hLXVOQiMf44PT+XoV503cPf"
             "vfiT5gP5vojp6Ag==")
CHROMIUM = "/usr/bin/chromium"
DEADLINE = 60           # seconds for the whole browser part, on a loaded machine
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL: " + what)


def speedscope(build_dir):
    """speedscope's release folder, fetched once with npm into build_dir."""
    package = npm_package(build_dir, "speedscope", VERSION, INTEGRITY,
                          os.path.join("dist", "release", "index.html"))
    return os.path.join(package, "dist", "release")


def serve(root, files):
    """An HTTP server on a loopback port for root, plus files {url path: bytes}
    (speedscope fetches #profileURL, which file:// would refuse)."""
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=root, **kw)

        def do_GET(self):
            if self.path in files:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(files[self.path])))
                self.end_headers()
                self.wfile.write(files[self.path])
            else:
                super().do_GET()

        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


class Browser:
    """Headless Chromium and one page, over the DevTools pipe."""

    def __init__(self, profile_dir):
        to_child, self.w = os.pipe()
        self.r, from_child = os.pipe()

        def fds():
            os.dup2(to_child, 100)
            os.dup2(from_child, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
             "--enable-unsafe-swiftshader", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--user-data-dir=" + profile_dir, "--window-size=1280,800",
             "--remote-debugging-pipe", "about:blank"],
            preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self.buf, self.next_id, self.events = b"", 0, []
        self.deadline = time.monotonic() + DEADLINE
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"]
        for domain in ("Runtime", "Page", "Log"):
            self.call(domain + ".enable", session=True)

    def message(self):
        while b"\0" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer within %d s" % DEADLINE)
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed the DevTools pipe")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\0")
        return json.loads(line)

    def call(self, method, session=False, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self.message()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m["result"]
            self.events.append(m)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", session=True, expression=expr, returnByValue=True)
        return r["result"].get("value")

    def wait_for(self, expr, what):
        while time.monotonic() < self.deadline:
            value = self.eval(expr)
            if value:
                return value
            time.sleep(0.2)
        raise TimeoutError("speedscope never showed " + what)

    def screenshot(self, path):
        png = base64.b64decode(self.call("Page.captureScreenshot", session=True)["data"])
        with open(path, "wb") as f:
            f.write(png)
        return png

    def errors(self):
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("exception", {}).get(
                    "description", p["exceptionDetails"].get("text")))
            elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif e.get("method") == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(p["entry"]["text"])
        return out

    def close(self):
        self.proc.kill()
        self.proc.wait()
        os.close(self.r)
        os.close(self.w)


def top_self_frames(doc, n):
    """The n frames with most self weight in the active profile."""
    prof = doc["profiles"][doc.get("activeProfileIndex", 0)]
    self_w = {}
    for stack, w in zip(prof["samples"], prof["weights"]):
        self_w[stack[-1]] = self_w.get(stack[-1], 0) + w
    ranked = sorted(self_w.items(), key=lambda kv: -kv[1])
    return [(doc["shared"]["frames"][i]["name"], w) for i, w in ranked[:n]]


# The first rows of speedscope's sandwich table, sorted by self time: each
# row's cells as text ("72,805 (>99%)", "72,805 (>99%)", "ntoskrnl.exe+0xa6552").
# The profile selector's hidden rows have no percent.
SANDWICH_ROWS = """[...document.querySelectorAll('tr')]
  .map(r => [...r.querySelectorAll('td')].map(c => c.innerText.trim()))
  .filter(cells => cells.length == 3 && cells[1].includes('%')).slice(0, 3)"""


def sandwich_row(cells):
    """(name, self weight) of a sandwich row."""
    return cells[2], int(cells[1].split(" ")[0].replace(",", ""))


def png_bytes(png):
    """The distinct byte values of a PNG's pixel rows: a blank page has a handful."""
    data, at = b"", 8
    while at + 8 <= len(png):
        size, kind = struct.unpack(">I4s", png[at:at + 8])
        if kind == b"IDAT":
            data += png[at + 8:at + 8 + size]
        at += 12 + size
    return len(set(zlib.decompress(data)))


def look(page, url, doc, out_dir):
    page.call("Page.navigate", session=True, url=url)
    first = doc["profiles"][doc["activeProfileIndex"]]["name"]
    page.wait_for("document.body.innerText.includes(%s)" % json.dumps(first),
                  "the profile's name")
    png = page.screenshot(os.path.join(out_dir, "speedscope-time-order.png"))
    check(png_bytes(png) > 64, "the time-order screenshot is blank")
    for kind in ("keyDown", "keyUp"):  # '3': speedscope's key for the sandwich view
        page.call("Input.dispatchKeyEvent", session=True, type=kind, key="3", code="Digit3",
                  text="3" if kind == "keyDown" else "")
    rows = page.wait_for(SANDWICH_ROWS, "the sandwich table")
    page.screenshot(os.path.join(out_dir, "speedscope-sandwich.png"))
    text = page.eval("document.body.innerText")
    check("Something went wrong" not in text, "speedscope reports an error: " + text[:300])
    check(page.errors() == [], "errors in the page: %s" % page.errors())
    want = top_self_frames(doc, 3)
    got = [sandwich_row(cells) for cells in rows]
    check(got == want, "sandwich's top self frames %s, the file's %s" % (got, want))


def main():
    out_dir = os.path.abspath(sys.argv[1])
    r = subprocess.run([NTLENS, "profile", "--etl", TRACE, "-f", "speedscope"],
                       capture_output=True, check=True)
    doc = json.loads(r.stdout)
    release = speedscope(out_dir)
    import jsonschema  # Debian's python3-jsonschema
    with open(os.path.join(release, "file-format-schema.json")) as f:
        jsonschema.validate(doc, json.load(f))
    total = sum(sum(p["weights"]) for p in doc["profiles"])
    check(total == 79528, "the profiles hold %d samples, not the trace's 79528" % total)

    httpd = serve(release, {"/ntlens.speedscope.json": r.stdout})
    base = "http://127.0.0.1:%d/" % httpd.server_address[1]
    with tempfile.TemporaryDirectory() as profile_dir:
        page = Browser(profile_dir)
        try:
            look(page, base + "index.html#profileURL=" + base + "ntlens.speedscope.json", doc,
                 out_dir)
        finally:
            page.close()
            httpd.shutdown()
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
