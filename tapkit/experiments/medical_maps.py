"""The medical chapters' trained models and their maps (PNEU, KNEE, or their digits stand-in):
a run's model read from the results store, and the appendix's overlap analysis of its input
gradients and activations against the tags (the visual comparison draws the same layers). Their
run lists come from :mod:`.medical_plans`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import pandas as pd
import torch

from ..fit import experiment_data
from ..maps import explain, overlap_by_layer
from ..models import target_layers, target_sigma
from .cells import Cell
from .medical_plans import DATASETS
from .store import ResultStore

log = logging.getLogger(__name__)


def trained(run: Cell, root: str | Path, device: str = "cpu"):
    """``(model in eval mode, task, splits)`` of a run from the store ``root/runs`` (trained first
    if it is not there; :meth:`.store.ResultStore.model`, its weights memory-mapped), or None
    when the run did not converge."""
    store = ResultStore(Path(root) / "runs")
    if store.run(run.cfg, device)["status"] != "ok":
        return None
    task, splits = experiment_data(run.cfg)
    return store.model(run.cfg, device, mmap=True), task, splits


def overlap_layers(model: str) -> tuple[str, ...]:
    """The layers of the appendix's overlap analysis: the four penalised layers (the last four
    of VGG-16's five)."""
    return target_layers(model)[-4:]


def spread(n: int, k: int | None) -> torch.Tensor:
    """Indices of ``k`` of ``n`` items evenly spaced from the first to the last (all when ``k`` is
    None or at least ``n``): a subset of a test split, which is ordered by class, with every class
    in its share (the first ``k`` would be one class)."""
    if k is None or k >= n:
        return torch.arange(n)
    if k < 1:
        raise ValueError(f"max_images={k}: expected a positive number of images, or None for all")
    return torch.linspace(0, n - 1, k).round().long()


def overlap_frame(runs: Sequence[Cell], root: str | Path, device: str = "cpu",
                  max_images: int | None = None) -> pd.DataFrame:
    """Recall and precision of top-quartile input gradients and activations against the tags on
    SC(X*, y)_test, one row per run, layer and metric (the appendix's overlap tables), with the
    value a top quartile placed at random would get (``chance``: recall 0.25, precision the
    share of pixels inside tags). ``max_images``: that many test images, evenly spaced over the
    split (:func:`spread`); None: all."""
    rows = []
    for run in runs:
        found = trained(run, root, device)
        if found is None:
            log.warning("%s %s did not converge: no overlap", run.model, run.method)
            continue
        model, _, splits = found
        test = splits["test_contaminated"]
        pick = spread(len(test.y), max_images)
        x, mask = test.x[pick], test.mask[pick]
        layers = overlap_layers(run.model)
        sigma = target_sigma(run.model)
        sizes = _map_sizes(model, x[:1].to(device), layers, sigma)
        result = overlap_by_layer(model, x, mask, layers, device=device, sigma=sigma)
        coverage = (mask > 0.5).float().mean().item()
        for layer, (recall, precision) in result.items():
            for metric, value in (("recall", recall), ("precision", precision)):
                rows.append({"dataset": DATASETS[run.experiment], "model": run.model,
                             "case": run.method, "seed": run.seed, "layer": layer,
                             "map_size": sizes[layer], "metric": metric, "value": value,
                             "chance": 0.25 if metric == "recall" else coverage})
    return pd.DataFrame(rows)


def _map_sizes(model, x, layers, sigma) -> dict[str, str]:
    found = explain(model, x, layers, sigma)
    sizes = {"ig": "×".join(map(str, found.input_grad.shape[-2:]))}
    for i, act in enumerate(found.activations.values()):
        sizes[f"act{i + 1}"] = "×".join(map(str, act.shape[-2:]))
    return sizes
