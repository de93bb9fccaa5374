#!/usr/bin/env python3
"""The flow decoder's fast path (RUN items: cached blocks walked whole,
taken by `ipt flow --quiet`) against its per-instruction path (taken by
`--no-inst`): on every run of libipt's corpus that has a ptxed expectation
and on every real recording, `--quiet --stat:insn --stat:blocks` must print
the same errors and the same instruction and block counts as the lines of
`--no-inst --stat:insn --stat:blocks` that --quiet keeps.
Environment: NTLENS (the binary), NTLENS_SHARED_DATA."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import corpus_conformance  # noqa: E402
import ptxed_real  # noqa: E402

STAT = ["--stat:insn", "--stat:blocks"]


def kept_by_quiet(text):
    """The lines --quiet prints: errors and the counts."""
    return [l for l in text.splitlines()
            if l.startswith(("insn:", "blocks:")) or (l.startswith("[") and "error: " in l)]


def compare(name, args):
    """args: the command with --no-inst. Returns None when the two agree,
    "skip" when the command is refused (an option ipt flow lacks yet)."""
    p = subprocess.run(args + STAT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        return "skip"
    slow = p.stdout.decode("utf-8", "replace")
    fast_args = ["--quiet" if a == "--no-inst" else a for a in args] + STAT
    fast = subprocess.run(fast_args, stdout=subprocess.PIPE).stdout.decode("utf-8", "replace")
    if not any(l.startswith("insn:") for l in fast.splitlines()):
        return "%s: no count printed" % name
    if fast.splitlines() != kept_by_quiet(slow):
        return "%s: --quiet says %r, --no-inst %r" % (name, fast.splitlines()[-3:],
                                                      kept_by_quiet(slow)[-3:])
    return None


def main():
    runs = []
    data = corpus_conformance.data
    with open(os.path.join(data, "manifest.tsv")) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            r = dict(zip(header, line.rstrip("\n").split("\t")))
            if line.strip() and r["ptxed_exp"]:
                runs.append((r["ptxed_exp"], corpus_conformance.command("ptxed", r)))
    for name in sorted(os.listdir(ptxed_real.root)):
        d = os.path.join(ptxed_real.root, name)
        ref = open(os.path.join(d, "reference.txt")).read()
        runs.append((name, [ptxed_real.ntlens, "ipt", "flow", "--no-inst"] +
                     ptxed_real.image_args(d, ref) + ["--pt", os.path.join(d, "trace.pt")]))
    results = [compare(n, a) for n, a in runs]
    problems = [p for p in results if p and p != "skip"]
    skipped = results.count("skip")
    print("%d/%d runs: --quiet counts and errors as --no-inst's (%d with options ipt flow "
          "refuses skipped)" % (len(runs) - skipped - len(problems), len(runs) - skipped, skipped))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
