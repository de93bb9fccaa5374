#!/usr/bin/env python3
"""Runs ntlens on every run of libipt's conformance corpus
(../shared/data/ipt/libipt-corpus/manifest.tsv) with the command line that
produced the expected output, and compares the two:
  ptdump: `ntlens ipt dump [--cpu CPU] OPTS NAME.pt` against every run's ptdump
          expectation;
  ptxed:  `ntlens ipt flow --raw NAME.bin:ORG [--cpu CPU] OPTS --no-inst --check
          --pt NAME.pt` against the runs that have a ptxed expectation.

Two comparisons per run: byte for byte, and the way libipt's own test script
compares (`diff -b`: runs of blanks are equal, trailing blanks ignored). The
expected files are written by libipt's test compiler pttc from hand-aligned
annotations, so some have column spacing the tools themselves never print;
those can only match modulo blanks.

Fails when a run differs modulo blanks unless it is listed in
TOOL_known_diffs.txt, when a run so listed no longer differs (the list
stays exact), or when a run in the byte-identical list (TOOL_exact.txt) is
no longer byte-identical.

  corpus_conformance.py ptdump|ptxed [--write-lists] [--show NAME]
Environment: NTLENS (the binary), NTLENS_SHARED_DATA, NTLENS_SOURCE_ROOT."""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
data = os.path.join(os.environ.get("NTLENS_SHARED_DATA", os.path.join(here, "../../../shared/data")),
                    "ipt", "libipt-corpus")
ntlens = os.environ.get("NTLENS", "ntlens")


def blanks(text):
    return [re.sub(r"[ \t]+", " ", line).rstrip(" ") for line in text.split("\n")]


def read_list(name):
    path = os.path.join(here, name)
    if not os.path.exists(path):
        return set()
    return {l.strip() for l in open(path) if l.strip() and not l.startswith("#")}


def command(tool, r):
    """The ntlens command line of one run, as the reference tool was run."""
    tests = os.path.join(data, "tests")
    cpu = ["--cpu", r["cpu"]] if r["cpu"] else []
    if tool == "ptdump":
        return [ntlens, "ipt", "dump", *cpu, *r["ptdump_opts"].split(),
                os.path.join(tests, r["test"] + ".pt")]
    return [ntlens, "ipt", "flow", "--raw", "%s:%s" % (os.path.join(tests, r["test"] + ".bin"), r["org"]),
            *cpu, *r["ptxed_opts"].split(), "--no-inst", "--check", "--pt",
            os.path.join(tests, r["test"] + ".pt")]


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in ("ptdump", "ptxed") else None
    if not tool:
        sys.exit("usage: corpus_conformance.py ptdump|ptxed [--write-lists] [--show NAME]")
    write = "--write-lists" in sys.argv
    show = sys.argv[sys.argv.index("--show") + 1] if "--show" in sys.argv else None
    rows = []
    with open(os.path.join(data, "manifest.tsv")) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            if line.strip():
                rows.append(dict(zip(header, line.rstrip("\n").split("\t"))))
    known = read_list(tool + "_known_diffs.txt")
    exact_list = read_list(tool + "_exact.txt")
    exact, same, bad, regress = [], [], [], []
    rows = [r for r in rows if r[tool + "_exp"]]
    for r in rows:
        run = r[tool + "_exp"]
        args = command(tool, r)
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out = p.stdout.decode("utf-8", "replace")
        exp = open(os.path.join(data, "tests", run), encoding="utf-8").read()
        if show and show in run:
            print(" ".join(args))
            print(out, end="")
            print("---- expected")
            print(exp, end="")
        if p.returncode != 0:
            out += "[exit %d: %s]" % (p.returncode, p.stderr.decode("utf-8", "replace").strip())
        if out == exp:
            exact.append(run)
            same.append(run)
            if run in known:
                regress.append(run + " (now identical: take it off the known diffs)")
        elif blanks(out) == blanks(exp):
            same.append(run)
            if run in known:
                regress.append(run + " (now identical modulo blanks: take it off the known diffs)")
            if run in exact_list:
                regress.append(run + " (no longer byte-identical)")
        else:
            bad.append(run)
            if run not in known:
                regress.append(run)
    n = len(rows)
    print("%d/%d identical byte for byte" % (len(exact), n))
    print("%d/%d identical modulo blanks (as libipt's test script compares)" % (len(same), n))
    if bad:
        print("differing: " + " ".join(bad))
    if write:
        with open(os.path.join(here, tool + "_exact.txt"), "w") as f:
            f.write("# runs whose output is byte-identical to the expected %s output\n" % tool)
            f.writelines(r + "\n" for r in sorted(exact))
        with open(os.path.join(here, tool + "_known_diffs.txt"), "w") as f:
            f.write("# runs known to differ from the expected %s output (modulo blanks)\n" % tool)
            f.writelines(r + "\n" for r in sorted(bad))
        return 0
    if regress:
        print("REGRESSIONS: " + " ".join(regress))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
