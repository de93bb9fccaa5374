#!/usr/bin/env bash
# Sampling overhead at 4 kHz, interleaved in one run: ROUNDS times, spin's
# own CPU and wall time bare, under `perf record -F 4000 -g` and under
# `ntlens profile -F 4000` of each build given; then the median of each
# and its slowdown against bare, and the median of each round's ratio to
# that round's bare run (paired: drifts in load cancel). Wall time shows
# a profiler's threads taking a core from the program (2 cores here), CPU
# time does not.
#   bench/profile/overhead.sh ROUNDS SPIN NTLENS [NTLENS...]
set -uo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
fi
rounds=$1
spin=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
own() { # NAME CMD... : appends spin's "cpu wall" to $tmp/NAME
    local name=$1
    shift
    "$@" 2>&1 >/dev/null | awk '/^spin:/ { print $2, $5 }' >>"$tmp/$name"
}
for _ in $(seq "$rounds"); do
    own bare "$spin" 8000
    own perf perf record -q -F 4000 -g -o "$tmp/o.data" -- "$spin" 8000
    i=0
    for n in "$@"; do
        own "ntlens$i" "$n" profile -F 4000 --report modules -f csv -- "$spin" 8000
        i=$((i + 1))
    done
done
median() { # FILE COLUMN
    sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print v[int((NR + 1) / 2)] }'
}
bc=$(median "$tmp/bare" 1)
bw=$(median "$tmp/bare" 2)
printf 'spin 8000, median of %d: bare CPU %.3f s, wall %.3f s\n' "$rounds" "$bc" "$bw"
paired() { # FILE COLUMN -> median over rounds of (this run / the same round's bare run)
    paste "$1" "$tmp/bare" | awk -v c="$2" '{ print $c / $(c + 2) }' | sort -n |
        awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
row() { # LABEL FILE
    awk -v l="$1" -v c="$(median "$2" 1)" -v w="$(median "$2" 2)" -v bc="$bc" -v bw="$bw" \
        -v pc="$(paired "$2" 1)" -v pw="$(paired "$2" 2)" 'BEGIN {
        printf "%s: CPU %.3f s (+%.1f%%; paired +%.1f%%), wall %.3f s (+%.1f%%; paired +%.1f%%)\n",
               l, c, (c/bc - 1) * 100, (pc - 1) * 100, w, (w/bw - 1) * 100, (pw - 1) * 100 }'
}
row "perf record -F 4000 -g" "$tmp/perf"
i=0
for n in "$@"; do
    row "$n profile -F 4000" "$tmp/ntlens$i"
    i=$((i + 1))
done
