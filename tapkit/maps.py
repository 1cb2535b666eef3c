"""What a trained model looks at: input gradients and channel-summed activation maps A^l (Eq. 6)
of its target layers, for the overlap analysis, the visual comparison and the widgets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

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


def explain(model: nn.Module, x: Tensor, layers: Sequence[str]) -> Maps:
    """Input gradients of the summed log-probabilities and the activation maps of ``layers``.

    The caller chooses the model's mode (normally ``model.eval()``); nothing is trained.
    """
    x = x.detach().clone().requires_grad_(True)
    with capture(model, layers) as acts:
        logits = model(x)
    grad = input_gradients(logits, x, create_graph=False).sum(1, keepdim=True)
    maps = {name: a.detach().sum(1, keepdim=True) for name, a in acts.items()}
    return Maps(grad.detach(), maps, torch.softmax(logits.detach(), 1))
