"""The medical chapters' runs through the results store (PNEU, KNEE, or their digits stand-in):
one frame of records per run list, and the λ search run and its choice written. Their run lists
come from :mod:`.medical_plans`; their trained models and maps, from :mod:`.medical_maps`; how
they are shown, from :mod:`tapkit.book.medical`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from ..methods import is_xs
from ..results import write_table
from .executors import run_many
from .cells import Cell
from .medical_plans import choice_name, search_runs, start_config
from .plans import choose_lambdas
from .protocols import Protocol
from .setting2_plans import holdout
from .store import ResultStore, teacher_saliency


def run_frame(runs: Sequence[Cell], root: str | Path, device: str = "auto",
              run: Callable | None = None) -> pd.DataFrame:
    """Train (or read from the cache) every run into the store ``root/runs``; one row per run
    with model/case/lam columns (``case``: the Setting-1 table's method row, ``base`` included).
    ``run`` runs a list of configs (default: :func:`run_many`)."""
    configs = [r.cfg for r in runs]
    frame = run(configs) if run is not None else run_many(configs, Path(root) / "runs", device)
    frame["model"] = [r.model for r in runs]
    frame["case"] = [r.method for r in runs]
    frame["lam"] = [r.lam for r in runs]
    store = ResultStore(Path(root) / "runs")
    history = [(store.load(r.cfg) or {}).get("history") or [{}] for r in runs]
    frame["task_loss_first"] = [h[0].get("task_loss") for h in history]
    frame["task_loss_last"] = [h[-1].get("task_loss") for h in history]
    return frame


def pretraining_frame(p: Protocol, experiment: str, models: Sequence[str],
                      root: str | Path, device: str = "auto") -> pd.DataFrame:
    """The pretraining runs ``models``' stand-in runs start from (:class:`.protocols.Pretraining`),
    trained or read from the store ``root/runs`` (the chapters' runs have trained them already);
    one row each with ``model`` (the architecture's name in ``models``), its accuracy on the
    pretraining task's test images (``clean``), ``epochs`` and ``seconds``. Empty without a
    start."""
    pairs = [(m, start_config(p, experiment, m)) for m in models]
    pairs = [(m, cfg) for m, cfg in pairs if cfg is not None]
    if not pairs:
        return pd.DataFrame(columns=["model", "clean", "epochs", "seconds"])
    frame = run_many([cfg for _, cfg in pairs], Path(root) / "runs", device)
    frame["model"] = [m for m, _ in pairs]
    return frame


def search_frame(p: Protocol, experiment: str, models: Sequence[str],
                 methods: Sequence[str], artifact: str, root: str | Path, device: str = "auto",
                 run: Callable | None = None) -> pd.DataFrame:
    """The λ search's runs (trained, or read from the cache), one row each with its ``method``;
    empty when the protocol has no grid for these architectures and methods."""
    runs = search_runs(p, experiment, models, [m for m in methods if is_xs(m)], artifact)
    if not runs:
        return pd.DataFrame()
    frame = run_frame(runs, root, device, run)
    frame["method"] = [r.method for r in runs]
    return frame


def search_and_choose(p: Protocol, experiment: str, models: Sequence[str],
                      methods: Sequence[str], artifact: str, root: str | Path,
                      device: str = "auto", run: Callable | None = None) -> int:
    """Run (or read from the cache) the λ search and write its choice table (lowest val_loss,
    the paper's criterion, guarded where ``p.lambda_guard`` says); the number of search runs (0
    when the protocol does not search). ``run`` runs a list of configs into the store (default: :func:`.executors.run_many`)."""
    frame = search_frame(p, experiment, models, methods, artifact, root, device, run)
    if len(frame):
        write_table(choose_lambdas(frame, ["model", "method"], guard=p.lambda_guard), root,
                    choice_name(experiment, artifact), {"protocol": p.as_dict()})
    return len(frame)


def read_choice(root: str | Path, experiment: str, artifact: str = "tag") -> pd.DataFrame:
    """The λ choice :func:`search_and_choose` wrote for ``experiment`` (one row per
    architecture and method: the chosen ``lam`` and the criterion's values)."""
    return pd.read_csv(Path(root) / "tables" / f"{choice_name(experiment, artifact)}.csv")


def teacher_frame(cells: Sequence[Cell], root: str | Path, device: str = "auto") -> pd.DataFrame:
    """The medical Setting-2 teachers (``cells``: :func:`.chapter_plans.medical_teacher_cells`)
    trained or read from the store ``root/runs``, one row each with its ``experiment``,
    ``teacher`` (the annotation it makes, ``teacher_10``/``teacher_1``) and the number of clean
    ``images`` it trained on (:func:`.setting2_plans.holdout`)."""
    frame = run_many([c.cfg for c in cells], Path(root) / "runs", device)
    frame["experiment"] = [c.experiment for c in cells]
    frame["teacher"] = [c.annotation.value for c in cells]
    frame["images"] = [len(holdout(c.cfg)) for c in cells]
    return frame


def teacher_saliencies(cells: Sequence[Cell], root: str | Path, device: str = "auto") -> dict:
    """Each teacher's E (Eq. 13) on the tagged training split its students see, with that split
    (:func:`.store.teacher_saliency`), keyed ``(experiment, teacher, seed)``."""
    return {(c.experiment, c.annotation.value, c.seed):
            teacher_saliency(c.cfg, Path(root) / "runs", device) for c in cells}
