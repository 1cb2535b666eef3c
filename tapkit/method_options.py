"""Each XS method's own options, one frozen dataclass per method (in the manner of Captum, whose
attribution methods each take their own arguments). A method's registry entry
(:class:`tapkit.methods.XSMethod`) names its class, a run (:class:`tapkit.config.TrainConfig`)
carries one instance, and the run's key hashes only that method's options: a No XS run's key
does not depend on how TAP would have been normalised.

The allowed values are the Literal types of :mod:`tapkit.losses`, so the losses, these classes
and the CLI share one list; BatchNorm modes are ``"running"`` (running statistics for the input
gradient's pass) and ``"batch"`` (the model's own mode) everywhere. Each class checks its values
when it is built and raises ``ValueError`` naming the allowed ones.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Mapping, get_args, get_origin, get_type_hints

from .baselines import AtVariant, JtVariant
from .losses import BatchNormMode, RbrVariant, RrrScale, TapNorm, TapPooling


def _check_choice(owner: str, name: str, value: Any, literal: Any) -> None:
    """``ValueError`` unless ``value`` is one of the values of the Literal type ``literal``."""
    allowed = get_args(literal)
    if value not in allowed:
        raise ValueError(f"{owner}.{name} must be one of {', '.join(map(repr, allowed))}; "
                         f"got {value!r}")


def _option(default: Any, help: str) -> Any:
    """A field with its default and the one line the CLI's flag for it prints
    (:func:`tapkit.cli.option_flags` makes the flags from these fields)."""
    return dataclasses.field(default=default, metadata={"help": help})


_BATCHNORM = ("the input gradient's pass with BatchNorm on running statistics (running, "
              "default: per image) or the batch's (batch)")


@dataclass(frozen=True)
class MethodOptions:
    """The options of a method that has none (``none``) and the base of every method's
    options: a check when built, a JSON form and a one-line label for tables."""

    # fields added after runs with these options were stored: left out of :meth:`to_dict` (and so
    # of a run's key) at their default, so that those runs keep their keys
    ADDED_LATER: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Raise ``ValueError`` for a field whose value the method does not offer: every field
        typed by a Literal (the losses' choices) is checked here; a subclass adds its other
        fields' checks after ``super().check()``."""
        for name, hint in get_type_hints(type(self)).items():
            if get_origin(hint) is Literal:
                _check_choice(type(self).__name__, name, getattr(self, name), hint)

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain JSON values (what a run's config stores and its key hashes); a
        field of :attr:`ADDED_LATER` only where it differs from its default."""
        d = dataclasses.asdict(self)
        for f in dataclasses.fields(self):
            if f.name in self.ADDED_LATER and d[f.name] == f.default:
                del d[f.name]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "MethodOptions":
        """The options from their :meth:`to_dict` form; an unknown field raises ``ValueError``
        naming the class's fields (a typo would otherwise fall back to a default silently)."""
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(d) - set(known))
        if unknown:
            raise ValueError(f"{cls.__name__} has no field(s) {unknown}; expected some of {known}")
        return cls(**d)

    def label(self) -> str:
        """``"norm=l2sq, pooling=cumulative, kernel_size=3"``: a table's one cell ("" if none)."""
        return options_label(self.to_dict())


@dataclass(frozen=True)
class NoOptions(MethodOptions):
    """No XS term (``none``): no options."""


@dataclass(frozen=True)
class AtOptions(MethodOptions):
    """Attention transfer (Zagoruyko & Komodakis 2017; the appendix's AT baseline).
    ``variant``: ``"paper"`` (the cited method: ``sum_c |A_c|^2`` L2-normalised per image, the
    mean over layer pairs of the maps' L2 distance) or ``"released"`` (the authors' code: the
    signed channel sum normalised per column, the Frobenius distance summed over the layer
    pairs; :func:`tapkit.baselines.at_released`). AT had no options before, so the default is
    left out of a run's key."""

    ADDED_LATER: ClassVar[tuple[str, ...]] = ("variant",)
    variant: AtVariant = _option("paper", "paper (the cited method) or released (the authors' "
                                 "code)")


