#!/usr/bin/env bash
# The report against `perf report`, interleaved in one run, as
# docs/performance.md records it: records `spin 7200` with perf (N samples,
# about 1 M), then ROUNDS times: bench_profile N 300 --no-frames of each
# build given (its "total": symbol tables, adding the samples, the report,
# in process), `perf report --stdio --no-children -g none` of that
# perf.data (the whole command) and the same on a perf.data of /bin/true
# (perf's fixed cost). CPU seconds (user + system) throughout.
#   bench/profile/report_vs_perf.sh ROUNDS SPIN BENCH_PROFILE [BENCH_PROFILE...]
# e.g. ... 5 build-rel/bench/profile/spin /tmp/bench_profile.main build-rel/bench/profile/bench_profile
#   bench/profile/report_vs_perf.sh BUILD_DIR
# (as scripts/bench runs it): 5 rounds of that build's spin and bench_profile.
#   bench/profile/report_vs_perf.sh --wall ROUNDS SPIN BENCH_PROFILE [...]
# wall time instead: bench_profile N 300 --threads (the symbol tables built
# on a second thread while the samples are added) against perf report's
# wall time for the whole command; and, as loaded machines stretch wall
# times, perf's CPU time against the adding thread's (what each would take
# on free cores, perf being one thread).
set -uo pipefail
wall=0
if [ "${1:-}" = --wall ]; then
    wall=1
    shift
fi
if [ $# -eq 1 ] && [ -d "$1" ]; then
    set -- 5 "$1/bench/profile/spin" "$1/bench/profile/bench_profile"
fi
if [ $# -lt 3 ]; then
    sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
fi
rounds=$1
spin=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cpu() { # CMD... -> CPU seconds
    local TIMEFORMAT='%3U %3S'
    { time "$@" >/dev/null 2>&1; } 2>&1 | awk '{ print $1 + $2 }'
}
real() { # CMD... -> "wall CPU" seconds
    local TIMEFORMAT='%3R %3U %3S'
    { time "$@" >/dev/null 2>&1; } 2>&1 | awk '{ print $1, $2 + $3 }'
}
perf record -q -e cpu-clock -c 12500 -g -o "$tmp/spin.data" -- "$spin" 7200 \
    >/dev/null 2>&1
perf record -q -e cpu-clock -c 12500 -g -o "$tmp/true.data" -- /bin/true >/dev/null 2>&1
n=$(perf report -i "$tmp/spin.data" --stdio -n --no-children --sort comm -g none 2>/dev/null |
    awk '!/^#/ && NF >= 3 { n += $2 } END { print n + 0 }')
echo "N = $n samples"
if [ $wall = 1 ]; then
    for _ in $(seq "$rounds"); do
        line=""
        for b in "$@"; do
            t=$("$b" "$n" 300 --threads | awk '$1 == "total" { print $2, $5 }')
            line="$line $b $t"
        done
        f=$(real perf report -i "$tmp/spin.data" --stdio --no-children -g none)
        echo "$line perf (wall, CPU) $f" | awk '{
            printf "%s", $0
            for (i = 2; i <= NF - 5; i += 3)
                printf "  %s: %.1fx wall, %.1fx perf CPU / its adding thread CPU", $(i - 1),
                       $(NF - 1) / $i, $NF / $(i + 1)
            print "" }'
    done
    exit 0
fi
for _ in $(seq "$rounds"); do
    line=""
    for b in "$@"; do
        t=$("$b" "$n" 300 --no-frames | awk '$1 == "total" { print $2 }')
        line="$line $b $t"
    done
    f=$(cpu perf report -i "$tmp/spin.data" --stdio --no-children -g none)
    z=$(cpu perf report -i "$tmp/true.data" --stdio --no-children -g none)
    echo "$line perf $f /bin/true $z" | awk '{
        printf "%s", $0
        for (i = 2; i <= NF - 4; i += 2)
            printf "  %s: %.1fx whole, %.1fx less fixed cost", $(i - 1), $(NF - 2) / $i,
                   ($(NF - 2) - $NF) / $i
        print "" }'
done
