#!/usr/bin/env bash
# The critical path of `ntlens profile --etl net.4.5.2.x64.etl`: the main
# thread's CPU time (all of it, and without XPRESS, which on a loaded
# machine it takes over from the decompressing thread), and the
# decompressing thread's, from `perf record -e cpu-clock` at 10 kHz over ten
# runs, per run; the builds interleaved, ROUNDS times. On two free cores the
# wall time is the main thread's.
#   bench/profile/etl_main_thread.sh ROUNDS NTLENS [NTLENS...]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
trace=${NTLENS_SHARED_DATA:-$root/../shared/data}/etl/net.4.5.2.x64.etl
data=$(mktemp)
trap 'rm -f "$data" "$data.old"' EXIT
rounds=$1
shift
for _ in $(seq "$rounds"); do
    for b in "$@"; do
        perf record -q -e cpu-clock -F 10000 -o "$data" -- sh -c \
            "for i in 1 2 3 4 5 6 7 8 9 10; do '$b' profile --etl '$trace' >/dev/null; done" \
            2>/dev/null
        perf script -i "$data" -F comm,tid,pid,ip,sym 2>/dev/null | awk -v b="$b" '
            $1 == "sh" { next }
            { split($2, id, "/")
              if (id[1] == id[2]) { m++; x += $4 == "ntl_xpress_decompress" } else o++ }
            END { printf "%-40s main %6.2f ms  main without XPRESS %6.2f ms  other %6.2f ms\n",
                         b, m / 100, (m - x) / 100, o / 100 }'
    done
done
