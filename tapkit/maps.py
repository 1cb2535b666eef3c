"""What a trained model looks at: input gradients and channel-summed activation maps A^l (Eq. 6)
of its target layers, for the overlap analysis, the visual comparison and the widgets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import torch
from torch import Tensor, nn

from .losses import input_gradients
from .models import capture


@dataclass(frozen=True)
class Maps:
    """For images ``x`` (N x C x H x W): ``input_grad`` (N x 1 x H x W, channel-summed), one
    activation map per layer (N x 1 x h x w, channel sum of the layer's output) and the
    predicted class probabilities (N x K)."""

    input_grad: Tensor
    activations: dict[str, Tensor]
    probs: Tensor


def explain(model: nn.Module, x: Tensor, layers: Sequence[str],
            sigma: Mapping[str, str] | None = None) -> Maps:
    """Input gradients of the summed log-probabilities and the activation maps of ``layers``
    (Eq. 6: the channel sum after σ; ``sigma`` as :func:`tapkit.models.target_sigma` gives it
    for targets taken before their activation).

    The caller chooses the model's mode (normally ``model.eval()``); nothing is trained.
    """
    x = x.detach().clone().requires_grad_(True)
    with capture(model, layers, sigma) as acts:
        logits = model(x)
    grad = input_gradients(logits, x, create_graph=False).sum(1, keepdim=True)
    maps = {name: a.detach().sum(1, keepdim=True) for name, a in acts.items()}
    return Maps(grad.detach(), maps, torch.softmax(logits.detach(), 1))


def overlap_by_layer(model: nn.Module, x: Tensor, mask: Tensor, layers: Sequence[str],
                     batch_size: int = 64, device: str = "cpu",
                     sigma: Mapping[str, str] | None = None) -> dict[str, tuple[float, float]]:
    """Recall and precision of the top-quartile input gradients (``"ig"``) and activation maps of
    ``layers`` (``"act1"``, ``"act2"``, ...; upsampled to the input) against the spurious region
    ``mask``, pooled over all images (the appendix's quantitative comparison):
    recall = |spurious ∩ top-quartile| / |spurious|, precision = |spurious ∩ top-quartile| / |top-quartile|.
    """
    from .metrics import overlap_counts

    names = ["ig"] + [f"act{i + 1}" for i in range(len(layers))]
    counts = {name: [0, 0, 0] for name in names}
    for start in range(0, len(x), batch_size):
        xb = x[start: start + batch_size].to(device)
        mb = mask[start: start + batch_size].to(device)
        found = explain(model, xb, layers, sigma)
        for name, m in zip(names, [found.input_grad, *found.activations.values()]):
            for i, c in enumerate(overlap_counts(m, mb)):
                counts[name][i] += c
    return {name: (hit / max(sp, 1), hit / max(top, 1)) for name, (hit, sp, top) in counts.items()}


def _tag_box(ax, mask: Tensor) -> None:
    """Outline the bounding box of ``mask`` (H x W) on ``ax``."""
    from matplotlib.patches import Rectangle

    rows, cols = torch.nonzero(mask > 0.5, as_tuple=True)
    if rows.numel() == 0:
        return
    top, left = rows.min().item(), cols.min().item()
    h, w = rows.max().item() - top + 1, cols.max().item() - left + 1
    ax.add_patch(Rectangle((left - 0.5, top - 0.5), w, h, fill=False, edgecolor="cyan", lw=1.2))


def plot_maps(images: Tensor, masks: Tensor, explained: dict[str, Maps], layer_labels: Sequence[str],
              title: str = ""):
    """The paper's Figure 1 and appendix figures: for each image (rows grouped by image) and each
    model in ``explained`` (one row each), the image, |input gradient| and the channel-summed
    activation maps A^l of the penalised layers, with the spurious region (the tag) outlined.

    ``images`` N x C x H x W (normalised; channel 0 is shown), ``masks`` N x 1 x H x W, and
    ``explained[name]`` the :func:`explain` output of model ``name`` on ``images``.
    """
    import matplotlib.pyplot as plt

    if not explained:
        raise ValueError("explained is empty: pass at least one model's maps")
    n, cases = images.shape[0], list(explained)
    ncols = 2 + len(layer_labels)
    for name, found in explained.items():
        if found.input_grad.shape[0] != n or len(found.activations) != len(layer_labels):
            raise ValueError(f"maps of {name!r} do not match {n} images and {len(layer_labels)} layers")
    fig, axes = plt.subplots(n * len(cases), ncols, figsize=(1.5 * ncols, 1.5 * n * len(cases)),
                             squeeze=False)
    headers = ["image", "input gradient"] + list(layer_labels)
    for i in range(n):
        for j, name in enumerate(cases):
            row = axes[i * len(cases) + j]
            found = explained[name]
            panels = [images[i, 0], found.input_grad[i, 0].abs()]
            panels += [a[i, 0] for a in found.activations.values()]
            for k, (ax, panel) in enumerate(zip(row, panels)):
                ax.imshow(panel.detach().cpu().numpy(), cmap="gray" if k == 0 else "magma",
                          extent=(-0.5, images.shape[-1] - 0.5, images.shape[-2] - 0.5, -0.5))
                _tag_box(ax, masks[i, 0])
                ax.set_xticks([])
                ax.set_yticks([])
                if i == 0 and j == 0:
                    ax.set_title(headers[k], fontsize=7)
            row[0].set_ylabel(f"{name}\nimage {i + 1}", fontsize=7)
    if title:
        fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    return fig
