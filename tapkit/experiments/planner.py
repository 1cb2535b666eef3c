"""The order of runs: :func:`waves` turns configs into waves, teachers before their students (a
teacher config nested in a student's is a dependency), so the runs of one wave can train in
parallel and every student finds its teacher in the store. :mod:`.sweep` and
:func:`.executors.run_many` run configs wave by wave."""

from __future__ import annotations

from typing import Iterable

from ..config import TrainConfig


def _dependencies(cfg: TrainConfig) -> list[TrainConfig]:
    return [cfg.teacher] if cfg.teacher is not None else []


def waves(configs: Iterable[TrainConfig]) -> list[list[TrainConfig]]:
    """Every config and every teacher nested in one, once each (by key), grouped so that each
    config comes in a later wave than its teacher; within a wave, first-seen order."""
    depth: dict[str, int] = {}
    order: dict[str, TrainConfig] = {}

    def visit(cfg: TrainConfig) -> int:
        key = cfg.key()
        if key not in depth:
            depth[key] = 1 + max((visit(t) for t in _dependencies(cfg)), default=-1)
            order[key] = cfg
        return depth[key]

    for cfg in configs:
        visit(cfg)
    out: list[list[TrainConfig]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for key, cfg in order.items():
        out[depth[key]].append(cfg)
    return out
