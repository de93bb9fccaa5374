#!/usr/bin/env bash
# `ntlens etl events` and `etl images` end to end (CLI, formatting to
# /dev/null) against the independent Python reader tests/etl/etl_ref.py on
# the shared traces: MB/s of trace file and the ratio.
#   bench/etl/etl.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-bench}
ntlens=$build/tools/ntlens/ntlens
data=${NTLENS_SHARED_DATA:-$root/../shared/data}/etl
py=/usr/bin/python3
secs() { # CMD... -> seconds (best of 3)
    local best=
    for _ in 1 2 3; do
        local t0 t1
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
        t1=$(date +%s.%N)
        best=$(echo "$t0 $t1 ${best:-}" | awk '{d=$2-$1; if ($3 == "" || d < $3) print d; else print $3}')
    done
    echo "$best"
}
for f in ShutdownPerfDiagLogger.etl net.4.5.2.x64.etl; do
    size=$(stat -c %s "$data/$f")
    ev=$(secs "$ntlens" etl events --format csv "$data/$f") || exit 1
    im=$(secs "$ntlens" etl images --format csv "$data/$f") || exit 1
    ref=$(secs "$py" "$root/tests/etl/etl_ref.py" "$data/$f") || exit 1
    awk -v f="$f" -v s="$size" -v ev="$ev" -v im="$im" -v ref="$ref" 'BEGIN {
        printf "%-28s etl events %7.1f MB/s  etl images %7.1f MB/s  python reader %6.2f MB/s  ratio %.0fx / %.0fx\n",
            f, s/ev/1e6, s/im/1e6, s/ref/1e6, ref/ev, ref/im }'
done
