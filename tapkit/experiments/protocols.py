"""Protocols: what a profile sets, and the registry of profiles. The profiles themselves are one
file each in :mod:`.profiles`: ``quick`` (a 2-core laptop CPU, embedded data, minutes), ``paper``
(a GPU, full data, the paper's Experimental Design section) and ``smoke``. Every Setting-1
chapter, MNIST's and the medical ones, takes one :class:`Protocol`; Setting 2 (:mod:`.setting2_protocols`) and the benchmark
(:class:`BenchProtocol`) add their own settings beside it.

Notebooks take ``profile`` as a papermill parameter and pass every other parameter through
``with_overrides``, where ``None`` keeps the profile's value: ``-p profile paper`` switches
everything and ``-p seeds "[1]"`` overrides one thing.

**Loss normalisations.** The paper's λ were tuned on the authors' released losses (TAP as a
squared Frobenius norm with cumulatively re-pooled masks, RRR scaled by H·W/|M| before squaring,
RBR as in the released code; see ``shared notes: paper-and-released-code``). The paper profile
pairs every λ with those normalisations (``options=RELEASED``: TapOptions, RrrOptions and
RbrOptions per method), and every run records its method's options in its config. The quick
profile keeps the equations as written (every method's defaults) where it chooses λ by its
own search (TAP on MNIST, every method on the stand-ins) and, where it takes the paper's λ (RRR
and RBR on MNIST: :data:`.profiles.quick.PAPER_LAMBDA_FORMS`), the released forms those λ
were tuned on.

**λ search** (the paper's Experimental Design): log steps from 1e-9 to 1 for TAP and RRR and
from 1 to 1e9 for RBR; the λ with the lowest loss on the validation split SC(X*, permute(y))
wins. The paper profile searches every dataset × architecture × method it trains, and chooses
as the paper does, among every converged run (``lambda_guard=False``). The quick profile trims
it to TAP on MNIST at 1e-4, 1e-3, 1e-2 (RRR and RBR keep the paper's λ) and, on the medical
stand-in, to three values per architecture (:mod:`.profiles.quick`), and guards the choice
(``lambda_guard=True``): only runs that learned the task may win, since on the stand-in the
criterion alone preferred a network that learned nothing (issue 20;
:func:`tapkit.experiments.plans.choose_lambdas`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from ..methods import paper_grids, table1_methods
from ..models import Role, models_where
from ..sources import Embedded, Source, parse_source
from ..config import ClassWeights, TrainConfig
from .paper_tables import lambdas_of
from .protocol_base import (EQUATIONS, RELEASED, MethodOptionsTable,  # noqa: F401 (re-exported)
                            _Protocol, _TrainsMethods, check_options_table)
from .setting2_protocols import (LambdaSource, RandomMasks, TeachersProtocol,  # noqa: F401
                                 Threshold)

# The paper's λ for the two-layer CNN (appendix, hyperparameter tables: lambdas.csv) and its λ
# search grids (the methods registry's, l.348)
MNIST_LAMBDAS = lambdas_of("ground_truth", "MNIST", "two_layer_cnn")
MNIST_TEACHER_LAMBDAS = lambdas_of("teacher", "MNIST", "two_layer_cnn")
MNIST_KD_LAMBDAS = lambdas_of("kd", "MNIST", "two_layer_cnn")
PAPER_GRIDS = paper_grids()


class PretrainTask(str, Enum):
    """What a pretrained start learns first (both built in, nothing to download)."""

    DIGITS = "digits-pretrain"       # ten digits no stand-in draws (tapkit.data.digits_pretrain)
    FRACTALS = "fractal-pretrain"    # FractalDB-style categories (tapkit.data.fractal_pretrain)


@dataclass(frozen=True)
class Pretraining:
    """The quick profile's substitute for ImageNet weights (issue 20): each architecture of
    ``models`` trained once, from random weights, on ``task`` (``per_class`` images of each
    class; None: all), for ``epochs`` at batch ``batch_size``, with the learning rate and image
    size its stand-in runs train with. Every stand-in run of such an architecture, in every
    medical chapter and seed, starts from it (its ``TrainConfig.start``), as the paper's runs all
    start from ImageNet weights. Measured (docs/standin-research.md): from the digits start
    both ResNet-18 and DenseNet-121 learn the PNEU stand-in's tag without XS and TAP keeps them
    off it; from the fractal start no λ of DenseNet-121's TAP did (one did nothing, the next
    collapsed the network)."""

    task: PretrainTask
    models: tuple[str, ...]
    epochs: int
    batch_size: int
    per_class: int | None = None

    def config(self, model: str, image_size: int, lr: float) -> TrainConfig:
        return TrainConfig(experiment=PretrainTask(self.task).value, model=model,
                           epochs=self.epochs, batch_size=self.batch_size, lr=lr,
                           image_size=image_size, per_class=self.per_class)


def per_experiment(value: Any, experiment: str) -> Any:
    """A setting that may differ between PNEU and KNEE: a dict keyed by experiment, or one value."""
    if isinstance(value, Mapping):
        if experiment not in value:
            raise ValueError(f"setting {value} has no entry for {experiment!r}")
        return value[experiment]
    return value


@dataclass(frozen=True)
class RunSettings:
    """What a :class:`Protocol` trains one experiment and architecture with
    (:meth:`Protocol.settings`): the architecture's overrides applied and every value keyed by
    experiment resolved, once. ``model`` is the chapter's name for the architecture, ``variant``
    the registry entry it trains as (quick: VGG-16 with the authors' head), which the configs
    record; ``case_batch[case]``: a case's own batch (the paper's DenseNet-121 RBR at 8). Every
    run's config, the pretrained starts, the pages' "what the profile changes" and the
    benchmark's efficiency rows (:func:`as_trained`) read their settings here."""

    experiment: str
    model: str
    variant: str
    epochs: int
    batch_size: int
    optimizer: str
    lr: float
    image_size: int | None
    per_class: int | None
    test_per_class: int | None
    pretrained: bool
    weights_fallback: bool
    case_batch: Mapping[str, int] = field(default_factory=dict)

    def batch_for(self, case: str) -> dict[str, int]:
        """``{"batch_size": n}`` when ``case`` trains at its own batch, else ``{}``."""
        return {"batch_size": self.case_batch[case]} if case in self.case_batch else {}


