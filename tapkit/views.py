"""What the explorer (:mod:`tapkit.widgets`) shows, computed and drawn without widgets: one
:class:`View` per image, model and layer (:func:`tapkit.maps.explain`), and its panels as small
PNG images in HTML."""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from torch import nn

from . import maps
from .data import Split
from .losses import downscale_mask

MASK_COLOUR = (0, 229, 255)   # cyan outline: the mask M and its downscaled D(M, l)
HEAT = "magma"                # input-gradient magnitude and activation maps
MAX_STATIC_IMAGES = 24        # keeps the page's embedded widget state small


@dataclass(frozen=True)
class View:
    """What the explorer shows for one image, model and layer (numpy arrays, one image)."""

    index: int                # position of the image in the split
    label: int
    image: np.ndarray         # H x W, channel mean of the (normalised) input
    mask: np.ndarray          # H x W, the ground-truth mask M
    input_grad: np.ndarray    # H x W, channel-summed input gradient (tapkit.maps.explain)
    layer: str
    activation: np.ndarray    # h x w, channel-summed activation A^l of ``layer``
    layer_mask: np.ndarray    # h x w, D(M, l): the mask TAP applies to A^l
    probs: np.ndarray         # K predicted class probabilities

    @property
    def prediction(self) -> int:
        return int(self.probs.argmax())

    @property
    def grad_in_mask(self) -> float:
        """Share of the input gradient's magnitude inside the mask."""
        mag = np.abs(self.input_grad)
        return float(mag[self.mask > 0].sum() / max(mag.sum(), 1e-12))

    @property
    def activation_in_mask(self) -> float:
        """Share of the activation map inside the downscaled mask (where D(M, l) > 0)."""
        act = np.abs(self.activation)
        return float(act[self.layer_mask > 0].sum() / max(act.sum(), 1e-12))


def compute_views(model: nn.Module, split: Split, indices: Sequence[int], layers: Sequence[str],
                  kernel_size: int = 3) -> list[dict[str, View]]:
    """For each image of ``split`` at ``indices``, one :class:`View` per layer, from a single
    :func:`tapkit.maps.explain` call. The model is used as it is (put it in eval mode first)."""
    indices = [int(i) for i in indices]
    device = next(model.parameters()).device
    x = split.x[indices].to(device)
    mask = split.mask[indices].float()
    out = maps.explain(model, x, list(layers))
    grads = out.input_grad.cpu()
    probs = out.probs.cpu()
    views = []
    for j, idx in enumerate(indices):
        per_layer = {}
        for layer in layers:
            act = out.activations[layer][j: j + 1].cpu()
            small = downscale_mask(mask[j: j + 1], tuple(act.shape[-2:]), kernel_size)
            per_layer[layer] = View(
                index=idx, label=int(split.y[idx]), image=x[j].mean(0).cpu().numpy(),
                mask=mask[j, 0].numpy(), input_grad=grads[j, 0].numpy(), layer=layer,
                activation=act[0, 0].numpy(), layer_mask=small[0, 0].numpy(),
                probs=probs[j].numpy())
        views.append(per_layer)
    return views


def views_summary(models: Mapping[str, nn.Module], split: Split, indices: Sequence[int],
                  layers: Sequence[str], kernel_size: int = 3):
    """Per model, over the images of ``split`` at ``indices``: how many it classifies right, the
    share of its input-gradient magnitude inside the mask M and the share of each layer's
    activation inside D(M, l) (Definition 2 with ``kernel_size``), averaged over the images: the
    explorer's images, summed up (a ``pandas.DataFrame`` indexed by model)."""
    import pandas as pd

    rows = []
    for name, model in models.items():
        views = compute_views(model, split, indices, layers, kernel_size)
        first = [v[layers[0]] for v in views]
        row: dict = {"model": name,
                     "right": f"{sum(v.prediction == v.label for v in first)}/{len(first)}",
                     "|∇x| inside M": np.mean([v.grad_in_mask for v in first])}
        for layer in layers:
            row[f"{layer} inside D(M,l)"] = np.mean([v[layer].activation_in_mask for v in views])
        rows.append(row)
    return pd.DataFrame(rows).set_index("model")


# --------------------------------------------------------------------------- rendering

def _outline(region: np.ndarray) -> np.ndarray:
    """Pixels of ``region`` (bool) with a 4-neighbour outside it: a one-pixel inner border."""
    pad = np.pad(region, 1, constant_values=False)
    inner = pad[:-2, 1:-1] & pad[2:, 1:-1] & pad[1:-1, :-2] & pad[1:-1, 2:]
    return region & ~inner


