"""/proc helpers shared by the exporter's tests (tests/prom) and benches
(bench/prom): a process's children and descendants (its zygote and SMB
helpers), and their memory and CPU time."""
import os
import socket


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def _stat(pid):
    """The fields of /proc/PID/stat after the command name (state first)."""
    with open("/proc/%s/stat" % pid) as f:
        st = f.read()
    return st[st.rindex(")") + 2:].split()


def _kids():
    kids = {}
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                kids.setdefault(int(_stat(e)[1]), []).append(int(e))
            except (OSError, ValueError):
                pass
    return kids


def children(pid):
    return _kids().get(pid, [])


def tree(pid):
    """pid and every descendant."""
    kids, out, todo = _kids(), [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def zombie(pid):
    try:
        return _stat(pid)[0] == "Z"
    except (OSError, ValueError):
        return True


def _sum_kb(pids, name, key):
    t = 0
    for p in pids:
        try:
            with open("/proc/%d/%s" % (p, name)) as f:
                for line in f:
                    if line.startswith(key + ":"):
                        t += int(line.split()[1])
        except OSError:
            pass
    return t / 1024


def rollup(pids, key):
    """MB of one smaps_rollup field (Pss, Private_Dirty...) over pids."""
    return _sum_kb(pids, "smaps_rollup", key)


def page_tables(pids):
    """MB of page tables (VmPTE, not in PSS) over pids."""
    return _sum_kb(pids, "status", "VmPTE")


def cpu_s(pids):
    """User + system CPU seconds over pids."""
    t = 0
    for p in pids:
        try:
            fields = _stat(p)
            t += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            pass
    return t / os.sysconf("SC_CLK_TCK")
