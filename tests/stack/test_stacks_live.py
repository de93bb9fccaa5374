#!/usr/bin/env python3
"""`ntlens stacks PID` on stackprog against `eu-stack -p PID` (elfutils).

stackprog's threads sit in known places: a blocking read, a condition
variable (futex), a busy loop, a 20-deep recursion, a read inside a shared
library, one inside a library without unwind data (its caller found by the
frame pointer, and marked so) and one inside an inlined function. For every thread, the physical
frames (those not marked inline) must be eu-stack's frames: same count,
same pcs, same symbols (the busy thread's innermost pc moves between the two
walks: there only the function must agree). The expected functions, inline
frames and source lines must be there, and no thread may be left stopped.
Then the error paths: a pid that does not exist, a process that exited, a
process we may not trace (run as nobody), a process that exits while it is
walked, and the usage errors. Also `ntlens ps -d --stacks`."""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from checks import check, finish  # noqa: E402

NTLENS = os.environ["NTLENS"]
STACKPROG = sys.argv[1]


def start(*args):
    p = subprocess.Popen([STACKPROG, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    if not line.startswith("ready"):
        p.kill()
        sys.exit(f"stackprog did not start: {line!r}")
    return p


def stop(p):
    p.stdin.close()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def eu_stack(pid):
    """{tid: [(pc, symbol)]} from eu-stack's default output."""
    r = subprocess.run(["eu-stack", "-p", str(pid)], capture_output=True, text=True, timeout=60)
    threads, cur = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"TID (\d+):", line)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#\d+\s+0x([0-9a-f]+)\s*(\S*)", line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2)))
    return threads


def ntlens_json(*args):
    r = subprocess.run([NTLENS, "stacks", *args, "--format", "json"], capture_output=True,
                       text=True, timeout=60)
    return r, json.loads(r.stdout) if r.returncode == 0 else []


def by_thread(rows):
    threads = {}
    for row in rows:
        threads.setdefault(row["tid"], []).append(row)
    return threads


def states(pid):
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            out.append(f.read().rsplit(")", 1)[1].split()[0])
    return out


def compare_with_eu_stack(p):
    r, rows = ntlens_json(str(p.pid))
    check(r.returncode == 0, f"ntlens stacks {p.pid}: exit 0 ({r.stderr.strip()})")
    ours = by_thread(rows)
    theirs = eu_stack(p.pid)
    check(sorted(ours) == sorted(theirs) and len(ours) == 8,
          f"the same 8 threads: ntlens {sorted(ours)}, eu-stack {sorted(theirs)}")
    names = {}
    for tid, frames in ours.items():
        name = frames[0]["thread_name"]
        names[name] = frames
        physical = [(int(f["pc"], 16), f["function"]) for f in frames if f["how"] != "inline"]
        expect = theirs.get(tid, [])
        if name == "busy" and physical and expect:
            check(physical[0][1] == expect[0][1] == "busy_loop",
                  f"busy: innermost function {physical[0][1]} / {expect[0][1]}")
            physical, expect = physical[1:], expect[1:]
        check(physical == expect, f"thread {tid} ({name}): frames agree with eu-stack\n"
              f"  ntlens:   {[(hex(a), s) for a, s in physical]}\n"
              f"  eu-stack: {[(hex(a), s) for a, s in expect]}")
        check(all(f["note"] == "" for f in frames), f"{name}: no note")
    return names


def expected_functions(names):
    def functions(name):
        return [f["function"] for f in names.get(name, [])]
    check("block_in_read" in functions("reader"), "reader waits in block_in_read")
    check(any("pthread_cond_wait" in f for f in functions("condwait")) and
          "wait_on_cond" in functions("condwait"), "condwait waits in pthread_cond_wait")
    check(functions("busy")[:1] == ["busy_loop"], "busy runs in busy_loop")
    check(functions("recurse").count("recurse") == 20, "recurse is 20 frames deep")
    lib = [f for f in names.get("inlib", []) if f["function"] == "stacklib_wait"]
    check(lib and lib[0]["module"] == "libstacklib.so" and lib[0]["how"] == "cfi",
          "inlib: stacklib_wait in libstacklib.so, found through CFI")
    inl = [f for f in names.get("inlined", []) if f["function"] == "inlined_wait"]
    outer = [f for f in names.get("inlined", []) if f["function"] == "outer_of_inlined"]
    check(inl and inl[0]["how"] == "inline" and outer and inl[0]["pc"] == outer[0]["pc"],
          "inlined: inlined_wait is an inline frame at outer_of_inlined's pc")
    check(inl and inl[0]["file"].endswith("stackprog.c") and inl[0]["line"],
          "inlined: the inline frame has its source line")
    fn = [f["function"] for f in names.get("nocfi", [])]
    k = fn.index("stacknocfi_wait") if "stacknocfi_wait" in fn else -2
    check(k >= 0 and names["nocfi"][k + 1]["how"] == "frame-pointer" and
          names["nocfi"][k + 1]["function"] == "nocfi",
          f"nocfi: the caller of a function without CFI is marked frame-pointer: "
          f"{[(f['function'], f['how']) for f in names.get('nocfi', [])]}")
    first = [f for f in names.get("reader", []) if f["how"] != "inline"]
    check(first and first[0]["how"] == "context", "the innermost physical frame is 'context'")


def entry_point(pid):
    """stackprog's entry point where it is loaded: e_entry from the file, plus
    the address of its first mapping for a position-independent program."""
    with open(STACKPROG, "rb") as f:
        head = f.read(32)
    e_type, entry = struct.unpack_from("<H", head, 16)[0], struct.unpack_from("<Q", head, 24)[0]
    if e_type != 3:  # ET_DYN
        return entry
    exe = os.path.realpath(STACKPROG)
    with open(f"/proc/{pid}/maps") as f:
        bases = [int(line.split("-")[0], 16) for line in f if line.split()[-1] == exe]
    return min(bases) + entry


def start_address(pid, names):
    """The main thread starts at the program's entry point; the kernel keeps
    no start for the others."""
    main_rows = [f for frames in names.values() for f in frames if f["tid"] == pid]
    check(main_rows and main_rows[0]["start"] and int(main_rows[0]["start"], 16) ==
          entry_point(pid), f"main thread: start {main_rows[:1] and main_rows[0]['start']} is "
          f"the entry point {hex(entry_point(pid))}")
    others = {f["start"] for frames in names.values() for f in frames if f["tid"] != pid}
    check(others == {None}, f"other threads: no start ({others})")


def other_formats(pid):
    r = subprocess.run([NTLENS, "stacks", str(pid), "--format", "folded"], capture_output=True,
                       text=True, timeout=60)
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) == 8 and all(re.fullmatch(r"\S+ 1", x) for x in lines),
          f"folded: 8 distinct stacks, count 1 each: {lines}")
    check(any(x.endswith(";recurse;block_in_read;read;__libc_read 1") or ";block_in_read;" in x
              for x in lines), "folded: outer to inner order")
    r = subprocess.run([NTLENS, "stacks", str(pid)], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and re.search(r'Thread \d+ "inlined"', r.stdout) and
          "[inline]" in r.stdout and "libstacklib.so!stacklib_wait+0x" in r.stdout,
          "text: thread blocks with module!function+offset and [inline]")
    check(re.search(r"stopped [0-9.]+ ms in all", r.stdout), "text: the stopped time")


