"""The paper's tables this layer reads (package data in ``paper_values/``, transcribed once from
the LaTeX; its README says where each row was read): the λ tables the runs train with and
Table 1's speeds, from which a cluster's time limits are estimated (:mod:`.planner`). The book
shows both beside this build's numbers; its other paper tables are its own
(``tapkit/book/paper_values``)."""

from __future__ import annotations

from importlib import resources

import pandas as pd


def _read(name: str) -> pd.DataFrame:
    with (resources.files(__package__) / "paper_values" / f"{name}.csv").open() as fh:
        return pd.read_csv(fh)


def paper_lambda_table() -> pd.DataFrame:
    """The paper's four λ tables, one row per printed λ (``lambdas.csv``)."""
    return _read("lambdas")


def lambdas_of(setting: str, dataset: str, architecture: str) -> dict[str, float]:
    """λ per method of one row of one of the paper's λ tables (``setting``: "ground_truth",
    "stripe_ground_truth", "teacher", "kd", "appendix_architectures"; ``dataset`` as the paper
    names it: "MNIST", "PNEU", "KNEE"); empty where the paper gives none."""
    table = paper_lambda_table()
    rows = table[(table.setting == setting) & (table.dataset == dataset)
                 & (table.architecture == architecture)]
    return {row.method: float(row.mean) for row in rows.itertuples()}


def paper_table1() -> pd.DataFrame:
    """The paper's Table 1, one row per printed number: architecture, method, metric
    (``it_per_s`` or ``mem_gb``), mean, status (``ok``, or ``oom`` for DenseNet-121's RBR on
    the paper's 10 GB GPU), bold, tex_line (``table1_speed_memory.csv``)."""
    return _read("table1_speed_memory")
