"""Reliance on the tag read from a medical summary table (each split's mean, std and count over
seeds, Setting 2's ``medical_teacher`` and the distillation chapter's ``medical_kd``), where
per-run pairs are gone: each student's reliance with its interval, the gap between two students
of one architecture (unpaired), and the verdict of "this student was not kept off the tag where
TAP's was" that the Setting-2 and distillation judges share."""

from __future__ import annotations

import pandas as pd

from ..metrics import tag_reliance, task_metric
from ..seedstats import Estimate, from_summary
from .claims import INCONCLUSIVE, combined, keeps_verdict
from .labels import label
from .thresholds import MARGIN


def reliance_parts(frame: pd.DataFrame, experiment: str,
                   row: str = "case") -> list[tuple[str, str, float, float, int]]:
    """``(model, row, reliance, its std, seeds)`` of a medical summary table, in its order, per
    model and its ``row`` column (Setting 1's ``case``, Setting 2's ``annotation``): the
    reliance of :func:`tapkit.metrics.tag_reliance` from the means of the contaminated and
    swapped splits, with its std taken as √(σ_permuted² + σ_contaminated²), which ignores their
    covariance over seeds (wider than the paired interval when, as usual, the two splits rise
    and fall together)."""
    metric = task_metric(experiment)
    out = []
    for (model, case), grp in frame.groupby(["model", row], sort=False):
        rows = grp.set_index("split")
        if {"contaminated", "permuted"} <= set(rows.index):
            r = tag_reliance(rows.loc["contaminated", "mean"], rows.loc["permuted", "mean"], metric)
            sd = (rows.loc["permuted", "std"] ** 2 + rows.loc["contaminated", "std"] ** 2) ** 0.5
            out.append((model, case, float(r), float(sd), int(rows["count"].min())))
    return out


def reliances(frame: pd.DataFrame, experiment: str,
              row: str = "case") -> list[tuple[str, str, Estimate]]:
    """``(model, row, reliance)`` of a medical summary table (:func:`reliance_parts`), each an
    interval within the metric's range."""
    bounds = task_metric(experiment).range(1)
    return [(model, case, from_summary(r, sd, n, bounds=bounds))
            for model, case, r, sd, n in reliance_parts(frame, experiment, row)]


def reliance_gap(frame: pd.DataFrame, experiment: str, row: str, model: str, case: str,
                 other: str) -> Estimate | None:
    """How much more ``case`` relies on the tag than ``other`` on ``model`` in a medical summary
    table (:func:`reliance_parts`; ``row`` the column that holds them): the difference of the
    reliances, its std the root of their variances' sum (unpaired: a summary keeps no seeds);
    None where either is missing."""
    found = {(m, c): (r, sd, n) for m, c, r, sd, n in reliance_parts(frame, experiment, row)}
    if (model, case) not in found or (model, other) not in found:
        return None
    (ra, sa, na), (rb, sb, nb) = found[(model, case)], found[(model, other)]
    return from_summary(ra - rb, (sa ** 2 + sb ** 2) ** 0.5, min(na, nb),
                        bounds=task_metric(experiment).range(2))


def relies_more_verdict(reliance: Estimate, gap: Estimate | None) -> str:
    """A student "not prevented from learning the tag" where TAP's was (the appendix's RRR/RBR
    and KD/JT with teacher masks): its reliance interval above :data:`.thresholds.MARGIN` and
    above TAP's by more than it (``gap``, :func:`reliance_gap`), each decided by its interval;
    inconclusive without TAP's."""
    alone = keeps_verdict(reliance.lo, reliance.hi, MARGIN)
    more = INCONCLUSIVE if gap is None else keeps_verdict(gap.lo, gap.hi, MARGIN)
    return combined([alone, more])


def above_other(frame: pd.DataFrame, experiment: str,
                found: list[tuple[str, str, Estimate]], other: str,
                row: str = "method") -> list[tuple[str, str]]:
    """Each student of ``found`` (:func:`reliances`) against ``other``'s of the same architecture
    in ``frame`` (the same masks or teacher): its verdict (:func:`relies_more_verdict`) and the
    evidence's words."""
    out = []
    for model, case, d in found:
        g = reliance_gap(frame, experiment, row, model, case, other)
        out.append((relies_more_verdict(d, g),
                    f"{label(model)} {label(case)} {d.text()}, "
                    + (f"above {label(other)}'s by {g.text()}" if g is not None
                       else f"no {label(other)} student to compare")))
    return out
