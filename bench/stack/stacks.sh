#!/usr/bin/env bash
# `ntlens stacks PID` against `eu-stack -p PID` (elfutils) on one process of
# 1,000 threads, each blocked 20 frames deep in a recursion (tests/stack's
# stackprog), in the same run: wall time of each (best of 5, output to
# /dev/null, ntlens with source lines and inline frames, eu-stack with
# symbols), the ratio, and the time ntlens kept the target's threads stopped
# (the sum over threads, from its own header: what the user's process paid).
#   bench/stack/stacks.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-bench}
ntlens=$build/tools/ntlens/ntlens
prog=$build/tests/stack/stackprog
threads=1000
command -v eu-stack >/dev/null || { echo "eu-stack missing: scripts/setup installs elfutils" >&2; exit 1; }
exec 3> >(exec "$prog" "$threads" > "${TMPDIR:-/tmp}/stacks-bench.$$")
for _ in $(seq 200); do
    grep -q ready "${TMPDIR:-/tmp}/stacks-bench.$$" 2>/dev/null && break
    sleep 0.05
done
pid=$(awk '/ready/ {print $2}' "${TMPDIR:-/tmp}/stacks-bench.$$")
rm -f "${TMPDIR:-/tmp}/stacks-bench.$$"
[ -n "$pid" ] || { echo "stackprog did not start" >&2; exit 1; }
secs() { # CMD... -> seconds (best of 5)
    local best=
    for _ in 1 2 3 4 5; do
        local t0 t1
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
        t1=$(date +%s.%N)
        best=$(echo "$t0 $t1 ${best:-}" | awk '{d=$2-$1; if ($3 == "" || d < $3) print d; else print $3}')
    done
    echo "$best"
}
status=0
ours=$(secs "$ntlens" stacks "$pid") || status=1
theirs=$(secs eu-stack -p "$pid") || status=1
stopped=$("$ntlens" stacks "$pid" | sed -n 's/.*stopped \([0-9.]*\) ms in all.*/\1/p')
frames=$("$ntlens" stacks "$pid" --format csv | tail -n +2 | wc -l)
exec 3>&-
[ $status -eq 0 ] || exit 1
awk -v o="$ours" -v t="$theirs" -v s="$stopped" -v n="$threads" -v f="$frames" 'BEGIN {
    printf "%d threads, %d frames: ntlens stacks %.3f s, eu-stack -p %.3f s, ratio %.2fx; threads stopped %.1f ms in all (%.1f us each)\n",
        n + 1, f, o, t, t / o, s, s * 1000 / (n + 1) }'
