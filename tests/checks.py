"""The python twin of tests/check.h for script tests: check() counts checks
and names each failure, finish() prints the "N checks, N failed" line the
test runner reads and exits 1 on any failure. Import it with
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from checks import check, finish
"""
import sys

counts = {"checks": 0, "failures": 0}


def check(cond, what):
    counts["checks"] += 1
    if not cond:
        counts["failures"] += 1
        print("FAIL:", what, file=sys.stderr, flush=True)
    return bool(cond)


def failed():
    return counts["failures"]


def finish():
    print(f"{counts['checks']} checks, {counts['failures']} failed", flush=True)
    sys.exit(1 if counts["failures"] else 0)
