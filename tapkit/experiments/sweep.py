"""``tapkit sweep``: every run some chapters of the book need, into the results store.

:data:`CHAPTERS` maps each chapter that trains to a function returning the configs its notebook
asks for, built by :mod:`.plans` and :mod:`.medical_plans` as the notebook builds them with its
default parameters, so a sweep fills the store the book then reads. A chapter that trains with a
λ search's choice runs that search first and writes its choice table as the notebook does.
:func:`sweep` runs the chapters wave by wave (:func:`.planner.waves`) through an executor; the
store keys every run, so a second call trains nothing and an interrupted one resumes; a failed
run does not stop the others, and the sweep ends naming every failed one. :func:`plan` lists
what a sweep would submit (``tapkit sweep --dry-run``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..config import TrainConfig
from ..results import resolve_device, write_table
from . import medical_plans, plans, protocols
from . import medical_teacher_plans as mtp
from .executors import make_executor, records_frame, run_many
from .failures import RunFailed, RunsFailedError
from .medical_runs import search_and_choose
from .planner import label, waves
from .store import ResultStore

log = logging.getLogger(__name__)


Runner = Callable[[list], Any]  # runs a list of configs (λ searches run before their choice)


def _lambda_search(profile: str, root: Path, run: Runner, **overrides: Any) -> list[TrainConfig]:
    """The MNIST λ search; its choice (``tables/lambda_choice.csv``) is written as the notebook
    writes it, for the chapters that read it."""
    s = protocols.mnist(profile, **overrides)
    configs = plans.search_configs(s)
    frame = run(configs)
    cols = ["method", "lam", "status", "val_loss", "contaminated", "permuted"]
    write_table(plans.choose_lambdas(frame[cols]), root, "lambda_choice",
                {"grids": {m: list(g) for m, g in s.search.items()}})
    return configs


def _mnist(profile: str, root: Path, run: Runner, **overrides: Any) -> list[TrainConfig]:
    s = protocols.mnist(profile, **overrides)
    return plans.mnist_configs(s, plans.MNIST_CASES, plans.mnist_lambdas(root))


def _teachers(profile: str, root: Path, run: Runner, **overrides: Any) -> list[TrainConfig]:
    t = protocols.mnist_teachers(profile)
    s = t.on_seeds(protocols.mnist(profile, **overrides), overrides.get("seeds"))
    tl, gt = plans.teacher_lambdas(), plans.mnist_lambdas(root)
    return ([plans.teacher(s, f, seed) for f in t.fractions for seed in s.seeds]
            + plans.student_configs(s, t, "tap", plans.teacher_cases(t), tl, gt)[0]
            + plans.teacher_xs_configs(s, t, tl, gt)[0])


def _distillation(profile: str, root: Path, run: Runner, **overrides: Any) -> list[TrainConfig]:
    t = protocols.mnist_teachers(profile)
    s = t.on_seeds(protocols.mnist(profile, **overrides), overrides.get("seeds"))
    return plans.kd_configs(s, t, ["kd", "at", "jt"], plans.kd_lambdas())


def _medical(experiment: str, models: Sequence[str], cases: Sequence[str], stripes: bool):
    def chapter(profile: str, root: Path, run: Runner, **overrides: Any) -> list[TrainConfig]:
        s = protocols.medical(profile, **overrides)
        settings = [("tag", list(models))]
        if stripes:
            settings.append(("stripe", medical_plans.per_experiment(s.stripe_models, experiment)
                             or []))
        out = []
        for artifact, archs in settings:
            if archs:
                search_and_choose(s, experiment, archs, cases, artifact, root,
                                                run=run)
                lams = medical_plans.searched_lambdas(root, experiment, artifact)
                out += [r.cfg for r in medical_plans.medical_runs(s, experiment, archs, cases,
                                                                  artifact, lams)]
        return out
    return chapter


def _extra(profile: str, root: Path, run: Runner, **overrides: Any) -> list[TrainConfig]:
    cases = ["base", "none", "tap"]
    return [cfg for e in medical_plans.DATASETS for cfg in
            _medical(e, medical_plans.EXTRA_ARCHITECTURES, cases, False)(profile, root, run,
                                                                          **overrides)]


def _medical_teachers(profile: str, root: Path, run: Runner, **overrides: Any) -> list[TrainConfig]:
    """Teachers first (the random masks' coverage is read from their annotations), then the
    students with teacher and random masks and Setting 1's references, as the notebook asks."""
    p = protocols.medical(profile, **overrides)
    t = protocols.medical_teachers(profile)
    p = t.on_seeds(p, overrides.get("seeds"))
    out = []
    for e in medical_plans.DATASETS:
        teacher_cfgs = [cfg for *_, cfg in mtp.teacher_configs(p, t, e)]
        run(teacher_cfgs)
        coverage = mtp.teacher_coverage(p, t, e, root / "runs", resolve_device("auto"))
        out += teacher_cfgs + [st.cfg for st in mtp.setting2_students(p, t, e, root, coverage)]
    return out


def _medical_distillation(profile: str, root: Path, run: Runner, **overrides: Any) -> list[TrainConfig]:
    p = protocols.medical(profile, **overrides)
    t = protocols.medical_teachers(profile)
    p = t.on_seeds(p, overrides.get("seeds"))
    return [st.cfg for e in medical_plans.DATASETS
            for st in mtp.distillation_students(p, t, e, root)]


CHAPTERS: dict[str, Callable[..., list[TrainConfig]]] = {
    "lambda_search": _lambda_search,
    "mnist": _mnist,
    "teachers": _teachers,
    "distillation": _distillation,
    "pneu": _medical("pneu", medical_plans.ARCHITECTURES, medical_plans.CASES, True),
    "knee": _medical("knee", medical_plans.ARCHITECTURES, medical_plans.CASES, True),
    "extra_architectures": _extra,
    "medical_teachers": _medical_teachers,
    "medical_distillation": _medical_distillation,
}
# the chapters whose λ choice (or runs) a chapter reads: they run first
READS_CHOICE_OF = {"mnist": ("lambda_search",), "teachers": ("lambda_search",),
                   "medical_teachers": ("pneu", "knee"), "medical_distillation": ("pneu", "knee")}


def chapter_order(chapters: Sequence[str]) -> list[str]:
    """``chapters`` with the λ search first where a chapter reads its choice, in book order;
    an unknown name raises listing the valid ones."""
    unknown = [c for c in chapters if c not in CHAPTERS]
    if unknown:
        raise ValueError(f"unknown chapter(s) {unknown}; expected some of {list(CHAPTERS)}")
    wanted = set(chapters) | {r for c in chapters for r in READS_CHOICE_OF.get(c, ())}
    return [c for c in CHAPTERS if c in wanted]


def sweep(profile: str, chapters: Sequence[str], results: str | Path | None = None,
          executor: Any = "local", device: str = "auto", executor_params: dict | None = None,
          **overrides: Any) -> dict[str, int]:
    """Run every run the ``chapters`` need (in :func:`chapter_order`, each wave by wave through
    ``executor``) into the store ``<results>/runs`` (default ``results/<profile>``);
    ``overrides`` (e.g. ``epochs``) go to every chapter's protocol. Returns the number of
    configs per chapter.

    Stored runs are never submitted (:func:`.executors.run_many` reads the store first). A run
    that fails does not stop the sweep: the chapters go on, except those that read a failed
    chapter's results (:data:`READS_CHOICE_OF`), and :class:`.RunsFailedError` names every failed
    run as ``chapter/label/key`` at the end; a rerun trains only those."""
    root = _root(profile, results)
    if isinstance(executor, str):
        executor = make_executor(executor, folder=root / "submitit", **(executor_params or {}))
    asked: set[str] = set()
    failures: dict[str, RunFailed] = {}
    broken: list[str] = []
    skipped: list[str] = []
    counts = {}
    for chapter in chapter_order(chapters):
        reads = [c for c in READS_CHOICE_OF.get(chapter, ()) if c in broken]
        if reads:
            log.error("chapter %s not run: it reads %s, where runs failed", chapter,
                      ", ".join(reads))
            broken.append(chapter)
            skipped.append(chapter)
            continue

        def run(configs: list) -> Any:
            asked.update(cfg.key() for wave in waves(configs) for cfg in wave)
            return run_many(configs, root / "runs", device, executor)

        try:
            configs = CHAPTERS[chapter](profile, root, run, **overrides)
            log.info("chapter %s: %d runs", chapter, len(configs))
            run(configs)
        except RunsFailedError as err:
            for f in err.failures:
                failures.setdefault(f.key, f.in_chapter(chapter))
            broken.append(chapter)
            continue
        counts[chapter] = len(configs)
    if failures or skipped:
        raise RunsFailedError(list(failures.values()), len(asked), skipped)
    return counts


@dataclass(frozen=True)
class PlannedRun:
    """A run a sweep would submit, and the chapter that asks for it first."""

    chapter: str
    cfg: TrainConfig

    def line(self) -> str:
        """``chapter/label/key``, as ``tapkit sweep --dry-run`` lists it."""
        return f"{self.chapter}/{label(self.cfg)}/{self.cfg.key()}"


class _NotStored(Exception):
    """A dry run met a step whose next runs follow from runs not stored yet."""


def plan(profile: str, chapters: Sequence[str], results: str | Path | None = None,
         **overrides: Any) -> list[PlannedRun]:
    """The runs :func:`sweep` would submit (those the store lacks, teachers included), in its
    order; nothing is trained or submitted. Where a chapter's later runs follow from earlier
    results not stored yet (a λ search's choice, the teachers behind Setting 2's masks), the
    plan stops at those earlier runs, as do the chapters that read it (logged); a chapter whose
    earlier runs are stored is planned from them, as the sweep would (writing the same λ-choice
    table)."""
    root = _root(profile, results)
    store = ResultStore(root / "runs")
    listed: dict[str, PlannedRun] = {}
    waiting: list[str] = []
    for chapter in chapter_order(chapters):
        reads = [c for c in READS_CHOICE_OF.get(chapter, ()) if c in waiting]
        if reads:
            log.info("chapter %s: planned once the runs of %s are stored", chapter,
                     ", ".join(reads))
            waiting.append(chapter)
            continue
        missing: list[TrainConfig] = []

        def run(configs: list, last: bool = False) -> Any:
            todo = [cfg for wave in waves(configs) for cfg in wave if store.load(cfg) is None]
            for cfg in todo:
                listed.setdefault(cfg.key(), PlannedRun(chapter, cfg))
            missing.extend(todo)
            if todo and not last:
                raise _NotStored
            return None if todo else records_frame([store.load(cfg) for cfg in configs])

        try:
            run(CHAPTERS[chapter](profile, root, run, **overrides), last=True)
        except _NotStored:
            log.info("chapter %s: the rest of its plan follows from the results of the runs "
                     "listed for it; dry-run again once those are stored", chapter)
        if missing:
            waiting.append(chapter)
    return list(listed.values())


def _root(profile: str, results: str | Path | None) -> Path:
    return Path(results) if results is not None else protocols.results_root(profile)
