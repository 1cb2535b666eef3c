"""Training: one frozen config per run, one fit loop for every method (Eq. 3).

``L = L_task + lambda * L_XS``. A run is a pure function of its :class:`TrainConfig`: it is keyed
by the config's hash, checkpointed every epoch (a rerun resumes), and a NaN/inf loss ends it with
status ``"dnc"`` (the paper's did-not-converge) instead of raising, so a sweep goes on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from tqdm import tqdm

from . import batches, losses, metrics
from .allocator import reusing_cpu_allocator
from .compiled import COMPILABLE, compiled_step
from .data import Split, Task, load_experiment
from .models import build_model, capture, list_models, target_layers, target_sigma
from .sources import Embedded, Source, parse_source
from .results import provenance, resolve_device, save_torch, write_json
from .progress import disabled as progress_disabled

log = logging.getLogger(__name__)

METHODS = ("none", "tap", "rrr", "rbr", "kd", "at", "jt")


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a run's result. ``key()`` hashes it; the device is not part of
    it (it is recorded in the provenance instead)."""

    experiment: str = "decoy-mnist"
    model: str = "two_layer_cnn"
    method: str = "none"
    lam: float = 0.0
    data: str = "contaminated"          # train on "contaminated", "clean" (Base) or "holdout" (teacher)
    annotation: str = "ground_truth"    # masks: "ground_truth", "teacher" or "random"
    teacher: "TrainConfig | None" = None  # for teacher annotations and KD/AT/JT
    tau: float = 0.01                   # teacher-annotation threshold
    threshold: str = "absolute"         # "absolute" (paper, E < tau) or "quantile" (released code)
    saliency: str = "saliency"          # Captum method for teacher annotations
    clean_fraction: float = 0.0         # clean share of train held out before contamination
    epochs: int = 5
    batch_size: int = 64
    optimizer: str = "adam"             # "adam" or "sgd" (momentum below)
    lr: float = 1e-3
    momentum: float = 0.9
    weight_decay: float = 0.0
    seed: int = 0
    source: Source = Embedded()         # a tapkit.sources type; its string form is parsed
    image_size: int | None = None
    artifact: str = "tag"
    per_class: int | None = None
    pretrained: bool = False
    weights_fallback: bool = True       # pretrained weights missing: random start (recorded) or error
    tap_norm: str = "l1"                # "l1" (Definition 2) or "l2sq" (released code)
    tap_pooling: str = "independent"    # D(M,l) from M per layer, or "cumulative" (released code)
    rrr_scale: str = "none"             # "none" (Eq. 4) or "released" (mask x H*W/|M| before squaring)
    kernel_size: int = 3
    rbr_variant: str = "full"           # "full" (Shao et al.) or "released" (authors' code)
    xs_batchnorm: str = "eval"          # input gradients on BatchNorm "eval" (running) or "train" stats
    kd_temperature: float = 4.0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; expected one of {METHODS}")
        if self.data not in ("contaminated", "clean", "holdout"):
            raise ValueError(f"unknown data {self.data!r}; expected contaminated, clean or holdout")
        if self.annotation not in ("ground_truth", "teacher", "random"):
            raise ValueError(f"unknown annotation {self.annotation!r}")
        if self.method in ("kd", "at", "jt") and self.teacher is None:
            raise ValueError(f"method {self.method!r} needs a teacher config")
        if self.annotation == "teacher" and self.teacher is None:
            raise ValueError("annotation='teacher' needs a teacher config")
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError(f"unknown optimizer {self.optimizer!r}; expected 'adam' or 'sgd'")
        if self.xs_batchnorm not in ("train", "eval"):
            raise ValueError("xs_batchnorm must be 'train' or 'eval'")
        if self.tap_norm not in ("l1", "l2sq"):
            raise ValueError(f"unknown tap_norm {self.tap_norm!r}; expected 'l1' or 'l2sq'")
        if self.tap_pooling not in ("independent", "cumulative"):
            raise ValueError(f"unknown tap_pooling {self.tap_pooling!r}; expected 'independent' "
                             "or 'cumulative'")
        if self.rrr_scale not in ("none", "released"):
            raise ValueError(f"unknown rrr_scale {self.rrr_scale!r}; expected 'none' or 'released'")
        if self.rbr_variant not in ("full", "released"):
            raise ValueError(f"unknown rbr_variant {self.rbr_variant!r}; expected 'full' or "
                             "'released'")
        # the source is parsed and checked here, when the config is built (a folder must exist,
        # torchvision needs a root), so a bad source fails before any training starts
        object.__setattr__(self, "source", parse_source(self.source, self.experiment))

    def to_dict(self) -> dict:
        """Plain JSON-able fields; the source as its string (``str(source)``), which is what it
        was before sources had types, so configs keep their hash."""
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["source"] = str(self.source)
        d["teacher"] = self.teacher.to_dict() if self.teacher is not None else None
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        d = dict(d)
        if d.get("teacher") is not None:
            d["teacher"] = cls.from_dict(d["teacher"])
        return cls(**d)

    def key(self) -> str:
        """Hash of the config and of the layers its model's registry entry targets (the
        registry is part of what determines the result, so changing it invalidates the cache)."""
        blob = json.dumps({"config": self.to_dict(), "targets": _registered_targets(self)},
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def replace(self, **changes) -> "TrainConfig":
        return dataclasses.replace(self, **changes)


def _registered_targets(cfg: TrainConfig) -> list:
    entry = None
    if cfg.model in list_models():  # σ (Eq. 6) only where declared, so other keys are unchanged
        sigma = target_sigma(cfg.model)
        entry = list(target_layers(cfg.model)) + ([sigma] if sigma else [])
    out = [entry]
    return out + (_registered_targets(cfg.teacher) if cfg.teacher is not None else [])


# --------------------------------------------------------------------------- data and models

@lru_cache(maxsize=8)
def _cached_experiment(experiment, source, seed, clean_fraction, image_size, artifact, per_class):
    return load_experiment(experiment, source=source, seed=seed, clean_fraction=clean_fraction,
                           image_size=image_size, artifact=artifact, per_class=per_class)


def experiment_data(cfg: TrainConfig) -> tuple[Task, dict[str, Split]]:
    """The run's task and splits (cached in-process: sweeps reuse them)."""
    return _cached_experiment(cfg.experiment, cfg.source, cfg.seed, cfg.clean_fraction,
                              cfg.image_size, cfg.artifact, cfg.per_class)


def training_split(cfg: TrainConfig, splits: dict[str, Split]) -> Split:
    name = {"contaminated": "train", "clean": "train_clean", "holdout": "clean_holdout"}[cfg.data]
    if name not in splits:
        raise ValueError("data='holdout' needs clean_fraction > 0")
    return splits[name]


# --------------------------------------------------------------------------- XS terms

def batchnorm_eval(model: nn.Module):
    """BatchNorm layers on their running statistics inside the block, modes restored after
    (``xs_batchnorm="eval"``); see :func:`tapkit.losses.batchnorm_running`."""
    return losses.batchnorm_running(model)


@dataclass
class Teacher:
    """A frozen teacher model, its target layers and their σ (Eq. 6), for KD/AT/JT."""

    model: nn.Module
    targets: tuple[str, ...]
    sigma: dict[str, str] = field(default_factory=dict)


@dataclass
class XSBatch:
    """What every XS term receives: one call signature for all methods. ``x`` and ``logits`` are
    those of the XS forward pass (BatchNorm on running statistics when ``xs_batchnorm="eval"``),
    ``task`` the task loss of the training forward pass."""

    model: nn.Module
    x: Tensor
    y: Tensor
    mask: Tensor
    logits: Tensor
    acts: dict[str, Tensor]
    cfg: TrainConfig
    teacher: Teacher | None = None
    task: Tensor | None = None


def _input_grads(b: XSBatch) -> Tensor:
    return losses.input_gradients(b.logits, b.x)


def _teacher_forward(b: XSBatch, with_grad: bool = False):
    """The frozen teacher's logits, σ-activations of its targets and (``with_grad``) its input
    gradients, with BatchNorm as ``xs_batchnorm`` says for the gradient (JT compares per-image
    gradients)."""
    assert b.teacher is not None
    t = b.teacher
    tx = b.x.detach().requires_grad_(with_grad)
    bn = losses.batchnorm_running(t.model, with_grad and b.cfg.xs_batchnorm == "eval")
    with torch.set_grad_enabled(with_grad), bn, capture(t.model, t.targets, t.sigma) as t_acts:
        t_logits = t.model(tx)
    grad = losses.input_gradients(t_logits, tx, create_graph=False) if with_grad else None
    return t_logits.detach(), [a.detach() for a in t_acts.values()], grad


def _rbr(b: XSBatch) -> Tensor:
    """RBR in the training loop: the released variant's influence term comes from the training
    forward's task loss (made before x required grad), the full one from the XS forward's."""
    released = b.cfg.rbr_variant == "released"
    task = b.task if released else F.cross_entropy(b.logits, b.y)
    term = losses.influence(task, b.x, list(b.model.parameters()))
    return losses.rbr_penalty(_input_grads(b), term, b.mask, "sum" if released else "mean",
                              sum_channels=released)


XS_TERMS: dict[str, Callable[[XSBatch], Tensor]] = {
    "tap": lambda b: losses.tap(b.acts, b.mask, b.cfg.kernel_size, b.cfg.tap_norm,
                                b.cfg.tap_pooling),
    "rrr": lambda b: losses.rrr_penalty(_input_grads(b), b.mask, b.cfg.rrr_scale),
    "rbr": _rbr,
    "kd": lambda b: losses.kd(b.logits, _teacher_forward(b)[0], b.cfg.kd_temperature),
    "at": lambda b: losses.at(list(b.acts.values()), _teacher_forward(b)[1]),
    "jt": lambda b: losses.jt(_input_grads(b), _teacher_forward(b, with_grad=True)[2]),
}
NEEDS_INPUT_GRAD = {"rrr", "rbr", "jt"}


def _target_sigma(cfg: TrainConfig, targets: tuple[str, ...]) -> dict[str, str]:
    sigma = target_sigma(cfg.model) if cfg.model in list_models() else {}
    return {name: s for name, s in sigma.items() if name in targets}


def step_losses(model: nn.Module, x: Tensor, y: Tensor, mask: Tensor, cfg: TrainConfig,
                targets: tuple[str, ...], teacher: Teacher | None = None) -> tuple[Tensor, Tensor]:
    """Task loss and XS loss for one batch (Eq. 3 before weighting).

    TAP and AT read the targets' activations after σ (Eq. 6, the registry's σ for ``cfg.model``).
    RRR, RBR and JT take input gradients per image (Eq. 4): with ``cfg.xs_batchnorm="eval"`` in
    an extra forward pass with BatchNorm on running statistics (as the authors' code), with
    ``"train"`` from the training forward pass itself (batch statistics mix the images).
    """
    method = cfg.method
    running = cfg.xs_batchnorm == "eval"
    released_rbr = method == "rbr" and cfg.rbr_variant == "released"
    extra_forward = method in NEEDS_INPUT_GRAD and (running or released_rbr)
    x = x.detach().requires_grad_(method in NEEDS_INPUT_GRAD and not extra_forward)
    layers = targets if method in ("tap", "at") else ()
    with (capture(model, layers, _target_sigma(cfg, layers)) if layers
          else contextlib.nullcontext({})) as acts:
        logits = model(x)
    task = F.cross_entropy(logits, y)
    if method == "none":
        return task, task.new_zeros(())
    if extra_forward:
        if not released_rbr:  # released RBR keeps x: its influence term runs through the task loss
            x = x.detach()
        x.requires_grad_(True)
        with losses.batchnorm_running(model, running):
            logits = model(x)
    batch = XSBatch(model, x, y, mask, logits, dict(acts), cfg, teacher, task)
    return task, XS_TERMS[method](batch)


# --------------------------------------------------------------------------- the fit loop

@dataclass
class FitResult:
    status: str                      # "ok" or "dnc"
    epochs_done: int
    history: list[dict] = field(default_factory=list)


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    if cfg.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    return torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum,
                           weight_decay=cfg.weight_decay)


