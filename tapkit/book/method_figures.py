"""The method page's measurements and figures: D(M, l) on real masks (Definition 2's
downscaling, drawn per targeted layer) and Theorem 1 measured on trained Decoy-MNIST models (the
share of the input gradient and of each targeted activation map inside the mask). Nothing is
trained here: the models are read from the results store."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from .. import contamination as sc
from .. import data, losses, models
from ..config import TrainConfig
from ..data import Split
from ..experiments.store import load_trained
from ..maps import explain
from . import report


def downscale_rows(mnist_mask: torch.Tensor, standin_px: int) -> list[tuple[str, torch.Tensor,
                                                                             dict]]:
    """The masks the downscaling figure shows, each with the model it is downscaled for and that
    model's targeted layer sizes: a Decoy-MNIST mask for the two-layer CNN, a text tag on a
    224-px image for ResNet-18, and a stand-in tag at ``standin_px`` for ResNet-18 and
    DenseNet-121."""
    _, tag_mask = sc.text_tag(np.zeros((1, 224, 224)), np.array([1]), np.random.default_rng(0))
    _, standin = sc.text_tag(np.zeros((1, standin_px, standin_px)), np.array([1]),
                             np.random.default_rng(0), scale=data.tag_scale(standin_px))
    tag = torch.from_numpy(tag_mask).unsqueeze(1)
    small = torch.from_numpy(standin).unsqueeze(1)
    return [("two_layer_cnn", mnist_mask, models.target_sizes("two_layer_cnn", 1, 28)),
            ("resnet18", tag, models.target_sizes("resnet18", 3, 224)),
            ("resnet18", small, models.target_sizes("resnet18", 3, standin_px)),
            ("densenet121", small, models.target_sizes("densenet121", 3, standin_px))]


def downscale_figure(rows: Sequence[tuple[str, torch.Tensor, dict]], kernel_size: int):
    """Each row's mask M, then D(M, l) at each of its model's targeted layers (Definition 2:
    max-pooled to the layer's size with kernel ``kernel_size``); grey levels are the weights
    D(M, l) gives each activation."""
    fig, axes = plt.subplots(len(rows), 5, figsize=(11, 2.3 * len(rows)))
    for r, (name, mask, sizes) in enumerate(rows):
        axes[r, 0].imshow(mask[0, 0], cmap="gray_r", vmin=0, vmax=1)
        axes[r, 0].set_title(f"M ({report.tick_label(name)},\ninput {tuple(mask.shape[-2:])})",
                             fontsize=report.MIN_FONT_PT)
        for c, (layer, size) in enumerate(sizes.items(), start=1):
            d = losses.downscale_mask(mask, size, kernel_size)[0, 0]
            axes[r, c].imshow(d, cmap="gray_r", vmin=0, vmax=1)
            axes[r, c].set_title(f"D(M, {layer})\n{size}", fontsize=report.MIN_FONT_PT)
        for c in range(len(sizes) + 1, 5):
            axes[r, c].axis("off")
    for ax in axes.flat:
        ax.set_xticks([])
        ax.set_yticks([])
    report.titled(fig, f"Downscaled masks, κ = {kernel_size}")
    fig.tight_layout()
    return fig


def theorem_shares(configs: Sequence[TrainConfig], runs: str | Path, test: Split,
                   kernel_size: int) -> pd.DataFrame:
    """Theorem 1, measured: per case (the configs' methods, mean over their seeds), the share
    of the absolute input gradient (of the summed log-probabilities) inside the mask and the
    share of each targeted activation map inside D(M, l), on ``test``. The trained models are
    read from the store ``runs`` (they must be there)."""
    rows = []
    for cfg in configs:
        model = load_trained(cfg, runs, "cpu")
        maps = explain(model, test.x, models.target_layers(cfg.model),
                       models.target_sigma(cfg.model))
        ig = maps.input_grad.abs()
        row = {"case": cfg.method, "seed": cfg.seed,
               "input gradient in mask": ((ig * test.mask).sum() / ig.sum()).item()}
        for layer, a in maps.activations.items():
            d = losses.downscale_mask(test.mask, a.shape[-2:], kernel_size)
            row[f"{layer} in D(M, l)"] = ((a.abs() * d).sum() / a.abs().sum()).item()
        rows.append(row)
    return (pd.DataFrame(rows).groupby("case", sort=False).mean(numeric_only=True)
            .drop(columns="seed"))


def theorem_figure(theorem: pd.DataFrame, coverage: float):
    """:func:`theorem_shares` as bars per measured quantity and case, against chance (the
    mask's share of the pixels, ``coverage``)."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    theorem.T.rename(columns=report.tick_label).plot.bar(ax=ax)
    report.chance_line(ax, coverage, f"chance ({coverage:.1%}:\nthe mask's share\nof the pixels)")
    ax.set_ylabel("share inside the mask")
    ax.set_title("Theorem 1 on Decoy-MNIST")
    ax.tick_params(axis="x", rotation=0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    report.fit_text(fig)
    fig.tight_layout()
    return fig
