"""The overlap chapter's tables (the appendix's quantitative comparison): how much of each map's
top quartile falls on the tags, ours beside the paper's, per architecture, method and layer.

The rows come from :func:`.medical.overlap_beside_paper` (columns ``dataset``, ``model``,
``case``, ``metric``, ``layer``, ``ours``, ``paper``, ...); these functions only select and
arrange them, so that the notebook shows the tables and computes nothing of its own.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import pandas as pd

from ..methods import no_xs
from . import medical
from .labels import label
from .thresholds import CHANCE_RECALL

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


LAYERS = ("ig", "act1", "act2", "act3", "act4")
"""The overlap's maps: the input gradients (IG) and the four penalised layers' activations."""


def map_sizes(both: pd.DataFrame, layers: Sequence[str]) -> pd.DataFrame:
    """The spatial size of each map before upsampling (``map_size``), one row per architecture
    and one column per layer of ``layers``: on a small stand-in the deepest maps are 2x2 or
    1x1, and their top quartile says little."""
    return both.drop_duplicates(["model", "layer"]).pivot(index="model", columns="layer",
                                                          values="map_size")[list(layers)]


def chance_table(both: pd.DataFrame) -> pd.DataFrame:
    """What a randomly placed top quartile scores, per data set (rows) and metric (columns):
    recall 0.25, precision the share of pixels inside tags; three decimals."""
    return both.groupby(["dataset", "metric"])["chance"].mean().unstack().round(3)


def recall_figure(recall: pd.DataFrame, datasets: Sequence[str], models: Sequence[str],
                  cases: Sequence[str], standin: bool, untrained: Iterable[str], title: str):
    """The appendix's recall figure: one panel per dataset (row) and architecture (column), the
    top-quartile recall of the tags at each of :data:`LAYERS` per method of ``cases`` (a case
    with no run has no line), against chance (:data:`CHANCE_RECALL`). ``standin`` labels the
    panels as the stand-in's; an architecture in ``untrained`` is marked so."""
    import matplotlib.pyplot as plt

    from . import report

    untrained = set(untrained)
    layers = list(LAYERS)
    fig, axes = plt.subplots(len(datasets), len(models),
                             figsize=(3.4 * len(models), 2.8 * len(datasets)), squeeze=False,
                             sharey=True)
    for i, experiment in enumerate(datasets):
        name = medical.DATASETS[experiment]
        for j, model in enumerate(models):
            ax = axes[i, j]
            sel = recall[(recall.dataset == name) & (recall.model == model)]
            for case in cases:
                line = sel[sel.case == case].set_index("layer").reindex(layers)
                ax.plot(layers, line["ours"], marker="o", label=medical.CASE_LABELS[case])
            ax.set_title(f"{name} (stand-in)" if standin else name, fontsize=report.MIN_FONT_PT)
            ax.set_xlabel(medical.ARCH_LABELS[model] + (" (untrained)" if model in untrained
                                                        else ""), fontsize=report.MIN_FONT_PT)
            report.chance_line(ax, CHANCE_RECALL, "chance (top quartile)")
            ax.set_ylim(-0.02, 1.02)
    axes[0, 0].set_ylabel("recall (lower is better)")
    axes[0, -1].legend(fontsize=report.MIN_FONT_PT, loc="upper left", bbox_to_anchor=(1.02, 1))
    report.titled(fig, title)
    report.fit_text(fig)
    fig.tight_layout()
    return fig


def against_none(recall: pd.DataFrame, method: str,
                 skip: Iterable[str] = ()) -> pd.DataFrame:
    """``method``'s mean recall of the tags beside No XS's, per dataset and architecture (those
    in ``skip``, untrained in the profile, left out): at the input (IG) and over the first two
    penalised layers (Act 1-2); the pairs where either has no run are dropped."""
    recall = recall[~recall.model.isin(set(skip))]
    first_two, none, own = ["act1", "act2"], label(no_xs()), label(method)
    return pd.DataFrame({f"{none}: IG": mean_recall(recall, no_xs(), ["ig"]),
                         f"{own}: IG": mean_recall(recall, method, ["ig"]),
                         f"{none}: Act 1-2": mean_recall(recall, no_xs(), first_two),
                         f"{own}: Act 1-2": mean_recall(recall, method, first_two)}).dropna()


def against_none_text(compare: pd.DataFrame, method: str, skip: Iterable[str] = ()) -> str:
    """:func:`against_none` in a sentence: in how many dataset/architecture pairs ``method``'s
    first two penalised layers overlap the tags less than No XS's, their mean recalls, and
    chance (the page's opening and its TAP-against-No-XS section)."""
    none, own, skip = label(no_xs()), label(method), list(skip)
    if compare.empty:
        return f"no trained architecture has both a {none} and a {own} run here."
    theirs, ours = compare[f"{none}: Act 1-2"], compare[f"{own}: Act 1-2"]
    lower = int((ours < theirs).sum())
    return (f"{own}'s top-quartile activations in the first two penalised layers overlap the "
            f"tags less than {none}'s in **{lower} of {len(compare)}** dataset/architecture pairs "
            f"with a {own} run here (mean recall of the tags {ours.mean():.2f} against "
            f"{theirs.mean():.2f}; a random top quartile scores {CHANCE_RECALL:g}"
            + (f"; untrained in this profile and left out: "
               f"{', '.join(medical.ARCH_LABELS[m] for m in skip)}" if skip else "") + ").")