@dataclass(frozen=True)
class Protocol(_TrainsMethods, _Protocol):
    """One protocol for every Setting-1 chapter: what a profile trains on its ``experiments``
    with its ``models``, and the per-(experiment, model) overrides. Decoy-MNIST on the two-layer
    CNN is the one-experiment, one-model case; PNEU/KNEE (or their digits stand-in) on the deep
    CNNs the other.

    ``source``: ``"embedded"``, ``"mnist"``, ``"torchvision:/root"`` or a folder; ``None`` is the
    embedded digits for Decoy-MNIST and ``$TAPKIT_DATA``'s folder for PNEU/KNEE. A protocol of
    one experiment types its source when it is built (a bad source fails at once); one of
    several checks each experiment's source when that experiment's first config is built
    (:meth:`source_for`), so that a chapter of the stand-in never asks for a folder.
    ``search[method]``: one λ grid, or one per architecture (XS terms differ by orders of
    magnitude between networks trained from scratch), an architecture's one grid or one per
    experiment (quick: ResNet-18's TAP at the one value its search chose on each);
    ``ablation``: the report's grid of the loss normalisations; ``kappas``: the κ of Eq. 7's max-pool (TAP's ``kernel_size``) that the
    κ ablation trains beside the options' own, on Decoy-MNIST with the MNIST chapter's seeds and
    λ (:func:`tapkit.experiments.plans.kappa_configs`; empty: no ablation); ``case_seeds[case]``: a case on the first n seeds only, n one count or
    counts keyed by architecture (one not named: every seed; quick: RRR on DenseNet-121's four
    PNEU seeds and ResNet-18's first three);
    ``model_seeds[model]``: an architecture on the first n seeds only, n one count or counts
    keyed by experiment (the quick profile keeps VGG-16 and the appendix architectures on one,
    ResNet-18 on five, DenseNet-121 on four PNEU and three KNEE seeds).
    ``stripe_models``: the architectures of the stripe appendix (one tuple, or one per
    experiment), trained on ``stripe_cases`` (None: every case) and the first ``stripe_seeds``
    seeds (None: the tag table's; :meth:`stripes`).
    ``per_class``, ``test_per_class`` (stand-in test digits per class; None:
    ``max(per_class // 4, 10)``), ``not_run`` and every ``model_overrides`` value may be keyed by
    experiment. ``variants[model]``: the registry entry an architecture trains as (recorded in
    its configs). ``not_run[model][case]``: why a cell is left out (``not_run[model]``, one reason:
    every case of the architecture). ``method_batch_size``: the
    paper's DenseNet-121 RBR at batch 8. ``weights_fallback=False``: never silently random.
    ``options``: each XS method's options (:data:`EQUATIONS` or :data:`RELEASED`).
    ``pretraining``: the stand-in's pretrained start (:class:`Pretraining`; None: ``pretrained``
    decides, ImageNet weights or random ones); the real folders never use it.
    ``overlap_images``: the overlap chapter's test images per run, evenly spaced over the split
    (None: all). ``embedded[experiment]``: what the source ``"embedded"`` is for that
    experiment (:class:`tapkit.sources.Embedded`: the recorded-label noise, the tags' height, a
    textured background, label-box tags; :func:`tapkit.data.digits_standin`): the calibration
    that gives Base the paper's Base score, No XS the paper's use of the tag and the teachers
    masks better than random (docs/standin-research.md); an experiment not named: the plain
    digits. ``class_weights[experiment]``: the task loss's class weights
    (:class:`~tapkit.config.ClassWeights`; an experiment not named: unweighted).
    ``lambda_guard``: whether the λ search chooses only among the runs that learned the task
    (clean validation score at least :data:`tapkit.experiments.plans.LEARNED_SHARE` of the way
    from a constant prediction's to perfect) or, as the paper's Experimental Design section,
    among every converged run (:func:`tapkit.experiments.plans.choose_lambdas`). The defaults
    are :class:`TrainConfig`'s, so that a field a protocol does not set leaves its configs as
    before."""

    name: str
    experiments: tuple[str, ...]
    models: tuple[str, ...]
    source: Any
    seeds: tuple[int, ...]
    epochs: int
    batch_size: int
    optimizer: str
    lr: float
    image_size: int | None = None
    per_class: Any = None
    test_per_class: Any = None
    pretrained: bool = False
    weights_fallback: bool = True
    threads: int | None = None
    options: MethodOptionsTable = field(default_factory=lambda: EQUATIONS)
    search: Mapping[str, Any] = field(default_factory=dict)
    ablation: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    kappas: tuple[int, ...] = ()
    case_seeds: Mapping[str, int | Mapping[str, int | Mapping[str, int]]] = field(
        default_factory=dict)
    model_seeds: Mapping[str, int | Mapping[str, int]] = field(default_factory=dict)
    model_overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    method_batch_size: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    stripe_models: tuple[str, ...] = ()
    stripe_cases: tuple[str, ...] | None = None
    stripe_seeds: int | None = None
    variants: Mapping[str, str] = field(default_factory=dict)
    not_run: Mapping[str, Any] = field(default_factory=dict)
    pretraining: Pretraining | None = None
    overlap_images: int | None = None
    class_weights: Mapping[str, ClassWeights] = field(default_factory=dict)
    embedded: Mapping[str, Embedded] = field(default_factory=dict)
    lambda_guard: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "experiments", tuple(self.experiments))
        object.__setattr__(self, "models", tuple(self.models))
        object.__setattr__(self, "seeds", tuple(int(s) for s in self.seeds))
        if len(self.experiments) == 1:
            object.__setattr__(self, "source", parse_source(self.source, self.experiments[0]))
        elif self.source is not None and not isinstance(self.source, str):
            object.__setattr__(self, "source", str(self.source))
        check_options_table(self.options)

    def seeds_for(self, case: str, model: str | None = None,
                  experiment: str | None = None) -> tuple[int, ...]:
        """The seeds Setting 1 trains ``case`` on: all, or the first ``case_seeds[case]``, a
        count or counts keyed by architecture (``model``; None: the protocol's only one), an
        architecture's count one or one per experiment (None: the protocol's only one)."""
        if case not in self.case_seeds:
            return self.seeds
        n = self.case_seeds[case]
        if isinstance(n, Mapping):
            n = n.get(self._only("model", model), len(self.seeds))
        if isinstance(n, Mapping):
            n = per_experiment(n, self._only("experiment", experiment))
        return self.seeds[:n]

    def seeds_of(self, model: str, case: str, experiment: str | None = None) -> tuple[int, ...]:
        """The seeds a medical table of ``experiment`` trains ``case`` of ``model`` on: the
        shorter of :meth:`seeds_on` and :meth:`seeds_for` (quick: Base on the first seed of each
        stand-in, ResNet-18's on KNEE on three)."""
        return min(self.seeds_on(model, experiment), self.seeds_for(case, model, experiment),
                   key=len)

    def seeds_on(self, model: str, experiment: str | None = None) -> tuple[int, ...]:
        """The seeds a medical table of ``experiment`` trains ``model`` on: all, or the first
        ``model_seeds[model]``, a count or counts keyed by experiment (None: the protocol's
        only one; quick: DenseNet-121 on four PNEU seeds, three KNEE ones)."""
        if model not in self.model_seeds:
            return self.seeds
        n = self.model_seeds[model]
        if isinstance(n, Mapping):
            n = per_experiment(n, self._only("experiment", experiment))
        return self.seeds[:n]

    def stripes(self, cases: Sequence[str]) -> tuple[Protocol, tuple[str, ...]]:
        """The protocol and cases the stripe appendix's table trains: ``cases`` narrowed to
        ``stripe_cases`` (None: all of them), every architecture on at most the first
        ``stripe_seeds`` seeds (None: the tag table's)."""
        kept = tuple(c for c in cases if self.stripe_cases is None or c in self.stripe_cases)
        if self.stripe_seeds is None:
            return self, kept
        return dataclasses.replace(self, seeds=self.seeds[:self.stripe_seeds]), kept

    def seed_counts(self, models: Sequence[str], experiment: str | None = None
                    ) -> tuple[int, dict[str, int]]:
        """How many seeds a medical table of ``experiment`` trains: the most any of ``models``
        trains on, and ``{model or case: fewer}`` for the architectures and cases that train on
        fewer (:meth:`seeds_on`, :meth:`seeds_for`); e.g. ``(5, {"resnet18": 3, "base": 1})``."""
        per = {m: len(self.seeds_on(m, experiment)) for m in models}
        n = max(per.values(), default=len(self.seeds))
        per |= {c: max((len(self.seeds_of(m, c, experiment)) for m in models), default=n)
                for c in self.case_seeds}
        return n, {k: v for k, v in per.items() if v < n}

    def grid(self, method: str, model: str | None = None,
             experiment: str | None = None) -> tuple[float, ...]:
        """The λ grid of ``method`` on ``model`` and ``experiment`` (empty: not searched). A grid
        kept per experiment, asked without one: every experiment's values, ascending (whether
        and what the architecture is searched at all)."""
        grid = self.search.get(method, ())
        if isinstance(grid, Mapping):
            grid = grid.get(self._only("model", model), ())
        if not isinstance(grid, Mapping):
            return tuple(grid)
        if experiment is not None:
            return tuple(grid.get(experiment, ()))
        return tuple(sorted({lam for g in grid.values() for lam in g}))

    def grids(self, method: str, model: str) -> dict[str, tuple[float, ...]]:
        """:meth:`grid` on each of this protocol's experiments (its audit row's text)."""
        return {e: self.grid(method, model, e) for e in self.experiments}

    def _only(self, kind: str, given: str | None) -> str:
        """``given``, or this protocol's only experiment or model when ``given`` is None."""
        if given is not None:
            return given
        choices = self.experiments if kind == "experiment" else self.models
        if len(choices) != 1:
            raise ValueError(f"the {self.name} protocol has several {kind}s {list(choices)}: "
                             f"name one")
        return choices[0]

    def settings(self, experiment: str | None = None, model: str | None = None) -> RunSettings:
        """The settings this protocol trains ``model`` on ``experiment`` with (None: the
        protocol's only one): ``model_overrides[model]`` applied (quick: VGG-16's learning rate
        and image size, the appendix architectures' smaller data), then every value keyed by
        experiment resolved (``per_class``, ``test_per_class``, ``epochs``, ``lr``,
        ``batch_size``)."""
        experiment, model = self._only("experiment", experiment), self._only("model", model)
        ms = dataclasses.replace(self, **dict(self.model_overrides.get(model, {})))
        return RunSettings(
            experiment=experiment, model=model, variant=self.variants.get(model, model),
            epochs=per_experiment(ms.epochs, experiment),
            batch_size=per_experiment(ms.batch_size, experiment), optimizer=ms.optimizer,
            lr=per_experiment(ms.lr, experiment), image_size=ms.image_size,
            per_class=per_experiment(ms.per_class, experiment),
            test_per_class=per_experiment(ms.test_per_class, experiment),
            pretrained=ms.pretrained, weights_fallback=ms.weights_fallback,
            case_batch=MappingProxyType(dict(self.method_batch_size.get(model, {}))))

    def source_for(self, experiment: str) -> Source:
        """The typed, checked source of ``experiment`` (raises naming the expected layout)."""
        from ..sources import MEDICAL_EXPERIMENTS, DataNotFoundError, cache_dir

        if self.source is not None or experiment not in MEDICAL_EXPERIMENTS:
            src = parse_source(self.source, experiment)
            if isinstance(src, Embedded) and str(src) == "embedded":
                # the digits, calibrated, checked for the experiment as a typed source is
                return parse_source(self.embedded.get(experiment, src), experiment)
            return src
        try:
            return parse_source(str(cache_dir()), experiment)
        except DataNotFoundError as exc:
            raise DataNotFoundError(
                f"the {self.name} profile trains on the real {experiment.upper()} folder and "
                f"found none: {exc}. Pass it as the notebook's `source` parameter (-p source "
                f"/path), put it under $TAPKIT_DATA, or pass -p source embedded for the digits "
                f"stand-in.") from exc

    def start(self, run: RunSettings) -> TrainConfig | None:
        """The pretraining run that ``run``'s architecture starts from on the stand-in, at its
        image size and learning rate, or None (no :attr:`pretraining`, an architecture it does
        not pretrain, or the real folder of the experiment)."""
        if (self.pretraining is None or run.variant not in self.pretraining.models
                or not isinstance(self.source_for(run.experiment), Embedded)):
            return None
        return self.pretraining.config(run.variant, run.image_size, run.lr)

    def config(self, experiment: str | None = None, model: str | None = None,
               **fields: Any) -> TrainConfig:
        """A config of this protocol on ``experiment`` and ``model`` (None: the protocol's only
        one; the run's :meth:`settings`) with per-run ``fields``."""
        return self.config_for(self.settings(experiment, model), **fields)

    def config_for(self, run: RunSettings, **fields: Any) -> TrainConfig:
        """A config of ``run`` (:meth:`settings`) with per-run ``fields`` (the method's options
        from :attr:`options` unless ``fields`` name them); it records ``run.variant``."""
        base = dict(experiment=run.experiment, model=run.variant,
                    source=self.source_for(run.experiment), epochs=run.epochs,
                    batch_size=run.batch_size, optimizer=run.optimizer, lr=run.lr,
                    image_size=run.image_size, per_class=run.per_class,
                    pretrained=run.pretrained, weights_fallback=run.weights_fallback,
                    test_per_class=run.test_per_class, start=self.start(run))
        return self._train_config(base, fields)

    def as_dict(self) -> dict[str, Any]:
        """The settings for a table's metadata: the fields a profile sets and the loss options
        (:data:`EQUATIONS` is empty), the others left at their defaults omitted (an MNIST page
        lists no image size)."""
        unset = {f.name for f in dataclasses.fields(self) if f.name != "options" and (
            f.default is not dataclasses.MISSING and getattr(self, f.name) == f.default
            or f.default_factory is not dataclasses.MISSING  # type: ignore[misc]
            and getattr(self, f.name) == f.default_factory())}  # type: ignore[misc]
        return {k: v for k, v in super().as_dict().items() if k not in unset}


