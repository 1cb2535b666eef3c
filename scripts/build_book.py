"""Copy the executed notebooks of a profile into book/notebooks/, write the intro's table of what
was reproduced, and build the book strictly.

    python scripts/build_book.py --profile quick
    python scripts/build_book.py --profile smoke --executed /tmp/b/executed \\
        --results /tmp/b/results --into /tmp/b/book       # a book in another folder

The intro's table (``book/_generated/status.md``, included by ``book/intro.md``) is made from the
status records the chapters write when they run to their end
(``results/<profile>/tables/status_<chapter>.json``, :meth:`tapkit.book.chapter.Chapter.finish`): a
chapter without a record is listed as not run. With ``--into`` the book's sources (``_config.yml``,
``_toc.yml``, ``book/``) are copied there and the book is built in that folder
(``<into>/_build/html``), leaving the repository's own book alone.

Every chapter offers the tables it wrote for download: the status record names them, they are
copied beside the page (``book/notebooks/tables/<chapter>/``) and linked with ``{download}``
roles in the page's opening, so Sphinx ships them in ``_downloads/`` and the links work offline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Mapping

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's tapkit, also when another is installed
from tapkit.book.build_time import ChapterTime, chapter_time  # noqa: E402
SKIP = (".failed.ipynb", ".tmp.ipynb", ".src.ipynb")


def chapters(toc: Path) -> list[str]:
    """The notebook chapters of ``_toc.yml`` in their order (names without folder)."""
    return list(parts(toc))


def status_table(names: list[str], tables: Path, profile: str,
                 times: Mapping[str, ChapterTime | None] | None = None) -> str:
    """The intro's Markdown table: one row per chapter, from its status record (or "not run"),
    with the chapter's build time and its slowest section where ``times`` has them; then the
    chapters' total."""
    times = times or {}
    rows = ["| chapter | profile | data | seeds | status | build time (slowest section) |",
            "|---|---|---|---|---|---|"]
    for name in names:
        path = tables / f"status_{name}.json"
        link = f"{{doc}}`notebooks/{name}`"
        took = times[name].describe() if times.get(name) else "—"
        if not path.exists():
            rows.append(f"| {link} | {profile} | — | — | **not run** | {took} |")
            continue
        r = json.loads(path.read_text())
        kind = {True: " (stand-in)", False: " (real)"}.get(r["standin"], "")
        data = f"{r['data']}{kind}"
        seeds = ", ".join(map(str, r["seeds"])) or "—"
        status = r["status"] + (f": {r['note']}" if r.get("note") else "")
        rows.append(f"| {link} | {r['profile']} | {data} | {seeds} | {status} | {took} |")
    known = [t.seconds for t in times.values() if t is not None]
    total = (f"\nBuild time: the chapters' notebooks ran {sum(known) / 60:,.1f} minutes, summed "
             "over chapters (the Makefile runs two side by side), as papermill recorded each "
             "cell's duration.\n" if known else "")
    return "\n".join(rows) + "\n" + total


def chapter_tables(tables: Path, name: str) -> list[Path]:
    """The CSV tables (with their JSON provenance, where written) that chapter ``name`` wrote,
    as its status record lists them; none for a chapter without a record."""
    status = tables / f"status_{name}.json"
    if not status.exists():
        return []
    files = []
    for table in json.loads(status.read_text()).get("tables", []):
        files += [p for p in (tables / f"{table}.csv", tables / f"{table}.json") if p.exists()]
    return files


def downloads_line(name: str, files: list[Path]) -> str:
    """Markdown: a ``{download}`` link per table of chapter ``name`` (copied to
    ``tables/<name>/`` beside its page), the JSON provenance beside its CSV."""
    links = []
    for f in files:
        link = f"{{download}}`{f.name} <tables/{name}/{f.name}>`"
        if f.suffix == ".json" and links and links[-1].startswith(f"{{download}}`{f.stem}.csv"):
            links[-1] += f" ({{download}}`provenance <tables/{name}/{f.name}>`)"
        else:
            links.append(link)
    return "**Tables of this page** (CSV; their provenance as JSON): " + " · ".join(links)


