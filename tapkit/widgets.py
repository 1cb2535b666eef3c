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

    ex = explorer({"No XS": m0, "TAP": m1}, splits["test_permuted"], ["relu1", "relu2"], live=True)
    ex            # displays the widget; ex.current holds the arrays on show
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from torch import nn

from .data import Split
from .views import (HEAT, LEGEND, MASK_COLOUR, MAX_STATIC_IMAGES, View,  # noqa: F401 (the chapters')
                    activation_html, compute_views, gradient_html, input_html, probs_html,
                    render_map, views_summary)


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


def spread_over_classes(labels: np.ndarray, n: int, first: Sequence[int] = ()) -> list[int]:
    """``n`` image positions for a kernel-free explorer (which stores few images): ``first``
    (e.g. images a model gets wrong), then the first image of each class in turn (0, 1, ..., 9,
    0, ...), skipping any already picked, so that every class is on the slider."""
    picked = [int(i) for i in first][:n]
    per_class = [np.flatnonzero(labels == c) for c in range(int(labels.max()) + 1)]
    for rank in range(max(len(p) for p in per_class)):
        picked += [int(p[rank]) for p in per_class if rank < len(p) and int(p[rank]) not in picked]
        if len(picked) >= n:
            break
    return picked[:n]


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
