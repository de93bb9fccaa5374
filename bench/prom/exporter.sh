#!/usr/bin/env bash
# ntlens exporter against reading the same data directly (msrpc-bench: one
# open source, Global snapshots back to back), from one private smbd on
# 127.0.0.1 filled by `ntlens samba-provider --once`: scrape latency and
# CPU per scrape for one target, memory per idle connected target, and
# target-scrapes per second with every target scraped in parallel.
#   bash bench/prom/exporter.sh BUILD_DIR [TARGETS]
set -euo pipefail
build=${1:?usage: exporter.sh BUILD_DIR [TARGETS]}
targets=${2:-50}
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$build/tools/ntlens/ntlens" ] && "$build/tools/ntlens/ntlens" help exporter >/dev/null 2>&1 ||
    { echo "exporter: not built (libmicrohttpd, libyaml)"; exit 0; }
dir=$(mktemp -d /tmp/ntlens-bench-exporter.XXXXXX)
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
trap '"$root/scripts/smbd-test-server" stop "$dir" >/dev/null; rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM
"$root/scripts/smbd-test-server" start "$dir" --port "$port" >/dev/null 2>&1
"$build/tools/ntlens/ntlens" samba-provider --state-dir "$dir/state" --once 2>/dev/null
export NTLENS_PASSWORD; NTLENS_PASSWORD=$(cat "$dir/password")
direct=""
if [ -x "$build/bench/msrpc/msrpc-bench" ]; then
    direct=$("$build/bench/msrpc/msrpc-bench" rate "smb://ntltest@127.0.0.1:$port" 3 |
             sed -n 's/.*snapshots_per_s=\([0-9.]*\).*/\1/p')
fi
/usr/bin/python3 "$root/bench/prom/exporter_bench.py" "$build/tools/ntlens/ntlens" "$dir" \
    "$port" "$targets" "${direct:-0}"
