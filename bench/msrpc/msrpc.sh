#!/usr/bin/env bash
# ntlens against python3-impacket's rrp, fetching HKEY_PERFORMANCE_DATA
# "Global" from the same private smbd on 127.0.0.1 (store filled once by
# `ntlens samba-provider --once`): time to first snapshot, snapshots per
# second on one open handle, and 50 parallel sources.
#   bash bench/msrpc/msrpc.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: msrpc.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/ntlens-bench-smbd.XXXXXX)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
trap '"$root/scripts/smbd-test-server" stop "$dir" >/dev/null; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM
"$root/scripts/smbd-test-server" start "$dir" --port "$port" >/dev/null 2>&1
"$build/tools/ntlens/ntlens" samba-provider --state-dir "$dir/state" --once 2>/dev/null
export NTLENS_PASSWORD; NTLENS_PASSWORD=$(cat "$dir/password")
spec="smb://ntltest@127.0.0.1:$port"
ours=$build/bench/msrpc/msrpc-bench
rival="/usr/bin/python3 $root/bench/msrpc/impacket_rival.py"
val() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

o_first=$($ours first "$spec" 11)
# impacket sends the whole lpData buffer with each request: give it the
# block's size plus room, as a careful client would, not a blind 1 MiB.
export BENCH_BUFFER=$(( $(echo "$o_first" | sed -n 's/.*bytes=\([0-9]*\).*/\1/p') + 8192 ))
i_first=$($rival first "$port" 5)
o_rate=$($ours rate "$spec" 3); i_rate=$($rival rate "$port" 3)
o_par=$($ours parallel "$spec" 50); i_par=$($rival parallel "$port" 50)
bytes=$(echo "$o_first" | val bytes)

echo "Global block: $bytes bytes from smbd $(/usr/sbin/smbd -V | cut -d' ' -f2), 127.0.0.1"
printf '%-34s %12s %12s %8s\n' "" ntlens impacket ratio
r() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", (b > 0 ? a / b : 0) }'; }
printf '%-34s %10s ms %9s ms %8s\n' "time to first snapshot (median)" \
    "$(echo "$o_first" | val first_ms)" "$(echo "$i_first" | val first_ms)" \
    "$(r "$(echo "$i_first" | val first_ms)" "$(echo "$o_first" | val first_ms)")"
printf '%-34s %12s %12s %8s\n' "snapshots/s on one handle" \
    "$(echo "$o_rate" | val snapshots_per_s)" "$(echo "$i_rate" | val snapshots_per_s)" \
    "$(r "$(echo "$o_rate" | val snapshots_per_s)" "$(echo "$i_rate" | val snapshots_per_s)")"
printf '%-34s %10s s %10s s %8s\n' "50 parallel sources: total" \
    "$(echo "$o_par" | val total_s)" "$(echo "$i_par" | val total_s)" \
    "$(r "$(echo "$i_par" | val total_s)" "$(echo "$o_par" | val total_s)")"
printf '%-34s %9s MB %9s MB\n' "50 parallel sources: peak RSS" \
    "$(echo "$o_par" | val peak_rss_mb)" "$(echo "$i_par" | val peak_rss_mb)"
printf '%-34s %9s MB %9s MB\n' "  with SMB helper processes (PSS)" \
    "$(echo "$o_par" | val pss_with_helpers_mb)" "$(echo "$i_par" | val peak_rss_mb)"
echo "failed: ntlens $(echo "$o_par" | val failed), impacket $(echo "$i_par" | val failed)"
