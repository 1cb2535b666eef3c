"""Models with named target layers, and :func:`capture` to read their activations.

A registry in the style of torchvision's ``get_model``/``list_models``: each builder declares the
layers TAP penalises as data (module names, as ``named_modules`` spells them), and activations are
read with forward hooks from the *unmodified* model, so any ``nn.Module`` a user brings works the
same way::

    with capture(model, ["layer1", "layer2"]) as acts:
        logits = model(x)
    loss = ce(logits, y) + lam * tap(list(acts.values()), mask)

The activation map of Eq. 6 is taken *after* the activation function σ. Where a target's output
is already post-activation (ReLU outputs, max-pools of them) nothing is declared; where it is not
(a DenseNet ``norm5`` followed by a functional ReLU, the linear bottlenecks of EfficientNet and
MobileNet), the registry declares σ for that target and :func:`capture` applies it, so every
registered target's map is non-negative.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Iterator, Mapping, Sequence

import torch
from torch import nn

from .weights import pretrained_or_random

log = logging.getLogger(__name__)


# σ of Eq. 6 for targets whose module output is not yet post-activation. ``relu`` where the
# network itself applies a ReLU next (functionally, so no module to hook); ``abs`` for linear
# (identity-activation) outputs, whose sign carries information: Σ_c |Z_c| is zero only where
# every channel is, so penalising it suppresses the signal rather than one sign of it.
#: σ of Eq. 6 by name, for targets whose output is taken before their activation function.
SIGMAS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"relu": torch.relu, "abs": torch.abs}


class Role(Enum):
    """Where an architecture stands in the paper: its Decoy-MNIST model, one of its three medical
    architectures (the PNEU/KNEE tables and Table 1), one of the appendix's two further ones, or a
    registry variant of one of those (the authors' head, the released targets) that a profile
    may train in its place and that the paper's lists do not name."""

    MNIST = "the paper's Decoy-MNIST model"
    MAIN = "a medical architecture of the paper's tables"
    APPENDIX = "an architecture of the appendix"
    VARIANT = "a registry variant"


@dataclass(frozen=True)
class ModelSpec:
    """A registered architecture: its builder, the layers TAP targets (paper, Models section),
    σ for those targets whose output is taken before their activation function (Eq. 6), and
    whether :func:`build_model` stores its weights ``channels_last`` (NHWC). That layout is data
    of the architecture, as measured on the 2-core CPU (one thread, paired steps, Adam): the
    two-layer CNN's step 0.78x as long at batch 64 (PyTorch's NCHW max-pool and convolution
    backward are slow there), DenseNet-121's 0.81x at 16 x 64 px; ResNet-18 gains nothing and
    VGG-16 loses, so they keep NCHW. A forward pass differs from NCHW's in the last bits only
    (trained runs drift apart from NCHW ones), and a run still repeats bit for bit."""

    name: str
    builder: Callable[..., nn.Module]
    targets: tuple[str, ...]
    torchvision_name: str | None = None
    sigma: Mapping[str, str] = field(default_factory=dict)
    channels_last: bool = False
    label: str = ""  # the name a reader sees ("ResNet-18"); the registry name when empty
    role: Role = Role.VARIANT  # where it stands in the paper (:func:`models_where`)


_REGISTRY: dict[str, ModelSpec] = {}


def register_model(name: str, targets: Sequence[str], torchvision_name: str | None = None,
                   sigma: Mapping[str, str] | None = None, channels_last: bool = False,
                   label: str = "", role: Role = Role.VARIANT):
    """Decorator adding a builder ``(num_classes, in_channels) -> nn.Module`` to the registry;
    ``sigma`` maps target names to a key of :data:`SIGMAS`; ``channels_last``: the layout of
    its weights; ``label``: the name pages print (:class:`ModelSpec`). A name already
    registered raises ``ValueError`` (a second entry would silently replace the first)."""
    sigma = dict(sigma or {})
    _check_sigma(tuple(targets), sigma)
    if name in _REGISTRY:
        raise ValueError(f"model {name!r} is already registered")

    def wrap(builder: Callable[..., nn.Module]) -> Callable[..., nn.Module]:
        if name in _REGISTRY:
            raise ValueError(f"model {name!r} is already registered")
        _REGISTRY[name] = ModelSpec(name, builder, tuple(targets), torchvision_name, sigma,
                                    channels_last, label or name, role)
        return builder

    return wrap


def _check_sigma(layers: Sequence[str], sigma: Mapping[str, str]) -> None:
    stray = [name for name in sigma if name not in layers]
    if stray:
        raise ValueError(f"sigma names layers {stray} that are not among {list(layers)}")
    bad = {name: s for name, s in sigma.items() if s not in SIGMAS}
    if bad:
        raise ValueError(f"unknown sigma {bad}; expected one of {sorted(SIGMAS)}")


def list_models() -> list[str]:
    """The names of the registered architectures, sorted.

    These are the names :func:`get_model` and :func:`target_layers` accept."""
    return sorted(_REGISTRY)


def models_where(role: Role) -> list[str]:
    """The architectures of ``role``, in registration order (the paper's):
    ``models_where(Role.MAIN) == ["vgg16", "resnet18", "densenet121"]``."""
    return [n for n, spec in _REGISTRY.items() if spec.role is role]


def paper_architecture(name: str) -> str | None:
    """The medical architecture of the paper's tables (:data:`Role.MAIN`) that registered model
    ``name`` is, or is a variant of (the same torchvision architecture: ``vgg16_authors`` ->
    ``vgg16``); None for any other model (the two-layer CNN, the appendix's)."""
    main = get_spec(name).torchvision_name
    return main if main in models_where(Role.MAIN) else None


def model_label(name: str) -> str:
    """The name pages print for a registered model (its :class:`ModelSpec` ``label``)."""
    return get_spec(name).label


def get_spec(name: str) -> ModelSpec:
    if name not in _REGISTRY:
        raise ValueError(f"unknown model {name!r}; valid models: {', '.join(list_models())}")
    return _REGISTRY[name]


def target_layers(name: str) -> tuple[str, ...]:
    """The layers the paper penalises for a registered model."""
    return get_spec(name).targets


def target_sigma(name: str) -> dict[str, str]:
    """σ (a key of :data:`SIGMAS`) of the targets of a registered model that need one (Eq. 6)."""
    return dict(get_spec(name).sigma)


class TwoLayerCNN(nn.Module):
    """The paper's MNIST model (Appendix B): two conv blocks (convolution, ReLU, 2x2 max-pool) and
    one linear layer.

    Each block pools before its ReLU: max-pooling and ReLU commute (the largest of four ReLUs is
    the ReLU of the largest, and the gradient reaches the same pixel), so the function, its
    gradients and a training run are the same bit for bit, while the ReLU and its backward run on
    a quarter of the pixels: a No XS step at batch 64 takes 92-106 ms instead of 116 ms on one
    thread. ``relu1``/``relu2`` are the blocks' outputs.
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 1, image_size: int = 28):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, 100, 3, padding=1)
        self.pool1 = nn.MaxPool2d(2)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(100, 100, 3)
        self.pool2 = nn.MaxPool2d(2)
        self.relu2 = nn.ReLU()
        side = ((image_size // 2) - 2) // 2
        self.fc = nn.Linear(100 * side * side, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu1(self.pool1(self.conv1(x)))
        x = self.relu2(self.pool2(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


@register_model("two_layer_cnn", targets=("relu1", "relu2"), channels_last=True,
                label="two-layer CNN", role=Role.MNIST)
def two_layer_cnn(num_classes: int = 10, in_channels: int = 1, image_size: int = 28) -> nn.Module:
    """Targets: the outputs of the two conv blocks (after their max-pool, as for VGG-16 and as in
    the authors' released code), a quarter of the pre-pool maps' size."""
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


def _vgg16_authors(num_classes: int = 2, in_channels: int = 3, weights=None) -> nn.Module:
    """VGG-16 with the authors' classifier: 25088 -> 1024 -> ReLU -> Dropout(0.5) -> classes."""
    model = _torchvision("vgg16", num_classes, in_channels, weights)
    model.classifier = nn.Sequential(nn.Linear(model.classifier[0].in_features, 1024), nn.ReLU(),
                                     nn.Dropout(0.5), nn.Linear(1024, num_classes))
    return model


def _vgg16_quarter(num_classes: int = 2, in_channels: int = 3, weights=None) -> nn.Module:
    """VGG-16's thirteen convolutions and five max-pools with a quarter of their channels (16 to
    128), and the authors' head (128 x 7 x 7 -> 1024 -> ReLU -> Dropout(0.5) -> classes, after
    torchvision's 7x7 adaptive pooling). The quick
    profile's stand-in for VGG-16 on the CPU: the same depth and the same five targeted max-pool
    outputs (``VGG16_POOLS``) at ~1/16 of the convolutions' cost (a 64-px run ~20 CPU-s, the
    full width's ~200-260). ImageNet weights do not fit it (``weights`` raises)."""
    from torchvision.models.vgg import VGG, cfgs, make_layers

    if weights is not None:
        raise ValueError("ImageNet weights are VGG-16's full width; vgg16_quarter has none")
    widths = [v if v == "M" else v // 4 for v in cfgs["D"]]
    features = make_layers(widths, batch_norm=False)
    if in_channels != 3:
        features[0] = nn.Conv2d(in_channels, widths[0], kernel_size=3, padding=1)
    model = VGG(features, num_classes=num_classes)
    model.classifier = nn.Sequential(nn.Linear(widths[-2] * 7 * 7, 1024), nn.ReLU(),
                                     nn.Dropout(0.5), nn.Linear(1024, num_classes))
    return model


# Targets as the paper's Models section states them; ``*_released``/``*_authors`` entries are the
# released code's choices (see the book's reproduction report).
VGG16_POOLS = ("features.4", "features.9", "features.16", "features.23", "features.30")
register_model("vgg16", VGG16_POOLS, "vgg16", label="VGG-16", role=Role.MAIN)(
    _tv_builder("vgg16"))
register_model("vgg16_authors", VGG16_POOLS, "vgg16", label="VGG-16 (authors' head)")(
    _vgg16_authors)
register_model("vgg16_quarter", VGG16_POOLS, "vgg16", label="VGG-16 (quarter width)")(
    _vgg16_quarter)
register_model("resnet18", ("layer1", "layer2", "layer3", "layer4"), "resnet18",
               label="ResNet-18", role=Role.MAIN)(
    _tv_builder("resnet18"))
# "The output of each of the four dense blocks", after its activation: torchvision applies the
# BatchNorm + ReLU that follows dense block k at the head of transition k (k = 1..3) and as
# norm5 + a functional ReLU after block 4.
register_model("densenet121", ("features.transition1.relu", "features.transition2.relu",
                               "features.transition3.relu", "features.norm5"), "densenet121",
               sigma={"features.norm5": "relu"}, channels_last=True,
               label="DenseNet-121", role=Role.MAIN)(_tv_builder("densenet121"))
# The authors' code: the (linear) outputs of transition1-3 and norm5 after its ReLU.
register_model("densenet121_released", ("features.transition1", "features.transition2",
                                        "features.transition3", "features.norm5"), "densenet121",
               sigma={"features.transition1": "abs", "features.transition2": "abs",
                      "features.transition3": "abs", "features.norm5": "relu"},
               channels_last=True, label="DenseNet-121 (released targets)")(
    _tv_builder("densenet121"))
# Stage outputs of the extra architectures are linear bottlenecks (no activation): σ = |.|.
_EFFNET = ("features.2", "features.3", "features.5", "features.7")
register_model("efficientnet_b0", _EFFNET, "efficientnet_b0",
               sigma=dict.fromkeys(_EFFNET, "abs"), label="EfficientNet-B0",
               role=Role.APPENDIX)(
    _tv_builder("efficientnet_b0"))
_MOBILENET = ("features.3", "features.6", "features.13", "features.17")
register_model("mobilenet_v2", _MOBILENET, "mobilenet_v2",
               sigma=dict.fromkeys(_MOBILENET, "abs"), label="MobileNet-v2",
               role=Role.APPENDIX)(
    _tv_builder("mobilenet_v2"))


@dataclass(frozen=True)
class BuiltModel:
    model: nn.Module
    targets: tuple[str, ...]
    weights: str  # "random", a torchvision weights name, or "random (offline fallback)"
    sigma: Mapping[str, str] = field(default_factory=dict)  # σ of targets that need one (Eq. 6)


def build_model(name: str, num_classes: int, in_channels: int = 1, pretrained: bool = False,
                image_size: int = 28, weights_fallback: bool = True) -> BuiltModel:
    """Build a registered model; ``pretrained`` asks for torchvision's default ImageNet weights.

    When the weights cannot be loaded (offline, no cached file): with ``weights_fallback`` (the
    quick profile) warn once and fall back to random initialisation, recorded in the returned
    ``weights`` field; without it (the paper profile) raise a RuntimeError saying which file to
    put where, since the paper's medical results start from ImageNet weights. The weights are
    in the layout the registry declares (``ModelSpec.channels_last``).
    """
    spec = get_spec(name)
    if spec.torchvision_name is None:
        if pretrained:
            raise ValueError(f"{name} has no pretrained weights; use pretrained=False")
        model, label = spec.builder(num_classes, in_channels, image_size), "random"
    else:
        model, label = pretrained_or_random(spec.builder, name, spec.torchvision_name,
                                            num_classes, in_channels, pretrained, weights_fallback)
    if spec.channels_last:
        model = model.to(memory_format=torch.channels_last)
    return BuiltModel(model, spec.targets, label, spec.sigma)


def get_model(name: str, num_classes: int, in_channels: int = 1, pretrained: bool = False,
              image_size: int = 28) -> nn.Module:
    """Shorthand for ``build_model(...).model``."""
    return build_model(name, num_classes, in_channels, pretrained, image_size).model


def target_sizes(name: str, in_channels: int, image_size: int) -> dict[str, tuple[int, int]]:
    """The spatial size (H^l, W^l) of each of model ``name``'s target layers for square inputs
    of ``image_size`` pixels, measured by one forward pass of an untrained model: the sizes
    D(M, l) (Eq. 7) brings a mask to, which the method chapter draws."""
    model = get_model(name, 2, in_channels, image_size=image_size).eval()
    with torch.no_grad(), capture(model, target_layers(name)) as acts:
        model(torch.zeros(1, in_channels, image_size, image_size))
    return {k: tuple(v.shape[-2:]) for k, v in acts.items()}


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


def target_sigma_of(model: str, layers: Sequence[str]) -> dict[str, str]:
    """σ of those ``layers`` of model ``model`` that need one (Eq. 6): the registry's
    (:func:`target_sigma`) for a registered model, none for a model built by hand."""
    sigma = target_sigma(model) if model in _REGISTRY else {}
    return {name: s for name, s in sigma.items() if name in layers}


def install_hooks(model: nn.Module, layers: Sequence[str], sigma: Mapping[str, str],
                  acts: dict) -> list:
    """The one capture primitive: a forward hook on each of ``layers`` that stores the module's
    output into ``acts[name]``, after its σ where ``sigma`` names one (Eq. 6). Returns the
    handles; the caller removes them. :func:`capture` (the eager step) and
    :class:`tapkit.compiled.Capturing` (the compiled step, hooks installed once) both use it, so
    the two steps penalise the same activations. No ``layers``: no hooks (a method that reads no
    activations)."""
    if layers:
        validate_layers(model, layers)
    sigma = dict(sigma)
    _check_sigma(layers, sigma)
    handles = []
    try:
        for name in layers:
            fn = SIGMAS[sigma[name]] if name in sigma else None
            handles.append(model.get_submodule(name).register_forward_hook(
                functools.partial(_store, acts, name, fn)))
    except BaseException:
        for handle in handles:
            handle.remove()
        raise
    return handles


def _store(acts: dict, name: str, fn, _module, _inputs, output) -> None:
    acts[name] = fn(output) if fn is not None else output


@contextlib.contextmanager
def capture(model: nn.Module, layers: Sequence[str], sigma: Mapping[str, str] | None = None
            ) -> Iterator["OrderedDict[str, torch.Tensor]"]:
    """Record the outputs of the named modules during forward passes inside the block.

    ``sigma`` maps some of ``layers`` to a key of :data:`SIGMAS` applied to their output (the σ
    of Eq. 6 for targets taken before their activation; :func:`target_sigma` gives a registered
    model's). The tensors are *not* detached, so a loss on them trains the model. Hooks are
    removed in ``finally``, even when the block raises. If a module runs more than once per
    forward, the last output is kept.
    """
    validate_layers(model, layers)
    acts: OrderedDict[str, torch.Tensor] = OrderedDict((name, None) for name in layers)  # type: ignore[misc]
    handles = install_hooks(model, layers, sigma or {}, acts)
    try:
        yield acts
    finally:
        for handle in handles:
            handle.remove()


def check_ran(acts: Mapping[str, torch.Tensor | None]) -> None:
    """Raise ValueError naming the layers :func:`capture` recorded nothing for (``None``): they
    did not run in the forward pass, so no penalty can read them."""
    silent = [name for name, act in acts.items() if act is None]
    if silent:
        raise ValueError(f"layer(s) {silent} did not run in the forward pass: target modules "
                         "that the model's forward calls")


def check_image_size(name: str, in_channels: int, image_size: int) -> None:
    """``ValueError`` when model ``name`` cannot take ``image_size``-pixel images (its pooling
    would shrink them to nothing): built and run once on the meta device, shapes only."""
    try:
        with torch.device("meta"):
            model = build_model(name, 2, in_channels, image_size=image_size).model
            model(torch.empty(2, in_channels, image_size, image_size))
    except RuntimeError as err:
        raise ValueError(f"{name} cannot take {image_size}x{image_size} images "
                         f"({str(err).splitlines()[0]}); choose a model made for them (e.g. "
                         "two_layer_cnn for 28-pixel digits) or larger images") from err
