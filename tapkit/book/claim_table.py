"""The reproduction report's claim table: every claim of :mod:`.claims` and
:mod:`.medical_claims`, judged from the tables one profile's build wrote, and its HTML form."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from .report import read_cells
from .claims import COLUMNS, INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, REPRODUCED, SPEED_CLAIM, \
    Claim, cost_claim, decoy_claim, matches_claim, removes_claim, speed_claim, teacher_claim
from .medical_claims import annotation_claim, keeps_off_claim, matches_rrr_claim, \
    medical_teacher_claim, reemerge_claim
from .origin import DataOrigin


def _read(root: Path, name: str) -> tuple[pd.DataFrame | None, dict]:
    """A table of ``root/tables`` typed (:func:`.report.read_cells`: Setting 2's annotation as
    its enum, τ a number) and its provenance, or ``(None, {})`` when the build did not write it."""
    path = root / "tables" / f"{name}.csv"
    if not path.exists():
        return None, {}
    meta = path.with_suffix(".json")
    return read_cells(path), (json.loads(meta.read_text()) if meta.exists() else {})


VERDICT_COLOURS = {REPRODUCED: "#d9f2d9", NOT_REPRODUCED: "#f8d7d7", NOT_RUN: "#eeeeee",
                   INCONCLUSIVE: "#fdf3c8"}


def to_html(table: pd.DataFrame) -> str:
    """The claim table as the report shows it: three columns (the claim with where the paper
    makes it, the evidence with its seeds and data, the verdict), readable on a narrow page."""
    from html import escape

    rows = "".join(
        f"<tr><td><b>{escape(r.claim)}</b><br><small>paper: {escape(r.where)}</small></td>"
        f"<td>{escape(r.evidence)}<br><small>{escape(r.seeds)} · {escape(r.data)}</small></td>"
        f'<td style="background-color: {VERDICT_COLOURS.get(r.verdict, "")}">'
        f"{escape(r.verdict)}</td></tr>" for r in table.itertuples())
    return ('<table class="claims"><thead><tr><th>Claim</th><th>Evidence from this build</th>'
            f"<th>Verdict</th></tr></thead><tbody>{rows}</tbody></table>")


def _missing(claim: str, where: str, chapter: str) -> Claim:
    return Claim(claim, where, f"the {chapter} chapter did not run in this build", "—", "—", NOT_RUN)


def claims_table(root: str | Path) -> pd.DataFrame:
    """Every claim judged from the tables one profile's build wrote under ``root/tables``; a claim
    whose chapter did not run is listed as ``not run here``."""
    root = Path(root)
    rows: list[Claim] = []
    runs, meta = _read(root, "mnist_gt_runs")
    if runs is not None:
        data = meta.get("data", "MNIST")
        rows.append(decoy_claim(runs, data))
        rows += [removes_claim(runs, data, m) for m in ("tap", "rrr", "rbr") if m in set(runs["case"])]
        rows += [matches_claim(runs, data, m) for m in ("rrr", "rbr") if m in set(runs["case"])]
    else:
        rows.append(_missing("No XS learns the decoy on MNIST", "Results", "Setting-1 MNIST"))
    ratios, meta = _read(root, "speed_memory")
    if ratios is not None:
        what = f"timed training steps on random tensors · {meta.get('device', 'unknown device')}"
        rows += [speed_claim(ratios, what), cost_claim(ratios, what)]
    else:
        rows.append(_missing(SPEED_CLAIM, "Table 1",
                             "speed-and-memory"))
    medical = {e: _read(root, f"{e}_gt_runs") for e in ("pneu", "knee")}
    found = {e: t for e, (t, _) in medical.items() if t is not None}
    data = {e: str(medical[e][1].get("data", "unknown")) for e in found}
    origins = {e: DataOrigin.read(medical[e][1]) for e in found}
    for make, claim in ((keeps_off_claim, "TAP keeps deep CNNs off the tag"),
                        (reemerge_claim, "RRR/RBR let the tag re-emerge on some architectures")):
        rows.append(make(found, data, origins) if found else
                    _missing(claim, "Results, Figs. PNEU/KNEE", "PNEU/KNEE"))
    rows.append(matches_rrr_claim(found, ratios, data, origins) if found else
                _missing("TAP matches RRR at a fraction of its cost", "Results; Table 1",
                         "PNEU/KNEE"))
    teacher, _ = _read(root, "mnist_teacher")
    rows.append(teacher_claim(teacher, "MNIST (Setting 2)") if teacher is not None else
                _missing("TAP works with masks from a teacher trained on 1% of clean data",
                         "Setting 2, Fig. ts", "Setting-2"))
    quality, meta = _read(root, "medical_annotation_quality")
    rows.append(annotation_claim(quality, meta) if quality is not None else
                _missing("Teacher annotations mark the tags better than random masks (PNEU/KNEE)",
                         "Setting 2, Fig. overlap", "medical Setting-2"))
    students, meta = _read(root, "medical_teacher")
    rows.append(medical_teacher_claim(students, meta) if students is not None else
                _missing("TAP with 10%- or 1%-teacher masks keeps deep CNNs off the tag on PNEU",
                         "Setting 2, Fig. ts", "medical Setting-2"))
    return pd.DataFrame([asdict(r) for r in rows], columns=list(COLUMNS))
