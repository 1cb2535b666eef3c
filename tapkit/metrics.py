"""Evaluation: the task metrics of the paper's Evaluation Metrics section, the Delta-metric, and the
top-quartile overlap of the appendix's quantitative comparison."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .batches import EVAL_BATCH
from .data import Split
from .experiment_specs import get_experiment, list_experiments


def accuracy(pred: Tensor, y: Tensor) -> float:
    return (pred == y).float().mean().item()


def f1(pred: Tensor, y: Tensor) -> float:
    """Binary F-score of the positive class (PNEU: pneumonia)."""
    tp = ((pred == 1) & (y == 1)).sum().item()
    fp = ((pred == 1) & (y == 0)).sum().item()
    fn = ((pred == 0) & (y == 1)).sum().item()
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def mae(pred: Tensor, y: Tensor) -> float:
    """Mean absolute error between predicted and true grades (KNEE, ordinal)."""
    return (pred - y).abs().float().mean().item()


METRICS = {"accuracy": accuracy, "f1": f1, "mae": mae}   # the scorers, by metric name


@dataclass(frozen=True)
class TaskMetric:
    """A task's metric as the paper's Evaluation Metrics section names it: ``name`` is the key of
    :data:`METRICS` and of a run record's ``metric`` (``"f1"``), ``label`` how the paper writes it
    (``"F-score"``), ``higher_is_better`` its direction (MAE: lower is better)."""

    name: str
    label: str
    higher_is_better: bool
    largest: float = 1.0  # the largest value the metric takes (MAE on KNEE's grades 0-4: 4)

    def range(self, differences: int = 0) -> tuple[float, float]:
        """The values the metric can take, ``(0, largest)``, or with ``differences`` = 1 those of
        a difference of two scores (a reliance on the tag: ``±largest``), 2 of a difference of
        two such differences (No XS's reliance minus TAP's): where an interval over seeds must
        stay (:mod:`tapkit.seedstats`)."""
        if differences == 0:
            return 0.0, self.largest
        return -(2 ** (differences - 1)) * self.largest, (2 ** (differences - 1)) * self.largest


TASK_METRICS = {m.name: m for m in (TaskMetric("accuracy", "accuracy", True),
                                    TaskMetric("f1", "F-score", True),
                                    TaskMetric("mae", "MAE", False, 4.0))}
# each experiment's metric, by every name that refers to it (the registry's: Decoy-MNIST's
# accuracy under "decoy-mnist" and its tables' "mnist", PNEU's F1, KNEE's MAE, ...)
EXPERIMENT_METRICS = {n: TASK_METRICS[get_experiment(e).metric] for e in list_experiments()
                      for n in get_experiment(e).names}


def constant_score(y: Tensor, metric: str) -> float:
    """The best score a constant prediction reaches on labels ``y``: what a model that learned
    nothing scores. Accuracy: the largest class's share; F1: predicting the positive class
    everywhere (2/3 on balanced labels); MAE: predicting the median grade (1.2 on five balanced
    grades). A λ search guards its choice with it (the models a criterion may choose must beat it)."""
    scorer = METRICS[metric]
    scores = [scorer(torch.full_like(y, c), y) for c in range(int(y.max().item()) + 1)]
    return min(scores) if metric == "mae" else max(scores)


def task_metric(experiment: str) -> TaskMetric:
    """The metric of ``experiment`` (any name the registry knows it by: ``"decoy-mnist"`` or
    ``"mnist"``, ``"pneu"``, ``"knee"``)."""
    if experiment not in EXPERIMENT_METRICS:
        raise ValueError(f"no metric for experiment {experiment!r}; expected one of "
                         f"{sorted(EXPERIMENT_METRICS)} (register it: "
                         "tapkit.experiment_specs.register_experiment)")
    return EXPERIMENT_METRICS[experiment]


@torch.no_grad()
def predict(model: nn.Module, split: Split, batch_size: int = EVAL_BATCH,
            device: str = "cpu") -> Tensor:
    """Predicted classes; the caller puts the model in eval mode."""
    preds = []
    for i in range(0, len(split), batch_size):
        preds.append(model(split.x[i: i + batch_size].to(device)).argmax(1).cpu())
    return torch.cat(preds) if preds else torch.empty(0, dtype=torch.long)


def score(model: nn.Module, split: Split, metric: str, device: str = "cpu") -> float:
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; expected one of {sorted(METRICS)}")
    return METRICS[metric](predict(model, split, device=device), split.y)


def split_scores(model: nn.Module, splits: dict[str, Split], metric: str,
                 device: str) -> dict[str, float]:
    """``metric`` of ``model`` on each split, scoring splits of the same images and labels once: a
    task without a spurious signal (the pretraining digits) has three identical test splits."""
    scores: dict[str, float] = {}
    for name, split in splits.items():
        twin = next((n for n in scores if _same(splits[n], split)), None)
        scores[name] = (scores[twin] if twin is not None
                        else score(model, split, metric, device))
    return scores


def _same(a: Split, b: Split) -> bool:
    return torch.equal(a.y, b.y) and torch.equal(a.x, b.x)  # False for different shapes


def misclassified(model: nn.Module, split: Split, device: str = "cpu") -> np.ndarray:
    """Positions in ``split`` of the images ``model`` gets wrong (:func:`predict`), in order: the
    explorer leads with the ones No XS misses on the permuted test set, where a model that
    learned the spurious patch predicts the patch's label."""
    return np.flatnonzero((predict(model, split, device=device) != split.y).numpy())


