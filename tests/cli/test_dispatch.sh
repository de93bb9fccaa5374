#!/usr/bin/env bash
# The dispatcher: help, version, unknown commands and groups, exit codes.
set -u
fail=0
expect() { # CODE DESCRIPTION CMD...
    local want=$1 what=$2; shift 2
    "$@" >/dev/null 2>&1
    local got=$?
    if [ "$got" != "$want" ]; then echo "FAIL: $what: exit $got, want $want"; fail=1; fi
}
expect 0 "--help" "$NTLENS" --help
expect 0 "--version" "$NTLENS" --version
expect 2 "no command" "$NTLENS"
expect 2 "unknown command" "$NTLENS" frobnicate
expect 2 "group without command" "$NTLENS" ipt
expect 0 "group --help" "$NTLENS" etl --help
expect 2 "unknown group command" "$NTLENS" etl frobnicate
"$NTLENS" --help | grep -q '^  ipt dump ' || { echo "FAIL: --help lists no 'ipt dump'"; fail=1; }
# Every listed command answers --help with exit 0.
while read -r cmd; do
    # shellcheck disable=SC2086
    expect 0 "$cmd --help" "$NTLENS" $cmd --help
done < <("$NTLENS" --help | sed -n 's/^  \([a-z-]*\( [a-z]*\)\?\)  .*/\1/p' | sed 's/ *$//')
[ $fail = 0 ] && echo "dispatch: ok"
exit $fail
