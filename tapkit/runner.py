"""Running many configs: a results store keyed by config hash, and a swappable executor.

Experiments (the notebooks) build lists of :class:`~tapkit.training.TrainConfig` and hand them to
:func:`run_many`; they never train inline. The executor only needs ``map(fn, items)``:
:class:`LocalExecutor` (one run after another), :class:`ProcessExecutor` (``processes:N``, N
workers, e.g. sharing one GPU) or a cluster executor (:mod:`tapkit.slurm`) replace each other
without touching an experiment; :func:`make_executor` builds one from its name.

Workers never train the same run twice: :meth:`ResultStore.run` holds a lock on the run's folder
while it trains, and a second worker asking for it waits, then reads the result. An entry that
cannot be read (a truncated checkpoint, a garbled ``metrics.json``) is moved aside with a warning
and the run is redone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import multiprocessing
import os
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Protocol, Sequence

import pandas as pd
from tqdm import tqdm

from .allocator import reusing_cpu_allocator
from .training import TrainConfig, train_run
from .progress import disabled as progress_disabled

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
    import torch

    torch.set_num_threads(threads)
    reusing_cpu_allocator()


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


def make_executor(spec: str = "local", progress: bool = True) -> Executor:
    """An executor by name: ``local``, ``processes:N`` or ``submitit:FOLDER`` (Slurm, or local
    processes where there is no cluster; needs the ``[slurm]`` extra)."""
    kind, _, arg = spec.partition(":")
    if kind == "local" and not arg:
        return LocalExecutor(progress)
    if kind == "processes" and arg.isdigit():
        return ProcessExecutor(int(arg), progress)
    if kind == "submitit" and arg:
        from .slurm import SubmititExecutor

        return SubmititExecutor(arg)
    raise ValueError(f"unknown executor {spec!r}; expected 'local', 'processes:N' or "
                     "'submitit:FOLDER'")


@contextlib.contextmanager
def run_lock(run_dir: Path):
    """An exclusive ``flock`` on ``run_dir/.lock`` for the block: one process at a time trains a
    run; another waits here. The kernel drops the lock if the holder dies."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / ".lock", "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("waiting for another worker training %s", run_dir.name)
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def move_aside(path: Path, why: str) -> Path:
    """Rename a corrupt file to ``<name>.corrupt-<time>`` beside it, with a warning."""
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    path.replace(target)
    log.warning("%s is unreadable (%s): moved aside to %s; the run is redone", path, why,
                target.name)
    return target


def read_metrics(path: Path) -> dict | None:
    """``metrics.json`` as a dict; ``None`` when missing; ``ValueError`` when unreadable."""
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(str(exc)) from exc
    if not isinstance(record, dict) or "status" not in record:
        raise ValueError("not a run record")
    return record


def checkpoint_problem(path: Path) -> str | None:
    """Why the checkpoint (a ``torch.save`` zip archive) cannot be read, or ``None``: the archive
    and every member's CRC are checked without unpickling."""
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return f"bad CRC in {bad}" if bad is not None else None


@dataclass(frozen=True)
class ResultStore:
    """Runs under ``root/<config key>/`` (metrics.json, model.pt, checkpoint.pt while training;
    .lock while a worker trains it)."""

    root: Path

    def __init__(self, root: str | Path):
        object.__setattr__(self, "root", Path(root))

    def path(self, cfg: TrainConfig) -> Path:
        return self.root / cfg.key()

    def load(self, cfg: TrainConfig) -> dict | None:
        """The stored record, or ``None`` when it is missing or unreadable (see :meth:`run`)."""
        try:
            return read_metrics(self.path(cfg) / "metrics.json")
        except ValueError:
            return None

    def _discard_corrupt(self, run_dir: Path) -> None:
        metrics_path, ckpt = run_dir / "metrics.json", run_dir / "checkpoint.pt"
        try:
            read_metrics(metrics_path)
        except ValueError as exc:
            move_aside(metrics_path, str(exc))
        problem = checkpoint_problem(ckpt) if ckpt.exists() else None
        if problem is not None:
            move_aside(ckpt, problem)

    def run(self, cfg: TrainConfig, device: str = "auto", progress: bool = True,
            compile_step: bool = False) -> dict:
        """The cached record of ``cfg``, or train it (resuming a checkpoint) and cache it. Under
        the run's lock: a worker finding it locked waits, then reads what the other one wrote."""
        cached = self.load(cfg)
        if cached is not None:
            return cached
        run_dir = self.path(cfg)
        with run_lock(run_dir):
            cached = self.load(cfg)
            if cached is not None:
                return cached
            self._discard_corrupt(run_dir)
            log.info("training %s (%s, %s, lam=%g, seed=%d)", cfg.key(), cfg.model, cfg.method,
                     cfg.lam, cfg.seed)
            return train_run(cfg, run_dir, device, store_root=self.root, progress=progress,
                             compile_step=compile_step)


def _run_one(cfg: TrainConfig, root: str, device: str, compile_step: bool = False) -> dict:
    return ResultStore(root).run(cfg, device, progress=False, compile_step=compile_step)


def run_many(configs: Iterable[TrainConfig], root: str | Path, device: str = "auto",
             executor: Executor | str | None = None, compile_step: bool = False) -> pd.DataFrame:
    """Run (or read from the cache) every config; one row per run, config fields flattened.
    ``executor`` is an executor or its name (:func:`make_executor`); ``compile_step`` is an
    execution option (:mod:`tapkit.compiled`), not part of the configs."""
    configs = list(configs)
    if executor is None or isinstance(executor, str):
        executor = make_executor(executor or "local")
    records = executor.map(partial(_run_one, root=str(root), device=device,
                                   compile_step=compile_step), configs)
    return records_frame(records)


def records_frame(records: Sequence[dict]) -> pd.DataFrame:
    rows = []
    for rec in records:
        row = {k: v for k, v in rec.items() if k not in ("config", "provenance", "history")}
        row.update({k: v for k, v in rec["config"].items() if k != "teacher"})
        row.update({f"prov_{k}": v for k, v in rec["provenance"].items()})
        rows.append(row)
    return pd.DataFrame(rows)