def _upscale(a: np.ndarray, size: int) -> np.ndarray:
    """Nearest-neighbour resize of a 2-D array to ``size`` x ``size``."""
    rows = (np.arange(size) * a.shape[0] // size).clip(0, a.shape[0] - 1)
    cols = (np.arange(size) * a.shape[1] // size).clip(0, a.shape[1] - 1)
    return a[rows][:, cols]


def render_map(values: np.ndarray, region: np.ndarray | None, size: int = 112,
               cmap: str | None = HEAT) -> bytes:
    """A PNG of ``values`` (gray when ``cmap`` is None, else a heat map scaled to its own range)
    upscaled to ``size`` px, with the outline of ``region`` (> 0) in :data:`MASK_COLOUR`."""
    from matplotlib import colormaps
    from PIL import Image

    v = np.asarray(values, dtype=np.float64)
    lo, hi = (v.min(), v.max()) if cmap is None else (0.0, np.abs(v).max())
    norm = (v if cmap is None else np.abs(v)) - lo
    norm = norm / (hi - lo) if hi > lo else np.zeros_like(norm)
    if cmap is None:
        rgb = np.repeat((norm * 255)[..., None], 3, axis=2)
    else:
        rgb = colormaps[cmap](norm)[..., :3] * 255
    rgb = _upscale(rgb.astype(np.uint8), size)
    if region is not None and np.any(region > 0):
        edge = _outline(_upscale(np.asarray(region) > 0, size))
        thick = edge | np.roll(edge, 1, 0) | np.roll(edge, 1, 1)  # two pixels wide
        rgb[thick & _upscale(np.asarray(region) > 0, size)] = MASK_COLOUR
    buf = io.BytesIO()
    Image.fromarray(rgb, "RGB").save(buf, format="png", optimize=True)
    return buf.getvalue()


def _panel(png: bytes, alt: str, caption: str) -> str:
    src = "data:image/png;base64," + base64.b64encode(png).decode()
    return (f'<div style="line-height:1.25"><img src="{src}" alt="{html.escape(alt)}" '
            f'style="display:block;image-rendering:pixelated"><div style="font-size:12px;'
            f'margin-top:2px">{caption}</div></div>')


def input_html(v: View, size: int = 112) -> str:
    return _panel(render_map(v.image, v.mask, size, cmap=None), f"test image {v.index}",
                  f"test image #{v.index} · label {v.label}")


def gradient_html(v: View, size: int = 112) -> str:
    return _panel(render_map(v.input_grad, v.mask, size), "input gradient",
                  f"|∇ₓ| inside M: {v.grad_in_mask:.0%}")


def activation_html(v: View, size: int = 112) -> str:
    h, w = v.activation.shape
    return _panel(render_map(v.activation, v.layer_mask, size), f"activation map {v.layer}",
                  f"{html.escape(v.layer)} ({h}×{w}) · inside D(M,l): {v.activation_in_mask:.0%}")


def probs_html(v: View, classes: Sequence[str] | None = None) -> str:
    """A small bar chart of the predicted probabilities; the prediction in bold, the true label
    marked."""
    classes = list(classes) if classes is not None else [str(k) for k in range(len(v.probs))]
    rows = []
    for k, p in enumerate(v.probs):
        colour = "#e8590c" if k == v.prediction else "#adb5bd"
        weight = "bold" if k == v.prediction else "normal"
        mark = " ← true" if k == v.label else ""
        rows.append(f'<div style="font-weight:{weight};white-space:nowrap">'
                    f'<span style="display:inline-block;width:1.6em">{html.escape(classes[k])}</span>'
                    f'<span style="display:inline-block;width:{max(1, round(80 * p))}px;'
                    f'height:8px;background:{colour}"></span> {p:.0%}{mark}</div>')
    verdict = "right" if v.prediction == v.label else "wrong"
    head = (f'<div style="margin-bottom:3px">predicts <b>{html.escape(classes[v.prediction])}</b>'
            f' ({verdict})</div>')
    return f'<div style="font-size:12px;line-height:1.3">{head}{"".join(rows)}</div>'


LEGEND = ("<div style='font-size:12px;color:#555'>Cyan outline: the mask M on the input and the "
          "gradient; on the activation map, the downscaled mask D(M, l) that TAP penalises. "
          "Each map is scaled to its own maximum (magma colour map; gradient as magnitude). "
          "Percentages: share of the gradient magnitude inside M, and of the activation inside "
          "D(M, l).</div>")


# --------------------------------------------------------------------------- the explorer
