#!/usr/bin/env python3
"""Makes a man page from its template: @SYNOPSIS@ and @OPTIONS@ become the
sections `ntlens COMMAND --help-man` prints from the command's option table,
so the page cannot drift from what the command parses.
usage: fill-page.py NTLENS TEMPLATE OUTPUT WORD..."""
import subprocess
import sys

ntlens, template, output, words = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
roff = subprocess.run([ntlens, *words, "--help-man"], check=True, capture_output=True,
                      text=True).stdout
synopsis, sep, options = roff.partition(".SH OPTIONS\n")
if not sep or not synopsis.startswith(".SH SYNOPSIS\n"):
    sys.exit(f"fill-page.py: 'ntlens {' '.join(words)} --help-man' printed no SYNOPSIS and OPTIONS")
page = open(template).read()
for mark in ("@SYNOPSIS@\n", "@OPTIONS@\n"):
    if mark not in page:
        sys.exit(f"fill-page.py: {template} has no {mark.strip()} line")
page = page.replace("@SYNOPSIS@\n", synopsis).replace("@OPTIONS@\n", sep + options)
open(output, "w").write(page)
