"""Each chapter's runs: the :class:`~tapkit.config.TrainConfig` lists the notebooks train or
read from the results cache. Chapters that share runs build them here from the same protocol, so
they ask for exactly the same configs and hit the same cached runs; ``tests/test_protocols.py``
builds every list of both profiles without training.

Decoy-MNIST cases follow Setting 1: ``base`` (No XS on clean digits), ``none`` (No XS) and the XS
methods with ground-truth masks. Setting 2 and the distillation comparison, for every dataset, are
in :mod:`.setting2_plans`; the medical chapters' Setting-1 lists in :mod:`.medical_plans`.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from ..config import TrainConfig
from ..methods import no_xs, proposed_method
from ..metrics import TASK_METRICS
from .cells import Cell, masks_of
from .protocols import EQUATIONS, MNIST_LAMBDAS, RELEASED, Protocol
from .setting1 import case_config, left_out

# ----------------------------------------------------------------------------- λ search

def search_configs(p: Protocol, grids: Mapping[str, Iterable[float]] | None = None) -> list[TrainConfig]:
    """The λ search on Decoy-MNIST: every (method, λ) of ``grids`` (default: the protocol's) on
    the first seed; the choice is the lowest ``val_loss`` (SC(X*, permute(y))_val), among the
    runs that learned the task where ``p.lambda_guard`` says so (:func:`choose_lambdas`)."""
    grids = p.search if grids is None else grids
    return [p.config(method=m, lam=float(lam), seed=p.seeds[0])
            for m, lams in grids.items() for lam in lams]


def normalisation_configs(p: Protocol) -> list[tuple[str, TrainConfig]]:
    """The report's ablation of the loss normalisations: every (method, λ) of ``p.ablation``
    trained with the equations as written and with the released code's normalisations (the
    same λ grid for both), on the first seed; ``(form name, config)`` pairs."""
    return [(name, p.config(method=m, lam=float(lam), seed=p.seeds[0], options=table.get(m)))
            for m, lams in p.ablation.items() for lam in lams
            for name, table in (("equations", EQUATIONS), ("released", RELEASED))]


def kappa_configs(p: Protocol, lams: Mapping[str, float]) -> list[tuple[int | None, TrainConfig]]:
    """TAP's κ ablation (the method section, l.209: "a choice of κ = 3 ... a good balance between
    capturing the influence of targeted pixels and preventing over-regularisation"; the paper
    reports none): the MNIST chapter's runs of the proposed method at each κ of ``p.kappas`` and
    at its options' own (the MNIST chapter's runs, reused), with No XS beside each seed for the
    claim's precondition (No XS took the decoy), on the seeds the chapter trains TAP on, at
    ``lams``; ``(κ, config)`` pairs, κ None for No XS. Empty when ``p.kappas`` is."""
    if not p.kappas:
        return []
    method = proposed_method()
    pairs: list[tuple[int | None, TrainConfig]] = []
    for seed in p.seeds_for(method):
        own = mnist_case_config(p, method, lams, seed)
        pairs.append((None, mnist_case_config(p, no_xs(), lams, seed)))
        pairs += [(k, own.replace(options=dataclasses.replace(own.options, kernel_size=k)))
                  for k in sorted({own.options.kernel_size, *p.kappas})]
    return pairs


# A run "learned the task" when its clean validation score goes at least this share of the way
# from what a constant prediction scores to a perfect score (issue 20: the paper's criterion alone
# prefers, on the stand-in, the λ at which a network learned nothing: its val_loss is ln 2). It is
# the λ guard of a protocol that sets lambda_guard (the quick profile's) and the claims'
# precondition that a run learned the task
LEARNED_SHARE = 0.25


def learned_share(search: pd.DataFrame) -> pd.Series:
    """Per run, how far its clean validation score (``val_clean``) goes from a constant
    prediction's (``val_constant``: 0) to a perfect score (1 for accuracy and F1, 0 for MAE: 1);
    NaN for runs stored before either was recorded."""
    if not {"val_clean", "val_constant", "metric"} <= set(search.columns):
        return pd.Series(float("nan"), index=search.index)
    higher = search.metric.map(lambda m: TASK_METRICS[m].higher_is_better)
    perfect = higher.map({True: 1.0, False: 0.0})
    return (search.val_clean - search.val_constant) / (perfect - search.val_constant)


def _lowest_val_loss(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return runs.loc[runs.groupby(keys)["val_loss"].idxmin(), [*keys, "lam", "val_loss"]]


def choose_lambdas(search: pd.DataFrame, keys: Sequence[str] = ("method",),
                   guard: bool = True) -> pd.DataFrame:
    """Per ``keys``, the paper's criterion (Experimental Design: the lowest validation loss on
    SC(X*, permute(y)) among converged runs), guarded or not as ``guard`` says (a protocol's
    :attr:`~.protocols.Protocol.lambda_guard`: the quick profile guards, the paper profile
    chooses as the paper does).

    ``lam``, ``val_loss``: the choice the runs train with; with ``guard``, the lowest loss among
    the runs that learned the task (:func:`learned_share` at least :data:`LEARNED_SHARE`), the
    unguarded one where no run of the group did; without it, the unguarded one.
    ``lam_unguarded``, ``val_loss_unguarded``: the criterion among every converged run, always
    kept beside it. ``learned``: whether any run of the group learned the task. ``guard``:
    ``guard``, so that a page says from the table which criterion chose ``lam``."""
    keys = list(keys)
    ok = search[search.status == "ok"]
    learned = ok[learned_share(ok) >= LEARNED_SHARE]
    out = _lowest_val_loss(ok, keys).rename(
        columns={"lam": "lam_unguarded", "val_loss": "val_loss_unguarded"})
    out = out.merge(_lowest_val_loss(learned, keys), on=keys, how="left")
    out["learned"] = out.lam.notna()
    out["guard"] = bool(guard)
    chosen = out.learned & out.guard  # the guard chooses only where some run learned
    out["lam"] = out.lam.where(chosen, out.lam_unguarded)
    out["val_loss"] = out.val_loss.where(chosen, out.val_loss_unguarded)
    return out[[*keys, "lam", "val_loss", "learned", "lam_unguarded", "val_loss_unguarded",
                "guard"]]


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

def mnist_case_config(p: Protocol, case: str, lams: Mapping[str, float], seed: int) -> TrainConfig:
    """The Setting-1 run of one case on Decoy-MNIST (:func:`.setting1.case_config`): ``"base"``
    (No XS trained on clean digits) or a method (``none``, ``rrr``, ``rbr``, ``tap``) trained on
    contaminated digits with its lambda from ``lams``."""
    return case_config(p, None, None, case, lams.get(case, 0.0), seed)


def mnist_left_out(p: Protocol, cases: Sequence[str]) -> dict[tuple[str, str], str]:
    """``{(model, case): why}`` of the cases of ``cases`` the protocol leaves out on
    Decoy-MNIST (its ``not_run``, :func:`.setting1.why_not_run`; quick: RBR, for the CI
    budget), keyed as the medical chapters' cells are."""
    return left_out(p, p.experiments[0], p.models[:1], cases)


