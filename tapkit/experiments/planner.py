"""The order and cost of runs: :func:`waves` turns configs into waves, teachers before their
students (a teacher or start config nested in a run's is a dependency), so the runs of one wave can
train in parallel and every student finds its teacher in the store. :mod:`.sweep` and
:func:`.executors.run_many` run configs wave by wave. :func:`expected_minutes` estimates a run's
wall-clock time from the paper's Table 1, for a cluster job's time limit
(:func:`timeout_minutes`); :func:`label` names a run for people."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Iterable

from ..config import TrainConfig
from ..experiment_specs import ExperimentKind, get_experiment
from ..methods import Kind, get_method, methods_where, no_xs
from ..sources import Embedded
from .paper_tables import paper_table1


def dependencies(cfg: TrainConfig) -> list[TrainConfig]:
    """The runs ``cfg`` needs trained first: its teacher and its start (pretraining run)."""
    return [d for d in (cfg.teacher, cfg.start) if d is not None]


def waves(configs: Iterable[TrainConfig]) -> list[list[TrainConfig]]:
    """Every config and every teacher nested in one, once each (by key), grouped so that each
    config comes in a later wave than its teacher; within a wave, first-seen order."""
    depth: dict[str, int] = {}
    order: dict[str, TrainConfig] = {}

    def visit(cfg: TrainConfig) -> int:
        key = cfg.key()
        if key not in depth:
            depth[key] = 1 + max((visit(t) for t in dependencies(cfg)), default=-1)
            order[key] = cfg
        return depth[key]

    for cfg in configs:
        visit(cfg)
    out: list[list[TrainConfig]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for key, cfg in order.items():
        out[depth[key]].append(cfg)
    return out


def label(cfg: TrainConfig) -> str:
    """A run as a person reads it (the key is the store's name): experiment, model, method, λ,
    seed, and whatever sets it apart from a plain run (its data, annotation, teacher's key)."""
    parts = [cfg.experiment, cfg.model, cfg.method, f"lam={cfg.lam:g}", f"seed={cfg.seed}"]
    if cfg.data != "contaminated":
        share = f"@{cfg.clean_fraction:g}" if cfg.clean_fraction else ""
        parts.append(f"data={cfg.data}{share}")
    if cfg.annotation != "ground_truth":
        parts.append(f"annotation={cfg.annotation}" + (f"@tau={cfg.tau:g}"
                                                       if cfg.annotation == "teacher" else ""))
    if cfg.teacher is not None:
        parts.append(f"teacher={cfg.teacher.key()}")
    return " ".join(parts)


# ---------------------------------------------------------------- expected run time (time limits)
@lru_cache(maxsize=None)
def table1_rates() -> dict[str, dict[str, float]]:
    """Iterations per second for batches of 16 224x224 images on the paper's GPU, per
    architecture and method (:func:`.paper_tables.paper_table1`). DenseNet-121 + RBR ran out of memory there:
    its rate is its slowest measured method's (RRR) scaled by VGG-16's ratio of the two. A model not in the table
    (two_layer_cnn, EfficientNet-B0, MobileNet-v2) takes VGG-16's rates, the slowest
    (:func:`expected_minutes`): a time limit is better too long than too short."""
    t = paper_table1()
    t = t[(t.metric == "it_per_s") & (t.status == "ok")]
    rates: dict[str, dict[str, float]] = {}
    for row in t.itertuples():
        rates.setdefault(row.architecture, {})[row.method] = float(row.mean)
    vgg = rates["vgg16"]
    for arch in rates.values():
        slowest = min(arch, key=arch.get)
        for method in set(vgg) - set(arch):  # out of memory on the paper's GPU
            arch[method] = arch[slowest] * vgg[method] / vgg[slowest]
    return rates


# KD/AT/JT: the step of the method they resemble (No XS, or with input gradients the first XS
# loss that takes them: RRR) plus the frozen teacher's forward pass (x1.5)
TEACHER_FACTOR = 1.5


def resembles(method: str) -> str:
    """The Table-1 method whose step a distillation method's step costs about as much as: No
    XS's, or for one that takes input gradients (JT) the first XS loss that does (RRR)."""
    if get_method(method).input_grad:
        return methods_where(kind=Kind.XS, input_grad=True)[0]
    return no_xs()
CPU_SLOWDOWN = 200.0   # a 2-core CPU against the GPU: ~36x (two-layer CNN) to ~430x (VGG-16, 32 px)
OVERHEAD_MIN = 2.0     # start-up, loading the data, evaluating the test splits
TIMEOUT_MARGIN = 2.0   # the limit is twice the expected time ...
TIMEOUT_FLOOR_MIN = 10  # ... and at least this (start-up on a busy node) ...
TIMEOUT_CAP_MIN = 24 * 60  # ... and at most a day (a longer run is requeued from its last epoch)


def training_images(cfg: TrainConfig) -> int:
    """An upper bound on the images one epoch of ``cfg`` trains on, without loading them: the
    embedded digits' 4,000 training images, or the paper's full training set (MNIST 60,000, PNEU
    5,232, KNEE 8,260), capped at ``per_class`` per class; a teacher's held-out clean share is
    ``clean_fraction`` of that."""
    spec = get_experiment(cfg.experiment)
    mnist = spec.kind is ExperimentKind.MNIST
    n = 4_000 if isinstance(cfg.source, Embedded) else spec.paper_train_size
    if cfg.per_class is not None and not mnist:  # MNIST ignores it
        n = min(n, cfg.per_class * spec.classes)
    if cfg.data == "holdout":
        n = max(1, round(n * cfg.clean_fraction))
    return n


def expected_minutes(cfg: TrainConfig, gpu: bool = True) -> float:
    """Expected wall-clock minutes of one run, for a cluster's time limit: ``OVERHEAD_MIN`` plus
    epochs x training images x seconds per image, where a 224-px image costs 1/(16 x Table 1's
    it/s) on a GPU (scaled by pixels for other sizes: 28 px for Decoy-MNIST) and
    ``CPU_SLOWDOWN`` times that on a CPU. A rough figure: the jobs are checkpointable, so a run
    that outlives its limit is requeued and resumes from its last epoch."""
    method, factor = cfg.method, 1.0
    if method in methods_where(kind=Kind.DISTILLATION):
        method, factor = resembles(method), TEACHER_FACTOR
    table = table1_rates()
    rates = next((r for name, r in table.items() if cfg.model.startswith(name)), table["vgg16"])
    its = rates.get(method, min(rates.values()))
    mnist = get_experiment(cfg.experiment).kind is ExperimentKind.MNIST
    size = cfg.image_size or (28 if mnist else 224)
    seconds_per_image = factor / (16 * its) * (size / 224) ** 2 * (1.0 if gpu else CPU_SLOWDOWN)
    return OVERHEAD_MIN + cfg.epochs * training_images(cfg) * seconds_per_image / 60


def timeout_minutes(minutes: Iterable[float]) -> int:
    """A job array's time limit (submitit's ``timeout_min``, whole minutes) from its runs'
    :func:`expected_minutes`: ``TIMEOUT_MARGIN`` times the longest, within ``TIMEOUT_FLOOR_MIN``
    and ``TIMEOUT_CAP_MIN``."""
    longest = max(minutes, default=0.0)
    return int(min(TIMEOUT_CAP_MIN, max(TIMEOUT_FLOOR_MIN, math.ceil(TIMEOUT_MARGIN * longest))))
