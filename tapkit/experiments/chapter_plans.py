"""Every training chapter's plan, written once: :data:`CHAPTER_SPECS` holds each chapter's
:class:`ChapterSpec`, whose plan lists the runs its notebook asks the results store for, as
:class:`.cells.Cell` objects (:data:`PLANS` maps a chapter to it).

The notebooks (``notebooks/*.py``), ``tapkit sweep`` (:mod:`.sweep`), ``scripts/gpu.py`` and
the tests all call these functions, so the sweep fills exactly what the pages read, and
``tests/test_chapter_plans.py`` checks that each notebook asks for its plan's runs and no other.

A plan function takes the chapter's protocol (as the notebook has it, or
:func:`protocol_for` of a profile) and the results root, and returns cells: it trains nothing
and writes nothing. A chapter whose runs follow from earlier results (a λ search's choice, the
random masks' coverage read from the trained teachers) declares those earlier runs as its
:class:`Stage` s (:attr:`ChapterSpec.stages`); :func:`prepare` runs them through ``run``, which
trains (or reads from the store) a list of configs and returns their records
(:func:`.executors.run_many`), and writes what the plan reads; :func:`planned` is both. A plan
whose stage has not run raises :class:`StageNotRun`. Its keyword options are the notebook's
parameters, with the notebook's defaults, which the sweep uses; a chapter's stages take the
same options.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence


from ..config import TrainConfig
from ..method_options import KdOptions
from ..methods import Kind, is_xs, methods_where, no_xs, proposed_method
from ..models import Role, models_where
from ..results import resolve_device
from . import medical_plans, plans, protocols, setting1
from . import setting2_plans as s2p
from .cells import Annotation, Cell, labels
from .executors import run_many
from .medical_runs import search_and_choose
from .protocols import Protocol, TeachersProtocol
from .store import ResultStore

Runner = Callable[[list], Any]  # trains / reads a list of configs; returns their record frame
KD_METHODS = tuple(methods_where(kind=Kind.DISTILLATION))  # KD, AT, JT
EXTRA_CASES = ("base", no_xs(), proposed_method())  # the appendix architectures: Base, No XS, TAP
MEDICAL_DATASETS = tuple(medical_plans.DATASETS)


class StageNotRun(RuntimeError):
    """A plan needs results of a stage (:class:`Stage`) that the store does not hold yet."""


@dataclass(frozen=True)
class Stage:
    """What a chapter trains before its plan can be built: ``cells`` (run first, through the
    runner :func:`prepare` is given) and ``conclude(run)``, which writes what the plan reads from
    them (a λ search's choice table); None when the plan reads the stored runs themselves (the
    teachers, whose saliency gives the random masks' coverage)."""

    name: str
    cells: tuple[Cell, ...]
    conclude: Callable[[Runner], Any] | None = None


def prepare(stages: Iterable[Stage], run: Runner) -> None:
    """Run each stage's cells through ``run`` (trained, or read from the store), then its
    conclusion, in order."""
    for stage in stages:
        if stage.cells:
            run(configs(stage.cells))
        if stage.conclude is not None:
            stage.conclude(run)


def maps_cases() -> tuple[str, ...]:
    """The trained models the activation-map chapters draw: No XS and the XS losses."""
    return (no_xs(), *setting1.xs_cases())


# the method rows a chapter shows unless its notebook's ``methods`` names its own (a chapter not
# named: Setting 1's, setting1.cases): each read from the method registry when a chapter asks,
# so a method registered after import is among them; None: the chapter's protocol names them
# (the speed chapter's BenchProtocol.methods)
CHAPTER_CASES: dict[str, Callable[[], tuple[str, ...]] | None] = {
    "extra_architectures": lambda: EXTRA_CASES,
    "visual": maps_cases,
    "explorer": maps_cases,
    "distillation": lambda: KD_METHODS,
    "speed_memory": None,
}


def chapter_cases(chapter: str) -> list[str] | None:
    """The methods (a table's rows) chapter ``chapter`` trains and shows when its notebook's
    ``methods`` parameter is None (:func:`tapkit.book.chapter.open_chapter` resolves it here):
    :data:`CHAPTER_CASES`, else Setting 1's rows (Base, No XS, RRR, RBR, TAP: the MNIST, PNEU,
    KNEE and overlap chapters); None where the chapter's protocol names them. The plans'
    defaults are the same tuples, so a notebook run without ``methods`` asks for its plan's
    runs."""
    cases = CHAPTER_CASES.get(chapter, setting1.cases)
    return None if cases is None else list(cases())


# the architectures a medical chapter shows unless its notebook's ``models`` names its own: the
# registry's of the chapter's role (the paper's three; the appendix chapter's two)
CHAPTER_MODELS: dict[str, Role] = {"extra_architectures": Role.APPENDIX}


def chapter_models(chapter: str) -> list[str]:
    """The architectures medical chapter ``chapter`` trains and shows when its notebook's
    ``models`` parameter is None (:func:`tapkit.book.chapter.open_chapter` resolves it here):
    the registry's of its :data:`CHAPTER_MODELS` role, else the paper's three (``Role.MAIN``:
    VGG-16, ResNet-18, DenseNet-121), read when asked (a model registered later is among them)."""
    return models_where(CHAPTER_MODELS.get(chapter, Role.MAIN))


def runner(root: str | Path, device: str = "auto") -> Runner:
    """A ``run`` that trains (or reads) configs into the store ``<root>/runs`` on ``device``
    (:func:`.executors.run_many`), as the notebooks run them."""
    return partial(run_many, root=Path(root) / "runs", device=device)


def configs(cells: Iterable[Cell]) -> list[TrainConfig]:
    """The configs of ``cells``, in order."""
    return [c.cfg for c in cells]


def part(cells: Iterable[Cell], *tables: str) -> list[Cell]:
    """The cells of ``cells`` that feed one of ``tables``, in order."""
    return [c for c in cells if c.table in tables]


def columns(cells: Sequence[Cell], *names: str) -> dict[str, list]:
    """The label columns ``names`` of a run frame of ``cells`` (they replace the configs' own):
    τ as a float (NaN where none applies), the annotation as :class:`.cells.Annotation`
    (:func:`.cells.labels`)."""
    return labels(list(cells), *names)


def _named(cells: Iterable[Cell], table: str) -> list[Cell]:
    """``cells`` feeding the chapter's table ``table``."""
    return [dataclasses.replace(c, table=table) for c in cells]


# ----------------------------------------------------------------------------- MNIST

def lambda_search(p: Protocol, root: str | Path,
                  grids: Mapping[str, Iterable[float]] | None = None) -> list[Cell]:
    """The λ search on Decoy-MNIST (:func:`.plans.search_configs`): every (method, λ) of
    ``grids`` (default: the protocol's) on the first seed."""
    return [Cell(cfg, "lambda_search", model=cfg.model, method=cfg.method,
                 annotation=Annotation.GROUND_TRUTH, seed=cfg.seed, lam=cfg.lam)
            for cfg in plans.search_configs(p, grids)]


def mnist(p: Protocol, root: str | Path,
          cases: Sequence[str] | None = None,
          lambdas: Mapping[str, float] | None = None) -> list[Cell]:
    """Setting 1 on Decoy-MNIST: every case (None: :func:`.setting1.cases`) for each of its
    seeds, case-major, at the λ search's choice (:func:`.plans.mnist_lambdas`)."""
    return plans.mnist_cells(p, cases or setting1.cases(), plans.mnist_lambdas(root, lambdas),
                             "mnist_gt")


def teachers(p: Protocol, root: str | Path,
             t: TeachersProtocol | None = None, lambdas: Mapping[str, float] | None = None,
             threshold: str | None = None) -> list[Cell]:
    """Setting 2 on Decoy-MNIST (``p`` on the teachers' seeds, :meth:`on_seeds`): the teachers
    (``"teacher_performance"``, annotation the teacher's own), TAP with teacher, random and
    ground-truth masks and No XS (``"mnist_teacher"``), and the protocol's other XS methods with
    the first teacher's and random masks and their ground-truth runs (``"mnist_teacher_xs"``);
    each table's cells in the order of the paper's MNIST table: method, annotation
    (:func:`.setting2_plans.teacher_cases`), τ, seed."""
    t = t or protocols.mnist_teachers(p.name)
    cases, seeds, own = s2p.teacher_cases(t), list(p.seeds), proposed_method()
    methods = [own, *[m for m in t.xs_methods if m != own]]
    students = sorted(s2p.setting2_students(p, t, None, root, None, threshold, lambdas),
                      key=lambda c: (methods.index(own if c.method == no_xs() else c.method),
                                     cases.index(c.annotation), -1.0 if c.tau is None else c.tau,
                                     seeds.index(c.seed)))
    return (_named(s2p.teacher_cells(p, t), "teacher_performance")
            + _named([c for c in students if c.method in (own, no_xs())], "mnist_teacher")
            + _named([c for c in students if c.method not in (own, no_xs())],
                     "mnist_teacher_xs"))


def distillation(p: Protocol, root: str | Path,
                 t: TeachersProtocol | None = None, methods: Sequence[str] = KD_METHODS,
                 lambdas: Mapping[str, float] | None = None,
                 kd_temperature: float | None = None) -> list[Cell]:
    """TAP with each teacher's masks at τ = 0.01 (Setting 2's runs), KD/AT/JT (``methods``)
    students of the ``kd_fractions`` teachers and No XS (Setting 1's run) on Decoy-MNIST (table
    ``"mnist_kd"``), by teacher, method and seed as the paper's MNIST table; annotation: the
    teacher's (none for No XS), method: TAP, KD, AT, JT or none. ``kd_temperature``: KD's
    :class:`~tapkit.method_options.KdOptions` temperature (None: the protocol's, default 4)."""
    t = (t or protocols.mnist_teachers(p.name)).with_overrides(kd_methods=tuple(methods))
    p = p if kd_temperature is None else p.with_options(kd=KdOptions(temperature=kd_temperature))
    cases, seeds = s2p.teacher_cases(t), list(p.seeds)
    order = [proposed_method(), *t.kd_methods, no_xs()]
    return _named(sorted(s2p.distillation_students(p, t, None, root, lambdas),
                         key=lambda c: (cases.index(c.annotation), order.index(c.method),
                                        seeds.index(c.seed))), "mnist_kd")


# ----------------------------------------------------------------------------- medical

def lambda_search_stage(p: Protocol, root: str | Path, experiment: str, models: Sequence[str],
                        cases: Sequence[str], artifact: str) -> Stage:
    """A medical table's λ search as a stage: its runs (table
    :func:`.medical_plans.choice_name`) and its choice, written as
    ``tables/lambda_choice_<experiment>_<artifact>.csv`` (:func:`.medical_runs.search_and_choose`)
    for the table's plan to read."""
    name = medical_plans.choice_name(experiment, artifact)
    cells = _named(medical_plans.search_runs(p, experiment, models,
                                             [m for m in cases if is_xs(m)], artifact), name)

    def choose(run: Runner) -> None:
        search_and_choose(p, experiment, models, cases, artifact, root, run=run)
    return Stage(name, tuple(cells), choose if cells else None)


def searched_runs(p: Protocol, root: str | Path, experiment: str, models: Sequence[str],
                  cases: Sequence[str], artifact: str, lambdas: Mapping[str, Any] | None,
                  table: str) -> list[Cell]:
    """A medical table's runs at its λ search's choice (:func:`lambda_search_stage`, which must
    have run where the protocol searches): the search's cells and the table's."""
    stage = lambda_search_stage(p, root, experiment, models, cases, artifact)
    if stage.cells and not (Path(root) / "tables" / f"{stage.name}.csv").exists():
        raise StageNotRun(f"the λ search {stage.name} has not run: prepare the chapter's stages "
                          "first (chapter_plans.prepare, or planned)")
    found = list(stage.cells)
    lams = medical_plans.searched_lambdas(root, experiment, artifact, lambdas)
    return found + _named(medical_plans.medical_runs(p, experiment, models, cases, artifact, lams),
                          table)


def _medical_tables(p: Protocol, experiment: str, models: Sequence[str], cases: Sequence[str]
                    ) -> list[tuple[Protocol, str, Sequence[str], Sequence[str], str]]:
    """``(protocol, artifact, models, cases, table)`` of each table of Setting 1 on
    ``experiment``: the tags', and the stripes' for the protocol's ``stripe_models`` (on its
    stripe cases and seeds, :meth:`Protocol.stripes`)."""
    out = [(p, "tag", models, cases, f"{experiment}_gt")]
    stripes = protocols.per_experiment(p.stripe_models, experiment)
    if stripes:
        stripe_protocol, stripe_cases = p.stripes(cases)
        out.append((stripe_protocol, "stripe", stripes, stripe_cases, f"{experiment}_stripe"))
    return out


def medical_gt_stages(p: Protocol, root: str | Path, experiment: str = "pneu",
                      models: Sequence[str] = medical_plans.ARCHITECTURES,
                      cases: Sequence[str] | None = None, **_: Any) -> list[Stage]:
    """The λ searches :func:`medical_gt`'s tables are trained after."""
    cases = cases or setting1.cases()
    return [lambda_search_stage(tp, root, experiment, ms, cs, artifact)
            for tp, artifact, ms, cs, _ in _medical_tables(p, experiment, models, cases)]


def medical_gt(p: Protocol, root: str | Path, experiment: str = "pneu",
               models: Sequence[str] = medical_plans.ARCHITECTURES,
               cases: Sequence[str] | None = None,
               lambdas: Mapping[str, Any] | None = None) -> list[Cell]:
    """Setting 1 on PNEU or KNEE (``experiment``): the tag table ``"<experiment>_gt"`` of
    ``models`` and, for the protocol's ``stripe_models``, the stripe table
    ``"<experiment>_stripe"``, each at its λ search's choice (:func:`medical_gt_stages`;
    ``cases`` None: every case, :func:`.setting1.cases`)."""
    cases = cases or setting1.cases()
    return [c for tp, artifact, ms, cs, table in _medical_tables(p, experiment, models, cases)
            for c in searched_runs(tp, root, experiment, ms, cs, artifact, lambdas, table)]


def extra_stages(p: Protocol, root: str | Path, datasets: Sequence[str] = MEDICAL_DATASETS,
                 models: Sequence[str] = medical_plans.EXTRA_ARCHITECTURES,
                 cases: Sequence[str] = EXTRA_CASES, **_: Any) -> list[Stage]:
    """The λ searches :func:`extra_architectures`' tables are trained after."""
    return [lambda_search_stage(p, root, e, models, cases, "tag") for e in datasets]


def extra_architectures(p: Protocol, root: str | Path,
                        datasets: Sequence[str] = MEDICAL_DATASETS,
                        models: Sequence[str] = medical_plans.EXTRA_ARCHITECTURES,
                        cases: Sequence[str] = EXTRA_CASES,
                        lambdas: Mapping[str, Any] | None = None) -> list[Cell]:
    """The appendix's EfficientNet-B0 and MobileNet-v2 on each of ``datasets`` (table
    ``"extra_<experiment>"``), at their λ search's choice where the protocol searches
    (:func:`extra_stages`)."""
    return [c for e in datasets
            for c in searched_runs(p, root, e, models, cases, "tag", lambdas, f"extra_{e}")]


def medical_teacher_cells(p: Protocol, t: TeachersProtocol,
                          datasets: Sequence[str] | None = None) -> list[Cell]:
    """The Setting-2 teachers of ``datasets`` (None: :meth:`TeachersProtocol.datasets`; table
    ``"medical_teacher_performance"``, annotation the teacher's own): the first part of
    :func:`medical_teachers`."""
    return [c for e in t.datasets(p, datasets)
            for c in _named(s2p.teacher_cells(p, t, e), "medical_teacher_performance")]


def medical_teacher_stages(p: Protocol, root: str | Path, t: TeachersProtocol | None = None,
                           datasets: Sequence[str] | None = None,
                           coverage: Mapping[str, Mapping[float, float]] | None = None,
                           **_: Any) -> list[Stage]:
    """The teachers :func:`medical_teachers`' random masks read their coverage from (none when
    the notebook gives the ``coverage``: it trained them itself)."""
    if coverage is not None:
        return []
    t = t or protocols.medical_teachers(p.name)
    return [Stage("medical_teacher_performance", tuple(medical_teacher_cells(p, t, datasets)))]


def medical_teachers(p: Protocol, root: str | Path,
                     t: TeachersProtocol | None = None,
                     datasets: Sequence[str] | None = None, threshold: str | None = None,
                     lambdas: Mapping[str, Any] | None = None,
                     coverage: Mapping[str, Mapping[float, float]] | None = None,
                     device: str = "auto") -> list[Cell]:
    """Setting 2 on ``datasets`` (None: :meth:`TeachersProtocol.datasets`; ``p`` on the
    teachers' seeds): the teachers
    (:func:`medical_teacher_cells`), then the students with teacher and random masks and Setting
    1's references (table ``"medical_teacher"``). The random masks cover ``coverage[experiment]``
    at each τ; by default that is read from the stored teachers (their saliency on ``device``;
    :func:`medical_teacher_stages` trains them)."""
    t = t or protocols.medical_teachers(p.name)
    out = []
    for e in t.datasets(p, datasets):
        teacher = medical_teacher_cells(p, t, [e])
        if coverage is None:
            missing = [c for c in teacher if not ResultStore(Path(root) / "runs").load(c.cfg)]
            if missing:
                raise StageNotRun(f"{len(missing)} teacher(s) of {e} are not stored: prepare the "
                                  "chapter's stages first (chapter_plans.prepare, or planned)")
            cover = s2p.teacher_coverage(p, t, e, Path(root) / "runs", resolve_device(device),
                                         threshold)
        else:
            cover = coverage[e]
        out += teacher + _named(s2p.setting2_students(p, t, e, root, cover, threshold, lambdas),
                                "medical_teacher")
    return out


def medical_distillation(p: Protocol, root: str | Path,
                         t: TeachersProtocol | None = None,
                         datasets: Sequence[str] | None = None,
                         lambdas: Mapping[str, Any] | None = None,
                         kd_temperature: float | None = None) -> list[Cell]:
    """TAP with teacher masks at τ = 0.01, KD/AT/JT students and No XS on ``datasets`` (None:
    :meth:`TeachersProtocol.datasets`; ``p`` on the teachers' seeds; table ``"medical_kd"``;
    annotation the teacher's, or none for No XS).
    ``kd_temperature``: KD's :class:`~tapkit.method_options.KdOptions` temperature (None: the
    protocol's, default 4)."""
    t = t or protocols.medical_teachers(p.name)
    p = p if kd_temperature is None else p.with_options(kd=KdOptions(temperature=kd_temperature))
    return [c for e in t.datasets(p, datasets)
            for c in _named(s2p.distillation_students(p, t, e, root, lambdas), "medical_kd")]


# ----------------------------------------------------------------------------- the registry

class SettingProtocol(str, Enum):
    """The Setting-1 protocol a chapter takes (:func:`protocol_for`)."""

    MNIST = "mnist"
    MEDICAL = "medical"


@dataclass(frozen=True)
class ChapterSpec:
    """One training chapter's facts, in one place: its ``plan`` (the runs its notebook asks
    for; it trains nothing), its ``stages`` (what must be trained first, with the plan's
    options: :class:`Stage`), the Setting-1 protocol it takes (``protocol``: ``"mnist"`` or
    ``"medical"``), whether it trains on the teachers' seeds (``teacher_seeds``: Setting 2 and
    distillation), and the chapters whose λ choice or runs it ``reads`` (they run first: in
    ``tapkit sweep``, and as the Makefile's dependencies, which a test checks against these)."""

    name: str
    plan: Callable[..., list[Cell]]
    protocol: SettingProtocol
    teacher_seeds: bool = False
    reads: tuple[str, ...] = ()
    stages: Callable[..., list[Stage]] = lambda p, root, **options: []

    def __post_init__(self) -> None:
        object.__setattr__(self, "protocol", SettingProtocol(self.protocol))  # a bad name raises


CHAPTER_SPECS: dict[str, ChapterSpec] = {}


def register_chapter(spec: ChapterSpec) -> ChapterSpec:
    """Add ``spec`` to :data:`CHAPTER_SPECS` (a chapter registered twice raises; a chapter it
    reads must be registered first)."""
    if spec.name in CHAPTER_SPECS:
        raise ValueError(f"chapter {spec.name!r} is already registered")
    unknown = [r for r in spec.reads if r not in CHAPTER_SPECS]
    if unknown:
        raise ValueError(f"chapter {spec.name!r} reads unregistered chapter(s) {unknown}")
    CHAPTER_SPECS[spec.name] = spec
    return spec


_MNIST, _MEDICAL = SettingProtocol.MNIST, SettingProtocol.MEDICAL
for _spec in (
    ChapterSpec("lambda_search", lambda_search, _MNIST),
    ChapterSpec("mnist", mnist, _MNIST, reads=("lambda_search",)),
    ChapterSpec("teachers", teachers, _MNIST, teacher_seeds=True, reads=("lambda_search",)),
    ChapterSpec("distillation", distillation, _MNIST, teacher_seeds=True),
    ChapterSpec("pneu", partial(medical_gt, experiment="pneu"), _MEDICAL,
                stages=partial(medical_gt_stages, experiment="pneu")),
    ChapterSpec("knee", partial(medical_gt, experiment="knee"), _MEDICAL,
                stages=partial(medical_gt_stages, experiment="knee")),
    ChapterSpec("extra_architectures", extra_architectures, _MEDICAL, stages=extra_stages),
    ChapterSpec("medical_teachers", medical_teachers, _MEDICAL, teacher_seeds=True,
                reads=MEDICAL_DATASETS, stages=medical_teacher_stages),
    ChapterSpec("medical_distillation", medical_distillation, _MEDICAL, teacher_seeds=True,
                reads=MEDICAL_DATASETS),
):
    register_chapter(_spec)

# views of the registry as registered at import, for the callers that want one fact
PLANS: dict[str, Callable[..., list[Cell]]] = {n: c.plan for n, c in CHAPTER_SPECS.items()}
MNIST_CHAPTERS = tuple(n for n, c in CHAPTER_SPECS.items() if c.protocol is _MNIST)
ON_TEACHER_SEEDS = tuple(n for n, c in CHAPTER_SPECS.items() if c.teacher_seeds)


def chapter_datasets(chapter: str, profile: str) -> tuple[str, ...]:
    """The data sets a medical chapter runs on when its notebook's ``datasets`` is None: the
    Setting-2 protocol's for the teachers' chapters (:meth:`TeachersProtocol.datasets`; quick:
    PNEU), else every experiment of the profile's medical protocol."""
    p = protocols.medical(profile)
    if chapter in ON_TEACHER_SEEDS:
        return protocols.medical_teachers(profile).datasets(p)
    return tuple(p.experiments)


def protocol_for(chapter: str, profile: str, **overrides: Any) -> Protocol:
    """The protocol :data:`PLANS` ``[chapter]`` takes for ``profile`` with ``overrides`` (e.g.
    ``epochs``, ``seeds``), as the chapter's notebook builds it with those parameters: MNIST's or
    the medical one, on the teachers' seeds for Setting 2 and distillation unless ``seeds`` is
    given."""
    if chapter not in CHAPTER_SPECS:
        raise ValueError(f"unknown chapter {chapter!r}; expected one of {list(CHAPTER_SPECS)}")
    spec = CHAPTER_SPECS[chapter]
    mnist_ = spec.protocol is _MNIST
    p: Any = (protocols.mnist if mnist_ else protocols.medical)(profile, **overrides)
    if spec.teacher_seeds:
        t = (protocols.mnist_teachers if mnist_ else protocols.medical_teachers)(profile)
        p = t.on_seeds(p, overrides.get("seeds"))
    return p


def planned(chapter: str, p: Protocol, root: str | Path, run: Runner,
            **options: Any) -> list[Cell]:
    """Chapter ``chapter``'s plan on ``p`` with the notebook's ``options``, after its stages
    (:func:`prepare`, through ``run``): what its notebook asks the store for."""
    spec = CHAPTER_SPECS[chapter]
    prepare(spec.stages(p, root, **options), run)
    return spec.plan(p, Path(root), **options)
