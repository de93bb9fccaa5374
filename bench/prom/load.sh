#!/usr/bin/env bash
# Fleet load: one ntlens exporter holding TARGETS connected targets (each a
# module of its own: a distinct SMB connection to one of SERVERS private
# smbd instances on loopback, filled by `samba-provider --once`), scraped by
# a real Prometheus every INTERVAL seconds for SECONDS: scrapes missed, scrape
# durations, and the memory of the exporter and its SMB helpers over time.
#   bash bench/prom/load.sh BUILD_DIR [TARGETS [SECONDS [INTERVAL [SERVERS]]]]
# (defaults 200 180 15 4; the 1,000-target run: 1000 180 15 8). NTLENS names
# the binary when it is not BUILD_DIR's. The last line ("result ...") is for
# tests/prom/exporter_load.py.
set -euo pipefail
build=${1:?usage: load.sh BUILD_DIR [TARGETS [SECONDS [INTERVAL [SERVERS]]]]}
targets=${2:-200} seconds=${3:-180} interval=${4:-15} servers=${5:-4}
root=$(cd "$(dirname "$0")/../.." && pwd)
ntlens=${NTLENS:-$build/tools/ntlens/ntlens}
[ -x "$ntlens" ] && "$ntlens" help exporter >/dev/null 2>&1 ||
    { echo "exporter: not built (libmicrohttpd, libyaml)"; exit 0; }
command -v prometheus >/dev/null || { echo "load: prometheus is not installed"; exit 0; }
dir=$(mktemp -d /tmp/ntlens-bench-load.XXXXXX)
ports=()
stop() {
    for i in $(seq 0 $((servers - 1))); do
        "$root/scripts/smbd-test-server" stop "$dir/smbd$i" >/dev/null 2>&1 || true
    done
    rm -rf "$dir"
}
trap stop EXIT
trap 'exit 1' INT TERM
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
export NTLENS_TEST_PASSWORD; NTLENS_TEST_PASSWORD="T$(od -An -N6 -tx1 /dev/urandom | tr -d " \n")!"
for i in $(seq 0 $((servers - 1))); do
    port=$(free_port)
    "$root/scripts/smbd-test-server" start "$dir/smbd$i" --port "$port" >/dev/null 2>&1
    "$ntlens" samba-provider --state-dir "$dir/smbd$i/state" --once 2>/dev/null
    ports+=("$port")
done
printf '%s\n' "$NTLENS_TEST_PASSWORD" >"$dir/pass"
/usr/bin/python3 "$root/bench/prom/load_bench.py" "$ntlens" "$dir" \
    "$targets" "$seconds" "$interval" "${ports[@]}"
