"""Running many configs: a results store keyed by config hash, and a swappable executor.

Experiments (the notebooks) build lists of :class:`~tapkit.training.TrainConfig` and hand them to
:func:`run_many`; they never train inline. The executor only needs ``map(fn, items)``, so a
cluster executor (submitit's ``executor.map_array`` wrapped in the same method, or Ray) can
replace :class:`LocalExecutor` without touching an experiment.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Protocol, Sequence

import pandas as pd
from tqdm import tqdm

from .training import TrainConfig, train_run

log = logging.getLogger(__name__)


class Executor(Protocol):
    def map(self, fn: Callable, items: Sequence) -> list: ...


class LocalExecutor:
    """Runs configs one after another in this process, with a progress bar."""

    def __init__(self, progress: bool = True):
        self.progress = progress

    def map(self, fn: Callable, items: Sequence) -> list:
        return [fn(item) for item in tqdm(items, desc="runs", disable=not self.progress)]


@dataclass(frozen=True)
class ResultStore:
    """Runs under ``root/<config key>/`` (metrics.json, model.pt, checkpoint.pt while training)."""

    root: Path

    def __init__(self, root: str | Path):
        object.__setattr__(self, "root", Path(root))

    def path(self, cfg: TrainConfig) -> Path:
        return self.root / cfg.key()

    def load(self, cfg: TrainConfig) -> dict | None:
        path = self.path(cfg) / "metrics.json"
        return json.loads(path.read_text()) if path.exists() else None

    def run(self, cfg: TrainConfig, device: str = "auto", progress: bool = True) -> dict:
        """The cached record of ``cfg``, or train it (resuming a checkpoint) and cache it."""
        cached = self.load(cfg)
        if cached is not None:
            return cached
        log.info("training %s (%s, %s, lam=%g, seed=%d)", cfg.key(), cfg.model, cfg.method,
                 cfg.lam, cfg.seed)
        return train_run(cfg, self.path(cfg), device, store_root=self.root, progress=progress)


def _run_one(cfg: TrainConfig, root: str, device: str) -> dict:
    return ResultStore(root).run(cfg, device, progress=False)


def run_many(configs: Iterable[TrainConfig], root: str | Path, device: str = "auto",
             executor: Executor | None = None) -> pd.DataFrame:
    """Run (or read from the cache) every config; one row per run, config fields flattened."""
    configs = list(configs)
    executor = executor or LocalExecutor()
    records = executor.map(partial(_run_one, root=str(root), device=device), configs)
    return records_frame(records)


def records_frame(records: Sequence[dict]) -> pd.DataFrame:
    rows = []
    for rec in records:
        row = {k: v for k, v in rec.items() if k not in ("config", "provenance", "history")}
        row.update({k: v for k, v in rec["config"].items() if k != "teacher"})
        row.update({f"prov_{k}": v for k, v in rec["provenance"].items()})
        rows.append(row)
    return pd.DataFrame(rows)
