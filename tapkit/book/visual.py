"""The visual comparison (the paper's Figure 1 and its appendix figures): input gradients and
activation maps of the PNEU/KNEE chapters' models on a few contaminated test images, with the
tags outlined. The models are those chapters' runs (:func:`.medical.medical_runs` with their
searched λ), read from the results store: the figures train nothing once those chapters ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
from torch import Tensor

from ..experiments import medical_plans
from ..maps import Maps, explain, plot_maps
from ..models import target_sigma
from . import labels, medical, report
from .chapter import Chapter


@dataclass(frozen=True)
class Explained:
    """What one figure shows: ``images`` and their tag ``masks`` (N x C x H x W, N x 1 x H x W),
    the maps of each method's model on them (keyed by its label, e.g. "TAP"), and the provenance
    ``label`` of the runs."""

    images: Tensor
    masks: Tensor
    maps: dict[str, Maps]
    label: str


def explained(ch: Chapter, experiment: str, model: str, cases: Sequence[str], count: int,
              image_seed: int = 0, lambdas: Mapping[str, Any] | None = None) -> Explained:
    """``count`` test images of ``experiment``'s contaminated split, drawn at random with
    ``image_seed`` (the same for every case, so that the rows compare one image), and the maps
    (:func:`tapkit.maps.explain`) of each of ``cases``' models of architecture ``model`` (the
    chapter's first seed, the PNEU/KNEE chapters' λ: their search's choice, then ``lambdas``). A
    run that did not converge has no model and no maps."""
    s, root, dev = ch.settings, ch.root, ch.device
    lams = medical_plans.searched_lambdas(root, experiment, "tag", lambdas)  # as PNEU/KNEE
    runs = [r for r in medical.medical_runs(s, experiment, [model], list(cases), "tag", lams)
            if r.seed == s.seeds[0]]
    label = report.provenance_label(medical.run_frame(runs, root, dev), ch.profile)
    found, x, mask = {}, None, None
    for run in runs:
        loaded = medical.trained(run, root, dev)
        if loaded is None:  # did not converge: no model to show
            continue
        net, _, splits = loaded
        test = splits["test_contaminated"]
        idx = np.sort(np.random.default_rng(image_seed).choice(len(test), count, replace=False))
        x, mask = test.x[idx], test.mask[idx]
        got = explain(net, x.to(dev), medical.overlap_layers(model), target_sigma(model))
        found[labels.label(run.method)] = Maps(
            got.input_grad.cpu(), {k: a.cpu() for k, a in got.activations.items()},
            got.probs.cpu())
    if x is None:
        raise RuntimeError(f"no model of {model} on {experiment} converged for {list(cases)} "
                           f"(seed {s.seeds[0]}): run the PNEU/KNEE chapters, or leave the "
                           "architecture out of `models`")
    return Explained(x, mask, found, label)


def figure(ch: Chapter, experiment: str, model: str, cases: Sequence[str], count: int,
           name: str, caption: str, image_seed: int = 0,
           lambdas: Mapping[str, Any] | None = None) -> tuple[Tensor, dict[str, Maps]]:
    """Draw, save (``figures/<name>.png``) and show one figure of :func:`tapkit.maps.plot_maps`
    for :func:`explained`, titled ``caption``, the architecture and the data; the runs' label is
    the caption beneath it (text on the page, not in the figure). Returns the masks and maps
    drawn, which the page's opening reads."""
    import matplotlib.pyplot as plt
    from IPython.display import Markdown, display

    shown = explained(ch, experiment, model, cases, count, image_seed, lambdas)
    layer_labels = [f"Act {i + 1}" for i in range(len(medical.overlap_layers(model)))]
    title = f"{caption}: {labels.label(model)}, {medical.data_name(ch.settings, experiment)}"
    fig = plot_maps(shown.images, shown.masks, shown.maps, layer_labels, title)
    report.fit_text(fig)
    fig.tight_layout()
    report.save_figure(fig, ch.root, name)
    plt.show()
    display(Markdown(f"*{shown.label}*"))
    return shown.masks, shown.maps
