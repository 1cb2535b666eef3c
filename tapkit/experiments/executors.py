"""Executors: thin adapters that run a list of configs, one after another (``local``), in N
spawned processes (``processes:N``, ``concurrent.futures``) or as a submitit job array
(``submitit``, :mod:`.cluster`: Slurm where there is one, local processes elsewhere; ``pip
install tapkit[slurm]``). They only need ``map(fn, items)``, so they replace each other without
touching an experiment. :func:`run_many` runs configs wave by wave (:func:`.planner.waves`:
teachers before their students) through the results store (:mod:`.store`), whose locks keep two
workers from training one run: it submits only the runs the store lacks, and a failed run
(:mod:`.failures`) does not lose the others.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

import pandas as pd
import torch
from tqdm import tqdm

from ..allocator import reusing_cpu_allocator
from ..config import TrainConfig
from ..method_options import options_label
from ..progress import disabled as progress_disabled
from . import planner
from .cluster import SubmititExecutor  # noqa: F401 (an executor by name, below)
from .failures import RunFailed, RunsFailedError
from .planner import dependencies, waves
from .store import ResultStore

log = logging.getLogger(__name__)


class Executor(Protocol):
    def map(self, fn: Callable, items: Sequence) -> list: ...


class LocalExecutor:
    """Runs configs one after another in this process, with a progress bar."""

    def __init__(self, progress: bool = True):
        self.progress = progress

    def map(self, fn: Callable, items: Sequence) -> list:
        return [fn(item) for item in tqdm(items, desc="runs", disable=progress_disabled(self.progress))]


def _worker_init(threads: int) -> None:
    torch.set_num_threads(threads)
    reusing_cpu_allocator()


def set_threads(s: Any) -> int:
    """Apply the protocol's CPU thread count (``threads``; None leaves PyTorch's default) and
    return the count in use. The provenance label records it."""
    if s.threads:
        torch.set_num_threads(int(s.threads))
    return torch.get_num_threads()


class ProcessExecutor:
    """``processes:N``: N spawned worker processes (``concurrent.futures``), e.g. several runs
    sharing one GPU. Results come back in the order of ``items``. Each worker gets an equal share
    of the CPU threads and the reusing allocator (:mod:`tapkit.allocator`); ``fn`` and the items
    must be picklable (module-level functions, configs)."""

    def __init__(self, workers: int, progress: bool = True, threads: int | None = None):
        if workers < 1:
            raise ValueError(f"need at least one worker, got {workers}")
        self.workers, self.progress = workers, progress
        self.threads = threads or max(1, (os.cpu_count() or 1) // workers)

    def map(self, fn: Callable, items: Sequence) -> list:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_worker_init,
                                 initargs=(self.threads,)) as pool:
            futures = [pool.submit(fn, item) for item in items]
            results = []
            try:
                for future in tqdm(futures, desc=f"runs ({self.workers} workers)",
                                   disable=progress_disabled(self.progress)):
                    results.append(future.result())
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)  # runs under way finish, no more
                raise
        return results


def make_executor(spec: str = "local", progress: bool = True,
                  folder: str | Path | None = None, **params: Any) -> Executor:
    """An executor by name: ``local``, ``processes:N``, or ``submitit[:FOLDER[:CLUSTER]]``
    (submitit's job folder, default ``folder``; ``CLUSTER`` one of submitit's: ``slurm``,
    ``local``, ``debug``; default: Slurm where there is one); ``params`` go to submitit's
    ``update_parameters`` (e.g. ``gpus_per_node=1``; ``timeout_min`` overrides the limit
    :class:`SubmititExecutor` derives from the runs' expected time)."""
    kind, _, arg = spec.partition(":")
    if kind == "local" and not arg:
        return LocalExecutor(progress)
    if kind == "processes" and arg.isdigit():
        return ProcessExecutor(int(arg), progress)
    if kind == "submitit" and (arg or folder):
        path, _, cluster = arg.partition(":")
        return SubmititExecutor(path or str(folder), cluster or None, **params)
    raise ValueError(f"unknown executor {spec!r}; expected 'local', 'processes:N' or "
                     "'submitit[:FOLDER[:CLUSTER]]'")


@dataclass(frozen=True)
class RunJob:
    """One run of the store at ``root`` as a picklable job: ``RunJob(root, device)(cfg)`` reads
    or trains ``cfg`` and returns its record, or, where it raises, a :class:`.RunFailed` naming
    it (logged with its traceback), so one failing run does not lose the others. Its teacher
    must be stored already (:func:`run_many`'s waves train teachers first)."""

    root: str
    device: str = "auto"
    compile_step: bool = False

    def __call__(self, cfg: TrainConfig) -> dict | RunFailed:
        try:
            return ResultStore(self.root).run(cfg, self.device, progress=False,
                                              compile_step=self.compile_step, train_teachers=False)
        except Exception as exc:
            log.exception("run %s (%s) failed", cfg.key(), planner.label(cfg))
            return RunFailed.of(cfg, exc)

    def expected_minutes(self, cfg: TrainConfig, gpus_requested: bool = False) -> float:
        """:func:`.planner.expected_minutes` on a GPU where the device is one (``cuda``, or
        ``auto`` on a job given GPUs), else on a CPU."""
        gpu = self.device.startswith("cuda") or (self.device == "auto" and gpus_requested)
        return planner.expected_minutes(cfg, gpu)


def _dependency_failed(cfg: TrainConfig, failed: dict[str, RunFailed]) -> str | None:
    """The key of a failed run ``cfg`` needs (its teacher or start), or None."""
    return next((d.key() for d in dependencies(cfg) if d.key() in failed), None)


def run_many(configs: Iterable[TrainConfig], root: str | Path, device: str = "auto",
             executor: Executor | str | None = None, compile_step: bool = False) -> pd.DataFrame:
    """Run (or read from the store) every config, teachers first (:func:`.planner.waves`); one
    row per config asked for, config fields flattened (the method's options as one ``options``
    cell, :func:`tapkit.method_options.options_label`). ``executor`` is an executor or its name
    (:func:`make_executor`); ``compile_step`` is an execution option (:mod:`tapkit.compiled`).

    The store is read here first: only runs it lacks go to the executor (a resumed sweep submits
    no job for a stored run, and none at all when every run is stored). A run that fails does
    not stop the others; its students are not submitted. After every wave,
    :class:`.RunsFailedError` names the failed runs; the others are stored, so calling again
    trains only those."""
    configs = list(configs)
    store = ResultStore(root)
    job = RunJob(str(root), device, compile_step)
    done: dict[str, dict] = {}
    failed: dict[str, RunFailed] = {}
    plan = waves(configs)
    for wave in plan:
        pending = []
        for cfg in wave:
            needed = _dependency_failed(cfg, failed)
            record = None if needed else store.load(cfg)
            if needed:
                failed[cfg.key()] = RunFailed.of(cfg, f"not run: the run it needs, {needed}, failed")
            elif record is not None:
                done[cfg.key()] = record
            else:
                pending.append(cfg)
        if not pending:
            continue
        log.info("%d run(s) to train, %d stored", len(pending), len(wave) - len(pending))
        if executor is None or isinstance(executor, str):
            executor = make_executor(executor or "local", folder=Path(root).parent / "submitit")
        for cfg, out in zip(pending, executor.map(job, pending)):
            if isinstance(out, dict):
                done[cfg.key()] = out
            else:
                failed[cfg.key()] = out if isinstance(out, RunFailed) else RunFailed.of(cfg, out)
    if failed:
        for f in failed.values():
            log.error("run failed: %s: %s", f.cell(), f.error)
        raise RunsFailedError(list(failed.values()), sum(len(w) for w in plan))
    return records_frame([done[c.key()] for c in configs])


def records_frame(records: Sequence[dict]) -> pd.DataFrame:
    rows = []
    for rec in records:
        row = {k: v for k, v in rec.items() if k not in ("config", "provenance", "history")}
        row.update({k: v for k, v in rec["config"].items() if k not in ("teacher", "start")})
        if isinstance(row.get("options"), Mapping):  # one cell: "kernel_size=3, norm=l2sq, ..."
            # in the order the store writes them (sorted): the same cell whether the run was
            # trained in this process or read back from the store
            row["options"] = options_label(dict(sorted(row["options"].items())))
        row.update({f"prov_{k}": v for k, v in rec["provenance"].items()})
        rows.append(row)
    return pd.DataFrame(rows)
