"""Each chapter's runs: the :class:`~tapkit.config.TrainConfig` lists the notebooks train or
read from the results cache. Chapters that share runs build them here from the same protocol, so
they ask for exactly the same configs and hit the same cached runs; ``tests/test_protocols.py``
builds every list of both profiles without training.

Decoy-MNIST cases follow Setting 1: ``base`` (No XS on clean digits), ``none`` (No XS) and the XS
methods with ground-truth masks; Setting 2 and the distillation chapter add teachers
(:mod:`tapkit.teachers`). The medical chapters' lists are in :mod:`.medical_plans`.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from .. import teachers
from ..config import TrainConfig
from .protocols import (EQUATIONS, MNIST_KD_LAMBDAS, MNIST_LAMBDAS, MNIST_TEACHER_LAMBDAS,
                        RELEASED, MnistProtocol, TeachersProtocol)

MNIST_CASES = ("base", "none", "rrr", "rbr", "tap")
ANNOTATOR = {0.1: "teacher_10", 0.01: "teacher_1"}  # the paper's names for the two teachers


# ----------------------------------------------------------------------------- λ search

def search_configs(p: MnistProtocol, grids: Mapping[str, Iterable[float]] | None = None) -> list[TrainConfig]:
    """The λ search on Decoy-MNIST: every (method, λ) of ``grids`` (default: the protocol's) on
    the first seed; the choice is the lowest ``val_loss`` (SC(X*, permute(y))_val)."""
    grids = p.search if grids is None else grids
    return [p.config(method=m, lam=float(lam), seed=p.seeds[0])
            for m, lams in grids.items() for lam in lams]


def normalisation_configs(p: MnistProtocol) -> list[tuple[str, TrainConfig]]:
    """The report's ablation of the loss normalisations: every (method, λ) of ``p.ablation``
    trained with the equations as written and with the released code's normalisations (the
    same λ grid for both), on the first seed; ``(form name, config)`` pairs."""
    return [(name, p.config(method=m, lam=float(lam), seed=p.seeds[0], options=table.get(m)))
            for m, lams in p.ablation.items() for lam in lams
            for name, table in (("equations", EQUATIONS), ("released", RELEASED))]


def choose_lambdas(search: pd.DataFrame, keys: Sequence[str] = ("method",)) -> pd.DataFrame:
    """Per ``keys``, the searched λ with the lowest validation loss among converged runs."""
    ok = search[search.status == "ok"]
    return ok.loc[ok.groupby(list(keys))["val_loss"].idxmin(), [*keys, "lam", "val_loss"]]


def mnist_lambdas(root: str | Path, lambdas: Mapping[str, float] | None = None) -> dict[str, float]:
    """The lambdas the MNIST chapters train with: the paper's, replaced by the λ search's choice
    (``<root>/tables/lambda_choice.csv``) when no ``lambdas`` are given, then by ``lambdas``."""
    lams = dict(MNIST_LAMBDAS)
    choice = Path(root) / "tables" / "lambda_choice.csv"
    if lambdas is None and choice.exists():
        with open(choice, newline="") as fh:
            lams.update({row["method"]: float(row["lam"]) for row in csv.DictReader(fh)})
    lams.update(lambdas or {})
    return lams


# ----------------------------------------------------------------------------- Setting 1

def mnist_case_config(p: MnistProtocol, case: str, lams: Mapping[str, float], seed: int) -> TrainConfig:
    """The Setting-1 run of one case: ``"base"`` (No XS trained on clean digits) or a method
    (``none``, ``rrr``, ``rbr``, ``tap``) trained on contaminated digits with its lambda."""
    if case == "base":
        return p.config(method="none", data="clean", seed=seed)
    return p.config(method=case, lam=lams.get(case, 0.0), seed=seed)


def mnist_configs(p: MnistProtocol, cases: Sequence[str], lams: Mapping[str, float]) -> list[TrainConfig]:
    """Setting 1: every case for each of its seeds (:meth:`MnistProtocol.seeds_for`), case-major."""
    return [mnist_case_config(p, c, lams, seed) for c in cases for seed in p.seeds_for(c)]


# ----------------------------------------------------------------------------- Setting 2

def annotator(fraction: float) -> str:
    return ANNOTATOR.get(fraction, f"teacher_{fraction:g}")


def teacher(p: MnistProtocol, fraction: float, seed: int) -> TrainConfig:
    """The teacher of seed ``seed``: no XS, trained on the clean ``fraction`` (data="holdout")."""
    return teachers.teacher_config(p.config(seed=seed), fraction)


def teacher_lambdas(lambdas: Mapping[str, float] | None = None) -> dict[str, float]:
    """λ with teacher masks: the paper's teacher-annotation table, then ``lambdas``."""
    return {**MNIST_TEACHER_LAMBDAS, **(lambdas or {})}


