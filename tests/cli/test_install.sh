#!/usr/bin/env bash
# `meson install` into a scratch DESTDIR puts a man page where man finds it for
# the top command and for every command `ntlens --help` lists (ntlens-etl-info.1
# for "etl info"), so a new command without a page fails here; an installed
# page for no listed command fails too.
#   test_install.sh BUILD_DIR   (meson test passes it; $NTLENS is the binary)
set -u
build=$1
fail=0
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT

meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null ||
    { echo "FAIL: meson install --destdir"; exit 1; }
mandir=$(meson introspect --buildoptions "$build" | /usr/bin/python3 -c '
import json, sys
opts = {o["name"]: o["value"] for o in json.load(sys.stdin)}
print(opts["prefix"].rstrip("/") + "/" + opts["mandir"])')
export MANPATH=$dest$mandir

# "  etl info         summarise ..." -> ntlens-etl-info
mapfile -t pages < <("$NTLENS" --help |
    sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\( [a-z][a-z-]*\)*\)  .*/\1/p' | tr ' ' '-' |
    sed 's/^/ntlens-/')
[ ${#pages[@]} -ge 1 ] || { echo "FAIL: ntlens --help lists no commands"; exit 1; }
pages=(ntlens "${pages[@]}")

for page in "${pages[@]}"; do
    found=$(man -w "$page" 2>/dev/null)
    if [ "$found" != "$MANPATH/man1/$page.1" ]; then
        echo "FAIL: man -w $page: '${found:-nothing}', want $MANPATH/man1/$page.1"
        fail=1
    fi
done
for f in "$MANPATH"/man1/*.1; do
    page=${f##*/}
    if ! printf '%s\n' "${pages[@]}" | grep -qx "${page%.1}"; then
        echo "FAIL: $page is installed but ntlens --help lists no such command"
        fail=1
    fi
done
[ $fail = 0 ] && echo "install: ${#pages[@]} man pages found by man -w"
exit $fail
