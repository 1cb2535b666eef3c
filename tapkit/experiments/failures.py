"""Runs that failed, as data: a worker returns a :class:`RunFailed` in place of a record (an
exception in one run, or a cluster job that died), so the runs beside it keep their results;
:func:`.executors.run_many` and :func:`.sweep.sweep` collect them and raise one
:class:`RunsFailedError` at the end, naming every failed cell. Failed runs write nothing to the
store, so a rerun trains only them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from ..config import TrainConfig
from .planner import label

SHOWN = 5  # failed cells named in the one-line summary (every one is logged)
LONGEST = 200  # characters of one error in the summary


def one_line(err: BaseException | str) -> str:
    """An exception (or an error's text) as one short line: its type and the line that says what
    went wrong: where the message carries a traceback (a cluster job's error), the exception
    line that ends it, else the message's first line."""
    lines = str(err).splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent call last)")]
    if starts:
        lines = [next((ln for ln in lines[starts[-1] + 1:] if ln and not ln[0].isspace()), "")]
    first = next((" ".join(ln.split()) for ln in lines if ln.strip()), "")
    text = first if isinstance(err, str) else ": ".join(p for p in (type(err).__name__, first) if p)
    return text if len(text) <= LONGEST else text[:LONGEST - 3] + "..."


def in_full(err: BaseException | str) -> str:
    """The error's whole message (type first), for the case :func:`one_line` had to cut it: a
    configuration error's last sentences often say what to do (e.g. where to put ImageNet
    weights)."""
    text = " ".join(str(err).split())
    return text if isinstance(err, str) else f"{type(err).__name__}: {text}"


@dataclass(frozen=True)
class RunFailed:
    """A run that did not produce a record: its key, :func:`.planner.label`, the error in one
    line and (in a sweep) its chapter."""

    key: str
    label: str
    error: str
    chapter: str = ""
    detail: str = ""  # the whole message, where ``error`` had to cut it

    @classmethod
    def of(cls, cfg: TrainConfig, err: BaseException | str) -> "RunFailed":
        short = one_line(err)
        return cls(cfg.key(), label(cfg), short,
                   detail=in_full(err) if short.endswith("...") else "")

    def in_chapter(self, chapter: str) -> "RunFailed":
        return replace(self, chapter=chapter)

    def cell(self) -> str:
        """``chapter/label/key`` (``label/key`` outside a sweep)."""
        return "/".join(p for p in (self.chapter, self.label, self.key) if p)


class RunsFailedError(RuntimeError):
    """Some runs failed (``failures``) out of ``total`` asked for; the others are stored. In a
    sweep, ``skipped`` chapters did not run because they read a failed one's results."""

    def __init__(self, failures: Sequence[RunFailed], total: int, skipped: Sequence[str] = ()):
        self.failures, self.total, self.skipped = tuple(failures), total, tuple(skipped)
        shown = "; ".join(f"{f.cell()} ({f.error})" for f in self.failures[:SHOWN])
        more = len(self.failures) - SHOWN
        text = f"{len(self.failures)} of {total} runs failed: {shown}"
        if more > 0:
            text += f"; and {more} more (each is in the log)"
        if self.skipped:
            text += f"; not run, as they read those results: {', '.join(self.skipped)}"
        text += (". The other runs are stored: running again trains only these and the runs that "
                 "wait on them.")
        cut = next((f for f in self.failures if f.detail), None)
        super().__init__(text + (f"\nThe first error in full ({cut.cell()}): {cut.detail}"
                                 if cut else ""))
