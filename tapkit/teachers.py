"""Teacher annotations: the paper's teacher-student framework (Eqs. 12-15).

Equation numbers follow the LaTeX's counter, as elsewhere in tapkit (Eq. 4 RRR, Eq. 8 TAP):
Eq. 12/15 the student's objective, Eq. 13 the explanation E, Eq. 14 the threshold function Psi.

A teacher pre-trained on a small clean split (:func:`teacher_config`: 10% or 1% of the training
split, held out before contamination) explains each contaminated training image with a Captum
attribution method (input gradients, Captum's ``Saliency``, by default, as in the paper). The
absolute saliency, channel-summed and normalised to [0, 1] per image, is the paper's E (Eq. 13,
:func:`saliency`); a threshold turns it into an annotation mask M~ of *low*-saliency pixels
(Eq. 14, :func:`threshold`). Two rules are offered:

* ``"absolute"`` — what the paper states (Eq. 14): ``M~_ij = 1 if E_ij < tau``;
* ``"quantile"`` — what the authors' released code does: the tau-quantile of each image's
  saliency is the cut-off and every pixel at or below it is annotated, so (without ties) a
  fraction tau of every image is annotated.

The student (:func:`with_teacher`) trains on the contaminated rest of the same split. A run's
masks, whichever its config's ``annotation`` names (the ground truth, random masks or a
teacher's), come from :func:`annotation_masks`.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .config import TrainConfig
from .data import Split

ThresholdRule = Literal["absolute", "quantile"]
THRESHOLD_RULES: tuple[str, ...] = ("absolute", "quantile")

# Config fields that describe how a student learns, not the teacher: reset to their defaults in a
# teacher config so that every student of one protocol, fraction and seed shares one teacher.
STUDENT_FIELDS = ("method", "lam", "annotation", "teacher", "tau", "threshold", "saliency",
                  "options")
# Fields that fix the data split: a student and its teacher must agree on them, else the
# teacher's clean holdout is not the part removed from the student's data.
DATA_FIELDS = ("experiment", "source", "seed", "image_size", "artifact", "per_class")


class _SumLogProb(nn.Module):
    """``sum_k log_softmax(f(x))_k`` as a one-output model: its input gradient is the
    explanation the authors' released code uses (the quantity inside RRR's Eq. 4)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(self.model(x), dim=1).sum(dim=1, keepdim=True)


def _captum_method(name: str):
    import captum.attr as ca

    methods = {"saliency": ca.Saliency, "integrated_gradients": ca.IntegratedGradients,
               "input_x_gradient": ca.InputXGradient, "guided_backprop": ca.GuidedBackprop,
               "deconvolution": ca.Deconvolution, "sum_log_prob": ca.Saliency}
    if name not in methods:
        raise ValueError(f"unknown saliency method {name!r}; expected one of {sorted(methods)}")
    return methods[name]


def normalise(e: Tensor) -> Tensor:
    """Min-max normalise each image of ``e`` (N x 1 x H x W) to [0, 1] (the paper's E, Eq. 13);
    a constant map becomes all zeros."""
    flat = e.flatten(1)
    lo, hi = flat.min(1, keepdim=True).values, flat.max(1, keepdim=True).values
    return ((flat - lo) / (hi - lo).clamp_min(1e-12)).reshape(e.shape)


