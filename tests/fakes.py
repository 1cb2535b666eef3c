"""The one stand-in for :func:`tapkit.experiments.run.train_run` that the store, executor, sweep
and untrusted-file tests patch in (issue 38: one fake, not five copies): it writes a record as a
trained run would, and tells the test what it was asked."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Collection

import torch

from tapkit.config import TrainConfig
from tapkit.results import write_json


def fake_record(cfg: TrainConfig) -> dict[str, Any]:
    """A converged run's record: accuracy 0.9 / 0.5 / 0.6 on the contaminated, permuted and clean
    test splits, and a validation loss lowest at λ 1e-3 (0.5 there, one more per decade away)."""
    return {"metric": "accuracy", "contaminated": 0.9, "permuted": 0.5, "clean": 0.6,
            "val_loss": abs(math.log10(cfg.lam) + 3) + 0.5 if cfg.lam > 0 else 0.5,
            "status": "ok", "epochs_done": cfg.epochs, "seconds": 1.0, "seed": cfg.seed,
            "key": cfg.key(), "config": cfg.to_dict(),
            "provenance": {"device": "cpu", "pid": os.getpid()}}


def fake_train_run(calls: list | None = None, failing: Collection[str] = (),
                   seen: str = "key", weights: dict | None = None):
    """``train_run`` replaced. Each call appends to ``calls`` the config's key (``seen="key"``) or
    the names in its run folder when training starts (``seen="files"``: what the store left
    there, dot files aside); a config whose key is in ``failing`` raises the error a GPU job
    meets; ``weights`` are saved as the run's ``model.pt``. Returns :func:`fake_record`, written
    to ``metrics.json`` as the real run writes it."""
    if seen not in ("key", "files"):
        raise ValueError(f"seen must be 'key' or 'files', not {seen!r}")

    def train_run(cfg, run_dir, teacher=None, masks=None, device="auto", progress=True,
                  compile_step=False, start_weights=None):
        run_dir = Path(run_dir)
        if calls is not None:
            calls.append(cfg.key() if seen == "key" else
                         sorted(p.name for p in run_dir.iterdir() if not p.name.startswith(".")))
        if cfg.key() in failing:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        if weights is not None:
            torch.save(weights, run_dir / "model.pt")
        record = fake_record(cfg)
        write_json(run_dir / "metrics.json", record)
        return record
    return train_run
