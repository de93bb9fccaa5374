#!/usr/bin/python3
"""promtool (Prometheus's own linter and parser) accepts the pages the metric
writer produces from the test block, hostile instance names included."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from checks import check, finish  # noqa: E402

test_prom = sys.argv[1]
with tempfile.TemporaryDirectory() as d:
    page = os.path.join(d, "page.prom")
    r = subprocess.run([test_prom, page], capture_output=True, text=True)
    if not check(r.returncode == 0, "test_prom wrote the page"):
        print(r.stderr, file=sys.stderr)
    with open(page, "rb") as f:
        data = f.read()
    r = subprocess.run(["promtool", "check", "metrics"], input=data, capture_output=True)
    # promtool exits 0 for a valid page; lint findings (not errors) go to stderr
    if not check(r.returncode == 0, "promtool check metrics accepts the page"):
        print(r.stdout.decode() + r.stderr.decode(), file=sys.stderr)
finish()
