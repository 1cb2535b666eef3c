"""Executors: thin adapters that run a list of configs, one after another (``local``), in N
spawned processes (``processes:N``, ``concurrent.futures``) or as a submitit job array
(``submitit``: Slurm where there is one, local processes elsewhere; ``pip install
tapkit[slurm]``). They only need ``map(fn, items)``, so they replace each other without touching
an experiment. :func:`run_many` runs configs wave by wave (:func:`.planner.waves`: teachers
before their students) through the results store (:mod:`.store`), whose locks keep two workers
from training one run.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, Sequence

import pandas as pd
from tqdm import tqdm

from ..allocator import reusing_cpu_allocator
from ..config import TrainConfig
from ..progress import disabled as progress_disabled
from .planner import waves
from .store import ResultStore


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


class SubmititExecutor:
    """``map(fn, items)`` as one submitit job array; ``params`` go to ``update_parameters``
    (e.g. ``timeout_min=120, gpus_per_node=1, slurm_partition="gpu"``)."""

    def __init__(self, folder: str | Path, cluster: str | None = None, **params: Any):
        try:
            import submitit
        except ImportError as exc:
            raise ImportError("the submitit executor needs submitit: pip install 'tapkit[slurm]'") from exc
        self.executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
        if params:
            self.executor.update_parameters(**params)

    def map(self, fn: Callable, items: Sequence) -> list:
        jobs = self.executor.map_array(fn, list(items))
        return [job.result() for job in jobs]


def make_executor(spec: str = "local", progress: bool = True,
                  folder: str | Path | None = None, **params: Any) -> Executor:
    """An executor by name: ``local``, ``processes:N``, or ``submitit[:FOLDER[:CLUSTER]]``
    (submitit's job folder, default ``folder``; ``CLUSTER`` one of submitit's: ``slurm``,
    ``local``, ``debug``; default: Slurm where there is one); ``params`` go to submitit's
    ``update_parameters`` (e.g. ``gpus_per_node=1, timeout_min=600``)."""
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


def _run_one(cfg: TrainConfig, root: str, device: str, compile_step: bool = False) -> dict:
    return ResultStore(root).run(cfg, device, progress=False, compile_step=compile_step,
                                 train_teachers=False)


def run_many(configs: Iterable[TrainConfig], root: str | Path, device: str = "auto",
             executor: Executor | str | None = None, compile_step: bool = False) -> pd.DataFrame:
    """Run (or read from the cache) every config, teachers first (:func:`.planner.waves`); one
    row per config asked for, config fields flattened. ``executor`` is an executor or its name
    (:func:`make_executor`); ``compile_step`` is an execution option (:mod:`tapkit.compiled`)."""
    configs = list(configs)
    if executor is None or isinstance(executor, str):
        executor = make_executor(executor or "local", folder=Path(root).parent / "submitit")
    fn = partial(_run_one, root=str(root), device=device, compile_step=compile_step)
    done: dict[str, dict] = {}
    for wave in waves(configs):
        done.update(zip((c.key() for c in wave), executor.map(fn, wave)))
    return records_frame([done[c.key()] for c in configs])


def records_frame(records: Sequence[dict]) -> pd.DataFrame:
    rows = []
    for rec in records:
        row = {k: v for k, v in rec.items() if k not in ("config", "provenance", "history")}
        row.update({k: v for k, v in rec["config"].items() if k != "teacher"})
        row.update({f"prov_{k}": v for k, v in rec["provenance"].items()})
        rows.append(row)
    return pd.DataFrame(rows)
