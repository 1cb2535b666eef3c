"""Protocols: ``quick`` (a 2-core laptop CPU, embedded data, minutes) and ``paper`` (a GPU, full
data, the paper's Experimental Design section), one frozen dataclass per kind of chapter.

Notebooks take ``profile`` as a papermill parameter and pass every other parameter through
``with_overrides``, where ``None`` keeps the profile's value: ``-p profile paper`` switches
everything and ``-p seeds "[1]"`` overrides one thing.

**Loss normalisations.** The paper's λ were tuned on the authors' released losses (TAP as a
squared Frobenius norm with cumulatively re-pooled masks, RRR scaled by H·W/|M| before squaring,
RBR as in the released code; see ``shared notes: paper-and-released-code``). The paper profile
pairs every λ with those normalisations (``norms=RELEASED``), and every run records them in its
config. The quick profile keeps the equations as written (``norms=EQUATIONS``) with λ from its
own search.

**λ search** (the paper's Experimental Design): log steps from 1e-9 to 1 for TAP and RRR and
from 1 to 1e9 for RBR; the λ with the lowest loss on the validation split SC(X*, permute(y))
wins. The paper profile searches every dataset × architecture × method it trains. The quick
profile trims it to TAP on MNIST at 1e-4, 1e-3, 1e-2 (around the paper's 1e-3; RRR and RBR keep
the paper's λ) and does not search the medical stand-in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..sources import SOURCE_TYPES, Source, parse_source
from ..config import TrainConfig

PROFILES = ("quick", "paper", "smoke")  # smoke: see SMOKE below

# Paper lambdas for the two-layer CNN (appendix, hyperparameter tables).
MNIST_LAMBDAS = {"tap": 1e-3, "rrr": 1e-3, "rbr": 1e4}
MNIST_TEACHER_LAMBDAS = {"tap": 1e-4, "rrr": 1e-2, "rbr": 1e4}
MNIST_KD_LAMBDAS = {"at": 1.0, "jt": 1e-7, "kd": 1.0}

PAPER_GRIDS = {"tap": tuple(10.0 ** k for k in range(-9, 1)),
               "rrr": tuple(10.0 ** k for k in range(-9, 1)),
               "rbr": tuple(10.0 ** k for k in range(0, 10))}


@dataclass(frozen=True)
class LossNorms:
    """Which form of each XS loss a run trains with (TrainConfig fields of the same names)."""

    tap_norm: str = "l1"              # Definition 2; "l2sq" = released code
    tap_pooling: str = "independent"  # D(M,l) from M per layer; "cumulative" = released code
    rrr_scale: str = "none"           # Eq. 4; "released" = mask x H*W/|M| before squaring
    rbr_variant: str = "full"         # Shao et al.'s derivative; "released" = authors' code

    def fields(self) -> dict[str, str]:
        return dataclasses.asdict(self)


EQUATIONS = LossNorms()
RELEASED = LossNorms("l2sq", "cumulative", "released", "released")


def _jsonable(value: Any) -> Any:
    if isinstance(value, SOURCE_TYPES):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class _Protocol:
    """Shared by the protocol dataclasses: overrides and a JSON form for the tables' metadata."""

    def with_overrides(self, **overrides: Any):
        """A copy with every non-``None`` override applied (lists become tuples)."""
        known = {f.name for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        unknown = set(overrides) - known
        if unknown:
            raise ValueError(f"unknown setting(s) {sorted(unknown)}; expected some of {sorted(known)}")
        changes = {k: tuple(v) if isinstance(v, list) else v
                   for k, v in overrides.items() if v is not None}
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def as_dict(self) -> dict[str, Any]:
        return _jsonable(self)


@dataclass(frozen=True)
class MnistProtocol(_Protocol):
    """Decoy-MNIST on the two-layer CNN (Setting 1 and the chapters that read its runs)."""

    name: str
    source: Source
    seeds: tuple[int, ...]
    epochs: int
    batch_size: int
    optimizer: str
    lr: float
    norms: LossNorms = EQUATIONS
    search: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # λ grid per method
    # the report's ablation: each method at every λ of its grid, equations vs released norms
    ablation: Mapping[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", parse_source(self.source, "decoy-mnist"))
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))

    def config(self, **fields: Any) -> TrainConfig:
        """A Decoy-MNIST config of this protocol with per-run ``fields``."""
        base = dict(experiment="decoy-mnist", model="two_layer_cnn", source=self.source,
                    epochs=self.epochs, batch_size=self.batch_size, optimizer=self.optimizer,
                    lr=self.lr, **self.norms.fields())
        return TrainConfig(**{**base, **fields})