def ps_stacks(pid):
    """ntlens ps -d --stacks: the innermost frames in PsList's thread list."""
    r = subprocess.run([NTLENS, "ps", "-d", "--stacks", str(pid), "-f", "json"],
                       capture_output=True, text=True, timeout=60)
    rows = json.loads(r.stdout) if r.returncode == 0 else []
    stacks = [row.get("stack") or "" for row in rows]
    check(len(rows) == 8 and any("stacklib_wait" in x for x in stacks) and
          any(x.startswith("stackprog!busy_loop+0x") for x in stacks),
          f"ps -d --stacks: a stack per thread: {stacks} {r.stderr.strip()}")


def max_frames(pid, tid):
    r, rows = ntlens_json(str(pid), str(tid), "--max-frames", "5")
    check(r.returncode == 0 and len(rows) == 5 and "more than 5 frames" in rows[0]["note"],
          f"--max-frames 5: five frames and a note: {[x['function'] for x in rows]}")


def catches_sigint(pid):
    """Waits until pid has its SIGINT handler (before that, Ctrl-C ends it
    as it would any program, before any thread was stopped)."""
    for _ in range(2000):
        try:
            with open(f"/proc/{pid}/status") as f:
                caught = [x for x in f if x.startswith("SigCgt:")]
        except OSError:
            return
        if caught and int(caught[0].split()[1], 16) & (1 << (signal.SIGINT - 1)):
            return
        time.sleep(0.001)


