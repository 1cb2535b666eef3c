"""The overlap chapter's tables (the appendix's quantitative comparison): how much of each map's
top quartile falls on the tags, ours beside the paper's, per architecture, method and layer.

The rows come from :func:`.medical.overlap_beside_paper` (columns ``dataset``, ``model``,
``case``, ``metric``, ``layer``, ``ours``, ``paper``, ...); these functions only select and
arrange them, so that the notebook shows the tables and computes nothing of its own.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import pandas as pd

from . import medical
from .labels import label

CHANCE_RECALL = 0.25
"""A randomly placed top quartile holds a quarter of the tag's pixels: the chance level of the
top-quartile recall, drawn on the overlap figure."""


def overlap_table(both: pd.DataFrame, metric: str, experiment: str, models: Sequence[str],
                  cases: Sequence[str], layers: Sequence[str],
                  left: Iterable[tuple[str, str]] = ()) -> pd.DataFrame:
    """One ``metric`` ("recall" or "precision") of ``experiment`` ("pneu", "knee") as the
    appendix prints it: one row per (architecture, method) in ``models`` x ``cases`` order, one
    column per layer of ``layers``, each cell ``ours (paper)`` to two decimals (``ours (–)``
    where the paper gives no value). The ``(model, case)`` cells in ``left`` (the profile's
    ``not_run``, :func:`.medical.left_out`) say *not run*."""
    sel = both[(both.metric == metric) & (both.dataset == medical.DATASETS[experiment])].copy()
    sel["cell"] = [f"{o:.2f} ({p:.2f})" if pd.notna(p) else f"{o:.2f} (–)"
                   for o, p in zip(sel.ours, sel.paper)]
    sel["architecture"] = sel.model.map(label)
    sel["method"] = sel.case.map(label)
    table = sel.pivot(index=["architecture", "method"], columns="layer", values="cell")
    order = [(label(m), label(c)) for m in models for c in cases]
    table = table.reindex(order)[list(layers)]
    for model, case in left:
        table.loc[(label(model), label(case))] = "not run"
    return table


def mean_recall(recall: pd.DataFrame, case: str, layers: Sequence[str]) -> pd.Series:
    """Per (dataset, model): our recall of ``case`` averaged over ``layers`` (e.g. ``["ig"]``, or
    ``["act1", "act2"]``), from the recall rows of :func:`.medical.overlap_beside_paper`. The
    chapter compares TAP's with No XS's: the paper finds TAP's lower."""
    sel = recall[(recall.case == case) & recall.layer.isin(list(layers))]
    return sel.groupby(["dataset", "model"])["ours"].mean()


def committed_view(table: pd.DataFrame) -> pd.DataFrame:
    """A committed paper-profile ``overlap`` table as the page shows it
    (:func:`.chapter.show_committed`): our value per (dataset, model, case) row and (metric,
    layer) column."""
    return table.pivot_table(index=["dataset", "model", "case"], columns=["metric", "layer"],
                             values="ours")