def add_downloads(nb_path: Path, files: list[Path]) -> None:
    """Copy ``files`` beside the notebook's page and link them under its opening (the cell
    tagged ``opening`` by ``scripts/run_notebook.py``; else under the first cell)."""
    name = nb_path.stem
    folder = nb_path.parent / "tables" / name
    folder.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copy2(f, folder / f.name)
    nb = nbformat.read(nb_path, as_version=4)
    line = downloads_line(name, files)
    cell = next((c for c in nb.cells if "opening" in c.get("metadata", {}).get("tags", [])), None)
    if cell is not None:
        cell.source = cell.source.rstrip() + "\n\n" + line
    else:
        nb.cells.insert(1 if nb.cells else 0, nbformat.v4.new_markdown_cell(line))
    nbformat.write(nb, nb_path)


def prepare(book: Path, executed: Path, results: Path, profile: str) -> None:
    """Executed notebooks into ``book/book/notebooks`` with their tables' download links, the
    status table into ``book/_generated``."""
    target = book / "book" / "notebooks"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for nb in sorted(executed.glob("*.ipynb")):
        if not nb.name.endswith(SKIP):
            shutil.copy2(nb, target / nb.name)
            files = chapter_tables(results / profile / "tables", nb.stem)
            if files:
                add_downloads(target / nb.name, files)
    generated = book / "book" / "_generated"
    generated.mkdir(exist_ok=True)
    times = {nb.stem: chapter_time(nbformat.read(nb, as_version=4))
             for nb in executed.glob("*.ipynb") if not nb.name.endswith(SKIP)}
    toc = parts(book / "_toc.yml")  # one reading of _toc.yml: its chapters and their parts
    table = status_table(list(toc), results / profile / "tables", profile, times)
    (generated / "status.md").write_text(table)
    (generated / "verdicts.md").write_text(verdicts(results / profile / "tables", toc))


def parts(toc: Path) -> dict[str, str]:
    """Each notebook chapter of ``_toc.yml`` (name without folder) in the book's order, and the
    caption of the part it is in ("other" outside every part)."""
    found: dict[str, str] = {}

    def walk(node, caption: str) -> None:
        if isinstance(node, dict):
            caption = node.get("caption", caption)
            if str(node.get("file", "")).startswith("book/notebooks/"):
                found[Path(node["file"]).name] = caption
            for value in node.values():
                walk(value, caption)
        elif isinstance(node, list):
            for child in node:
                walk(child, caption)

    walk(yaml.safe_load(toc.read_text()), "other")
    return found


def verdicts(tables: Path, parts: dict[str, str] | None = None) -> str:
    """The intro's verdict summary from the report's claim table (``claims.csv`` and its
    provenance), with the verdicts counted per part of the book (``parts``, :func:`parts`), or
    a line saying the report did not run."""
    import pandas as pd
    from tapkit.book.claim_table import first_page

    path = tables / "claims.csv"
    if not path.exists():
        return first_page(None)
    meta = path.with_suffix(".json")
    return first_page(pd.read_csv(path, keep_default_na=False),
                      json.loads(meta.read_text()) if meta.exists() else {}, parts)


def copy_sources(into: Path) -> None:
    """The book's sources (config, table of contents, prose) into another folder."""
    into.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(ROOT / name, into / name)
    if (into / "book").exists():
        shutil.rmtree(into / "book")
    shutil.copytree(ROOT / "book", into / "book",
                    ignore=shutil.ignore_patterns("notebooks", "_generated"))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--executed", type=Path, help="default: build/executed/<profile>")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--into", type=Path, help="build the book in this folder instead")
    args = parser.parse_args()
    executed = args.executed or ROOT / "build" / "executed" / args.profile
    book = args.into.resolve() if args.into else ROOT
    # the widget bundle and MathJax, into the repository's book/_static (copied with the
    # sources), so that the built book needs no CDN
    for vendor in (ROOT / "scripts" / "vendor_widgets.py", ROOT / "scripts" / "vendor_mathjax.py"):
        if vendor.exists():
            (ROOT / "book" / "_static").mkdir(exist_ok=True)
            subprocess.run([sys.executable, str(vendor)], check=True, cwd=ROOT)
    if args.into:
        copy_sources(book)
    prepare(book, executed, args.results, args.profile)
    cmd = [str(Path(sys.executable).parent / "jupyter-book"), "build", str(book), "-W", "-n",
           "--keep-going"]
    # the API page (book/api.md) documents this checkout's tapkit, also when another is installed
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run(cmd, cwd=book, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