def interrupted():
    """Ctrl-C during the walk of 1,000 threads: the walk ends, what was
    walked is printed, the rest say so, and no thread is left stopped."""
    p = start("1000")
    try:
        w = subprocess.Popen([NTLENS, "stacks", str(p.pid), "--format", "json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        catches_sigint(w.pid)
        time.sleep(0.08)  # into the walk (libdw reads the modules first)
        w.send_signal(signal.SIGINT)
        out, err = w.communicate(timeout=60)
        rows = json.loads(out) if w.returncode == 0 else []
        notes = {r["note"] for r in rows if r["note"]}
        check(w.returncode == 0 and notes <= {"not walked: interrupted"},
              f"Ctrl-C: exit 0, the rest 'not walked: interrupted' ({w.returncode} {notes} {err})")
        check(not set(states(p.pid)) & {"t", "T"}, "Ctrl-C: no thread left stopped")
    finally:
        stop(p)


def folded_merges():
    """Identical stacks are one folded line with their count: 3 threads in
    the same recursion, and the main thread."""
    p = start("3")
    try:
        r = subprocess.run([NTLENS, "stacks", str(p.pid), "-f", "folded"], capture_output=True,
                           text=True, timeout=60)
        counts = sorted(int(x.rsplit(" ", 1)[1]) for x in r.stdout.splitlines())
        check(r.returncode == 0 and counts == [1, 3], f"folded: counts 1 and 3: {r.stdout}")
    finally:
        stop(p)


def kernel_thread():
    """A kernel thread has no user space: its threads get a note, not an error."""
    for pid in sorted(int(x) for x in os.listdir("/proc") if x.isdigit()):
        try:
            with open(f"/proc/{pid}/maps") as f, open(f"/proc/{pid}/stat") as st:
                if f.read() or st.read().rsplit(")", 1)[1].split()[0] in "ZXD":
                    continue
        except OSError:
            continue
        r, rows = ntlens_json(str(pid))
        check(r.returncode == 0 and rows and all("kernel thread" in x["note"] for x in rows),
              f"kernel thread {pid}: a note ({r.stderr.strip()} {rows[:1]})")
        return
    print("skip: no kernel thread visible here")


def error_paths():
    p = subprocess.Popen(["true"])
    p.wait()
    r = subprocess.run([NTLENS, "stacks", str(p.pid)], capture_output=True, text=True)
    check(r.returncode == 1 and "no process" in r.stderr,
          f"an exited process: exit 1, 'no process' ({r.returncode}: {r.stderr.strip()})")
    r = subprocess.run([NTLENS, "stacks", "4000000000"], capture_output=True, text=True)
    check(r.returncode in (1, 2) and r.stderr, f"a pid out of range: {r.stderr.strip()}")
    r = subprocess.run([NTLENS, "stacks", str(os.getpid()), "abc"], capture_output=True, text=True)
    check(r.returncode == 2, "a tid that is not a number: usage error")
    r = subprocess.run([NTLENS, "stacks"], capture_output=True, text=True)
    check(r.returncode == 2, "no operand: usage error")
    r = subprocess.run([NTLENS, "stacks", "/nonexistent.dmp"], capture_output=True, text=True)
    check(r.returncode == 1 and "/nonexistent.dmp" in r.stderr, "a missing dump: exit 1, named")


def not_allowed(p):
    """As nobody, root's process may not be traced: a process-level error
    that says what to do, and the target runs on."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("skip: not root, so cannot run ntlens as another user")
        return
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", NTLENS,
                        "stacks", str(p.pid)], capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "root" in r.stderr and "not allowed" in r.stderr,
          f"not allowed: exit 1 with advice ({r.returncode}: {r.stderr.strip()})")
    check(not set(states(p.pid)) & {"t", "T"}, "not allowed: nothing left stopped")


def exits_while_walked():
    """A process of 400 threads killed while ntlens walks it: no crash, no
    hang; either a clean error or threads with notes."""
    p = start("400")
    w = subprocess.Popen([NTLENS, "stacks", str(p.pid), "--format", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.05)
    p.kill()
    p.wait()
    out, err = w.communicate(timeout=60)
    if w.returncode == 0:
        # What a thread of a process being killed can meet: it exited, it
        # was in the exit path's uninterruptible wait, or its memory went
        # away under the unwinder.
        dying = ("exited", "uninterruptible wait", "no user frames:", "the unwind stopped:")
        notes = [r["note"] for r in json.loads(out) if r["note"]]
        other = [n for n in notes if not any(d in n for d in dying)]
        check(not other, f"exit mid-walk: notes say the thread exited or its unwind failed: "
                         f"{other[:3]} of {len(notes)}")
    else:
        check(w.returncode == 1 and err.strip(), f"exit mid-walk: a clean error: {err.strip()}")


def uninterruptible():
    """A thread in vfork's wait (state D) is not stopped: it gets a note and
    its kernel frames, the walk ends at once, and once its child exits the
    thread runs on, not stopped."""
    p = start("vfork")
    try:
        t0 = time.monotonic()
        r, rows = ntlens_json(str(p.pid), "--kernel")
        took = time.monotonic() - t0
        notes = {row["thread_name"]: row["note"] for row in rows}
        kernel = [row["function"] for row in rows
                  if row["thread_name"] == "vforker" and row["mode"] == "kernel"]
        user = [row for row in rows if row["thread_name"] == "vforker" and row["mode"] == "user"]
        note = notes.get("vforker", "")
        check(r.returncode == 0 and "uninterruptible" in note and took < 1.5,
              f"vfork's parent: a note, and the walk ends ({took:.1f} s): {notes}")
        check(any("vfork" in f for f in kernel), f"vfork's parent: kernel frames {kernel}")
        # Not stopped, yet its innermost user frame: where it called vfork
        # in libc, the call's number (58 on x86-64) in the note.
        check(len(user) == 1 and user[0]["how"] == "context" and "vfork" in user[0]["function"]
              and user[0]["module"].startswith("libc"),
              f"vfork's parent: its innermost user frame, in libc's vfork: "
              f"{[(f['module'], f['function'], f['how']) for f in user]}")
        check("system call 58" in note and "cannot be unwound without stopping it" in note,
              f"vfork's parent: the note says the rest needs a stop: {note}")
        time.sleep(3.5)
        check(not set(states(p.pid)) & {"t", "T"}, "vfork's parent: not left stopped")
    finally:
        stop(p)


def main():
    if not shutil.which("eu-stack"):
        print("skip: eu-stack (elfutils) is not installed: scripts/setup installs it")
        sys.exit(77)
    p = start()
    try:
        names = compare_with_eu_stack(p)
        expected_functions(names)
        start_address(p.pid, names)
        other_formats(p.pid)
        ps_stacks(p.pid)
        max_frames(p.pid, names["recurse"][0]["tid"] if "recurse" in names else 0)
        check(not set(states(p.pid)) & {"t", "T"}, "no thread left stopped")
        not_allowed(p)
    finally:
        stop(p)
    folded_merges()
    kernel_thread()
    interrupted()
    error_paths()
    exits_while_walked()
    uninterruptible()
    finish()


main()