@dataclass(frozen=True)
class BenchProtocol(_Protocol):
    """Table 1: ``steps`` (or ``model_steps[model]``) timed after ``warmup`` steps; No XS and TAP
    (no input gradients) ``paired_steps`` rounds (or ``model_paired_steps[model]``; None: as
    many as the others) for their ratio's interval, their memory ``memory_passes`` times; and
    the efficiency of a No XS step per ``(model spec, optimizer)`` in ``efficiency``, best of
    ``efficiency_steps``, with ``efficiency_threads`` CPU threads (None: all)
    (:func:`tapkit.benchmark.efficiency`).

    What is timed (:func:`tapkit.experiments.table1.measure`): ``models``, the architectures of
    the paper's Table 1 (VGG-16, ResNet-18, DenseNet-121; a spec, ``name`` or
    ``name@BATCHxSIZE``), which its speed claim is judged on; ``context``, models measured
    beside them and shown as context only (the two-layer CNN of Decoy-MNIST at its own batch);
    ``methods`` (No XS is also timed a second time, the noise floor); ``options``, each XS
    method's loss form (:data:`EQUATIONS` or :data:`RELEASED`: the released RBR the authors
    timed)."""

    batch_size: int
    image_size: int
    steps: int
    warmup: int
    threads: int | None
    model_steps: Mapping[str, int] = field(default_factory=dict)
    paired_steps: int | None = None
    model_paired_steps: Mapping[str, int] = field(default_factory=dict)
    memory_passes: int = 1
    efficiency: tuple[tuple[str, str], ...] = ()
    efficiency_steps: int = 3
    efficiency_threads: int | None = None
    models: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    methods: tuple[str, ...] = field(default_factory=lambda: tuple(table1_methods()))
    options: MethodOptionsTable = field(default_factory=lambda: EQUATIONS)

    def __post_init__(self) -> None:
        for name in ("models", "context", "methods"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        check_options_table(self.options)

    def model_rounds(self, model: str) -> tuple[int, int | None]:
        """``(steps, paired_steps)`` for ``model``."""
        return (self.model_steps.get(model, self.steps),
                self.model_paired_steps.get(model, self.paired_steps))


# beside Table 1's architectures (the paper profile; the quick profile times it at the batch its
# MNIST chapters train with): the paper's MNIST model at its own batch of 256 digits of 28 px,
# where a step is small and TAP's pooling and masking per layer weigh the most (context only)
BENCH_CONTEXT = ("two_layer_cnn@256x28",)


def as_trained(mnist: Protocol, medical: Protocol) -> tuple[tuple[str, str], ...]:
    """``(model spec, optimizer)`` of every architecture as a profile (its ``mnist`` and
    ``medical`` protocols) trains it: the MNIST CNN, then each main medical architecture (the
    registry's, in the paper's order: VGG-16, ResNet-18, DenseNet-121) with
    its overrides (:meth:`Protocol.settings`: its own image size) and its registry variant,
    e.g. ``("resnet18@16x64", "adam")`` (:func:`tapkit.benchmark.efficiency`)."""
    out = [(f"two_layer_cnn@{mnist.batch_size}x28", mnist.optimizer)]
    for model in models_where(Role.MAIN):
        o = medical.settings(medical.experiments[0], model)
        out.append((f"{o.variant}@{o.batch_size}x{o.image_size}", o.optimizer))
    return tuple(out)


@dataclass(frozen=True)
class Profile:
    """Everything one profile sets, one protocol per part of the book: Decoy-MNIST's Setting 1
    (``mnist``) and Setting 2 (``mnist_teachers``), the medical chapters' (``medical``,
    ``medical_teachers``) and Table 1's (``bench``). Each profile is one file of
    :mod:`tapkit.experiments.profiles`, registered by :func:`register_profile`."""

    name: str
    mnist: Protocol
    mnist_teachers: TeachersProtocol
    medical: Protocol
    medical_teachers: TeachersProtocol
    bench: BenchProtocol


_REGISTRY: dict[str, Profile] = {}
PROFILES = _REGISTRY.keys()  # the registered profiles' names, in order: quick, paper, smoke
# Views of the registry by part, keyed by profile (filled by register_profile)
MNIST: dict[str, Protocol] = {}
MNIST_TEACHERS: dict[str, TeachersProtocol] = {}
MEDICAL: dict[str, Protocol] = {}
MEDICAL_TEACHERS: dict[str, TeachersProtocol] = {}
BENCH: dict[str, BenchProtocol] = {}


def register_profile(profile: Profile) -> Profile:
    """Add ``profile`` to the registry and its protocols to the views by part; a name already
    registered, or a protocol named after another profile, is refused."""
    if profile.name in _REGISTRY:
        raise ValueError(f"profile {profile.name!r} is already registered")
    named = {p.name for p in (profile.mnist, profile.medical)}
    if named != {profile.name}:
        raise ValueError(f"profile {profile.name!r}: its protocols are named {sorted(named)}")
    _REGISTRY[profile.name] = profile
    MNIST[profile.name], MNIST_TEACHERS[profile.name] = profile.mnist, profile.mnist_teachers
    MEDICAL[profile.name] = profile.medical
    MEDICAL_TEACHERS[profile.name], BENCH[profile.name] = profile.medical_teachers, profile.bench
    return profile


def _pick(table: Mapping[str, Any], profile: str):
    if profile not in table:
        raise ValueError(f"unknown profile {profile!r}; expected one of {list(PROFILES)}")
    return table[profile]


def mnist(profile: str, **overrides: Any) -> Protocol:
    """The profile's Decoy-MNIST protocol with the notebook's non-``None`` parameters."""
    return _pick(MNIST, profile).with_overrides(**overrides)


def mnist_teachers(profile: str, **overrides: Any) -> TeachersProtocol:
    return _pick(MNIST_TEACHERS, profile).with_overrides(**overrides)


def medical(profile: str, **overrides: Any) -> Protocol:
    """The profile's medical protocol with the notebook's non-``None`` parameters. An explicit
    ``epochs`` or ``batch_size`` applies to every architecture, so it also clears the profile's
    per-architecture overrides."""
    p = _pick(MEDICAL, profile).with_overrides(**overrides)
    if overrides.get("epochs") is not None or overrides.get("batch_size") is not None:
        p = dataclasses.replace(p, model_overrides={})
    return p


def medical_teachers(profile: str, **overrides: Any) -> TeachersProtocol:
    return _pick(MEDICAL_TEACHERS, profile).with_overrides(**overrides)


def bench(profile: str, **overrides: Any) -> BenchProtocol:
    return _pick(BENCH, profile).with_overrides(**overrides)


def results_root(profile: str, base: str | Path = "results") -> Path:
    """Where a profile's runs and tables live: ``results/<profile>/``."""
    return Path(base) / profile
