# Ledger mode of scripts/fuzz (sourced by it): fuzzing that accumulates across sessions.
#
# Each session starts on a fresh machine and only the repository persists, so the
# state of the long run is committed: fuzz/ledger.tsv (one line per slice: harness,
# date, CPU seconds, execs, edges, findings) and the corpora in fuzz/corpus/NAME.
# Harnesses with the least accumulated CPU time run first, each for a slice of CPU
# time measured on the fuzzer process itself (/proc/PID/stat while it runs, the
# shell's `times` once it is reaped): the machine is shared and niced, so wall time
# says nothing about how much fuzzing a harness got. libFuzzer's -max_total_time is
# wall-clock, so it only bounds the slice by the session's wall budget.
# After a slice, the inputs that add coverage are merged (-merge=1) into
# fuzz/corpus/NAME, so the next session starts where this one stopped; merged inputs
# (named by their SHA-1) are capped at $ledger_cap_kib KiB per harness, and the
# hand-named entries (seeds, regression inputs) are always kept.
# A finding stops the run: running slices end early, nothing new starts, and the
# artifact stays in build-fuzz/artifacts/.

ledger=fuzz/ledger.tsv
ledger_cap_kib=512
ledger_stop=build-fuzz/ledger-stop
# Made by a slice that found something; the stop file alone is an early end
# asked for by hand (touch build-fuzz/ledger-stop).
ledger_found=build-fuzz/ledger-found
# Wall time kept at the end of the budget for the last merges.
ledger_reserve=180

# Accumulated CPU seconds of NAME in the ledger.
ledger_cpu() {
    awk -F'\t' -v n="$1" '$1 == n { s += $3 } END { print s + 0 }' "$ledger"
}

# The harness with the least accumulated CPU time that is not in "$@" (running ones).
ledger_next() {
    local name best="" best_cpu="" cpu
    for name in "${names[@]}"; do
        printf '%s\n' "$@" | grep -qx "$name" && continue
        cpu=$(ledger_cpu "$name")
        if [ -z "$best" ] || [ "$cpu" -lt "$best_cpu" ]; then best=$name best_cpu=$cpu; fi
    done
    echo "$best"
}

# CPU ticks (user + system) of a live process; empty once it has exited.
proc_ticks() {
    local f
    read -r -a f 2>/dev/null < "/proc/$1/stat" || return 0
    # Field 3 is the state; a zombie has exited.
    [ "${f[2]}" = Z ] || echo $(( f[13] + f[14] ))
}

# Runs NAME until it has used SLICE CPU seconds, the wall deadline passes or another
# slice finds something. Prints the CPU seconds the fuzzer process used.
ledger_fuzz() {
    local name=$1 slice=$2 deadline=$3 exe=build-fuzz/fuzz/*/fuzz_$1 hz pid ticks rc
    hz=$(getconf CLK_TCK)
    # shellcheck disable=SC2086
    $exe -max_total_time=$(( deadline - $(date +%s) )) -timeout=25 -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -artifact_prefix="build-fuzz/artifacts/$name-" \
        -print_final_stats=1 "${extra[@]}" "build-fuzz/corpus/$name" "fuzz/corpus/$name" \
        $(ls -d "build-fuzz/seeds/$name" 2>/dev/null) > "build-fuzz/$name.log" 2>&1 &
    pid=$!
    while sleep 5; do
        ticks=$(proc_ticks "$pid")
        [ -n "$ticks" ] || break
        if [ "$ticks" -ge $(( slice * hz )) ] || [ -e "$ledger_stop" ] ||
            [ "$(date +%s)" -ge "$deadline" ]; then
            kill -INT "$pid" 2>/dev/null
        fi
    done
    wait "$pid"; rc=$?
    # 72 is libFuzzer's exit code when interrupted: the slice ended, nothing found.
    [ "$rc" -eq 0 ] || [ "$rc" -eq 72 ] || { touch "$ledger_stop"; echo "fuzz $name: exit $rc" >&2; }
    # The second line of `times` is the CPU time of this shell's reaped children
    # (a pipe would run `times` in a fresh subshell, which has none).
    times > "build-fuzz/$name.times"
    awk 'function s(v, a) { sub(/s$/, "", v); split(v, a, "m"); return a[1] * 60 + a[2] }
        NR == 2 { printf "%.0f\n", s($1) + s($2) }' "build-fuzz/$name.times"
}

# Total KiB of the merged (SHA-1 named) inputs in DIR.
merged_kib() {
    find "$1" -maxdepth 1 -type f -regextype egrep -regex '.*/[0-9a-f]{40}' -printf '%s\n' |
        awk '{ s += $1 } END { print int((s + 1023) / 1024) }'
}