@dataclass(frozen=True)
class TeachersProtocol(_Protocol):
    """Setting 2 (teacher annotations) and the distillation comparison: teachers hold out
    ``fractions`` of the training split; students train at ``train_taus``; RRR/RBR with teacher
    masks (``xs_methods`` beyond TAP) and KD/AT/JT (``kd_fractions``) cost the most, so the quick
    profile keeps one threshold, TAP only, the 10% teacher and one of Setting 1's ``seeds``."""

    seeds: tuple[int, ...]
    fractions: tuple[float, ...]
    train_taus: tuple[float, ...]
    xs_methods: tuple[str, ...]
    kd_fractions: tuple[float, ...]

    def on_seeds(self, s: MnistProtocol, seeds: Any = None) -> MnistProtocol:
        """``s`` on these ``seeds``, unless a notebook gives its own ``seeds``."""
        return s if seeds is not None else s.with_overrides(seeds=self.seeds)


@dataclass(frozen=True)
class MedicalProtocol(_Protocol):
    """PNEU/KNEE (or their digits stand-in). ``source``: ``"embedded"`` (the stand-in), a folder,
    or ``None`` = the folder under tapkit's data folder (``$TAPKIT_DATA``), checked when a config
    is built. ``per_class`` may be keyed by experiment; ``model_overrides`` change settings per
    architecture; ``method_batch_size[model][method]`` sets a smaller batch (the paper's footnote:
    DenseNet-121 with RBR at batch 8). ``weights_fallback=False``: with ``pretrained`` the run must
    get ImageNet weights, never silently random ones."""

    name: str
    source: str | None
    seeds: tuple[int, ...]
    epochs: int
    batch_size: int
    optimizer: str
    lr: float
    image_size: int
    per_class: Any
    pretrained: bool
    weights_fallback: bool
    threads: int | None
    model_overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    method_batch_size: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    stripe_models: tuple[str, ...] = ()
    norms: LossNorms = EQUATIONS
    search: Mapping[str, tuple[float, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        if self.source is not None and not isinstance(self.source, str):
            object.__setattr__(self, "source", str(self.source))

    def source_for(self, experiment: str) -> Source:
        """The typed, checked source of ``experiment`` (raises naming the expected layout)."""
        from ..sources import DataNotFoundError, cache_dir

        if self.source is not None:
            return parse_source(self.source, experiment)
        try:
            return parse_source(str(cache_dir()), experiment)
        except DataNotFoundError as exc:
            raise DataNotFoundError(
                f"the {self.name} profile trains on the real {experiment.upper()} folder and "
                f"found none: {exc}. Pass it as the notebook's `source` parameter (-p source "
                f"/path), put it under $TAPKIT_DATA, or pass -p source embedded for the digits "
                f"stand-in.") from exc

    def config(self, experiment: str, model: str, **fields: Any) -> TrainConfig:
        """A PNEU/KNEE (or stand-in) config of this protocol with per-run ``fields``."""
        base = dict(experiment=experiment, model=model, source=self.source_for(experiment),
                    epochs=self.epochs, batch_size=self.batch_size, optimizer=self.optimizer,
                    lr=self.lr, image_size=self.image_size, per_class=self.per_class,
                    pretrained=self.pretrained, weights_fallback=self.weights_fallback,
                    **self.norms.fields())
        return TrainConfig(**{**base, **fields})


@dataclass(frozen=True)
class BenchProtocol(_Protocol):
    """Table 1: ``steps`` (or ``model_steps[model]``) timed after ``warmup`` steps."""

    batch_size: int
    image_size: int
    steps: int
    warmup: int
    threads: int | None
    model_steps: Mapping[str, int] = field(default_factory=dict)


# Paper: SGD (momentum 0.9, the text's "weight decay of 0.9"), lr 1e-3, batch 256, 50 epochs, full
# MNIST. Quick: Adam 1e-3 on the 5,000 embedded digits (SGD leaves No XS underfit: the report).
MNIST = {  # quick: three seeds, for the report's intervals; RBR ~4 CPU-minutes a run, one λ
    "quick": MnistProtocol("quick", "embedded", (0, 1, 2), 5, 64, "adam", 1e-3, EQUATIONS,
                           {"tap": (1e-4, 1e-3, 1e-2)},
                           {"tap": (1e-4, 1e-3, 1e-2), "rrr": (1e-3, 1e-1), "rbr": (1e4,)}),
    "paper": MnistProtocol("paper", "mnist", (0, 1, 2, 3, 4), 50, 256, "sgd", 1e-3, RELEASED,
                           PAPER_GRIDS, PAPER_GRIDS),
}
MNIST_TEACHERS = {  # seeds, teachers' clean fractions, training τ, XS methods, KD teachers
    "quick": TeachersProtocol((0,), (0.1, 0.01), (0.01,), ("tap",), (0.1,)),
    "paper": TeachersProtocol((0, 1, 2, 3, 4), (0.1, 0.01), (0.01, 0.05, 0.1), ("tap", "rrr", "rbr"),
                              (0.1, 0.01)),
}

# Medical protocol: 224 px, batch 16, ImageNet weights, SGD lr 1e-5, five seeds (paper). The quick
# profile runs the digits stand-in at 32 px (the smallest size VGG-16's five max-pools accept)
# from random initialisation (no weights offline) with Adam, batch 8, three epochs, on one CPU
# thread (measured: two threads on these small steps were slower, up to 4x under load). Measured
# on the 2-core CPU, ResNet-18 and DenseNet-121 No XS learn the stand-in's tags in that time
# (KNEE's five tags less reliably). VGG-16 (no BatchNorm) learned nothing from random
# initialisation in 24 steps at three learning rates, and a quick PNEU+KNEE sweep of it costs
# ~4 minutes even at one epoch (its full-derivative RBR step takes ~16 s), so the quick profile
# evaluates VGG-16 untrained (epochs 0) and says so; its training steps run in the
# speed-and-memory chapter. The stripe appendix is paper-profile only.
MEDICAL = {
    "quick": MedicalProtocol("quick", "embedded", (0,), epochs=3, batch_size=8, optimizer="adam",
                             lr=1e-3, image_size=32, per_class={"pneu": 28, "knee": 12},
                             pretrained=False, weights_fallback=True, threads=1,
                             model_overrides={"vgg16": {"epochs": 0}}),
    "paper": MedicalProtocol("paper", None, (0, 1, 2, 3, 4), epochs=50, batch_size=16,
                             optimizer="sgd", lr=1e-5, image_size=224, per_class=None,
                             pretrained=True, weights_fallback=False, threads=None,
                             method_batch_size={"densenet121": {"rbr": 8}},
                             stripe_models=("vgg16", "resnet18", "densenet121"),
                             norms=RELEASED, search=PAPER_GRIDS),
}

# Table 1: the paper's batch of 16 224-px images on a GPU; on the quick profile's 2-core CPU a
# small batch on every core (the chapter runs alone), and fewer steps for VGG-16 (its RBR step
# alone takes ~8 s there).
BENCH = {
    "quick": BenchProtocol(batch_size=4, image_size=64, steps=5, warmup=1, threads=None,
                           model_steps={"vgg16": 3}),
    "paper": BenchProtocol(batch_size=16, image_size=224, steps=10, warmup=2, threads=None),
}


# smoke: the quick protocols trimmed to seconds, so that the browser tests build a whole (small)
# book within minutes (tests/test_browser.py); its numbers test the pages, not the paper.
def _smoke() -> None:
    rep = dataclasses.replace
    MNIST["smoke"] = rep(MNIST["quick"], name="smoke", seeds=(0,), epochs=1, search={"tap": (1e-3,)},
                         ablation={"tap": (1e-3,)})
    MNIST_TEACHERS["smoke"] = MNIST_TEACHERS["quick"]
    MEDICAL["smoke"] = rep(MEDICAL["quick"], name="smoke", epochs=1, image_size=32,
                           per_class={"pneu": 6, "knee": 3})
    BENCH["smoke"] = rep(BENCH["quick"], batch_size=2, image_size=32, steps=1, warmup=0,
                         model_steps={})


_smoke()


def _pick(table: Mapping[str, Any], profile: str):
    if profile not in table:
        raise ValueError(f"unknown profile {profile!r}; expected one of {list(PROFILES)}")
    return table[profile]


def mnist(profile: str, **overrides: Any) -> MnistProtocol:
    """The profile's Decoy-MNIST protocol with the notebook's non-``None`` parameters."""
    return _pick(MNIST, profile).with_overrides(**overrides)


def mnist_teachers(profile: str, **overrides: Any) -> TeachersProtocol:
    return _pick(MNIST_TEACHERS, profile).with_overrides(**overrides)


def medical(profile: str, **overrides: Any) -> MedicalProtocol:
    """The profile's medical protocol with the notebook's non-``None`` parameters. An explicit
    ``epochs`` or ``batch_size`` applies to every architecture, so it also clears the profile's
    per-architecture overrides."""
    p = _pick(MEDICAL, profile).with_overrides(**overrides)
    if overrides.get("epochs") is not None or overrides.get("batch_size") is not None:
        p = dataclasses.replace(p, model_overrides={})
    return p


def bench(profile: str, **overrides: Any) -> BenchProtocol:
    return _pick(BENCH, profile).with_overrides(**overrides)


def results_root(profile: str, base: str | Path = "results") -> Path:
    """Where a profile's runs and tables live: ``results/<profile>/``."""
    return Path(base) / profile
