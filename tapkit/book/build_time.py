"""Where a build's time goes (issue: time spent where it is needed): each executed chapter's
wall time and the section of the page that took most of it, read from the per-cell durations
papermill records in an executed notebook (``metadata.papermill.duration``).

A section is the text of the last Markdown heading above a code cell (``## ...``); code before
any heading counts under the chapter's set-up. The intro's table of chapters shows both columns,
so a reader sees which chapter, and which part of it, a faster build would have to cut.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

SETUP = "set-up"


@dataclass(frozen=True)
class ChapterTime:
    """One executed chapter's time: ``seconds`` in all (papermill's notebook duration, else the
    sum of its cells'), and the section of most time with its seconds."""

    seconds: float
    slowest: str
    slowest_seconds: float

    def describe(self) -> str:
        """``"412 s (pneu runs: 380 s)"`` for the table of chapters."""
        return f"{self.seconds:,.0f} s ({self.slowest}: {self.slowest_seconds:,.0f} s)"


def _duration(meta: Any) -> float | None:
    value = (meta or {}).get("papermill", {}).get("duration")
    return float(value) if isinstance(value, (int, float)) else None


def _heading(source: str) -> str | None:
    for line in source.splitlines():
        text = line.strip()
        if text.startswith("#"):
            return text.lstrip("#").strip() or None
    return None


def section_seconds(cells: Iterable[Any]) -> dict[str, float]:
    """Seconds per section of a notebook's cells, in page order (a section is named by the
    heading above it; :data:`SETUP` before the first)."""
    totals: dict[str, float] = {}
    section = SETUP
    for cell in cells:
        if cell.get("cell_type") == "markdown":
            section = _heading(cell.get("source", "")) or section
            continue
        seconds = _duration(cell.get("metadata"))
        if seconds is not None:
            totals[section] = totals.get(section, 0.0) + seconds
    return totals


def chapter_time(nb: Any) -> ChapterTime | None:
    """The :class:`ChapterTime` of an executed notebook (an ``nbformat`` node or its dict), or
    ``None`` when papermill recorded no durations (a notebook that was not executed by it)."""
    sections = section_seconds(nb.get("cells", []))
    total = _duration(nb.get("metadata"))
    if total is None and not sections:
        return None
    total = total if total is not None else sum(sections.values())
    name, seconds = max(sections.items(), key=lambda kv: kv[1], default=(SETUP, 0.0))
    return ChapterTime(total, name, seconds)
