"""The medical chapters' runs and models (PNEU, KNEE, or their digits stand-in): run frames
through the store, trained models loaded from it, and the appendix's overlap analysis. Their run
lists come from :mod:`.medical_plans`; how they are shown, from :mod:`tapkit.book.medical`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd
import torch

from ..fit import experiment_data
from ..maps import explain, overlap_by_layer
from ..models import build_model, target_layers, target_sigma
from .executors import run_many
from ..results import write_table
from .medical_plans import DATASETS, Run, choice_name, search_runs, why_not_run
from .plans import choose_lambdas
from .protocols import MedicalProtocol, medical
from .store import ResultStore

log = logging.getLogger(__name__)


def run_frame(runs: Sequence[Run], root: str | Path, device: str = "auto",
              run: Callable | None = None) -> pd.DataFrame:
    """Train (or read from the cache) every run into the store ``root/runs``; one row per run
    with model/case/lam columns. ``run`` runs a list of configs (default: :func:`run_many`)."""
    configs = [r.cfg for r in runs]
    frame = run(configs) if run is not None else run_many(configs, Path(root) / "runs", device)
    frame["model"] = [r.model for r in runs]
    frame["case"] = [r.case for r in runs]
    frame["lam"] = [r.lam for r in runs]
    store = ResultStore(Path(root) / "runs")
    history = [(store.load(r.cfg) or {}).get("history") or [{}] for r in runs]
    frame["task_loss_first"] = [h[0].get("task_loss") for h in history]
    frame["task_loss_last"] = [h[-1].get("task_loss") for h in history]
    return frame


def search_frame(p: MedicalProtocol, experiment: str, models: Sequence[str],
                 methods: Sequence[str], artifact: str, root: str | Path, device: str = "auto",
                 run: Callable | None = None) -> pd.DataFrame:
    """The λ search's runs (trained, or read from the cache), one row each with its ``method``;
    empty when the protocol has no grid for these architectures and methods."""
    runs = search_runs(p, experiment, models, [m for m in methods if m in ("rrr", "rbr", "tap")],
                       artifact)
    if not runs:
        return pd.DataFrame()
    frame = run_frame(runs, root, device, run)
    frame["method"] = [r.case for r in runs]
    return frame


def search_and_choose(p: MedicalProtocol, experiment: str, models: Sequence[str],
                      methods: Sequence[str], artifact: str, root: str | Path,
                      device: str = "auto", run: Callable | None = None) -> int:
    """Run (or read from the cache) the λ search and write its choice table (lowest val_loss,
    the paper's criterion); the number of search runs (0 when the protocol does not search).
    ``run`` runs a list of configs into the store (default: :func:`.executors.run_many`)."""
    frame = search_frame(p, experiment, models, methods, artifact, root, device, run)
    if len(frame):
        write_table(choose_lambdas(frame, ["model", "method"]), root,
                    choice_name(experiment, artifact), {"protocol": p.as_dict()})
    return len(frame)


def chapter_settings(profile: str, **overrides: Any) -> MedicalProtocol:
    """The profile's medical protocol with the notebook's non-``None`` parameters
    (:func:`tapkit.experiments.protocols.medical`)."""
    return medical(profile, **overrides)


def untrained(s: MedicalProtocol) -> list[str]:
    """Architectures the profile does not train (``epochs`` 0 in ``model_overrides``)."""
    return [m for m, o in s.model_overrides.items() if o.get("epochs") == 0]


def left_out(s: MedicalProtocol, experiment: str, models: Sequence[str],
             cases: Sequence[str]) -> dict[tuple[str, str], str]:
    """``{(model, case): why}`` of the cells the protocol does not run (``not_run``)."""
    found = {(m, c): why_not_run(s, experiment, m, c) for m in models for c in cases}
    return {k: why for k, why in found.items() if why}


def set_threads(s: Any) -> int:
    """Apply the protocol's CPU thread count (``threads``; None leaves PyTorch's default) and
    return the count in use. The provenance label records it."""
    if s.threads:
        torch.set_num_threads(int(s.threads))
    return torch.get_num_threads()


def trained(run: Run, root: str | Path, device: str = "cpu"):
    """``(model in eval mode, task, splits)`` of a run from the store ``root/runs`` (trained first
    if it is not there), or None when the run did not converge. The network is built on the meta
    device and takes the stored tensors directly (no random initialisation to throw away, which
    costs seconds for VGG-16's 138M parameters)."""
    store = ResultStore(Path(root) / "runs")
    if store.run(run.cfg, device)["status"] != "ok":
        return None
    task, splits = experiment_data(run.cfg)
    with torch.device("meta"):
        net = build_model(run.cfg.model, task.num_classes, task.in_channels, False,
                          task.image_size).model
    state = store.weights(run.cfg, device, mmap=True)
    net.load_state_dict(state, assign=True)
    return net.to(device).eval(), task, splits


def overlap_layers(model: str) -> tuple[str, ...]:
    """The layers of the appendix's overlap analysis: the four penalised layers (the last four
    of VGG-16's five)."""
    return target_layers(model)[-4:]


def overlap_frame(runs: Sequence[Run], root: str | Path, device: str = "cpu",
                  max_images: int | None = None) -> pd.DataFrame:
    """Recall and precision of top-quartile input gradients and activations against the tags on
    SC(X*, y)_test, one row per run, layer and metric (the appendix's overlap tables), with the
    value a top quartile placed at random would get (``chance``: recall 0.25, precision the
    share of pixels inside tags)."""
    rows = []
    for run in runs:
        found = trained(run, root, device)
        if found is None:
            log.warning("%s %s did not converge: no overlap", run.model, run.case)
            continue
        model, _, splits = found
        test = splits["test_contaminated"]
        x, mask = test.x[:max_images], test.mask[:max_images]
        layers = overlap_layers(run.model)
        sigma = target_sigma(run.model)
        sizes = _map_sizes(model, x[:1].to(device), layers, sigma)
        result = overlap_by_layer(model, x, mask, layers, device=device, sigma=sigma)
        coverage = (mask > 0.5).float().mean().item()
        for layer, (recall, precision) in result.items():
            for metric, value in (("recall", recall), ("precision", precision)):
                rows.append({"dataset": DATASETS[run.experiment], "model": run.model,
                             "case": run.case, "seed": run.seed, "layer": layer,
                             "map_size": sizes[layer], "metric": metric, "value": value,
                             "chance": 0.25 if metric == "recall" else coverage})
    return pd.DataFrame(rows)


def _map_sizes(model, x, layers, sigma) -> dict[str, str]:
    found = explain(model, x, layers, sigma)
    sizes = {"ig": "×".join(map(str, found.input_grad.shape[-2:]))}
    for i, act in enumerate(found.activations.values()):
        sizes[f"act{i + 1}"] = "×".join(map(str, act.shape[-2:]))
    return sizes