def saliency(model: nn.Module, x: Tensor, target: Tensor | None = None,
             method: str = "saliency", batch_size: int = 256) -> Tensor:
    """E of the paper's Eq. 13: absolute attribution, channel-summed and normalised to [0, 1]
    per image, shape ``N x 1 x H x W``.

    ``method`` names a Captum attribution class (``"saliency"``: input gradients of the target
    logit, as in the paper), or ``"sum_log_prob"``: input gradients of the summed
    log-probabilities, the released code's explanation. ``target`` defaults to the teacher's
    prediction. The caller puts the model in eval mode; nothing here trains (Captum builds no
    graph for a second backward pass).
    """
    if x.dim() != 4:
        raise ValueError(f"x must be N x C x H x W images, got shape {tuple(x.shape)}")
    wrapped = _SumLogProb(model) if method == "sum_log_prob" else model
    explainer = _captum_method(method)(wrapped)
    out = []
    for i in range(0, len(x), batch_size):
        xb = x[i: i + batch_size]
        if method == "sum_log_prob":
            tb = 0
        elif target is None:
            with torch.no_grad():
                tb = model(xb).argmax(1)
        else:
            tb = target[i: i + batch_size]
        attr = explainer.attribute(xb.clone().requires_grad_(True), target=tb)
        out.append(attr.detach().abs().sum(1, keepdim=True))
    return normalise(torch.cat(out))


def threshold(e: Tensor, tau: float, rule: ThresholdRule = "absolute") -> Tensor:
    """Annotation masks M~ (1 = to be ignored) from normalised saliency ``e`` (N x 1 x H x W).

    ``"absolute"`` is the paper's Eq. 14, ``E_ij < tau``. ``"quantile"`` is the released code's
    rule: ``E_ij <= q_tau(E)``, the tau-quantile of the image's own saliency (linear
    interpolation, as ``torch.quantile``); pixels tied at the cut-off are all annotated, so the
    coverage is at least (about) tau.
    """
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"tau must lie in [0, 1], got {tau}")
    if rule == "absolute":
        return (e < tau).float()
    if rule == "quantile":
        cut = torch.quantile(e.flatten(1), tau, dim=1).reshape(-1, *([1] * (e.dim() - 1)))
        return (e <= cut).float()
    raise ValueError(f"unknown threshold rule {rule!r}; expected one of {THRESHOLD_RULES}")


def annotate(model: nn.Module, x: Tensor, tau: float, rule: ThresholdRule = "absolute",
             method: str = "saliency") -> Tensor:
    """Teacher annotation masks for images ``x``: ``threshold(saliency(model, x), tau, rule)``
    (Eqs. 13-14)."""
    return threshold(saliency(model, x, method=method), tau, rule)


def random_masks(shape: tuple[int, ...], coverage: float, seed: int = 0) -> Tensor:
    """Random annotations: each pixel marked independently with probability ``coverage``.

    tapkit's random baseline uses the ground truth's coverage (precision and recall then both
    equal that coverage, the paper's "circa 1.9%"); the released code's random explanations,
    thresholded by the quantile rule, have coverage tau instead.
    """
    if not 0.0 <= coverage <= 1.0:
        raise ValueError(f"coverage must lie in [0, 1], got {coverage}")
    gen = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=gen) < coverage).float()


def annotation_masks(cfg: TrainConfig, split: Split, teacher: nn.Module | None,
                     device: str) -> Tensor:
    """The masks the config's ``annotation`` asks for on ``split``: its ground truth, random masks
    (of the ground truth's coverage, or of ``cfg.random_coverage``: the paper's random baseline
    beside teacher masks at a threshold tau covers what those masks cover), or the thresholded
    saliency of the trained ``teacher``."""
    if cfg.annotation == "ground_truth":
        return split.mask
    if cfg.annotation == "random":
        coverage = (split.mask.mean().item() if cfg.random_coverage is None
                    else cfg.random_coverage)
        return random_masks(tuple(split.mask.shape), coverage, cfg.seed)
    if teacher is None:
        raise ValueError("annotation='teacher' needs the trained teacher model")
    return annotate(teacher, split.x.to(device), cfg.tau, cfg.threshold, cfg.saliency).cpu()


def precision_recall(pred: Tensor, truth: Tensor) -> tuple[float, float]:
    """Pixel precision and recall of annotation masks ``pred`` against ground-truth ``truth``,
    pooled over all images (the paper's annotation-quality figure). An empty prediction has
    precision 0 by convention."""
    if pred.shape != truth.shape:
        raise ValueError(f"shapes differ: {tuple(pred.shape)} vs {tuple(truth.shape)}")
    p, t = pred > 0.5, truth > 0.5
    hit = (p & t).sum().item()
    return hit / max(p.sum().item(), 1), hit / max(t.sum().item(), 1)


