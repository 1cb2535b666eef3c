"""Which of a chapter's students a claim of the paper reads, declared in its registry entry
(:attr:`.claim_specs.ClaimSpec.needs`), so that the report tells *not run* (this build trained
none of them) from *not testable here* (they ran, and a precondition failed): issue 36 allows
"not run" only for cells that never ran. A claim about KNEE's Setting-2 students, say, is *not
run* in a build whose Setting 2 trained on PNEU only, whatever data either ran on."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .labels import label


@dataclass(frozen=True)
class Needs:
    """The students a claim reads in the table ``table`` (a chapter's summary or per-run table):
    rows of ``experiment`` (None: any; a table of one data set has no such column), of any of
    ``models``, any of ``methods`` (empty: the claim's own, claims.csv's ``methods``) and any of
    ``annotations`` (empty: any), trained at ``taus`` distinct τ or more (a trend over τ needs
    two)."""

    table: str = "medical_teacher"
    experiment: str | None = None
    models: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    annotations: tuple[str, ...] = ()
    taus: int = 1

    def missing(self, frame: pd.DataFrame, methods: tuple[str, ...] = ()) -> str:
        """Why ``frame`` (the table) holds none of the students the claim reads (``methods``:
        the claim's, where :attr:`methods` names none), naming what the build trained instead;
        ``""`` when it holds some."""
        rows = frame
        for what, column, wanted in (
                ("data set", "experiment", (self.experiment,) if self.experiment else ()),
                ("architecture", "model", self.models),
                ("method", _first(frame, "method", "case"), self.methods or methods),
                ("masks", _first(frame, "annotation", "teacher"), self.annotations)):
            if not wanted or column not in rows:
                continue
            kept = rows[rows[column].astype(str).isin(wanted)]
            if kept.empty:
                have = ", ".join(label(v) for v in dict.fromkeys(rows[column].astype(str)))
                return (f"this build trained no {' or '.join(label(w) for w in wanted)} "
                        f"{'student' if what != 'data set' else 'students'} for it "
                        f"(its {what}{'' if what == 'masks' else 's'}: {have})")
            rows = kept
        if self.taus > 1 and "tau" in rows:
            taus = sorted(pd.to_numeric(rows["tau"], errors="coerce").dropna().unique())
            if len(taus) < self.taus:
                at = f"τ {', '.join(f'{t:g}' for t in taus)} only" if taus else "no τ"
                return (f"this build trained its students at {at}; the claim compares "
                        f"{self.taus} τ or more")
        return ""


def _first(frame: pd.DataFrame, *columns: str) -> str:
    """The first of ``columns`` the table has (Setting 2's ``annotation``, the distillation
    table's ``teacher``; a summary's ``method``, a per-run table's ``case``)."""
    return next((c for c in columns if c in frame), columns[0])
