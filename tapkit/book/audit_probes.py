"""What the protocol audit reads from code rather than from a setting (the tag's box, the
overlap's upsampling, the λ search's criterion): each probe runs that code on a few synthetic
pixels and describes what it did, so that a row of :mod:`.audit_entries` follows the code."""

from __future__ import annotations

import functools
import inspect
from unittest import mock

import numpy as np
import pandas as pd
import torch

from .. import contamination as sc
from .. import data, metrics
from ..config import TrainConfig
from ..experiments.plans import LEARNED_SHARE, choose_lambdas
from ..methods import proposed_method
from ..teachers import normalise
from . import audit_reads as reads
from .audit_rows import render
from .report import did_not_converge


# What is code rather than a setting, read by running it on a few synthetic pixels.

@functools.cache
def tiny_splits(seed: int) -> dict:
    """:func:`tapkit.data.build_splits` of 40 blank 8-px images of four classes, with corner
    patches."""
    x, y = np.zeros((40, 8, 8), np.float32), np.repeat(np.arange(4), 10)

    def patch(images, labels, rng):
        return sc.corner_patch(images, labels, rng, step=60.0)
    return data.build_splits(x, y, x[:8], y[:8], patch, "permuted", seed, 0.0, 1.0)


def val_fraction(_: str) -> str:
    fraction = inspect.signature(data.build_splits).parameters["val_fraction"].default
    return f"{fraction:.0%} of the training split"


def redrawn(_: str) -> str:
    a, b = tiny_splits(0), tiny_splits(1)
    same = all(np.array_equal(a[k].mask.numpy(), b[k].mask.numpy()) for k in ("train", "val"))
    return ("drawn once, whatever the seed" if same
            else "validation split and signals redrawn per seed")


def evaluated_splits(_: str) -> str:
    return render(tuple(k.removeprefix("test_") for k in tiny_splits(0) if k.startswith("test_")))


@functools.cache
def mnist_permutation() -> str:
    """Whether Decoy-MNIST's permuted test split permutes the labels (every patch brightness kept,
    shuffled over the images) or draws new ones, read from the embedded digits."""
    _, splits = data.decoy_mnist("embedded", seed=0)
    brightness = {k: np.sort(data.mnist_patch_brightness(splits[k]).numpy())
                  for k in ("test_contaminated", "test_permuted")}
    kept = np.array_equal(brightness["test_contaminated"], brightness["test_permuted"])
    return "a permutation of the test labels" if kept else "a random label per image"


def decoy_patch(_: str) -> str:
    step = inspect.signature(sc.corner_patch).parameters["step"].default
    return f"{sc.MNIST_PATCH}×{sc.MNIST_PATCH} px, value 255 − {step:g}·label, random corner"


def assignment(classes: int) -> str:
    return data.medical_contamination("tag", classes, 224)[1]


@functools.cache
def tag_box(side: int) -> tuple[int, int, int]:
    """Height, width and inset from the nearest edges of the mask of a PNEU "XYZ" tag written on
    a blank ``side``-px image."""
    contaminate, _ = data.medical_contamination("tag", 2, side)
    _, mask = contaminate(np.zeros((1, side, side), np.float32), np.array([1]),
                          np.random.default_rng(0))
    rows, cols = np.flatnonzero(mask[0].any(1)), np.flatnonzero(mask[0].any(0))
    inset = min(rows[0], side - 1 - rows[-1], cols[0], side - 1 - cols[-1])
    return int(rows[-1] - rows[0] + 1), int(cols[-1] - cols[0] + 1), int(inset)


def tag_side(profile: str) -> int:
    return reads.medical(profile).settings("pneu", "resnet18").image_size


def tag_font(profile: str) -> str:
    from PIL import ImageFont

    side = tag_side(profile)
    h, w, _ = tag_box(side)
    font = " ".join(ImageFont.load_default(size=h).getname())
    embedded = reads.medical(profile).embedded
    taller = "".join(f"; {e.upper()} stand-in's tags {embedded[e].tag_px} px tall"
                     for e in sorted(embedded) if embedded[e].tag_px is not None)
    return f"Pillow's built-in {font}; 'XYZ' box {h}×{w} px at {side} px{taller}"


def tag_place(profile: str) -> str:
    side = tag_side(profile)
    _, _, inset = tag_box(side)
    return f"{inset} px in from a random corner; mask = the tag's box (at {side} px)"


@functools.cache
def stripe(side: int, classes: int, width: int | None = None) -> tuple[int, int, float]:
    """Width, largest offset from the edge and brightness step of the stripes written on 200
    blank 2-px-high rows ``side`` px wide (``width``: a stand-in's own, None: the paper's
    scaled)."""
    contaminate, _ = data.medical_contamination("stripe", classes, side, stripe_px=width)
    y = np.arange(200) % 2
    img, mask = contaminate(np.zeros((200, 2, side), np.float32), y, np.random.default_rng(0))
    cols = [np.flatnonzero(m[0]) for m in mask]
    offset = max(min(c[0], side - 1 - c[-1]) for c in cols)
    return int(len(cols[0])), int(offset), float(img[0, 0, cols[0][0]] - img[1, 0, cols[1][0]])


