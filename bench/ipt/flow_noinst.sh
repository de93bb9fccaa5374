#!/usr/bin/env bash
# The whole `ntlens ipt flow --no-inst TRACE > /dev/null` command against
# ptxed --no-inst --insn-decoder's work on libipt (`bench_ipt_flow --ptxed`:
# every instruction and event printed, Debian's libipt), each a process,
# alternately, on each kAFL recording and hase-loopy: the least CPU time
# (perf stat's task-clock) of ROUNDS runs of each, and the ratio.
#   bench/ipt/flow_noinst.sh BUILD_DIR [ROUNDS] [NTLENS]
#   (NTLENS: another binary to time, e.g. a base build's)
set -uo pipefail
build=${1:?usage: flow_noinst.sh BUILD_DIR [ROUNDS] [NTLENS]}
rounds=${2:-5}
ntlens=${3:-$build/tools/ntlens/ntlens}
rival=$build/bench/ipt/bench_ipt_flow
data=$(cd "$(dirname "$0")/../.." && pwd)/../shared/data/ipt/real
command -v perf >/dev/null || { echo "flow_noinst.sh: needs perf"; exit 1; }
# CPU ms of one run of the command (stdout to /dev/null).
cpu_ms() {
    perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }'
}
for rec in kafl-foo kafl-unzip kafl-mruby kafl-avscript32 hase-loopy; do
    d=$data/$rec
    if [ -d "$d/image" ]; then
        img=(--pages "$d/image")
    else
        img=(--cpu 6/94/3 --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 266 --nom-freq 32
             --elf "$d/loopy")
    fi
    best_n=1e30 best_i=1e30
    for _ in $(seq "$rounds"); do
        n=$(cpu_ms "$ntlens" ipt flow --no-inst "${img[@]}" --pt "$d/trace.pt")
        i=$(cpu_ms "$rival" --ptxed "$d")
        best_n=$(awk -v a="$best_n" -v b="$n" 'BEGIN { print (b < a ? b : a) }')
        best_i=$(awk -v a="$best_i" -v b="$i" 'BEGIN { print (b < a ? b : a) }')
    done
    awk -v r="$rec" -v n="$best_n" -v i="$best_i" \
        'BEGIN { printf "%-16s ntlens ipt flow --no-inst %8.2f ms CPU  libipt (ptxed --insn-decoder loop) %8.2f ms  ratio %.1fx\n", r, n, i, i / n }'
done
