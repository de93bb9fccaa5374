"""A test peer from the npm registry, fetched once into the build directory
with `npm pack` (the package's tarball: no install scripts run) and checked
against the integrity pinned in the test, so a test always runs the same
bytes. Import it with
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from npm_pack import npm_package
"""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile


def npm_package(build_dir, name, version, integrity, marker):
    """The unpacked package/ folder of name@version under build_dir; marker
    is a file in it whose presence means an earlier run unpacked it."""
    home = os.path.join(build_dir, "%s-%s" % (name, version))
    package = os.path.join(home, "package")
    if os.path.exists(os.path.join(package, marker)):
        return package
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    subprocess.run(["npm", "pack", "--loglevel=error", "%s@%s" % (name, version)], cwd=home,
                   check=True, stdout=subprocess.DEVNULL, timeout=300)
    tgz = os.path.join(home, "%s-%s.tgz" % (name, version))
    with open(tgz, "rb") as f:
        digest = "sha512-" + base64.b64encode(hashlib.sha512(f.read()).digest()).decode()
    if digest != integrity:
        sys.exit("%s-%s.tgz is not the package pinned here: %s" % (name, version, digest))
    with tarfile.open(tgz) as t:
        # Debian 12's Python has no extraction filters: refuse what one would.
        for m in t.getmembers():
            if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in m.name.split("/"):
                sys.exit("%s-%s.tgz holds %s" % (name, version, m.name))
        t.extractall(home)
    return package
