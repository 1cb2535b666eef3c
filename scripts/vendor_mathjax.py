"""Vendor MathJax into the book, so its equations render offline.

Sphinx's mathjax extension loads MathJax 3 (``es5/tex-mml-chtml.js``) from a CDN by default: a
book opened without internet shows raw TeX (``\\mathcal{D}(M, l)``) on the method page. Instead,
at build time this script fetches the npm package ``mathjax`` with ``npm pack`` (once; cached under
``build/npm/`` like the widget package of ``scripts/vendor_widgets.py``, whose fetch it shares),
checks the tarball against the pinned integrity hash, and copies into ``book/_static/mathjax/``:

* ``tex-mml-chtml.js``: the bundle Sphinx's default URL names (TeX and MathML input, CommonHTML
  output, the menu and assistive MathML). ``_config.yml`` sets ``mathjax_path`` to
  ``mathjax/tex-mml-chtml.js`` (relative to ``_static``), so only pages with equations load it;
* ``output/chtml/fonts/woff-v2/*.woff``: the fonts its CommonHTML output loads, from the folder
  next to the bundle (MathJax finds its root from the script's own URL);
* ``input/tex/extensions/*.js``: the TeX packages its ``autoload`` extension loads on first use
  (``\\cancel``, ``\\bbox``, ``\\ce``, ...), again relative to the bundle; ``all-packages.js``
  (0.7 MB, never autoloaded) is left out;
* its licence file.

The rest of the package (other bundles, the SVG output, the speech-rule engine of the menu's
optional explorer) is not copied. Files under ``mathjax/`` that are not the above are removed.

Idempotent: with a warm cache and up-to-date outputs it uses no network and writes nothing.

    python scripts/vendor_mathjax.py                       # the pinned version
    python scripts/vendor_mathjax.py --version 3.2.1       # another 3.x (no integrity pin)
"""

from __future__ import annotations

import io
import logging
import sys
import tarfile
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vendor_widgets import ROOT, npm_tarball, run_cli, write_if_changed  # noqa: E402  (a sibling script)

PACKAGE = "mathjax"
# 3.x: Sphinx's mathjax extension writes MathJax 3 configuration (window.MathJax = {...}) and
# myst-parser's dollarmath adds to it; MathJax 4 renamed the bundles and fonts.
VERSION = "3.2.2"
INTEGRITY = {
    "3.2.2": "sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw==",
}
ES5 = "package/es5/"
BUNDLE = "tex-mml-chtml.js"                    # relative to es5/, as in Sphinx's default URL
FONTS = "output/chtml/fonts/woff-v2/"          # MathJax's default chtml fontURL
EXTENSIONS = "input/tex/extensions/"           # what autoload and \require load
LEFT_OUT = {"input/tex/extensions/all-packages.js"}
LICENCE = "package/LICENSE"
SUBDIR = "mathjax"                             # book/_static/mathjax/

log = logging.getLogger("vendor_mathjax")


def wanted(names: list[str]) -> dict[str, str]:
    """Tarball member -> path under ``mathjax/``, for the files this book needs."""
    files = {ES5 + BUNDLE: BUNDLE, LICENCE: "LICENSE"}
    for name in names:
        rel = name[len(ES5):] if name.startswith(ES5) else None
        if rel is None or rel in LEFT_OUT:
            continue
        if (rel.startswith(FONTS) and rel.endswith(".woff")) or (
                rel.startswith(EXTENSIONS) and rel.endswith(".js")):
            files[name] = rel
    return files


def vendor(version: str = VERSION, cache: Path | None = None, static: Path | None = None) -> list[Path]:
    """Copy the bundle of MathJax ``version`` (with its fonts, TeX extensions and licence) into
    ``static/mathjax/``; return the files written or removed."""
    cache = cache or ROOT / "build" / "npm"
    target = (static or ROOT / "book" / "_static") / SUBDIR
    data = npm_tarball(PACKAGE, version, cache, INTEGRITY.get(version))
    bodies: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        names = tar.getnames()
        for member, rel in wanted(names).items():
            body = tar.extractfile(member) if member in names else None
            if body is None:
                raise SystemExit(f"{PACKAGE}@{version} has no {member}")
            bodies[rel] = body.read()
    if not any(rel.startswith(FONTS) for rel in bodies):
        raise SystemExit(f"{PACKAGE}@{version} has no fonts under es5/{FONTS}")
    changed = []
    for rel, body in bodies.items():
        path = target / PurePosixPath(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        if write_if_changed(path, body):
            changed.append(path)
    keep = {target / PurePosixPath(rel) for rel in bodies}
    for stale in sorted(target.rglob("*"), reverse=True):  # files first, then emptied folders
        if stale.is_file() and stale not in keep:
            stale.unlink()
            changed.append(stale)
        elif stale.is_dir() and not any(stale.iterdir()):
            stale.rmdir()
    return changed


def main() -> int:
    return run_cli(__doc__, PACKAGE, VERSION, SUBDIR, "3", "Sphinx's mathjax extension and "
                   "_config.yml's mathjax_path expect MathJax 3.x", vendor)


if __name__ == "__main__":
    sys.exit(main())