def _trained(p: Protocol, cases: Sequence[str]) -> list[str]:
    """The cases of ``cases`` the protocol trains on Decoy-MNIST (not :func:`mnist_left_out`)."""
    left = {c for _, c in mnist_left_out(p, cases)}
    return [c for c in cases if c not in left]


def mnist_configs(p: Protocol, cases: Sequence[str], lams: Mapping[str, float]) -> list[TrainConfig]:
    """Setting 1: every case but those left out (:func:`mnist_left_out`) for each of its seeds
    (:meth:`Protocol.seeds_for`), case-major."""
    return [mnist_case_config(p, c, lams, seed) for c in _trained(p, cases)
            for seed in p.seeds_for(c)]


def mnist_seed_configs(p: Protocol, cases: Sequence[str], lams: Mapping[str, float],
                       seed: int) -> dict[str, TrainConfig]:
    """The Setting-1 run of each case but those left out on one ``seed``, by case: the MNIST
    chapter's models, as the explorer reads them from the cache."""
    return {c: mnist_case_config(p, c, lams, seed) for c in _trained(p, cases)}


def mnist_cells(p: Protocol, cases: Sequence[str], lams: Mapping[str, float],
                table: str = "") -> list[Cell]:
    """Setting 1 as cells: every case (the method row, ``base`` included) but those left out,
    for each of its seeds, case-major (:func:`mnist_configs`)."""
    return [Cell(cfg, table, model=cfg.model, method=c, annotation=masks_of(c), seed=seed,
                 lam=cfg.lam)
            for c in _trained(p, cases) for seed in p.seeds_for(c)
            for cfg in [mnist_case_config(p, c, lams, seed)]]