# Merges the slice's new inputs that add coverage into fuzz/corpus/NAME. Over the cap,
# the merged inputs are minimised afresh (libFuzzer prefers the smallest input for each
# feature), then the largest are dropped until they fit.
ledger_merge() {
    local name=$1 dir=fuzz/corpus/$1 tmp=build-fuzz/merge/$1 len f
    len=$(printf '%s\n' "${extra[@]}" | grep -m1 '^-max_len=')
    mkdir -p "$dir"
    "build-fuzz/fuzz/"*/"fuzz_$name" -merge=1 $len "$dir" "build-fuzz/corpus/$name" \
        > "build-fuzz/$name.merge.log" 2>&1 || echo "fuzz $name: merge failed (build-fuzz/$name.merge.log)"
    [ "$(merged_kib "$dir")" -le "$ledger_cap_kib" ] && return
    rm -rf "$tmp"; mkdir -p "$tmp/new" "$tmp/old"
    find "$dir" -maxdepth 1 -type f -regextype egrep -regex '.*/[0-9a-f]{40}' -exec mv -t "$tmp/old" {} +
    find "$dir" -maxdepth 1 -type f -exec cp -t "$tmp/new" {} +
    "build-fuzz/fuzz/"*/"fuzz_$name" -merge=1 $len "$tmp/new" "$tmp/old" "build-fuzz/corpus/$name" \
        >> "build-fuzz/$name.merge.log" 2>&1
    for f in $(ls -S "$tmp/new" | grep -E '^[0-9a-f]{40}$'); do
        [ "$(merged_kib "$tmp/new")" -le "$ledger_cap_kib" ] && break
        rm "$tmp/new/$f"
        echo "fuzz $name: corpus over ${ledger_cap_kib} KiB, dropped $f"
    done
    find "$tmp/new" -maxdepth 1 -type f -regextype egrep -regex '.*/[0-9a-f]{40}' -exec mv -t "$dir" {} +
    rm -rf "$tmp"
}

# Artifacts of NAME that are findings: a crash, leak, timeout or out-of-memory input.
# libFuzzer also writes each input slower than 10 s (slow-unit-*): on a loaded
# machine those are its logs' business, not a finding (a hang is a timeout).
ledger_artifacts() {
    find build-fuzz/artifacts -name "$1-*" ! -name "$1-slow-unit-*" | wc -l
}

# One slice of NAME: fuzz, merge, append its line to the ledger.
ledger_slice() {
    local name=$1 slice=$2 deadline=$3 cpu runs cov found before
    mkdir -p "build-fuzz/corpus/$name"
    before=$(ledger_artifacts "$name")
    mapfile -t extra < <(options "$name")
    cpu=$(ledger_fuzz "$name" "$slice" "$deadline" 2> "build-fuzz/$name.err")
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/$name.log" | tail -1 | grep -o '[0-9]*$')
    cov=$(grep -o 'cov: [0-9]*' "build-fuzz/$name.log" | tail -1 | grep -o '[0-9]*')
    found=$(( $(ledger_artifacts "$name") - before ))
    # A fuzzer that failed without leaving an artifact still found something.
    [ "$found" -gt 0 ] || ! grep -q "fuzz $name: exit" "build-fuzz/$name.err" || found=1
    [ "$found" -eq 0 ] || touch "$ledger_stop" "$ledger_found"
    ledger_merge "$name"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(date -u +%Y-%m-%dT%H:%MZ)" "$cpu" \
        "${runs:-0}" "${cov:-0}" "$found" >> "$ledger"
    echo "fuzz $name: ${cpu} CPU s, ${runs:-?} execs, coverage ${cov:-?}, findings $found"
    [ "$found" -eq 0 ] || grep -E 'ERROR|SUMMARY|runtime error' "build-fuzz/$name.log" | head -5
}

