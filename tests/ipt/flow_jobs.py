#!/usr/bin/env python3
"""`ntlens ipt flow --jobs N` prints what one thread prints, byte for byte
(stdout, stderr and exit status), for N = 2 and 4:
  - every recording in ../shared/data/ipt/real/ (kAFL: --pages; hase-loopy:
    its ELF), in each output mode: ptxed's lines with and without
    instructions, --offset --event:ip, --check, --resync-on-error, -q
    --stat, --calls, --functions, --format jsonl;
  - every ptxed run of libipt's corpus whose trace holds several PSBs, as
    the conformance test runs it (--raw, --cpu, its options, --no-inst
    --check), and with --offset --event:ip.
Prints each difference; fails when there is one. (That the splits really
happen, seams taken and decoded again, test_ipt_flow_split.c checks.)
Environment: NTLENS, NTLENS_SHARED_DATA."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
shared = os.environ.get("NTLENS_SHARED_DATA", os.path.join(here, "../../../shared/data"))
ntlens = os.environ.get("NTLENS", "ntlens")
PSB = bytes([0x02, 0x82] * 8)

MODES = [[], ["--no-inst"], ["--no-inst", "--offset", "--event:ip"], ["--no-inst", "--check"],
         ["--no-inst", "--resync-on-error"], ["-q", "--stat"], ["--calls"], ["--functions"],
         ["--no-inst", "--format", "jsonl"]]
# kafl-mruby prints 6.3 M lines a mode: the modes that show every
# instruction run once, without the instructions' text.
BIG = [["--no-inst", "--offset"], ["-q", "--stat"], ["--functions"]]


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def same(args, what):
    one = run(args)
    for jobs in ("2", "4"):
        many = run(args + ["--jobs", jobs])
        if many != one:
            part = "stdout" if many[1] != one[1] else "stderr" if many[2] != one[2] else "status"
            print("%s: --jobs %s differs from one thread (%s): %s" % (what, jobs, part, " ".join(args)))
            return False
    return True


def recordings():
    root = os.path.join(shared, "ipt", "real")
    ok = n = 0
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if os.path.isdir(os.path.join(d, "image")):
            image = ["--pages", os.path.join(d, "image")]
        elif os.path.exists(os.path.join(d, "loopy")):
            image = ["--elf", os.path.join(d, "loopy"), "--cpu", "6/94/3", "--mtc-freq", "3",
                     "--cpuid-0x15.eax", "2", "--cpuid-0x15.ebx", "266", "--nom-freq", "32"]
        else:
            continue
        trace = os.path.join(d, "trace.pt")
        for mode in BIG if os.path.getsize(trace) > 500000 else MODES:
            n += 1
            ok += same([ntlens, "ipt", "flow", *mode, *image, "--pt", trace], name)
    return ok, n


def corpus():
    data = os.path.join(shared, "ipt", "libipt-corpus")
    lines = open(os.path.join(data, "manifest.tsv")).read().splitlines()
    keys = lines[0].split("\t")
    ok = n = 0
    for line in lines[1:]:
        r = dict(zip(keys, line.split("\t")))
        pt = os.path.join(data, "tests", r["test"] + ".pt")
        if not r.get("ptxed_exp") or open(pt, "rb").read().count(PSB) < 2:
            continue
        cpu = ["--cpu", r["cpu"]] if r["cpu"] else []
        args = [ntlens, "ipt", "flow", "--raw",
                "%s:%s" % (os.path.join(data, "tests", r["test"] + ".bin"), r["org"]), *cpu,
                *r["ptxed_opts"].split(), "--no-inst", "--check", "--pt", pt]
        for extra in ([], ["--offset", "--event:ip"]):
            n += 1
            ok += same(args + extra, r["test"])
    return ok, n


def main():
    r_ok, r_n = recordings()
    c_ok, c_n = corpus()
    print("recordings: %d of %d runs the same on 2 and 4 threads" % (r_ok, r_n))
    print("libipt corpus (traces with several PSBs): %d of %d runs the same" % (c_ok, c_n))
    sys.exit(0 if r_ok == r_n and c_ok == c_n and r_n and c_n else 1)


if __name__ == "__main__":
    main()
