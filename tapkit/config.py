"""One frozen config per run (Eq. 3's ``L = L_task + lambda * L_XS`` and everything else that
determines a result). ``key()`` hashes it for the results store; the device is not part of it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

from .methods import get_method
from .models import list_models, target_layers, target_sigma
from .sources import Embedded, Source, parse_source

@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a run's result. ``key()`` hashes it; the device is not part of
    it (it is recorded in the provenance instead)."""

    experiment: str = "decoy-mnist"
    model: str = "two_layer_cnn"
    method: str = "none"
    lam: float = 0.0
    data: str = "contaminated"          # train on "contaminated", "clean" (Base) or "holdout" (teacher)
    annotation: str = "ground_truth"    # masks: "ground_truth", "teacher" or "random"
    random_coverage: float | None = None  # random masks' coverage (None: the ground truth's)
    teacher: "TrainConfig | None" = None  # for teacher annotations and KD/AT/JT
    tau: float = 0.01                   # teacher-annotation threshold
    threshold: str = "absolute"         # "absolute" (paper, E < tau) or "quantile" (released code)
    saliency: str = "saliency"          # Captum method for teacher annotations
    clean_fraction: float = 0.0         # clean share of train held out before contamination
    epochs: int = 5
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
    tap_norm: str = "l1"                # "l1" (Definition 2) or "l2sq" (released code)
    tap_pooling: str = "independent"    # D(M,l) from M per layer, or "cumulative" (released code)
    rrr_scale: str = "none"             # "none" (Eq. 4) or "released" (mask x H*W/|M| before squaring)
    kernel_size: int = 3
    rbr_variant: str = "full"           # "full" (Shao et al.) or "released" (authors' code)
    xs_batchnorm: str = "eval"          # input gradients on BatchNorm "eval" (running) or "train" stats
    kd_temperature: float = 4.0

    def __post_init__(self) -> None:
        method = get_method(self.method)  # an unknown name raises listing the registered ones
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
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError(f"unknown optimizer {self.optimizer!r}; expected 'adam' or 'sgd'")
        if self.xs_batchnorm not in ("train", "eval"):
            raise ValueError("xs_batchnorm must be 'train' or 'eval'")
        if self.tap_norm not in ("l1", "l2sq"):
            raise ValueError(f"unknown tap_norm {self.tap_norm!r}; expected 'l1' or 'l2sq'")
        if self.tap_pooling not in ("independent", "cumulative"):
            raise ValueError(f"unknown tap_pooling {self.tap_pooling!r}; expected 'independent' "
                             "or 'cumulative'")
        if self.rrr_scale not in ("none", "released"):
            raise ValueError(f"unknown rrr_scale {self.rrr_scale!r}; expected 'none' or 'released'")
        if self.rbr_variant not in ("full", "released"):
            raise ValueError(f"unknown rbr_variant {self.rbr_variant!r}; expected 'full' or "
                             "'released'")
        # the source is parsed and checked here, when the config is built (a folder must exist,
        # torchvision needs a root), so a bad source fails before any training starts
        object.__setattr__(self, "source", parse_source(self.source, self.experiment))

    def to_dict(self) -> dict:
        """Plain JSON-able fields; the source as its string (``str(source)``), which is what it
        was before sources had types, so configs keep their hash (and for the same reason no
        ``test_per_class`` or ``random_coverage`` when it is None)."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["source"] = str(self.source)
        for late in ("test_per_class", "random_coverage"):  # added later: absent when unset,
            if d[late] is None:                           # so that old keys hold
                del d[late]
        d["teacher"] = self.teacher.to_dict() if self.teacher is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        d = dict(d)
        if d.get("teacher") is not None:
            d["teacher"] = cls.from_dict(d["teacher"])
        return cls(**d)

    def key(self) -> str:
        """Hash of the config and of the layers its model's registry entry targets (the
        registry is part of what determines the result, so changing it invalidates the cache)."""
        blob = json.dumps({"config": self.to_dict(), "targets": _registered_targets(self)},
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def replace(self, **changes) -> "TrainConfig":
        return dataclasses.replace(self, **changes)


def _registered_targets(cfg: TrainConfig) -> list:
    entry = None
    if cfg.model in list_models():  # σ (Eq. 6) only where declared, so other keys are unchanged
        sigma = target_sigma(cfg.model)
        entry = list(target_layers(cfg.model)) + ([sigma] if sigma else [])
    out = [entry]
    return out + (_registered_targets(cfg.teacher) if cfg.teacher is not None else [])