# Runs slices, least fuzzed harness first, until the wall budget is spent.
ledger_main() {
    local budget=$1 slice=$2 end name
    end=$(( $(date +%s) + budget - ledger_reserve ))
    [ -f "$ledger" ] || printf 'harness\tdate\tcpu_seconds\texecs\tedges\tfindings\n' > "$ledger"
    rm -f "$ledger_stop" "$ledger_found"
    declare -A pids=()
    # A slice starts only with some of it left to run (5 minutes, or all of a short one).
    # Checked after each wait for a free job, not before it.
    for (( ; ; )); do
        while [ "${#pids[@]}" -ge "$jobs" ]; do
            wait -n
            for name in "${!pids[@]}"; do kill -0 "${pids[$name]}" 2>/dev/null || unset "pids[$name]"; done
        done
        [ ! -e "$ledger_stop" ] && [ $(( end - $(date +%s) )) -ge $(( slice < 300 ? slice : 300 )) ] || break
        name=$(ledger_next "${!pids[@]}")
        [ -n "$name" ] || break
        ledger_slice "$name" "$slice" "$end" &
        pids[$name]=$!
        sleep 1
    done
    wait
    ledger_table
    [ ! -e "$ledger_found" ] || { echo "fuzz: a slice found something, see build-fuzz/artifacts/"; return 1; }
    [ ! -e "$ledger_stop" ] || echo "fuzz: ended early by $ledger_stop, nothing found"
}

# Rewrites the table between the markers in docs/fuzzing.md from the ledger.
ledger_table() {
    local doc=docs/fuzzing.md begin='<!-- ledger table' end='<!-- end of ledger table -->' table
    local all
    all=$(find build-fuzz/fuzz -type f -name 'fuzz_*' -perm -u+x -printf '%f\n' | sed 's/^fuzz_//' | sort)
    table=$(awk -F'\t' -v all="$(echo $all)" '
        NR > 1 { cpu[$1] += $3; n[$1]++; ex[$1] += $4; cov[$1] = $5; f[$1] += $6; d[$1] = $2 }
        END {
            print "| harness | CPU-hours | slices | execs | edges (last slice) | findings | last run | 1 h reached |"
            print "|---|---|---|---|---|---|---|---|"
            k = split(all, h, " ")
            for (i = 1; i <= k; i++) {
                x = h[i]; tot += cpu[x]; if (cpu[x] >= 3600) done++
                printf "| %s | %.2f | %d | %d | %d | %d | %s | %s |\n", x, cpu[x] / 3600, n[x], \
                    ex[x], cov[x], f[x], (x in d) ? d[x] : "never", (cpu[x] >= 3600) ? "yes" : "no"
            }
            printf "\n%d of %d harnesses have reached 1 CPU-hour; %.1f CPU-hours in all.\n", done, k, tot / 3600
        }' "$ledger")
    awk -v begin="$begin" -v end="$end" -v table="$table" '
        index($0, begin) == 1 { print; print ""; print table; print ""; skip = 1; next }
        index($0, end) == 1 { skip = 0 }
        !skip' "$doc" > "$doc.tmp" && mv "$doc.tmp" "$doc"
    echo "fuzz: ledger table in $doc"
}
