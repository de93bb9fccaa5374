#!/usr/bin/env python3
"""The rules of docs/cli.md, checked on every command the binary lists:
help and man sections from the option table, one wording per mistake, exit
codes, and, for every command that prints records, every --format parsed
back: JSON one document, JSON lines one object a line, CSV/TSV one table,
snake_case keys, no integer a JSON reader would round, floats as short as
round-trip allows."""
import csv
import io
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
DATA = os.environ["NTLENS_SHARED_DATA"]
FORMATS = ["table", "csv", "tsv", "json", "jsonl"]
SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*$")
# Names a schema gives keep its spelling (docs/cli.md): counter paths, and
# typeperf's first header in its own CSV and TSV layouts.
SCHEMA = re.compile(r"\\\\[^\\]+\\.+|\(PDH-(CSV|TSV) 4\.0\)$")


def good_key(k):
    return SNAKE.match(k) or SCHEMA.match(k)





def run(*args, timeout=120):
    return subprocess.run([NTLENS, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def commands():
    out = run("--help").stdout
    return [m.group(1).strip() for m in re.finditer(r"^  ([a-z-]+(?: [a-z]+)?)  ", out, re.M)]


def usage_error(words, args, option):
    """One line naming the option, then the pointer to --help; exit 2."""
    p = run(*words, *args)
    lines = p.stderr.splitlines()
    check(p.returncode == 2, f"{' '.join(words + args)}: exit {p.returncode}, want 2")
    check(len(lines) == 2 and f"'{option}'" in lines[0] and "\0" not in p.stderr
          and lines[1] == f"Try 'ntlens {' '.join(words)} --help'.",
          f"{' '.join(words + args)}: one clear error line: {p.stderr!r}")
    check(p.stdout == "", f"{' '.join(words + args)}: nothing on stdout")


def letter_table():
    """docs/cli.md's table: each short letter and the long name it stands for."""
    root = os.environ["NTLENS_SOURCE_ROOT"]
    text = open(os.path.join(root, "docs", "cli.md")).read()
    return dict(re.findall(r"^\| `-(\w)` \| `--([a-z-]+)", text, re.M))


LETTERS = letter_table()


def check_letters(name, help_text):
    """A letter means one thing everywhere: the long name docs/cli.md gives it."""
    for letter, long in re.findall(r"^  -(\w), --([a-z-]+)", help_text, re.M):
        check(LETTERS.get(letter) == long,
              f"{name}: -{letter} is --{long}, docs/cli.md says --{LETTERS.get(letter)}")


def check_help(words):
    name = " ".join(words)
    p = run(*words, "--help")
    check_letters(name, p.stdout)
    check(p.returncode == 0 and p.stdout.startswith(f"usage: ntlens {name} "), f"{name} --help")
    check(run("help", *words).stdout == p.stdout, f"ntlens help {name} is {name} --help")
    man = run(*words, "--help-man").stdout
    check(man.startswith(".SH SYNOPSIS\n") and "\n.SH OPTIONS\n" in man, f"{name} --help-man")
    # Every option --help shows is in the man page too.
    for opt in re.findall(r"^  (?:-\w, )?(--[a-z-]+)", p.stdout, re.M):
        check(opt.replace("-", "\\-") in man, f"{name}: man page lacks {opt}")
    usage_error(words, ["--no-such-option"], "--no-such-option")
    if "--format" in p.stdout:
        usage_error(words, ["--format", "xml"], "--format")
        usage_error(words, ["--format"], "--format")
    return "--format" in p.stdout


def number_token(text):
    """parse_float/parse_int hook: each JSON number must read back exactly."""
    if re.fullmatch(r"-?\d+", text):
        check(abs(int(text)) <= 2**53, f"integer {text} is beyond 2^53: a JSON reader rounds it")
        return int(text)
    value = float(text)
    check(repr(value) == text or float(repr(value)) == value and len(text) <= len(repr(value)),
          f"float {text} is longer than round-trip needs ({repr(value)})")
    return value


def keys_of(rows):
    for r in rows:
        check(isinstance(r, dict), f"a record is an object: {r!r}"[:200])
        if isinstance(r, dict):
            yield from r.keys()


def check_formats(name, args):
    for fmt in FORMATS:
        p = run(*name.split(), *args, "--format", fmt)
        what = f"{name} {' '.join(args)} --format {fmt}"
        check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr.strip()[:300]}")
        if p.returncode != 0:
            continue
        if fmt == "json":
            try:
                doc = json.loads(p.stdout, parse_float=number_token, parse_int=number_token)
            except ValueError as e:
                check(False, f"{what}: not one JSON document: {e}")
                continue
            # An array of records, or an object of such arrays (sections).
            tables = doc.values() if isinstance(doc, dict) else [doc]
            check(all(isinstance(t, list) for t in tables), f"{what}: records or sections of records")
            for rows in (t for t in tables if isinstance(t, list)):
                for k in keys_of(rows):
                    check(good_key(k), f"{what}: key {k!r} is not snake_case")
        elif fmt == "jsonl":
            for line in p.stdout.splitlines():
                try:
                    row = json.loads(line, parse_float=number_token, parse_int=number_token)
                except ValueError as e:
                    check(False, f"{what}: a line is not JSON: {e}: {line[:100]}")
                    break
                for k in keys_of([row]):
                    check(good_key(k), f"{what}: key {k!r} is not snake_case")
        elif fmt in ("csv", "tsv"):
            rows = list(csv.reader(io.StringIO(p.stdout), delimiter="," if fmt == "csv" else "\t"))
            check(rows, f"{what}: no header")
            if rows:
                for k in rows[0]:
                    check(good_key(k), f"{what}: header {k!r} is not snake_case")
                check(all(len(r) == len(rows[0]) for r in rows),
                      f"{what}: one table (every row as wide as the header)")
                check(rows.count(rows[0]) == 1, f"{what}: the header is written once")


# A command that prints records, and arguments that make it print some from
# real data. A command missing here fails the test: add it when you add it.
ETL = os.path.join(DATA, "etl", "PerfViewData-gcevents.etl")
PT = os.path.join(DATA, "ipt", "libipt-corpus", "tests", "apl11.pt")
# A process whose stacks `stacks` walks (CI runs as root; tracing needs it).
SLEEPER = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)
RECORDS = {
    "ps": [],
    "counters": [],
    "sample": ["\\Memory\\Available Bytes", "-n", "2", "-i", "1"],
    "ipt dump": [PT],
    "ipt flow": ["--raw", PT[:-3] + ".bin:0x1000", PT],
    "etl info": [ETL],
    "etl events": [ETL, "-n", "50"],
    "etl stats": [ETL],
    "etl images": [ETL],
    "format": ["sid", "010500000000000515000000a1b2c3d4e5f60718293a4b5ce8030000"],
    "profile": ["--etl", os.path.join(DATA, "etl", "net.4.5.2.x64.etl"), "--top", "1"],
    "stacks": [str(SLEEPER.pid)],
}
# Commands whose records need inputs their own module's tests build (PE
# images, dumps, Samba's store); their formats are checked there. The
# exporter prints no records: its pages are Prometheus' format, checked by
# promtool in tests/prom.
ELSEWHERE = {"capture", "samba-provider", "ipt modules", "etl ipt", "dump build", "dump show",
             "dump relocate", "exporter"}

for name in commands():
    takes_format = check_help(name.split())
    if name in RECORDS:
        check(takes_format, f"{name} prints records but has no --format")
        if takes_format:
            check_formats(name, RECORDS[name])
    else:
        check(name in ELSEWHERE, f"{name}: no record check here and none named elsewhere")

SLEEPER.kill()
SLEEPER.wait()
check(run().returncode == 2, "ntlens without a command exits 2")
check("--version" in run("--help").stdout, "--version is in --help")
finish()