def stripe_geometry(profile: str) -> str:
    side = tag_side(profile)
    width, offset, _ = stripe(side, 2)
    embedded = reads.medical(profile).embedded
    wider = "".join(f"; {e.upper()} stand-in's {stripe(side, 2, embedded[e].stripe_px)[0]} px wide"
                    for e in sorted(embedded) if embedded[e].stripe_px is not None)
    return f"{width} px wide, up to {offset} px from the edge (at {side} px){wider}"


def stripe_brightness(profile: str) -> dict[str, str]:
    side = tag_side(profile)
    return {e: f"255 − {stripe(side, c)[2]:g}·label" for e, c in (("pneu", 2), ("knee", 5))}


def normalised(_: str) -> str:
    e = normalise(torch.tensor([2.0, 4.0, 6.0]).reshape(1, 1, 1, 3)).flatten().tolist()
    return "min-max per image to [0, 1]" if e == [0.0, 0.5, 1.0] else render(tuple(e))


def search_probe(guard: bool = True) -> pd.DataFrame:
    """:func:`tapkit.experiments.plans.choose_lambdas` of four runs: two that learned the task
    (λ 0.1 and 1), one that learned nothing with the lowest loss (λ 10), one that diverged;
    ``guard``: a protocol's ``lambda_guard``."""
    runs = pd.DataFrame({"method": proposed_method(), "lam": [0.1, 1.0, 10.0, 100.0],
                         "status": ["ok", "ok", "ok", "dnc"], "val_loss": [0.5, 0.4, 0.3, 0.1],
                         "val_clean": [0.9, 0.95, 0.5, 0.5], "val_constant": 0.5,
                         "metric": "accuracy"})
    return choose_lambdas(runs, guard=guard).iloc[0]


def criterion(_: str) -> str:
    lam = search_probe().lam_unguarded
    return {10.0: "lowest validation loss among converged runs",
            100.0: "lowest validation loss, diverged runs included"}.get(lam, f"chose λ {lam:g}")


def guard(profile: str) -> dict[str, str]:
    """What the λ search of the profile's MNIST and medical protocols does with a run that
    learned nothing and has the lowest loss (:func:`search_probe` with their ``lambda_guard``)."""
    def one(p) -> str:
        choice = search_probe(p.lambda_guard)
        if choice.lam == choice.lam_unguarded:
            return "none"
        return (f"skips runs whose clean validation score is under {LEARNED_SHARE:.0%} of the "
                "way from a constant prediction's to perfect")
    return reads.both(profile, one)


def delta(_: str) -> str:
    permuted_first = metrics.delta(1.0, 0.25) == -0.75  # delta(contaminated, permuted)
    return "permuted − contaminated" if permuted_first else "contaminated − permuted"


def dnc(_: str) -> str:
    failed = (str(f) for f in range(6) if did_not_converge(f, 5))
    return "DNC when " + ", ".join(failed) + " of 5 fail"


def overlap(profile: str) -> str:
    """Top quartile, upsampling and pooling of :func:`tapkit.metrics.overlap`, read by running it:
    the interpolation mode it asks for, and whether two images' recall is a ratio of pooled
    counts (1/4 here) or the mean of their ratios (1/2)."""
    with mock.patch.object(metrics.F, "interpolate", wraps=metrics.F.interpolate) as up:
        metrics.overlap(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 4, 4))
    mode = up.call_args.kwargs.get("mode", "nearest") if up.called else "none"
    maps = torch.tensor([4.0, 0, 0, 0]).reshape(1, 1, 1, 4).repeat(2, 1, 1, 1)
    mask = torch.tensor([[1.0, 0, 0, 0], [0, 1, 1, 1]]).reshape(2, 1, 1, 4)
    recall, _ = metrics.overlap(maps, mask)
    pooled = "pixels pooled over images" if recall == 0.25 else "per-image ratios averaged"
    k = int(metrics.top_quartile(torch.arange(16.0).reshape(1, 1, 4, 4)).sum())
    images = reads.medical(profile).overlap_images
    return (f"top {k / 16:.0%} of |channel sum|, {mode} upsampling, {pooled}; "
            f"{images or 'all'} test images per split")


def metric(experiment: str) -> str:
    m = metrics.task_metric(experiment)
    return f"{m.label} ({'higher' if m.higher_is_better else 'lower'} is better)"


def saliency(_: str) -> str:
    return f"Captum {TrainConfig.saliency!r}: input gradient of the predicted class"
