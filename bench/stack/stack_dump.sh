#!/usr/bin/env bash
# Minidump stack walking on a real dump of 1,000 threads: stack_target.exe
# (tests/stack, mingw-w64) runs under Wine with 1,000 threads in a 20-deep
# recursion plus its five test threads and dumps itself with dbghelp; then
# walk_dump (bench_stack_dump.c) walks it (module files: the program, its
# DLL, Wine's PE DLLs).
#     bench/stack/stack_dump.sh BUILD_DIR [SECONDS]   (a native build with -Dbench=true; scripts/bench runs it)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: stack_dump.sh BUILD_DIR [SECONDS]}" && pwd)
seconds=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-O2 -gdwarf-4 -fno-optimize-sibling-calls)
x86_64-w64-mingw32-gcc "${flags[@]}" -shared -o "$work/stack_dll.dll" "$root/tests/stack/stack_dll.c"
x86_64-w64-mingw32-gcc "${flags[@]}" -o "$work/stack_target.exe" "$root/tests/stack/stack_target.c" \
    "$root/tests/stack/dump_images.c" \
    "$work/stack_dll.dll" -ldbghelp
WINEDEBUG=-all timeout 600 wine "$work/stack_target.exe" "$work/t.dmp" "$work/t.frames" 1000
mkdir "$work/mods"
ln -s /usr/lib/x86_64-linux-gnu/wine/x86_64-windows/*.dll "$work/stack_target.exe" "$work/stack_dll.dll" "$work/mods/"
"$build/bench/stack/walk_dump" "$work/t.dmp" "$work/mods" "$seconds"
