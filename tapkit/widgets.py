"""An ipywidgets explorer of what trained models look at: pick a test image, a model and a layer;
see the input with its mask, the input gradient, the channel-summed activation map of the layer
with the downscaled mask D(M, l) drawn on top, and the predicted probabilities.

Two modes share one layout and one set of controls:

* ``live=True`` runs the models in the kernel: moving a control calls :func:`tapkit.maps.explain`
  for the selected image and layer (``observe`` callbacks) and redraws. Any test image can be
  browsed. Needs a running kernel.
* ``live=False`` (kernel-free) precomputes every combination of a few images, the models and the
  layers as small PNGs in :class:`ipywidgets.HTML` panels inside :class:`ipywidgets.Stack`s, and
  links the controls to the stacks' ``selected_index`` in the browser (``jslink``). Saved as
  widget state by papermill/nbclient, it works in the static book with no kernel.

::

    ex = explorer({"No XS": m0, "TAP": m1}, splits["test_permuted"], ["pool1", "pool2"], live=True)
    ex            # displays the widget; ex.current holds the arrays on show
"""

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

class Explorer:
    """The explorer widget (see the module docstring); display it, or its ``widget``.

    Controls: ``image`` (IntSlider over positions in ``indices``), ``model`` and ``layer``
    (Dropdowns). In live mode ``current`` is the :class:`View` on show and ``recomputed`` counts
    the views computed (one :func:`tapkit.maps.explain` call each); in kernel-free mode ``links``
    holds the ``jslink``s from the controls to the Stacks of precomputed panels.
    """

    def __init__(self, models: Mapping[str, nn.Module], split: Split, layers: Sequence[str], *,
                 indices: Sequence[int] | None = None, live: bool = False,
                 classes: Sequence[str] | None = None, kernel_size: int = 3, size: int = 112):
        import ipywidgets as w
        from ipywidgets.widgets.widget_string import HTMLStyle

        if not models:
            raise ValueError("models is empty: pass {label: trained model}")
        if isinstance(layers, str) or not layers:
            raise ValueError("layers must be a non-empty sequence of module names")
        if indices is None:
            indices = range(len(split)) if live else range(min(12, len(split)))
        self.indices = [int(i) for i in indices]
        if not self.indices:
            raise ValueError("indices is empty")
        if not live and len(self.indices) > MAX_STATIC_IMAGES:
            raise ValueError(f"{len(self.indices)} images would make a large page; the kernel-free "
                             f"explorer takes at most {MAX_STATIC_IMAGES} (use live=True to browse)")
        self.models = dict(models)
        for model in self.models.values():
            model.eval()
        self.split, self.layers, self.live = split, list(layers), live
        self.classes, self.kernel_size, self.size = classes, kernel_size, size
        self.current: View | None = None
        self.recomputed = 0
        self.links: list = []   # kernel-free mode: the browser-side links, control -> Stack

        self.image = w.IntSlider(value=0, min=0, max=len(self.indices) - 1, description="image",
                                 continuous_update=False)
        self.model = w.Dropdown(options=list(self.models), description="model")
        self.layer = w.Dropdown(options=self.layers, description="layer")
        self._panel_layout = w.Layout(width=f"{size + 40}px")
        self._probs_layout = w.Layout(width="190px")
        self._style = HTMLStyle()  # one shared style and layout: fewer models in the state
        titles = ["input and mask", "input gradient", "activation map", "prediction"]
        heads = [w.HTML(f"<b>{t}</b>", layout=self._probs_layout if t == "prediction"
                        else self._panel_layout, style=self._style) for t in titles]
        panels = self._live_panels() if live else self._static_panels()
        columns = [w.VBox([h, p]) for h, p in zip(heads, panels)]
        self.widget = w.VBox([w.HBox([self.image, self.model, self.layer]), w.HBox(columns),
                              w.HTML(LEGEND)])

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    def _html(self, value: str, probs: bool = False):
        import ipywidgets as w

        return w.HTML(value, layout=self._probs_layout if probs else self._panel_layout,
                      style=self._style)

    # live: one panel each, redrawn by observe callbacks ---------------------------------
    def view(self, position: int, model: str, layer: str) -> View:
        """Compute the view of the image at ``position`` (in ``indices``) for one model/layer."""
        self.recomputed += 1
        return compute_views(self.models[model], self.split, [self.indices[position]], [layer],
                             self.kernel_size)[0][layer]

    def _live_panels(self):
        self._live = [self._html(""), self._html(""), self._html(""), self._html("", probs=True)]
        for control in (self.image, self.model, self.layer):
            control.observe(lambda _change: self._redraw(), names="value")
        self._redraw()
        return self._live

    def _redraw(self) -> None:
        v = self.view(self.image.value, self.model.value, self.layer.value)
        self.current = v
        for panel, value in zip(self._live, (input_html(v, self.size), gradient_html(v, self.size),
                                             activation_html(v, self.size),
                                             probs_html(v, self.classes))):
            panel.value = value

    # kernel-free: every combination precomputed, controls jslink-ed to Stacks -----------
    def _static_panels(self):
        import ipywidgets as w

        views = {name: compute_views(model, self.split, self.indices, self.layers, self.kernel_size)
                 for name, model in self.models.items()}
        first = views[next(iter(views))]

        def images(render, per_image, probs=False):
            stack = w.Stack([self._html(render(v), probs) for v in per_image], selected_index=0)
            self.links.append(w.jslink((self.image, "value"), (stack, "selected_index")))
            return stack

        def choose(control, children):
            stack = w.Stack(children, selected_index=0)
            self.links.append(w.jslink((control, "index"), (stack, "selected_index")))
            return stack

        size = self.size
        inputs = images(lambda v: input_html(v, size), [per[self.layers[0]] for per in first])
        grads = choose(self.model, [images(lambda v: gradient_html(v, size),
                                           [per[self.layers[0]] for per in views[m]])
                                    for m in self.models])
        acts = choose(self.model, [choose(self.layer, [images(lambda v: activation_html(v, size),
                                                              [per[layer] for per in views[m]])
                                                       for layer in self.layers])
                                   for m in self.models])
        probs = choose(self.model, [images(lambda v: probs_html(v, self.classes),
                                           [per[self.layers[0]] for per in views[m]], probs=True)
                                    for m in self.models])
        return [inputs, grads, acts, probs]


def explorer(models: Mapping[str, nn.Module], split: Split, layers: Sequence[str], *,
             indices: Sequence[int] | None = None, live: bool = False,
             classes: Sequence[str] | None = None, kernel_size: int = 3,
             size: int = 112) -> Explorer:
    """The activation-map explorer over ``models`` (label -> trained model, in dropdown order) on
    the images of ``split`` at ``indices`` (default: all in live mode, the first 12 otherwise),
    for the penalised ``layers``. ``live=True`` recomputes in the kernel; ``live=False``
    precomputes and works in static HTML. ``kernel_size`` is TAP's (for D(M, l))."""
    return Explorer(models, split, layers, indices=indices, live=live, classes=classes,
                    kernel_size=kernel_size, size=size)
