"""The λ pages' figures on Decoy-MNIST: the λ search's criterion against λ (the paper's
Experimental Design: the loss on the permuted validation split, SC(X*, permute(y))) and the
normalisation ablation (each method's permuted accuracy against λ, as the equations write the
loss and as the released code normalises it), and the search's tables. Provenance goes in the
page's caption."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import pandas as pd

from ..experiments.paper_tables import paper_lambda_table
from . import labels, table_display

SEARCH_COLUMNS = ["method", "lam", "status", "val_loss", "contaminated", "permuted", "metric",
                  "val_clean", "val_constant"]


def search_table(runs: pd.DataFrame) -> pd.DataFrame:
    """The λ search's runs (one row per method and λ) in the columns its choice reads and its
    page shows (:data:`SEARCH_COLUMNS`; a column the runs lack is empty)."""
    return runs.reindex(columns=SEARCH_COLUMNS)


def search_shown(search: pd.DataFrame):
    """:func:`search_table` as its page shows it (:func:`.table_display.styled`): without the
    columns that hold one value for every run (the metric's name, a constant prediction's
    clean validation score), which :func:`search_caption` states once, so that the table fits
    the page's column."""
    return table_display.styled(search.drop(columns=["metric", "val_constant"], errors="ignore"))


def search_caption(search: pd.DataFrame, label: str) -> str:
    """The search table's caption: the runs' provenance (``label``) and what a constant
    prediction scores on the clean validation split, against which the guard reads each run's
    clean validation score."""
    constant = search.get("val_constant", pd.Series(dtype=float)).dropna()
    metric = search.get("metric", pd.Series(dtype=object)).dropna()
    if constant.empty:
        return f"*{label}*"
    name = metric.iloc[0] if len(metric) else "score"
    return f"*{label}; a constant prediction's clean validation {name}: {constant.max():.3f}*"


def paper_mnist_lambdas() -> pd.DataFrame:
    """The paper's Setting-1 λ on MNIST (ground-truth masks), one row per method, ``mean``
    the λ it printed."""
    return paper_lambda_table().query("setting == 'ground_truth' and dataset == 'MNIST'")


def choice_beside_paper(choice: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """The chosen λ per method (:func:`tapkit.experiments.plans.choose_lambdas`) with the
    paper's (``paper``: :func:`paper_mnist_lambdas`) as a column ``paper λ``; methods the paper
    has no λ for are left out."""
    return choice.merge(paper[["method", "mean"]].rename(columns={"mean": "paper λ"}),
                        on="method")


def choice_shown(choice: pd.DataFrame, paper: pd.DataFrame):
    """:func:`choice_beside_paper` as its page shows it (:func:`.table_display.styled`), without
    the ``guard`` column where it holds one value for every method: whether the profile guards
    its choice is the profile's, which the text above the table states
    (:func:`.profile_notes.lambda_criterion`), and the table then fits the page's column."""
    table = choice_beside_paper(choice, paper)
    if "guard" in table and table["guard"].nunique(dropna=False) <= 1:
        table = table.drop(columns="guard")
    return table_display.styled(table)


def search_figure(search: pd.DataFrame):
    """``search``'s ``val_loss`` against ``lam`` (log scale), one line per method."""
    fig, ax = plt.subplots(figsize=(5, 3))
    for method, grp in search.groupby("method"):
        ax.plot(grp["lam"], grp["val_loss"], marker="o", label=labels.label(method))
    ax.set_xscale("log")
    ax.set_xlabel("λ")
    ax.set_ylabel("loss on permuted validation split")
    ax.legend()
    ax.set_title("λ search on Decoy-MNIST", fontsize=9)
    fig.tight_layout()
    return fig


def normalisation_table(table: pd.DataFrame):
    """The normalisation ablation's table as its page and the report show it: labels for the
    methods and columns, λ in scientific notation, "DNC" where a run did not converge; the
    ``options`` column left out (the ``form`` column names them)."""
    return table_display.styled(table.drop(columns=["options"], errors="ignore"), na_rep="DNC")


def normalisation_figure(table: pd.DataFrame, methods: Sequence[str]):
    """Per method of ``methods`` (a panel each), the permuted-decoy accuracy against λ for each
    loss form of ``table`` (``form``: equations, released), at equal λ."""
    fig, axes = plt.subplots(1, len(methods), figsize=(3.2 * len(methods), 2.8), squeeze=False)
    for ax, method in zip(axes[0], methods):
        for form, grp in table[table.method == method].groupby("form"):
            ax.plot(grp["lam"], grp["permuted"], marker="o", label=form)
        ax.set_xscale("log")
        ax.set_title(labels.label(method))
        ax.set_xlabel("λ")
    axes[0][0].set_ylabel("accuracy, permuted decoys")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("Equations vs released normalisations at equal λ", fontsize=9)
    fig.tight_layout()
    return fig