Value = TypeVar("Value")  # a float, or a pandas Series / numpy array of them


def delta(contaminated: Value, permuted: Value) -> Value:
    """Delta-metric: change of the metric from SC(X*,y)_test to SC(X*,permute(y))_test."""
    return permuted - contaminated


def tag_reliance(contaminated: Value, permuted: Value, metric: TaskMetric) -> Value:
    """How much a model relies on the spurious signal: what its metric *worsens* by when the
    signal is permuted (SC(X*,y)_test to SC(X*,permute(y))_test, the paper's Evaluation Metrics
    section). It is the paper's Δ-metric (:func:`delta`, permuted − contaminated) signed by the
    metric's direction, so that positive always means the model relies on the signal and 0 that
    it ignores it: contaminated − permuted for accuracy and F-score (higher is better),
    permuted − contaminated for MAE (lower is better). Works elementwise on Series and arrays."""
    sign = 1.0 if metric.higher_is_better else -1.0
    return sign * (contaminated - permuted)


def top_quartile(maps: Tensor) -> Tensor:
    """Boolean mask of each map's top 25% of |values| (ties broken by order), N x 1 x H x W."""
    flat = maps.abs().flatten(1)
    k = max(1, int(round(0.25 * flat.shape[1])))
    idx = flat.topk(k, dim=1).indices
    out = torch.zeros_like(flat, dtype=torch.bool).scatter_(1, idx, True)
    return out.reshape(maps.shape)


def overlap(maps: Tensor, mask: Tensor) -> tuple[float, float]:
    """Recall and precision of the top-quartile of ``maps`` (N x C x h x w, upsampled to the
    mask's size when smaller, channels summed) against the spurious region ``mask`` (N x 1 x H x W),
    pooled over the batch: |spurious & top| / |spurious| and |spurious & top| / |top|."""
    hit, spurious, top = overlap_counts(maps, mask)
    return hit / max(spurious, 1), hit / max(top, 1)


def overlap_counts(maps: Tensor, mask: Tensor) -> tuple[int, int, int]:
    """The counts behind :func:`overlap`: ``(|spurious & top|, |spurious|, |top|)``, so that
    recall and precision can be pooled over a split batch by batch."""
    if maps.dim() != 4 or mask.dim() != 4:
        raise ValueError("maps and mask must be 4-D (N x C x H x W and N x 1 x H x W)")
    maps = maps.sum(1, keepdim=True)
    if maps.shape[-2:] != mask.shape[-2:]:
        maps = F.interpolate(maps, size=mask.shape[-2:], mode="bilinear", align_corners=False)
    top = top_quartile(maps)
    spurious = mask > 0.5
    return int((top & spurious).sum().item()), int(spurious.sum().item()), int(top.sum().item())
