"""A model's starting weights. ImageNet weights for the torchvision models: loaded when asked
for, and when they cannot be (offline, no cached file) either a random start, recorded and warned
about once (the quick profile), or an error saying which file to put where (the paper profile).
Or another run's trained weights (:func:`start_from`): the quick profile's pretrained start."""

from __future__ import annotations

import os
import warnings
from typing import Callable

import torch
from torch import nn


def pretrained_or_random(builder: Callable, name: str, torchvision_name: str, num_classes: int,
                         in_channels: int, pretrained: bool,
                         weights_fallback: bool) -> tuple[nn.Module, str]:
    """``builder``'s model and its weights label: torchvision's default weights for
    ``torchvision_name`` (``pretrained``), else ``"random"``, or ``"random (offline fallback)"``."""
    label = "random"
    if pretrained:
        import torchvision

        enum = torchvision.models.get_model_weights(torchvision_name).DEFAULT
        try:
            return builder(num_classes, in_channels, weights=enum), str(enum)
        except Exception as err:  # noqa: BLE001 - any download failure means "offline"
            if not weights_fallback:
                raise RuntimeError(_missing_weights_message(name, enum, err)) from err
            _warn_offline(name, err)
            label = "random (offline fallback)"
    return builder(num_classes, in_channels, weights=None), label


def _missing_weights_message(name: str, enum, err: Exception) -> str:
    path = os.path.join(torch.hub.get_dir(), "checkpoints", os.path.basename(enum.url))
    return (f"ImageNet weights {enum} for {name} could not be loaded ({type(err).__name__}: {err}). "
            f"Download {enum.url} and save it as {path} (torchvision loads that file without "
            "network; $TORCH_HOME sets the directory), or allow the random-weights fallback "
            "(weights_fallback=True, the quick profile).")


_WARNED: set[str] = set()


def _warn_offline(name: str, err: Exception) -> None:
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"ImageNet weights for {name} could not be loaded ({type(err).__name__}: "
                      f"{err}); using random initialisation. The results record this.",
                      stacklevel=3)




def start_from(model: nn.Module, state: dict[str, torch.Tensor]) -> list[str]:
    """Copy into ``model`` every tensor of ``state`` (another run's trained weights) whose name
    and shape match, as fine-tuning from ImageNet weights keeps all but the classifier; return the
    names left at their initial values (the head, when the class counts differ). ``ValueError``
    when less than half of the model's tensors match: ``state`` is another architecture's."""
    own = model.state_dict()
    matched = {k: v for k, v in state.items() if k in own and own[k].shape == v.shape}
    if len(matched) < len(own) / 2:
        raise ValueError(f"the start's weights fit {len(matched)} of the model's {len(own)} "
                         "tensors: they belong to another architecture")
    model.load_state_dict(matched, strict=False)
    return sorted(set(own) - set(matched))