def student(p: MnistProtocol, t: TeachersProtocol, method: str, case: str, tau: float, seed: int,
            lams: Mapping[str, float], gt_lams: Mapping[str, float],
            threshold: str = "absolute") -> TrainConfig:
    """A Setting-2 student: ``case`` is a teacher's name, "random", "ground_truth" (Setting 1's
    run, with its λ ``gt_lams``) or "none" (Setting 1's No-XS run)."""
    if case == "none":
        return p.config(method="none", seed=seed)
    if case == "ground_truth":
        return p.config(method=method, lam=gt_lams[method], seed=seed)
    cfg = p.config(method=method, lam=lams[method], seed=seed)
    if case == "random":  # ground-truth coverage, independent of tau: one run per seed
        return cfg.replace(annotation="random")
    fraction = {annotator(f): f for f in t.fractions}[case]
    return teachers.with_teacher(cfg, teacher(p, fraction, seed), annotation="teacher", tau=tau,
                                 threshold=threshold)


def teacher_cases(t: TeachersProtocol) -> list[str]:
    return [annotator(f) for f in t.fractions] + ["random", "ground_truth", "none"]


def student_configs(p: MnistProtocol, t: TeachersProtocol, method: str, cases: Sequence[str],
                    lams: Mapping[str, float], gt_lams: Mapping[str, float],
                    threshold: str = "absolute") -> tuple[list[TrainConfig], list[dict]]:
    """Configs and their labels (which replace the config's own method and tau columns): teacher
    cases at every training tau; random and ground truth once per seed, tau "any"."""
    configs, labels = [], []
    for case in cases:
        case_taus = t.train_taus if case.startswith("teacher") else [None]
        for tau in case_taus:
            for seed in p.seeds:
                configs.append(student(p, t, method, case, tau if tau is not None else 0.01, seed,
                                       lams, gt_lams, threshold))
                labels.append({"method": "none" if case == "none" else method, "case": case,
                               "tau": "any" if tau is None else f"{tau:g}"})
    return configs, labels


def teacher_xs_configs(p: MnistProtocol, t: TeachersProtocol, lams: Mapping[str, float],
                       gt_lams: Mapping[str, float],
                       threshold: str = "absolute") -> tuple[list[TrainConfig], list[dict]]:
    """RRR and RBR (the protocol's ``xs_methods`` beyond TAP) with the first teacher's and random
    masks."""
    configs, labels = [], []
    for method in [m for m in t.xs_methods if m != "tap"]:
        c, lab = student_configs(p, t, method, [annotator(t.fractions[0]), "random"], lams,
                                 gt_lams, threshold)
        configs, labels = configs + c, labels + lab
    return configs, labels


# ----------------------------------------------------------------------------- distillation

def kd_lambdas(lambdas: Mapping[str, float] | None = None) -> dict[str, float]:
    """KD/AT/JT λ of the paper, TAP's teacher-annotation λ, then ``lambdas``."""
    return {**MNIST_KD_LAMBDAS, "tap": MNIST_TEACHER_LAMBDAS["tap"], **(lambdas or {})}


def kd_student(p: MnistProtocol, method: str, fraction: float | None, seed: int,
               lams: Mapping[str, float]) -> TrainConfig:
    """TAP with the teacher's masks at tau = 0.01 (Setting 2's run), a distillation student of
    the same teacher (its options from ``p.options``, e.g. KD's temperature), or No XS (Setting
    1's run)."""
    if method == "none":
        return p.config(method="none", seed=seed)
    if fraction is None:
        raise ValueError(f"method {method!r} needs a teacher fraction")
    if method == "tap":
        cfg = p.config(method="tap", lam=lams["tap"], seed=seed)
        return teachers.with_teacher(cfg, teacher(p, fraction, seed), annotation="teacher", tau=0.01)
    return teachers.with_teacher(p.config(seed=seed), teacher(p, fraction, seed), method=method,
                                 lam=lams[method], options=p.options_for(method))


def kd_rows(p: MnistProtocol, t: TeachersProtocol, methods: Sequence[str]) -> list[tuple]:
    """(annotator, method, fraction, seed) of the distillation table: TAP for every teacher,
    KD/AT/JT for the ``kd_fractions`` teachers, and No XS for reference."""
    rows = [(annotator(f), m, f, seed) for f in t.fractions for m in ["tap", *methods]
            if m == "tap" or f in t.kd_fractions for seed in p.seeds]
    return rows + [("no teacher", "none", None, seed) for seed in p.seeds]


def kd_configs(p: MnistProtocol, t: TeachersProtocol, methods: Sequence[str],
               lams: Mapping[str, float]) -> list[TrainConfig]:
    return [kd_student(p, m, f, seed, lams) for _, m, f, seed in kd_rows(p, t, methods)]
