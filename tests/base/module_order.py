#!/usr/bin/python3
"""Fails when an #include breaks the module order of docs/architecture.md.

The header -> module map and each module's dependencies are read from the
table between the module-map markers there. Every lib/<module>/*.{c,h} and
include/ntlens/*.h include line is checked: "ntlens/X.h" must belong to the
including file's module or to one it depends on (directly or not); any other
quoted include must be a private header next to the including file in lib/.
Before the tree, the checker runs on a small made-up tree with a bad include
and must reject it, so this test can fail.

usage: module_order.py SOURCE_ROOT
"""
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_map(doc):
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"<!-- module-map:begin -->(.*?)<!-- module-map:end -->", text, re.S)
    if not m:
        raise SystemExit(f"{doc}: no module-map markers")
    deps, owner = {}, {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("Module", "") or cells[0].startswith("-"):
            continue
        module, depends, headers = cells
        deps[module] = depends.split()
        for h in headers.split():
            if h in owner:
                raise SystemExit(f"{doc}: {h} listed for {owner[h]} and {module}")
            owner[h] = module
    for module, ds in deps.items():
        for d in ds:
            if d not in deps:
                raise SystemExit(f"{doc}: {module} depends on unknown module {d}")
    return deps, owner


def closure(deps):
    """module -> every module it may include (itself and all below it)."""
    allowed = {}
    for module in deps:
        seen, todo = {module}, [module]
        while todo:
            for d in deps[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        allowed[module] = seen
    return allowed


def check(root):
    """Returns the list of violations in the tree at root."""
    deps, owner = read_map(os.path.join(root, "docs", "architecture.md"))
    allowed = closure(deps)
    problems = []
    files = []
    inc_dir = os.path.join(root, "include", "ntlens")
    for name in sorted(os.listdir(inc_dir)):
        if name.endswith(".h"):
            if name not in owner:
                problems.append(f"include/ntlens/{name}: not in the module map")
                continue
            files.append((os.path.join(inc_dir, name), owner[name], False))
    lib_dir = os.path.join(root, "lib")
    for module in sorted(os.listdir(lib_dir)):
        mdir = os.path.join(lib_dir, module)
        if not os.path.isdir(mdir):
            continue
        if module not in deps:
            problems.append(f"lib/{module}: not a module of the module map")
            continue
        for name in sorted(os.listdir(mdir)):
            if name.endswith((".c", ".h")):
                files.append((os.path.join(mdir, name), module, True))
    for path, module, in_lib in files:
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                where = f"{rel}:{no}: {module} includes \"{target}\""
                if target.startswith("ntlens/"):
                    header = target[len("ntlens/"):]
                    tmod = owner.get(header)
                    if tmod is None:
                        problems.append(f"{where}: a header the module map does not list")
                    elif tmod not in allowed[module]:
                        problems.append(f"{where} of module {tmod}, which {module} may not "
                                        f"use (order: docs/architecture.md)")
                elif not in_lib or "/" in target or \
                        not os.path.exists(os.path.join(os.path.dirname(path), target)):
                    problems.append(f"{where}: not a private header of lib/{module}")
    return problems


def self_test():
    """The checker must reject a made-up tree where perf includes source."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "include", "ntlens"))
        for m in ("perf", "source"):
            os.makedirs(os.path.join(root, "lib", m))
        with open(os.path.join(root, "docs", "architecture.md"), "w") as f:
            f.write("<!-- module-map:begin -->\n| Module | Depends on | Headers |\n"
                    "|---|---|---|\n| perf | | perf.h |\n| source | perf | source.h |\n"
                    "<!-- module-map:end -->\n")
        for h in ("perf.h", "source.h"):
            open(os.path.join(root, "include", "ntlens", h), "w").close()
        with open(os.path.join(root, "lib", "source", "ok.c"), "w") as f:
            f.write('#include "ntlens/perf.h"\n#include "ntlens/source.h"\n')
        if check(root):
            return "the checker rejects a tree that keeps the order"
        with open(os.path.join(root, "lib", "perf", "bad.c"), "w") as f:
            f.write('#include "ntlens/perf.h"\n#include "ntlens/source.h"\n')
        found = check(root)
        if len(found) != 1 or "lib/perf/bad.c:2" not in found[0]:
            return f"the checker does not reject perf including source: {found}"
    return None


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    why = self_test()
    if why:
        print(f"self-test failed: {why}")
        return 1
    problems = check(sys.argv[1])
    for p in problems:
        print(p)
    print(f"module order: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
