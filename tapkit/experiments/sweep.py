"""``tapkit sweep``: every run some chapters of the book need, into the results store.

:data:`CHAPTERS` maps each chapter that trains to a function returning the configs its notebook
asks for: its plan in :data:`.chapter_plans.PLANS` with the notebook's default parameters, so a
sweep fills the store the book then reads. A chapter that trains with a
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
from ..results import write_table
from . import chapter_plans, plans, protocols
from .chapter_plans import Runner
from .executors import make_executor, records_frame, run_many
from .failures import RunFailed, RunsFailedError
from .planner import label, waves
from .store import ResultStore

log = logging.getLogger(__name__)


def _write_lambda_choice(p: protocols.Protocol, root: Path, run: Runner,
                         cells: list[chapter_plans.Cell]) -> None:
    """The MNIST λ search's choice (``tables/lambda_choice.csv``), written as the notebook
    writes it, for the chapters that read it."""
    frame = run(chapter_plans.configs(cells))
    cols = ["method", "lam", "status", "val_loss", "contaminated", "permuted", "metric",
            "val_clean", "val_constant"]  # the last two NaN for runs stored before they existed
    write_table(plans.choose_lambdas(frame.reindex(columns=cols), guard=p.lambda_guard), root,
                "lambda_choice", {"grids": {m: list(g) for m, g in p.search.items()}})


def _chapter(name: str) -> Callable[..., list[TrainConfig]]:
    """The configs of chapter ``name``'s plan (:data:`.chapter_plans.PLANS`) for a profile,
    with its notebook's default options and ``overrides`` on its protocol, after its stages
    (:func:`.chapter_plans.planned`: they run through ``run``)."""
    def configs(profile: str, root: Path, run: Runner, **overrides: Any) -> list[TrainConfig]:
        p = chapter_plans.protocol_for(name, profile, **overrides)
        cells = chapter_plans.planned(name, p, Path(root), run)
        if name == "lambda_search":
            _write_lambda_choice(p, Path(root), run, cells)
        # once each: a medical λ search's chosen run is also its table's run
        return list({cfg.key(): cfg for cfg in chapter_plans.configs(cells)}.values())
    configs.__name__ = f"{name}_configs"
    return configs


# chapter -> function(profile, root, run, **overrides) -> the configs of its plan
CHAPTERS: dict[str, Callable[..., list[TrainConfig]]] = {
    name: _chapter(name) for name in chapter_plans.PLANS}


def chapter_order(chapters: Sequence[str]) -> list[str]:
    """``chapters`` with the λ search first where a chapter reads its choice, in book order;
    an unknown name raises listing the valid ones."""
    unknown = [c for c in chapters if c not in CHAPTERS]
    if unknown:
        raise ValueError(f"unknown chapter(s) {unknown}; expected some of {list(CHAPTERS)}")
    wanted = set(chapters) | {r for c in chapters for r in chapter_plans.CHAPTER_SPECS[c].reads}
    return [c for c in CHAPTERS if c in wanted]


def _reads(chapter: str, among: Sequence[str]) -> str:
    """The chapters in ``among`` whose results ``chapter`` reads (its
    :attr:`.chapter_plans.ChapterSpec.reads`), as
    ``a, b``; empty when it reads none of them."""
    return ", ".join(c for c in chapter_plans.CHAPTER_SPECS[chapter].reads if c in among)


def sweep(profile: str, chapters: Sequence[str], results: str | Path | None = None,
          executor: Any = "local", device: str = "auto", executor_params: dict | None = None,
          **overrides: Any) -> dict[str, int]:
    """Run every run the ``chapters`` need (in :func:`chapter_order`, each wave by wave through
    ``executor``) into the store ``<results>/runs`` (default ``results/<profile>``);
    ``overrides`` (e.g. ``epochs``) go to every chapter's protocol. Returns the number of
    configs per chapter.

    Stored runs are never submitted (:func:`.executors.run_many` reads the store first). A run
    that fails does not stop the sweep: the chapters go on, except those that read a failed
    chapter's results (its :attr:`.chapter_plans.ChapterSpec.reads`), and :class:`.RunsFailedError` names every failed
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
        if reads := _reads(chapter, broken):
            log.error("chapter %s not run: it reads %s, where runs failed", chapter, reads)
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
        if reads := _reads(chapter, waiting):
            log.info("chapter %s: planned once the runs of %s are stored", chapter, reads)
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
