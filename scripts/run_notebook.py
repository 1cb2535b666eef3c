"""Execute one jupytext notebook with papermill; write the executed notebook only on success.

papermill leaves a partial notebook (with the traceback) when a cell fails; that file is moved
aside as ``<out>.failed.ipynb`` and the script exits non-zero, so a failing notebook fails the
build and is never published as if it were fine.

A page opens with its point: after execution the notebook's parameters cell and papermill's
injected-parameters cell are tagged ``remove-cell`` (their values as run are in the page's folded
settings, :meth:`tapkit.book.chapter.Chapter.show_settings`), and the chapter's opening (the
Markdown output :meth:`tapkit.book.chapter.Chapter.opening` marks) becomes a Markdown cell right
under the title.

    python scripts/run_notebook.py notebooks/medical_gt.py build/executed/quick/knee.ipynb \
        --profile quick -p experiment knee

``-p NAME VALUE`` passes more papermill parameters (as strings; the notebooks parse them). The
kernel runs with ``TQDM_DISABLE=1``: progress bars stay in terminals and live notebooks and never
reach a page of the book.
"""

import argparse
import logging
import os
import re
import sys
import time
from pathlib import Path

import jupytext
import nbformat
import papermill as pm

from tapkit.allocator import reusing_env


def promote_title(nb) -> bool:
    """A chapter whose title depends on a parameter (``notebooks/medical_gt.py``, one notebook
    for PNEU and KNEE) displays its title and introduction as Markdown starting with ``# ``. That
    output becomes the executed notebook's first cell, a Markdown cell, so that the page opens with
    it and Jupyter Book finds the page's title. Returns whether a title was promoted."""
    if any(c.cell_type == "markdown" and c.source.lstrip().startswith("# ") for c in nb.cells):
        return False
    for cell in nb.cells:
        for i, out in enumerate(cell.get("outputs", [])):
            text = out.get("data", {}).get("text/markdown", "")
            if out.get("output_type") == "display_data" and text.lstrip().startswith("# "):
                del cell.outputs[i]
                nb.cells.insert(0, nbformat.v4.new_markdown_cell(text))
                return True
    return False


PARAMETER_TAGS = ("parameters", "injected-parameters")
REMOVE = "remove-cell"
OPENING = "tapkit_opening"   # tapkit.book.chapter.OPENING: the output that opens the page
TITLE_MARK = "tapkit_title_mark"  # tapkit.book.chapter.TITLE_MARK: what the title adds


def _tags(cell) -> list[str]:
    return cell.setdefault("metadata", {}).setdefault("tags", [])


def hide_parameters(nb) -> int:
    """Tag the parameters cell and papermill's injected-parameters cell ``remove-cell``: the
    page shows neither (the folded settings list the values as run). Returns how many."""
    found = 0
    for cell in nb.cells:
        tags = _tags(cell)
        if any(t in tags for t in PARAMETER_TAGS):
            found += 1
            if REMOVE not in tags:
                tags.append(REMOVE)
    return found


def place_opening(nb) -> bool:
    """Move the chapter's opening (a Markdown output whose metadata carries ``OPENING``) into a
    Markdown cell right under the page's title: the title's cell is split after its ``# `` line,
    and the cell that displayed the opening is tagged ``remove-cell``. Returns whether an opening
    was found; the opening cell carries the tag ``opening`` (where the book adds its downloads).
    The opening's ``TITLE_MARK`` (the digits stand-in's) is added to the title in brackets,
    unless the title has it already."""
    for cell in nb.cells:
        for i, out in enumerate(cell.get("outputs", [])):
            if out.get("output_type") == "display_data" and out.get("metadata", {}).get(OPENING):
                text = out["data"]["text/markdown"]
                mark = out["metadata"].get(TITLE_MARK, "")
                del cell.outputs[i]
                if not cell.outputs and REMOVE not in _tags(cell):
                    _tags(cell).append(REMOVE)
                break
        else:
            continue
        break
    else:
        return False
    at = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
               and c.source.lstrip().startswith("# ")), None)
    opening = nbformat.v4.new_markdown_cell(text, metadata={"tags": ["opening"]})
    if at is None:
        nb.cells.insert(0, opening)
        return True
    title, _, rest = nb.cells[at].source.lstrip().partition("\n")
    nb.cells[at].source = title + (f" ({mark})" if mark and mark not in title else "")
    nb.cells.insert(at + 1, opening)
    if rest.strip():
        nb.cells.insert(at + 2, nbformat.v4.new_markdown_cell(rest.strip("\n")))
    return True


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def failure_text(err: BaseException, lines: int = 40) -> str:
    """What made a notebook fail, for the build's log (CI keeps the log, not the failed
    notebook): a cell's error with the last ``lines`` lines of its traceback (papermill's
    ``PapermillExecutionError``), or the exception itself (a kernel that died, a timeout)."""
    if hasattr(err, "ename") and hasattr(err, "traceback"):
        trace = ANSI.sub("", "\n".join(err.traceback)).splitlines()
        head = f"cell {getattr(err, 'exec_count', '?')}: {err.ename}: {err.evalue}"
        return "\n".join([head, *trace[-lines:]])
    return f"{type(err).__name__}: {err}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--profile", default="quick")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                        metavar=("NAME", "VALUE"), help="another papermill parameter")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    log = logging.getLogger("run_notebook")

    args.out.parent.mkdir(parents=True, exist_ok=True)
    nb = jupytext.read(args.source)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    src = args.out.with_suffix(".src.ipynb")
    tmp = args.out.with_suffix(".tmp.ipynb")
    nbformat.write(nb, src)
    # the kernel's allocator reuses freed memory (tapkit.allocator): CPU training steps would
    # otherwise spend a large share of their time faulting in fresh pages
    os.environ.update(reusing_env())
    os.environ["TQDM_DISABLE"] = "1"  # no progress bars on the book's pages (tapkit.progress)
    parameters = {"profile": args.profile, **dict(args.parameter)}
    start = time.time()
    log.info("executing %s (%s)", args.source, ", ".join(f"{k}={v}" for k, v in parameters.items()))
    try:
        pm.execute_notebook(str(src), str(tmp), parameters=parameters,
                            cwd=str(args.source.parent), kernel_name="python3",
                            progress_bar=True, log_output=False)
    except Exception as err:  # noqa: BLE001 -- every failure fails the build, with its cause
        failed = args.out.with_suffix(".failed.ipynb")
        if tmp.exists():
            tmp.replace(failed)
        log.error("FAILED: %s (partial notebook with the traceback: %s)\n%s", args.source,
                  failed, failure_text(err))
        return 1
    finally:
        src.unlink(missing_ok=True)
    executed = nbformat.read(tmp, as_version=4)
    promote_title(executed)
    hide_parameters(executed)
    if not place_opening(executed):
        log.warning("%s: no opening (chapter.opening) found; the page opens with its prose",
                    args.source)
    nbformat.write(executed, tmp)
    tmp.replace(args.out)
    log.info("done %s in %.0f s", args.source, time.time() - start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
