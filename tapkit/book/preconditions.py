"""Which seeds of a cell may judge a claim (issue 36: a claim is judged only where its
preconditions hold). A comparison of an XS method with No XS asks, seed by seed:

* every run it reads **learned the task**: its score on the test split drawn as it was trained
  (:func:`tapkit.experiments.setting1.own_split`: contaminated images, clean ones for Base) goes
  at least :data:`.thresholds.LEARNED_SHARE` of the way from a constant prediction's score
  (``val_constant``) to a perfect one. A model that predicts a constant there (F1 0.67, MAE 1.2)
  has learned nothing, so it can neither "keep off" nor "rely on" the tag. The clean split would
  be the wrong judge: a No XS run that reads the label off the tag scores a constant on clean
  images *because* it took the shortcut, and a TAP run that took the tag would be dropped
  instead of counted as a failure;
* **No XS took the shortcut** in that seed: its reliance on the tag exceeds
  :data:`.thresholds.LEARNED` (10 points of the metric). Where No XS ignored the tag there was
  nothing to protect against, and a method's low reliance proves nothing.

A seed that fails is dropped from the paired difference and named with its reason
(:class:`Seeds`), so a page and the report flag it instead of averaging it into a success.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import pandas as pd

from ..experiments.setting1 import own_split
from ..methods import no_xs
from ..metrics import TASK_METRICS, TaskMetric, tag_reliance, task_metric
from .labels import label
from .thresholds import LEARNED, LEARNED_SHARE


def learned_share(clean: pd.Series, constant: pd.Series, metric: TaskMetric) -> pd.Series:
    """Per run, how far its clean score goes from a constant prediction's (0) to a perfect score
    (1): (clean − constant) / (perfect − constant), perfect 1 for accuracy and F1 and 0 for MAE."""
    perfect = 1.0 if metric.higher_is_better else 0.0
    return (clean - constant) / (perfect - constant)


def own_score(rows: pd.DataFrame) -> pd.Series:
    """Per run, its score on the test split drawn as it was trained (:func:`own_split`)."""
    return pd.Series([float(r[own_split(r["case"])]) for _, r in rows.iterrows()], rows.index,
                     dtype=float)


def learned_task(rows: pd.DataFrame, metric: TaskMetric) -> pd.Series:
    """Per run of a per-run table: converged and its own split's score (:func:`own_score`) at
    least :data:`LEARNED_SHARE` of the way from a constant prediction's to perfect. Without
    ``val_constant`` (an MNIST table) the constant is the majority share of ten balanced
    digits, 0.1."""
    constant = rows["val_constant"] if "val_constant" in rows else pd.Series(0.1, rows.index)
    share = learned_share(own_score(rows), constant.astype(float), metric)
    return (rows["status"] == "ok") & (share >= LEARNED_SHARE)


def learned_reliance(runs: pd.DataFrame, metric: TaskMetric, keys: Sequence[str]) -> pd.Series:
    """Per ``keys`` of a per-run table: the mean reliance on the tag
    (:func:`tapkit.metrics.tag_reliance`) over the runs that learned the task
    (:func:`learned_task`), NaN for a cell none of whose runs did. A run that predicts about a
    constant loses nothing when the tags are permuted: averaged in, it would pass for one that
    kept off the tag."""
    reliance = tag_reliance(runs["contaminated"], runs["permuted"], metric)
    kept = reliance.where(learned_task(runs, metric))
    return kept.groupby([runs[k] for k in keys], sort=False, dropna=False).mean()


def over_learned(loss: pd.Series, runs: pd.DataFrame | None, metric: TaskMetric,
                 keys: Sequence[str]) -> pd.Series:
    """``loss`` (a reliance per ``keys``, e.g. from a summary's means) with each cell that
    ``runs`` (a per-run table; a Setting-2 student table's ``method`` is its ``case``) holds
    replaced by :func:`learned_reliance`: NaN where none of its runs learned the task."""
    if runs is None or runs.empty:
        return loss
    rows = runs if "case" in runs else runs.assign(case=runs["method"])
    means = learned_reliance(rows, metric, keys)
    return pd.Series([means.get(k, d) for k, d in loss.items()], loss.index, dtype=float)


def none_learned(failed: tuple[tuple[int, ...], int] | None) -> bool:
    """Whether every run of a cell (an entry of :func:`unlearned`: failed seeds, runs) failed."""
    return bool(failed) and len(failed[0]) == failed[1]


def not_learned_text(failed: tuple[tuple[int, ...], int] | None) -> str:
    """What a mean leaves out (an entry of :func:`unlearned`): ``" (did not learn the task)"``
    when none of the cell's runs learned it, ``" (seeds 0, 2 did not learn the task)"`` when
    some did not, else nothing."""
    if not failed or not failed[0]:
        return ""
    if none_learned(failed):
        return " (did not learn the task)"
    seeds = failed[0]
    return f" (seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))} did not learn the task)"


def unlearned(runs: pd.DataFrame | None, experiment: str,
              keys: Sequence[str] = ("model", "case")) -> dict[tuple, tuple[tuple[int, ...], int]]:
    """Per ``keys`` of a per-run table with a run that did not learn the task
    (:func:`learned_task`): those runs' seeds and the cell's number of runs. The chapter's
    tables include them; the pages' means (:func:`learned_reliance`) and the report's verdicts
    leave them out, and the page names them beside the mean. A Setting-2 student table has no
    ``case``: its ``method`` is one (a student trains on tagged images, so it is judged on
    them)."""
    if runs is None or runs.empty:
        return {}
    rows = runs if "case" in runs else runs.assign(case=runs["method"])
    return failed_seeds(rows, task_metric(experiment), keys)


def failed_seeds(runs: pd.DataFrame, metric: TaskMetric,
                 keys: Sequence[str] = ("model", "case")) -> dict[tuple, tuple[tuple[int, ...], int]]:
    """:func:`unlearned` for a per-run table with a ``case`` column and its task's metric."""
    ok = learned_task(runs, metric)
    return {key: (tuple(sorted(int(s) for s in g.loc[~ok[g.index], "seed"])), len(g))
            for key, g in runs.groupby(list(keys), sort=False) if not ok[g.index].all()}


@dataclass(frozen=True)
class Seeds:
    """The seeds a comparison may judge on, and the others with why each was dropped."""

    kept: tuple[int, ...]
    dropped: dict[int, str] = field(default_factory=dict)

    def note(self, name: str) -> str:
        """``"; PNEU ResNet-18 seed 1 dropped: No XS did not take the tag (reliance 0.05)"`` or
        ``""``: what a page and the report print beside the evidence."""
        if not self.dropped:
            return ""
        return "; " + "; ".join(f"{name} seed {s} dropped: {why}"
                                for s, why in sorted(self.dropped.items()))


def judged_seeds(rows: pd.DataFrame, reliance: pd.Series, methods: Sequence[str],
                 metric: TaskMetric | str, shortcut: bool = True,
                 took: float = LEARNED) -> Seeds:
    """The seeds of one cell (one model's rows: ``case``, ``seed``, ``status``, the splits and
    ``val_constant``) where every run of ``methods`` learned the task and, with ``shortcut``, No
    XS's ``reliance`` on the tag exceeds ``took`` (see the module docstring). ``reliance`` is
    indexed as ``rows``."""
    metric = TASK_METRICS[metric] if isinstance(metric, str) else metric
    learned = learned_task(rows, metric)
    seeds = sorted({int(s) for s in rows.loc[rows["case"].isin(methods), "seed"]})
    kept, dropped = [], {}
    for seed in seeds:
        at = rows["seed"] == seed
        why = []
        for method in methods:
            run = at & (rows["case"] == method)
            if not run.any():
                why.append(f"no {label(method)} run")
            elif not (rows.loc[run, "status"] == "ok").all():
                why.append(f"{label(method)} did not converge")
            elif not learned[run].all():
                score = float(own_score(rows[run]).iloc[0])
                why.append(f"{label(method)} did not learn the task ({own_split(method)} "
                           f"{metric.label} {score:.3f})")
        if shortcut:
            none = at & (rows["case"] == no_xs())
            if not none.any():
                why.append("no No XS run")
            elif not float(reliance[none].iloc[0]) > took:
                why.append(f"No XS did not take the shortcut (reliance "
                           f"{float(reliance[none].iloc[0]):+.3f})")
        if why:
            dropped[seed] = ", ".join(dict.fromkeys(why))
        else:
            kept.append(seed)
    return Seeds(tuple(kept), dropped)
