"""Check a built book before it is published: every document of its ``_toc.yml`` has a page.

    python scripts/pages_check.py _build/html            # the book of this repository
    python scripts/pages_check.py /tmp/b/book/_build/html

The table of contents is read from the book's folder (two levels above the HTML: ``<book>/_build/
html``). Exits non-zero, naming the missing pages, so scripts/pages_build.sh never hands an
incomplete site to GitHub Pages.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml


def toc_documents(toc: Path) -> list[str]:
    """Every document of a Jupyter Book ``_toc.yml`` (root first), without suffix."""
    data = yaml.safe_load(toc.read_text())
    docs = [data["root"]]

    def walk(node) -> None:
        if isinstance(node, dict):
            if "file" in node:
                docs.append(node["file"])
            for key in ("parts", "chapters", "sections"):
                walk(node.get(key) or [])
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk({k: v for k, v in data.items() if k != "root"})
    return [str(Path(d).with_suffix("")) if Path(d).suffix in (".md", ".ipynb") else d
            for d in docs]


def missing_pages(site: Path, toc: Path) -> list[str]:
    """The documents of ``toc`` without an HTML page in ``site`` (and index.html if absent)."""
    missing = [f"{doc}.html" for doc in toc_documents(toc) if not (site / f"{doc}.html").is_file()]
    if not (site / "index.html").is_file():
        missing.insert(0, "index.html")
    return missing


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("site", type=Path, help="the built HTML folder (<book>/_build/html)")
    parser.add_argument("--toc", type=Path, help="default: <site>/../../_toc.yml")
    args = parser.parse_args()
    toc = args.toc or args.site.resolve().parents[1] / "_toc.yml"
    if not args.site.is_dir():
        sys.stderr.write(f"pages_check: error: no built book at {args.site}: build it first "
                         "(make book)\n")
        return 1
    missing = missing_pages(args.site, toc)
    if missing:
        sys.stderr.write(f"pages_check: error: {len(missing)} page(s) of {toc} not built in "
                         f"{args.site}: {', '.join(missing)}\n")
        return 1
    sys.stdout.write(f"pages_check: {len(toc_documents(toc))} pages of {toc} built\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
