"""The data page's figures (the paper's contamination figure): Decoy-MNIST's three test splits
with their masks, the patch's brightness by label, and the medical contaminations (text tags and
stripes) drawn on digit canvases. Each returns a matplotlib figure for
:func:`.report.save_figure`; none trains anything."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .. import contamination as sc
from .. import data
from ..data import Split

SPLIT_ROWS = (("SC(X*, y)", "test_contaminated"), ("SC(X*, permute(y))", "test_permuted"),
              ("clean X*", "test_clean"))
"""The test splits every Decoy-MNIST image is evaluated on, with the paper's notation."""


def decoy_examples(splits: dict[str, Split], n: int, title: str, step: int = 97):
    """``n`` test digits (every ``step``-th) in each of :data:`SPLIT_ROWS` with their labels, and
    the contaminated split's mask M below them (Eq. 2: 1 on the spurious patch)."""
    fig, axes = plt.subplots(4, n, figsize=(1.6 * n, 6.6))
    for j in range(n):
        i = j * step
        for r, (name, split) in enumerate(SPLIT_ROWS):
            axes[r, j].imshow(data.mnist_pixels(splits[split].x[i, 0]).numpy(), cmap="gray",
                              vmin=0, vmax=255)
            y = splits[split].y[i].item()
            axes[r, j].set_title(f"{name}\ny={y}" if j == 0 else f"y={y}", fontsize=7)
        axes[3, j].imshow(splits["test_contaminated"].mask[i, 0], cmap="Reds", vmin=0, vmax=1)
        axes[3, j].set_title("mask M" if j == 0 else "", fontsize=7)
    for ax in axes.flat:
        ax.axis("off")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def patch_values(splits: dict[str, Split]):
    """The patch's brightness against the label in the training split, where it determines the
    (recorded) label, and in the permuted test split, where it does not."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 2.8), sharey=True)
    for ax, name in zip(axes, ["train", "test_permuted"]):
        ax.scatter(splits[name].y, data.mnist_patch_brightness(splits[name]), s=4, alpha=0.3)
        ax.set_xlabel("label")
        ax.set_title(name, fontsize=9)
    axes[0].set_ylabel("patch brightness")
    fig.tight_layout()
    return fig


def medical_contaminations(seed: int):
    """PNEU's and KNEE's text tags and stripes, each label once, on real MNIST digits resized to
    224 px (the x-rays are not shipped), with each mask outlined in red."""
    from PIL import Image

    x_train, _, _, _ = data.mnist_embedded()
    canvas = np.stack([np.asarray(Image.fromarray(x_train[i].astype(np.uint8)).resize((224, 224)),
                                  dtype=np.float32) for i in range(0, 4000, 800)])
    rng = np.random.default_rng(seed)
    panels = [
        ("PNEU tags", sc.text_tag(canvas[:2], np.array([0, 1]), rng, tags=sc.PNEU_TAGS)),
        ("KNEE tags", sc.text_tag(canvas, np.arange(5), rng, tags=sc.KNEE_TAGS)),
        ("PNEU stripes", sc.stripe(canvas[:2], np.array([0, 1]), rng, step=127)),
        ("KNEE stripes", sc.stripe(canvas, np.arange(5), rng, step=51)),
    ]
    fig, axes = plt.subplots(len(panels), 5, figsize=(9, 7.5))
    for r, (title, (imgs, masks)) in enumerate(panels):
        for j in range(5):
            ax = axes[r, j]
            ax.axis("off")
            if j < len(imgs):
                ax.imshow(imgs[j], cmap="gray", vmin=0, vmax=255)
                ax.contour(masks[j], levels=[0.5], colors="red", linewidths=0.8)
                ax.set_title(f"{title}, label {j}", fontsize=7)
    fig.suptitle("Medical contaminations on resized MNIST canvases (mask outlined in red)",
                 fontsize=9)
    fig.tight_layout()
    return fig
