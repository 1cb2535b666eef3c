"""Where a build's time goes: chapter and section seconds from papermill's cell durations
(tapkit.book.build_time), on notebooks made here."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tapkit.book.build_time import SETUP, ChapterTime, chapter_time, section_seconds


def _code(seconds: float | None):
    cell = new_code_cell("x = 1")
    if seconds is not None:
        cell.metadata["papermill"] = {"duration": seconds}
    return cell


def _notebook(total: float | None = None):
    nb = new_notebook(cells=[_code(1.5), new_markdown_cell("# PNEU\nprose"), _code(2.0),
                             new_markdown_cell("plain prose keeps the section"), _code(3.25),
                             new_markdown_cell("## Setting 1 runs"), _code(10.0), _code(None),
                             new_markdown_cell("### Figure"), _code(0.5)])
    if total is not None:
        nb.metadata["papermill"] = {"duration": total}
    return nb


def test_sections_sum_their_cells_under_the_last_heading():
    assert section_seconds(_notebook().cells) == {SETUP: 1.5, "PNEU": 5.25,
                                                  "Setting 1 runs": 10.0, "Figure": 0.5}


def test_chapter_time_takes_papermills_total_and_the_slowest_section():
    t = chapter_time(_notebook(total=20.0))
    assert t == ChapterTime(20.0, "Setting 1 runs", 10.0)
    assert t.describe() == "20 s (Setting 1 runs: 10 s)"
    # without papermill's notebook total, the cells' sum; a round trip through nbformat keeps it
    nb = nbformat.reads(nbformat.writes(_notebook()), as_version=4)
    assert chapter_time(nb) == ChapterTime(17.25, "Setting 1 runs", 10.0)


def test_a_notebook_papermill_did_not_run_has_no_time():
    nb = new_notebook(cells=[new_markdown_cell("# T"), _code(None)])
    assert chapter_time(nb) is None