def annotation_quality(e: Tensor, truth: Tensor, taus: Iterable[float],
                       rules: Iterable[str] = THRESHOLD_RULES) -> list[dict]:
    """Coverage, precision and recall of ``threshold(e, tau, rule)`` against ``truth`` for every
    rule and tau: one dict per pair, ready for a DataFrame."""
    rows = []
    for rule in rules:
        for tau in taus:
            mask = threshold(e, tau, rule)  # type: ignore[arg-type]
            precision, recall = precision_recall(mask, truth)
            rows.append({"rule": rule, "tau": tau, "coverage": mask.mean().item(),
                         "precision": precision, "recall": recall})
    return rows


STROKE = 0.3  # a pixel brighter than this share of white is a stroke of the image's own signal


def saliency_by_region(e: Tensor, truth: Tensor, brightness: Tensor) -> dict[str, float]:
    """Mean E (Eq. 13, normalised to [0, 1] per image: what the absolute rule thresholds) on
    three kinds of pixel: the spurious signal (``truth``, the ground-truth mask), the strokes of
    the image's own signal (``brightness`` in [0, 1] above :data:`STROKE`, off the mask) and the
    blank rest. Eq. 14 annotates the pixels of lowest E first, so where the spurious signal's E
    lies above the blank background's, a teacher's masks miss it, whatever the teacher learnt."""
    if not e.shape == truth.shape == brightness.shape:
        raise ValueError(f"shapes differ: E {tuple(e.shape)}, mask {tuple(truth.shape)}, "
                         f"brightness {tuple(brightness.shape)}")
    tag = truth > 0.5
    stroke = (brightness > STROKE) & ~tag
    regions = {"tag": tag, "stroke": stroke, "background": ~tag & ~stroke}
    return {name: e[where].mean().item() if where.any() else float("nan")
            for name, where in regions.items()}


# --------------------------------------------------------------------------- configs

def teacher_config(student: TrainConfig, fraction: float, model: str | None = None) -> TrainConfig:
    """The teacher of ``student``: the same data protocol, seed and optimiser, trained without XS
    (``method="none"``) on the clean ``fraction`` of the training split held out before
    contamination (``data="holdout"``; the paper's 10% and 1%). ``model`` defaults to the
    student's architecture (the paper: the two-layer CNN for MNIST, ResNet-18 otherwise).

    Student-only fields are reset to their defaults, so all students of one protocol share it.
    """
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction must lie in (0, 1) (the paper: 0.1 or 0.01), got {fraction}")
    defaults = {f.name: f.default for f in dataclasses.fields(TrainConfig) if f.name in STUDENT_FIELDS}
    return student.replace(**defaults, data="holdout", clean_fraction=fraction,
                           model=model or student.model)


def with_teacher(student: TrainConfig, teacher: TrainConfig, **fields) -> TrainConfig:
    """``student`` taught by ``teacher`` (a :func:`teacher_config`): it trains on the contaminated
    rest of the same split (same ``clean_fraction``), and ``fields`` set the rest, e.g.
    ``annotation="teacher", tau=0.01`` for TAP/RRR/RBR or ``method="kd"`` for distillation."""
    if teacher.data != "holdout":
        raise ValueError(f"the teacher must train on the clean holdout (data='holdout'), got "
                         f"data={teacher.data!r}: build it with teachers.teacher_config")
    differ = [f for f in DATA_FIELDS if getattr(student, f) != getattr(teacher, f)]
    if differ:
        raise ValueError(f"student and teacher disagree on {differ}: the teacher's clean holdout "
                         "would not be the part removed from the student's data; build the "
                         "teacher with teachers.teacher_config(student, fraction)")
    return student.replace(teacher=teacher, clean_fraction=teacher.clean_fraction, **fields)