def fit(model: nn.Module, train: Split, cfg: TrainConfig, targets: tuple[str, ...],
        device: str = "cpu", checkpoint: Path | None = None, teacher: Teacher | None = None,
        progress: bool = True, compile_step: bool = False) -> FitResult:
    """Train ``model`` for ``cfg.epochs`` epochs on ``train`` (whose masks are the annotations).

    Seeded so that a CPU run repeats bit for bit; with ``checkpoint``, the state after every
    epoch (model, optimiser, RNG, history) is written atomically and a rerun resumes from it.
    The split is moved to ``device`` once (where it fits) and batched in the DataLoader's
    shuffled order (:mod:`tapkit.batches`). On a GPU the finite-loss check and the loss totals
    wait for the end of each epoch, so steps do not synchronise. ``compile_step`` (an execution
    option, not part of the config) compiles the step on a GPU
    (:func:`tapkit.compiled.compiled_step`).
    """
    torch.manual_seed(cfg.seed)
    model.to(device)
    opt = make_optimizer(model, cfg)
    gen = torch.Generator().manual_seed(cfg.seed)
    result = FitResult("ok", 0)
    if checkpoint is not None and checkpoint.exists():
        state = torch.load(checkpoint, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        gen.set_state(state["generator"])
        torch.set_rng_state(state["torch_rng"])
        result = FitResult(state["status"], state["epoch"], state["history"])
        log.info("resuming %s from epoch %d", checkpoint.parent.name, result.epochs_done)
    data = batches.on_device((train.x, train.y, train.mask), device)
    sync_each_step = torch.device(device).type == "cpu"
    compiled = (compiled_step(model, cfg, targets, teacher, device) if compile_step
                else contextlib.nullcontext())
    with compiled as step:
        step = step or functools.partial(step_losses, model, cfg=cfg, targets=targets,
                                         teacher=teacher)
        while result.status == "ok" and result.epochs_done < cfg.epochs:
            _epoch(model, opt, step, data, gen, cfg, device, result, progress, sync_each_step)
            if checkpoint is not None:
                save_torch(checkpoint, {"model": model.state_dict(), "optimizer": opt.state_dict(),
                                        "generator": gen.get_state(),
                                        "torch_rng": torch.get_rng_state(),
                                        "status": result.status, "epoch": result.epochs_done,
                                        "history": result.history})
    return result


def _epoch(model: nn.Module, opt: torch.optim.Optimizer, step: Callable, data: tuple, gen,
           cfg: TrainConfig, device: str, result: FitResult, progress: bool,
           sync_each_step: bool) -> None:
    """One epoch of ``fit``: ``result`` gets its history entry, and status ``"dnc"`` on a
    non-finite loss (checked every step on a CPU, at the end of the epoch on a GPU)."""
    model.train()
    started = time.perf_counter()
    totals = torch.zeros(3, dtype=torch.float64, device=device)  # task, xs, n
    finite = torch.ones((), dtype=torch.bool, device=device)
    bar = tqdm(batches.epoch_batches(data, cfg.batch_size, gen, device),
               total=batches.num_batches(len(data[0]), cfg.batch_size),
               desc=f"{cfg.method} epoch {result.epochs_done + 1}/{cfg.epochs}",
               leave=False, disable=progress_disabled(progress), mininterval=2.0)
    for x, y, mask in bar:
        task, xs = step(x, y, mask)
        loss = task + cfg.lam * xs
        finite &= torch.isfinite(loss)
        if sync_each_step and not finite:
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        totals += torch.stack([task.detach().double() * len(y), xs.detach().double() * len(y),
                               totals.new_tensor(len(y))])
    result.epochs_done += 1
    if not finite:
        log.warning("non-finite loss in epoch %d: run did not converge", result.epochs_done)
        result.status = "dnc"
    task_sum, xs_sum, n = totals.tolist()
    seconds = time.perf_counter() - started
    log.info("epoch %d: %.0f images/s", result.epochs_done, n / seconds)
    n = max(n, 1)
    result.history.append({"epoch": result.epochs_done, "task_loss": task_sum / n,
                           "xs_loss": xs_sum / n, "seconds": seconds})


# --------------------------------------------------------------------------- one run

def load_trained(cfg: TrainConfig, store_root: Path, device: str) -> nn.Module:
    """The trained model of ``cfg`` from the store, training it first if it is not there."""
    from .runner import ResultStore

    store = ResultStore(store_root)
    record = store.run(cfg, device)
    if record["status"] != "ok":
        raise RuntimeError(f"run {cfg.key()} ended {record['status']}; it cannot serve as a teacher")
    task, _ = experiment_data(cfg)
    built = build_model(cfg.model, task.num_classes, task.in_channels, cfg.pretrained, task.image_size,
                        cfg.weights_fallback)
    built.model.load_state_dict(torch.load(store.path(cfg) / "model.pt", map_location=device))
    return built.model.to(device).eval()


def annotated_split(cfg: TrainConfig, split: Split, store_root: Path, device: str) -> Split:
    """``split`` with the annotation masks the config asks for (ground truth, teacher, random)."""
    from . import teachers

    if cfg.annotation == "ground_truth":
        return split
    if cfg.annotation == "random":
        coverage = split.mask.mean().item()
        return Split(split.x, split.y, teachers.random_masks(tuple(split.mask.shape), coverage, cfg.seed))
    teacher = load_trained(cfg.teacher, store_root, device)
    masks = teachers.annotate(teacher, split.x.to(device), cfg.tau, cfg.threshold, cfg.saliency)
    return Split(split.x, split.y, masks.cpu())


def train_run(cfg: TrainConfig, run_dir: str | Path, device: str = "auto",
              store_root: str | Path | None = None, progress: bool = True,
              compile_step: bool = False) -> dict:
    """Train and evaluate one config in ``run_dir``; return and write ``metrics.json``.

    ``run_dir/checkpoint.pt`` makes an interrupted run resume; ``model.pt`` and ``metrics.json``
    are written atomically at the end. ``compile_step`` compiles the steps of methods that allow
    it (:mod:`tapkit.compiled`) and is ignored for the others. On a CPU the process's allocator
    is set to reuse freed memory (:func:`tapkit.allocator.reusing_cpu_allocator`). Teachers (for
    teacher annotations and KD/AT/JT) are trained or read from ``store_root`` (default:
    ``run_dir``'s parent).
    """
    run_dir = Path(run_dir)
    device = resolve_device(device)
    if device == "cpu":
        reusing_cpu_allocator()  # steps reuse freed memory instead of faulting in fresh pages
    store_root = Path(store_root) if store_root is not None else run_dir.parent
    start = time.time()
    task, splits = experiment_data(cfg)
    train = annotated_split(cfg, training_split(cfg, splits), store_root, device)
    torch.manual_seed(cfg.seed)  # the initial weights belong to the run, not to what ran before
    built = build_model(cfg.model, task.num_classes, task.in_channels, cfg.pretrained, task.image_size,
                        cfg.weights_fallback)
    teacher = None
    if cfg.method in ("kd", "at", "jt"):
        t_model = load_trained(cfg.teacher, store_root, device)
        teacher = Teacher(t_model, target_layers(cfg.teacher.model),
                          target_sigma(cfg.teacher.model))
    result = fit(built.model, train, cfg, built.targets, device, run_dir / "checkpoint.pt",
                 teacher, progress, compile_step and cfg.method in COMPILABLE)
    model = built.model.eval()
    record = {"metric": task.metric, "status": result.status, "epochs_done": result.epochs_done,
              "history": result.history, "weights": built.weights, "key": cfg.key(),
              "config": cfg.to_dict(), "provenance": provenance(device)}
    for name in ("contaminated", "permuted", "clean"):
        record[name] = (metrics.score(model, splits[f"test_{name}"], task.metric, device)
                        if result.status == "ok" else float("nan"))
    record["val_loss"] = (validation_loss(model, splits["val"], device)
                          if result.status == "ok" else float("nan"))
    record["seconds"] = time.time() - start
    if result.status == "ok":
        save_torch(run_dir / "model.pt", model.state_dict())
    write_json(run_dir / "metrics.json", record)
    (run_dir / "checkpoint.pt").unlink(missing_ok=True)
    return record


@torch.no_grad()
def validation_loss(model: nn.Module, split: Split, device: str, batch_size: int = 512) -> float:
    """Cross-entropy on SC(X*, permute(y))_val: the paper's criterion for choosing lambda."""
    total = 0.0
    for i in range(0, len(split), batch_size):
        logits = model(split.x[i: i + batch_size].to(device))
        total += F.cross_entropy(logits, split.y[i: i + batch_size].to(device), reduction="sum").item()
    return total / max(len(split), 1)
