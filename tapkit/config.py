"""One frozen config per run (Eq. 3's ``L = L_task + lambda * L_XS`` and everything else that
determines a result). ``key()`` hashes it for the results store; the device is not part of it.

The XS method's options (TAP's norm, RRR's scale, ...) are one typed field, ``options``, of the
method's own class (:mod:`tapkit.method_options`), so a run's key hashes only its method's
options. Configs stored before that (flat ``tap_norm``, ``rrr_scale``, ``rbr_variant``,
``kernel_size``, ``kd_temperature`` and ``xs_batchnorm="eval"/"train"`` on every run) still load:
:meth:`TrainConfig.from_dict` translates them (:func:`options_from_flat`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from enum import Enum
from typing import Any, Mapping

from .method_options import MethodOptions
from .methods import get_method, no_xs
from .models import list_models, target_layers, target_sigma
from .sources import Embedded, Source, parse_source

class ClassWeights(str, Enum):
    """How the task's cross-entropy weights the classes, in training and in the validation loss
    that picks λ (:func:`tapkit.fit.class_weight_tensor`). ``NONE``: unweighted, as the paper
    writes it. ``RELEASED``: the authors' released code on PNEU (``src/data.py`` ``load_weights``,
    used in ``src/wrapper.py``'s training and validation losses): each class weighted by
    ``N / N_c`` and the weights normalised to sum to 1. The released code fixes the counts of its
    own training split (1,214 and 3,494 of 4,708); tapkit counts the run's training labels, which
    on the real PNEU folder gives nearly the same weights (0.742, 0.258)."""

    NONE = "none"
    RELEASED = "released"


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a run's result. ``key()`` hashes it; the device is not part of
    it (it is recorded in the provenance instead)."""

    experiment: str = "decoy-mnist"
    model: str = "two_layer_cnn"
    method: str = no_xs()
    lam: float = 0.0
    data: str = "contaminated"          # train on "contaminated", "clean" (Base) or "holdout" (teacher)
    annotation: str = "ground_truth"    # masks: "ground_truth", "teacher" or "random"
    random_coverage: float | None = None  # random masks' coverage (None: the ground truth's)
    teacher: "TrainConfig | None" = None  # for teacher annotations and KD/AT/JT
    tau: float = 0.01                   # teacher-annotation threshold
    threshold: str = "absolute"         # "absolute" (paper, E < tau) or "quantile" (released code)
    saliency: str = "saliency"          # Captum method for teacher annotations
    clean_fraction: float = 0.0         # clean share of train held out before contamination
    epochs: int = 3                     # the quick profile's MNIST runs
    batch_size: int = 64
    optimizer: str = "adam"             # "adam" or "sgd" (momentum below)
    lr: float = 1e-3
    momentum: float = 0.9
    weight_decay: float = 0.0
    seed: int = 0
    source: Source = Embedded()         # a tapkit.sources type; its string form is parsed
    image_size: int | None = None
    artifact: str = "tag"
    per_class: int | None = None
    test_per_class: int | None = None   # stand-in test digits per class (None: per_class // 4)
    pretrained: bool = False
    weights_fallback: bool = True       # pretrained weights missing: random start (recorded) or error
    # the method's options: an instance of its registry entry's class (TapOptions for "tap", ...),
    # or its JSON form; None: the method's defaults (the equations as written)
    options: MethodOptions | None = None
    # the run whose trained weights this run starts from, its classifier head excepted (the quick
    # profile's pretrained start, standing in for ImageNet weights); None: ``pretrained`` decides
    start: "TrainConfig | None" = None
    # the task loss's class weights (training and validation loss); NONE, the default, is left
    # out of the key's dict, so that every run stored before the field existed keeps its key
    class_weights: ClassWeights = ClassWeights.NONE

    def __post_init__(self) -> None:
        method = get_method(self.method)  # an unknown name raises listing the registered ones
        try:
            object.__setattr__(self, "class_weights", ClassWeights(self.class_weights))
        except ValueError:
            raise ValueError(f"unknown class_weights {self.class_weights!r}; expected one of "
                             f"{[c.value for c in ClassWeights]}") from None
        object.__setattr__(self, "options", method.make_options(self.options))
        if self.data not in ("contaminated", "clean", "holdout"):
            raise ValueError(f"unknown data {self.data!r}; expected contaminated, clean or holdout")
        if self.annotation not in ("ground_truth", "teacher", "random"):
            raise ValueError(f"unknown annotation {self.annotation!r}")
        if self.random_coverage is not None and not 0.0 <= self.random_coverage <= 1.0:
            raise ValueError(f"random_coverage must lie in [0, 1], got {self.random_coverage}")
        if method.needs_teacher and self.teacher is None:
            raise ValueError(f"method {self.method!r} needs a teacher config")
        if self.annotation == "teacher" and self.teacher is None:
            raise ValueError("annotation='teacher' needs a teacher config")
        if self.start is not None and (self.start.model != self.model or self.pretrained):
            raise ValueError(f"start must be a run of the same model ({self.model}, not "
                             f"{self.start.model}), and a run with a start is not also pretrained")
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError(f"unknown optimizer {self.optimizer!r}; expected 'adam' or 'sgd'")
        # the source is parsed and checked here, when the config is built (a folder must exist,
        # torchvision needs a root), so a bad source fails before any training starts
        object.__setattr__(self, "source", parse_source(self.source, self.experiment))

    def to_dict(self) -> dict:
        """Plain JSON-able fields: the source as its string (``str(source)``, which
        :func:`tapkit.sources.parse_source` reads back), the options as their fields, the teacher
        as its own dict."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["source"] = str(self.source)
        d["options"] = self.options.to_dict()
        d["teacher"] = self.teacher.to_dict() if self.teacher is not None else None
        if self.start is None:  # absent rather than null: the keys of runs without a start stay
            del d["start"]
        else:
            d["start"] = self.start.to_dict()
        if self.class_weights is ClassWeights.NONE:  # absent at the default: old keys stay
            del d["class_weights"]
        else:
            d["class_weights"] = self.class_weights.value
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TrainConfig":
        """The config of a :meth:`to_dict` dict, or of one stored before options were typed (flat
        option fields on every run: translated by :func:`options_from_flat`, so an old
        results store's ``metrics.json`` still loads; its runs have other keys now)."""
        d = dict(d)
        flat = {k: d.pop(k) for k in FLAT_OPTION_FIELDS if k in d}
        if flat:
            if d.get("options") is not None:
                raise ValueError(f"a config has both options and the old flat fields {sorted(flat)}")
            d["options"] = options_from_flat(d.get("method", cls.method), flat)
        for nested in ("teacher", "start"):
            if d.get(nested) is not None:
                d[nested] = cls.from_dict(d[nested])
        return cls(**d)

    def key(self) -> str:
        """Hash of the config and of the layers its model's registry entry targets (the
        registry is part of what determines the result, so changing it invalidates the cache)."""
        blob = json.dumps({"config": self.to_dict(), "targets": _registered_targets(self)},
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def replace(self, **changes) -> "TrainConfig":
        """A copy with ``changes``. A new ``method`` without new ``options`` takes the new
        method's defaults: options belong to their method (TAP's would not fit an RRR run)."""
        if changes.get("method", self.method) != self.method and "options" not in changes:
            changes["options"] = None
        return dataclasses.replace(self, **changes)


# The option fields every config carried before they were typed per method: field -> the
# (method, option) pairs it set. "xs_batchnorm" was "eval"/"train"; the losses' names are
# "running"/"batch" (OLD_BATCHNORM).
FLAT_OPTION_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "tap_norm": (("tap", "norm"),),
    "tap_pooling": (("tap", "pooling"),),
    "kernel_size": (("tap", "kernel_size"),),
    "rrr_scale": (("rrr", "scale"),),
    "rbr_variant": (("rbr", "variant"),),
    "xs_batchnorm": (("rrr", "batchnorm"), ("rbr", "batchnorm"), ("jt", "batchnorm")),
    "kd_temperature": (("kd", "temperature"),),
}
OLD_BATCHNORM = {"eval": "running", "train": "batch"}


def options_from_flat(method: str, flat: Mapping[str, Any]) -> dict[str, Any]:
    """``method``'s options (their dict form) from an old config's flat fields, e.g.
    ``options_from_flat("rrr", {"rrr_scale": "released", "xs_batchnorm": "eval", "tap_norm":
    "l1"}) == {"scale": "released", "batchnorm": "running"}``; the other methods' fields drop."""
    out = {}
    for name, value in flat.items():
        for owner, option in FLAT_OPTION_FIELDS[name]:
            if owner == method:
                out[option] = OLD_BATCHNORM.get(value, value) if option == "batchnorm" else value
    return out


def _registered_targets(cfg: TrainConfig) -> list:
    entry = None
    if cfg.model in list_models():  # σ (Eq. 6) only where declared, so other keys are unchanged
        sigma = target_sigma(cfg.model)
        entry = list(target_layers(cfg.model)) + ([sigma] if sigma else [])
    out = [entry]
    return out + (_registered_targets(cfg.teacher) if cfg.teacher is not None else [])
