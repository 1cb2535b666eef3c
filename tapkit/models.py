"""Models with named target layers, and :func:`capture` to read their activations.

A registry in the style of torchvision's ``get_model``/``list_models``: each builder declares the
layers TAP penalises as data (module names, as ``named_modules`` spells them), and activations are
read with forward hooks from the *unmodified* model, so any ``nn.Module`` a user brings works the
same way::

    with capture(model, ["layer1", "layer2"]) as acts:
        logits = model(x)
    loss = ce(logits, y) + lam * tap(list(acts.values()), mask)
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import torch
from torch import nn

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelSpec:
    """A registered architecture: its builder and the layers TAP targets (paper, Models section)."""

    name: str
    builder: Callable[..., nn.Module]
    targets: tuple[str, ...]
    torchvision_name: str | None = None


_REGISTRY: dict[str, ModelSpec] = {}


def register_model(name: str, targets: Sequence[str], torchvision_name: str | None = None):
    """Decorator adding a builder ``(num_classes, in_channels) -> nn.Module`` to the registry."""

    def wrap(builder: Callable[..., nn.Module]) -> Callable[..., nn.Module]:
        _REGISTRY[name] = ModelSpec(name, builder, tuple(targets), torchvision_name)
        return builder

    return wrap


def list_models() -> list[str]:
    return sorted(_REGISTRY)


def get_spec(name: str) -> ModelSpec:
    if name not in _REGISTRY:
        raise ValueError(f"unknown model {name!r}; valid models: {', '.join(list_models())}")
    return _REGISTRY[name]


def target_layers(name: str) -> tuple[str, ...]:
    """The layers the paper penalises for a registered model."""
    return get_spec(name).targets


class TwoLayerCNN(nn.Module):
    """The paper's MNIST model (Appendix B): two conv blocks and one linear layer."""

    def __init__(self, num_classes: int = 10, in_channels: int = 1, image_size: int = 28):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 100, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(100, 100, 3)
        self.relu2 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        side = ((image_size // 2) - 2) // 2
        self.fc = nn.Linear(100 * side * side, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool1(self.relu1(self.conv1(x)))
        x = self.pool2(self.relu2(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


@register_model("two_layer_cnn", targets=("pool1", "pool2"))
def two_layer_cnn(num_classes: int = 10, in_channels: int = 1, image_size: int = 28) -> nn.Module:
    """Targets: the outputs of the two conv blocks (after their max-pool, as for VGG-16 and as in
    the authors' released code), a quarter of the pre-pool ReLU maps' size."""
    return TwoLayerCNN(num_classes, in_channels, image_size)


def _torchvision(name: str, num_classes: int, in_channels: int, weights) -> nn.Module:
    import torchvision

    model = torchvision.models.get_model(name, weights=weights)
    _replace_head(model, num_classes)
    if in_channels != 3:
        _replace_stem(model, in_channels)
    return model


def _replace_head(model: nn.Module, num_classes: int) -> None:
    """Swap the ImageNet classifier for one with ``num_classes`` outputs."""
    for attr in ("fc", "classifier"):
        head = getattr(model, attr, None)
        if isinstance(head, nn.Linear):
            setattr(model, attr, nn.Linear(head.in_features, num_classes))
            return
        if isinstance(head, nn.Sequential) and isinstance(head[-1], nn.Linear):
            head[-1] = nn.Linear(head[-1].in_features, num_classes)
            return
    raise ValueError(f"cannot find the classifier head of {type(model).__name__}")


def _replace_stem(model: nn.Module, in_channels: int) -> None:
    """Replace the first convolution so the model takes ``in_channels`` channels."""
    for name, module in model.named_modules():
        if isinstance(module, nn.Conv2d) and module.in_channels == 3:
            parent = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
            new = nn.Conv2d(in_channels, module.out_channels, module.kernel_size, module.stride,
                            module.padding, bias=module.bias is not None)
            setattr(parent, name.rsplit(".", 1)[-1], new)
            return


def _tv_builder(tv_name: str):
    def build(num_classes: int = 2, in_channels: int = 3, weights=None) -> nn.Module:
        return _torchvision(tv_name, num_classes, in_channels, weights)

    return build


# Targets as the paper's Models section states them; see the book's reproduction report for the
# released code's choices (e.g. DenseNet transitions instead of dense blocks).
register_model("vgg16", ("features.4", "features.9", "features.16", "features.23", "features.30"),
               "vgg16")(_tv_builder("vgg16"))
register_model("resnet18", ("layer1", "layer2", "layer3", "layer4"), "resnet18")(
    _tv_builder("resnet18"))
register_model("densenet121", ("features.denseblock1", "features.denseblock2",
                               "features.denseblock3", "features.denseblock4"), "densenet121")(
    _tv_builder("densenet121"))
register_model("efficientnet_b0", ("features.2", "features.3", "features.5", "features.7"),
               "efficientnet_b0")(_tv_builder("efficientnet_b0"))
register_model("mobilenet_v2", ("features.3", "features.6", "features.13", "features.17"),
               "mobilenet_v2")(_tv_builder("mobilenet_v2"))


@dataclass(frozen=True)
class BuiltModel:
    model: nn.Module
    targets: tuple[str, ...]
    weights: str  # "random", a torchvision weights name, or "random (offline fallback)"


def build_model(name: str, num_classes: int, in_channels: int = 1, pretrained: bool = False,
                image_size: int = 28) -> BuiltModel:
    """Build a registered model; ``pretrained`` asks for torchvision's default ImageNet weights.

    When the weights cannot be had (offline), warn once and fall back to random initialisation;
    the returned ``weights`` field records which happened so results can say so.
    """
    spec = get_spec(name)
    if spec.torchvision_name is None:
        if pretrained:
            raise ValueError(f"{name} has no pretrained weights; use pretrained=False")
        return BuiltModel(spec.builder(num_classes, in_channels, image_size), spec.targets,
                          "random")
    weights, label = None, "random"
    if pretrained:
        import torchvision

        enum = torchvision.models.get_model_weights(spec.torchvision_name).DEFAULT
        try:
            model = spec.builder(num_classes, in_channels, weights=enum)
            return BuiltModel(model, spec.targets, str(enum))
        except Exception as err:  # noqa: BLE001 - any download failure means "offline"
            _warn_offline(name, err)
            label = "random (offline fallback)"
    return BuiltModel(spec.builder(num_classes, in_channels, weights=weights), spec.targets,
                      label)


_WARNED: set[str] = set()


def _warn_offline(name: str, err: Exception) -> None:
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(f"ImageNet weights for {name} could not be loaded ({type(err).__name__}: "
                      f"{err}); using random initialisation. The results record this.",
                      stacklevel=3)


def get_model(name: str, num_classes: int, in_channels: int = 1, pretrained: bool = False,
              image_size: int = 28) -> nn.Module:
    """Shorthand for ``build_model(...).model``."""
    return build_model(name, num_classes, in_channels, pretrained, image_size).model


def validate_layers(model: nn.Module, layers: Sequence[str]) -> None:
    """Raise ValueError naming the valid module names if any of ``layers`` is not in ``model``."""
    if isinstance(layers, str):
        raise ValueError("layers must be a sequence of module names, not a single string")
    if len(layers) == 0:
        raise ValueError("layers is empty: name at least one module to capture")
    names = [n for n, _ in model.named_modules() if n]
    missing = [layer for layer in layers if layer not in set(names)]
    if missing:
        shown = ", ".join(names[:60]) + (" ..." if len(names) > 60 else "")
        raise ValueError(f"unknown layer(s) {missing} in {type(model).__name__}; valid names: {shown}")


@contextlib.contextmanager
def capture(model: nn.Module, layers: Sequence[str]) -> Iterator["OrderedDict[str, torch.Tensor]"]:
    """Record the outputs of the named modules during forward passes inside the block.

    The tensors are *not* detached, so a loss on them trains the model. Hooks are removed in
    ``finally``, even when the block raises. If a module runs more than once per forward, the
    last output is kept.
    """
    validate_layers(model, layers)
    acts: OrderedDict[str, torch.Tensor] = OrderedDict((name, None) for name in layers)  # type: ignore[misc]
    handles = []

    def hook_for(name: str):
        def hook(_module, _inputs, output):
            acts[name] = output

        return hook

    try:
        for name in layers:
            handles.append(model.get_submodule(name).register_forward_hook(hook_for(name)))
        yield acts
    finally:
        for handle in handles:
            handle.remove()
