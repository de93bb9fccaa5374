#!/usr/bin/python3
"""`ntlens ps` on a Windows-shaped answer (gen_ps_block: Idle, System, smss,
two svchost, _Total, threads parented by instance number, no Handle Count,
no title database) replayed through `ntlens capture --import`. Every value
is known, so columns, formats, tree, filters and states are checked exactly.
argv[1]: the gen_ps_block program."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]




def run(*args, expect=0):
    p = subprocess.run([NTLENS, *args], capture_output=True, text=True, timeout=60)
    check(p.returncode == expect, f"ntlens {' '.join(args)}: exit {p.returncode}; {p.stderr.strip()}")
    return p


tmp = tempfile.mkdtemp(prefix="ntlens-psw-")
block, cap = os.path.join(tmp, "block.bin"), os.path.join(tmp, "win.cap")
try:
    subprocess.run([sys.argv[1], block], check=True)
    run("capture", "--import", block, "-o", cap)

    def ps(*args):
        p = run("ps", "-S", cap, *args, "--format", "json")
        return json.loads(p.stdout) if p.returncode == 0 else []

    rows = ps()
    check([(r["name"], r["pid"]) for r in rows] ==
          [("Idle", 0), ("System", 4), ("smss", 248), ("svchost", 600), ("svchost", 812)],
          f"processes in the source's order, without _Total: {rows}")
    by = {r["pid"]: r for r in rows}
    check(by[4]["cpu_time"] == 1.5 and by[0]["cpu_time"] == 3600, "CPU Time from % Processor Time")
    check(by[812]["elapsed_time"] == 60 and by[4]["elapsed_time"] == 7200,
          "Elapsed Time against the object's PerfTime")
    check(by[600]["priv_kb"] == 1024 and by[4]["pri"] == 8 and by[248]["pri"] == 11, "Priv, Pri")
    check(by[812]["thd"] == 2 and by[248]["thd"] == 0, "Thd")
    check(all(r["hnd"] is None for r in rows), "a counter the source does not send is null")

    table = run("ps", "-S", cap).stdout.splitlines()
    check(table[:2] == ["Process information for WINHOST:", ""], f"PsList's banner: {table[:2]}")
    check(table[2].split() == ["Name", "Pid", "Pri", "Thd", "Hnd", "Priv", "CPU", "Time", "Elapsed", "Time"],
          "table header")
    check(table[4].split() == ["System", "4", "8", "1", "20", "0:00:01.500", "2:00:00.000"],
          f"PsList's row format: {table[4]}")
    check(run("ps", "-S", cap, "-d").stdout.startswith("Thread detail for WINHOST:\n\n"), "-d banner")
    check(run("ps", "-S", cap, "-m").stdout.startswith("Process memory detail for WINHOST:\n\n"), "-m banner")
    check(not run("ps", "-S", cap, "-S", cap).stdout.startswith("Process"), "no banner with a Host column")

    tree = ps("-t")
    check([(r["pid"], r["depth"]) for r in tree] == [(0, 0), (4, 1), (248, 2), (600, 3), (812, 3)],
          f"tree by Creating Process ID: {[(r['pid'], r['depth']) for r in tree]}")
    tree = run("ps", "-S", cap, "-t", "smss").stdout.splitlines()
    check([l.split()[0] for l in tree[3:]] == ["smss", "svchost", "svchost"] and
          tree[4].startswith("  svchost"), f"-t NAME: that process and what it created, indented: {tree}")

    th = ps("-d", "-e", "SVCHOST")
    check([(r["pid"], r["tid"], r["state"]) for r in th] ==
          [(600, 640, "Running"), (812, 900, "Wait:UserReq"), (812, 904, "Ready")],
          f"threads of the svchosts by parent instance: {th}")
    check(th[0]["user_time"] == 1 and th[0]["kernel_time"] == 1 and th[1]["elapsed_time"] == 60 and
          th[0]["cswtch"] == 70 and th[0]["pri"] == 9, f"thread columns: {th[0]}")
    blocks = run("ps", "-S", cap, "-d", "-e", "svchost").stdout.split("\n\n")
    check([b.splitlines()[0] for b in blocks[1:3]] == ["svchost 600:", "svchost 812:"] and
          [len(b.splitlines()) for b in blocks[1:3]] == [3, 4] and
          blocks[2].splitlines()[3].split()[:2] == ["904", "8"] and blocks[3:] == [""],
          f"-d table: a block per svchost with its threads: {blocks}")
    check(ps("812")[0]["name"] == "svchost", "PID filter")
    check(len(ps("-e", "svchost")) == 2, "same-named instances stay distinct")
    mem = ps("-m")
    check(all(r["vm_kb"] is None and r["faults"] is None for r in mem), "-m: absent counters are null")
    x = ps("-x")
    check(len(x["processes"]) == 5 and len(x["threads"]) == 6, "-x")
    two = ps("-S", cap, "4")
    check([r["host"] for r in two] == ["WINHOST", "WINHOST"], "Host column carries the system name")
    p = run("ps", "-S", cap, "-s", expect=1)
    check("needs two snapshots" in p.stderr, f"-s on one snapshot says why: {p.stderr}")
    p = run("ps", "-S", cap, "nosuch", expect=1)
    check("no process matches 'nosuch'" in p.stderr, "no match is a clear failure")
finally:
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)

finish()