@dataclass(frozen=True)
class TapOptions(MethodOptions):
    """TAP (Definition 2, Eq. 8). ``norm``: ``"l1"`` as Definition 2 writes it, or ``"l2sq"``
    (the released code's squared Frobenius norm). ``pooling``: D(M, l) of Eq. 7 from the input
    mask for every layer (``"independent"``), or re-pooled from the previous layer's mask
    (``"cumulative"``, the released code). ``kernel_size``: κ of Eq. 7's max-pool, which grows the
    mask by ``κ // 2`` pixels to cover receptive fields."""

    norm: TapNorm = _option("l1", "l1 (default, Definition 2) or l2sq (the released code's "
                            "squared Frobenius norm)")
    pooling: TapPooling = _option("independent", "independent (default, Eq. 7 from the input mask "
                                  "per layer) or cumulative (each layer's mask re-pooled from the "
                                  "previous, released code)")
    kernel_size: int = _option(3, "κ of Eq. 7's max-pool (default 3)")

    def check(self) -> None:
        super().check()
        size = self.kernel_size
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"TapOptions.kernel_size must be an int of at least 1; got {size!r}")


@dataclass(frozen=True)
class RrrOptions(MethodOptions):
    """RRR (Eq. 4). ``scale``: ``"none"`` as Eq. 4 writes it, or ``"released"`` (the mask times
    H·W/|M| before squaring, the authors' code). ``batchnorm``: the input gradient's pass with
    BatchNorm on its running statistics (``"running"``: per image, an extra forward as the
    authors' code) or in the model's own mode (``"batch"``: the training forward's batch
    statistics, which mix the images)."""

    scale: RrrScale = _option("none", "none (default, Eq. 4) or released (mask scaled by H*W/|M| "
                              "before squaring, released code)")
    batchnorm: BatchNormMode = _option("running", _BATCHNORM)


@dataclass(frozen=True)
class RbrOptions(MethodOptions):
    """RBR (Shao et al. 2021). ``variant``: ``"full"`` (the influence term's full derivative,
    batch mean) or ``"released"`` (the authors' code: the task loss of the training forward, made
    before x requires grad, channels summed, batch sum). ``batchnorm``: as :class:`RrrOptions`."""

    variant: RbrVariant = _option("full", "full (default, Shao et al.'s derivative) or released "
                                  "(the authors' code)")
    batchnorm: BatchNormMode = _option("running", _BATCHNORM)


@dataclass(frozen=True)
class KdOptions(MethodOptions):
    """Knowledge distillation (Hinton et al.; the appendix's KD baseline): ``temperature`` T of
    the softened logits, a finite number above 0 (kept as a float, so that 4 and 4.0 are one
    run and one key)."""

    temperature: float = _option(4.0, "T of the softened logits (default 4)")

    def check(self) -> None:
        super().check()
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t <= 0:
            raise ValueError(f"KdOptions.temperature must be a finite number above 0; got {t!r}")
        object.__setattr__(self, "temperature", float(t))


@dataclass(frozen=True)
class JtOptions(MethodOptions):
    """Jacobian matching (the appendix's JT baseline): ``batchnorm`` for the student's and the
    teacher's input-gradient passes, as :class:`RrrOptions`. ``variant``: ``"paper"``
    (Srinivas & Fleuret: the gradients of the summed log-probabilities, L2-normalised per image,
    squared distance) or ``"released"`` (the authors' code: the student's gradient of its
    true-class log-probability, each map's channel sum normalised per column, squared Frobenius
    distance; :func:`tapkit.baselines.jt_released`). ``variant`` came later: its default is left
    out of a run's key."""

    ADDED_LATER: ClassVar[tuple[str, ...]] = ("variant",)
    batchnorm: BatchNormMode = _option("running", _BATCHNORM)
    variant: JtVariant = _option("paper", "paper (the cited method) or released (the authors' "
                                 "code)")


def options_label(fields: Mapping[str, Any]) -> str:
    """Options in their dict form as one table cell, ``"scale=released, batchnorm=running"``."""
    return ", ".join(f"{k}={v}" for k, v in fields.items())


def has_batchnorm_mode(cls: type) -> bool:
    """Whether an options class has a ``batchnorm`` field (every input-gradient method's has)."""
    return any(f.name == "batchnorm" for f in dataclasses.fields(cls))
