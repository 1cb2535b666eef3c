"""One labelled run, as typed data: :class:`Cell` (the config that trains a run, and what the
tables call it) and :class:`Annotation` (where its masks come from).

Every plan (:mod:`.plans`, :mod:`.medical_plans`, :mod:`.setting2_plans`,
:mod:`.chapter_plans`) lists its runs as cells, so a label means one thing everywhere: ``method``
is the table's method row, ``annotation`` the source of the masks (or of the teacher a student
distils), ``tau`` the threshold as a number (None where none applies). The tables the notebooks
write from cells go through :func:`to_record` and come back through :func:`from_record`: the
annotation as its enum, τ as a float (NaN where none applies).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pandas as pd

from ..config import TrainConfig
from ..methods import no_xs

TEACHER_FRACTIONS = {0.1: "teacher_10", 0.01: "teacher_1"}  # the paper's two teachers


class Annotation(str, Enum):
    """Where a run's masks (or its teacher) come from, by the names the paper's tables use: the
    ground truth, the teacher that learnt from 10% or 1% of the clean training split, random
    masks, or none (No XS, and the teachers themselves). A ``str``: it compares, hashes and
    prints as its value, so a table written from it reads as before."""

    GROUND_TRUTH = "ground_truth"
    TEACHER_10 = "teacher_10"
    TEACHER_1 = "teacher_1"
    RANDOM = "random"
    NONE = "none"

    def __str__(self) -> str:  # as its value on Python 3.10 and 3.11 alike (CSV, f-strings)
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __hash__(self) -> int:  # as its value's, so it finds a plain string's dict entries
        return str.__hash__(self)

    @classmethod
    def of_teacher(cls, fraction: float) -> Annotation:
        """The teacher that learnt from the clean ``fraction`` of the training split; the paper
        (and so the tables) knows only 10% and 1%."""
        for known, name in TEACHER_FRACTIONS.items():
            if math.isclose(fraction, known):
                return cls(name)
        raise ValueError(f"no teacher annotation for fraction {fraction!r}; the paper's teachers "
                         f"learn from {sorted(TEACHER_FRACTIONS)} of the clean training split")

    @property
    def is_teacher(self) -> bool:
        """Whether the masks come from a teacher's saliency."""
        return self in (Annotation.TEACHER_10, Annotation.TEACHER_1)


def masks_of(method: str) -> Annotation:
    """The annotation of a Setting-1 row: ground-truth masks for an XS method, none for No XS
    (``none``) and its clean-data reference (``base``)."""
    return Annotation.NONE if method in ("base", no_xs()) else Annotation.GROUND_TRUTH


@dataclass(frozen=True)
class Cell:
    """One run a chapter asks for: the config that trains it, and the labels its table shows.

    ``table``: the chapter's table the run feeds (e.g. ``"mnist_teacher"``, or a λ search's
    ``"lambda_choice_pneu_tag"``; empty until a chapter's plan names it); ``method``: the table's
    method row, an XS or distillation method, ``none`` (No XS) or ``base`` (No XS trained on clean
    data), so it differs from ``cfg.method`` only for ``base``; ``annotation``: the source of the
    masks, or the teacher a KD/AT/JT student learns from; ``tau``: the threshold the masks were
    cut at, None where none applies (ground truth, No XS, distillation)."""

    cfg: TrainConfig
    table: str = ""
    experiment: str = "mnist"
    model: str = ""
    method: str = no_xs()
    annotation: Annotation = Annotation.NONE
    tau: float | None = None
    seed: int = 0
    lam: float = 0.0
    artifact: str = "tag"

    def __post_init__(self) -> None:
        object.__setattr__(self, "annotation", Annotation(self.annotation))
        object.__setattr__(self, "tau", None if self.tau is None else float(self.tau))


def tau_text(tau: Any, none: str = "any") -> str:
    """τ as a page prints it: ``0.01``; ``none`` (default ``"any"``) where no threshold applies
    (None, NaN, or a table's legacy ``"any"``)."""
    value = pd.to_numeric(pd.Series([tau]), errors="coerce").iloc[0]
    return none if pd.isna(value) else f"{float(value):g}"


def to_record(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame of cell labels as a table writes it: ``annotation`` as its value, ``tau`` as a
    float column (NaN where none applies)."""
    out = frame.copy()
    if "annotation" in out:
        out["annotation"] = [Annotation(a).value for a in out["annotation"]]
    if "tau" in out:
        out["tau"] = pd.to_numeric(out["tau"].map(lambda v: math.nan if v is None else v),
                                   errors="coerce").astype(float)
    return out


def from_record(frame: pd.DataFrame) -> pd.DataFrame:
    """A table :func:`to_record` wrote (e.g. read back with ``pandas.read_csv``), typed again:
    ``annotation`` as :class:`Annotation`, ``tau`` as a float (NaN where none applies; a legacy
    ``"any"`` reads as NaN)."""
    out = frame.copy()
    if "annotation" in out:
        out["annotation"] = [Annotation(a) for a in out["annotation"]]
    if "tau" in out:
        out["tau"] = pd.to_numeric(out["tau"], errors="coerce").astype(float)
    return out


def labels(cells: list[Cell], *names: str) -> dict[str, list]:
    """The label columns ``names`` of a run frame of ``cells`` (they replace the configs' own):
    τ as a float (NaN where none applies), the annotation as its enum."""
    return {name: [(math.nan if c.tau is None else c.tau) if name == "tau" else getattr(c, name)
                   for c in cells] for name in names}
