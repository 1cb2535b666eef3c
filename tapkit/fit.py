"""The training step and the fit loop, one for every method (Eq. 3: ``L = L_task + lambda *
L_XS``): seeded so a CPU run repeats bit for bit, checkpointed every epoch so a rerun resumes,
and a NaN/inf loss ends a run with status ``"dnc"`` (the paper's did-not-converge), so a sweep
goes on. What each XS method needs comes from its registry entry (:mod:`tapkit.methods`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import pickle
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from tqdm import tqdm

from . import batches, losses
from .compiled import compiled_step
from .config import ClassWeights, TrainConfig
from .data import DataRequest, Split, Task, load
from .methods import Teacher, XSBatch, get_method
from .models import capture, check_ran, target_sigma_of
from .progress import disabled as progress_disabled
from .masks import check_finite_mask, masks_checked
from .results import move_aside, save_torch, unreadable_reason

log = logging.getLogger(__name__)


@lru_cache(maxsize=8)
def _cached(request: DataRequest) -> tuple[Task, dict[str, Split]]:
    return load(request)


def experiment_data(cfg: TrainConfig) -> tuple[Task, dict[str, Split]]:
    """The run's task and splits (cached in-process: sweeps reuse them)."""
    return _cached(DataRequest(cfg.experiment, cfg.source, cfg.seed, cfg.clean_fraction,
                               cfg.image_size, cfg.artifact, cfg.per_class, cfg.test_per_class))


def training_split(cfg: TrainConfig, splits: dict[str, Split]) -> Split:
    name = {"contaminated": "train", "clean": "train_clean", "holdout": "clean_holdout"}[cfg.data]
    if name not in splits:
        raise ValueError("data='holdout' needs clean_fraction > 0")
    return splits[name]


def class_weight_tensor(cfg: TrainConfig, labels: Tensor) -> Tensor | None:
    """The task loss's class weights of ``cfg`` (:class:`tapkit.config.ClassWeights`) from the
    run's training ``labels``: None for ``NONE``; for ``RELEASED`` the released code's
    ``N / N_c`` per class, normalised to sum to 1 (``src/data.py`` ``load_weights``), e.g.
    counts (1214, 3494) give (0.742, 0.258). A class without a training image raises
    ``ValueError`` (its weight would be infinite)."""
    if cfg.class_weights is ClassWeights.NONE:
        return None
    counts = torch.bincount(labels.detach().cpu().long().flatten()).double()
    if (counts == 0).any():
        raise ValueError(f"class_weights={cfg.class_weights.value!r}: classes "
                         f"{(counts == 0).nonzero().flatten().tolist()} have no training image")
    weights = counts.sum() / counts
    return (weights / weights.sum()).float()


def _task_loss(logits: Tensor, y: Tensor, class_weight: Tensor | None,
               reduction: str = "mean") -> Tensor:
    """Cross-entropy, class-weighted with ``class_weight`` (one weight per logit; None:
    unweighted). Weighted, ``"mean"`` divides by the batch's summed weights (PyTorch's rule, as
    the released code's ``F.cross_entropy(..., weight=...)``)."""
    if class_weight is not None and class_weight.shape != logits.shape[1:]:
        raise ValueError(f"{len(class_weight)} class weights for {logits.shape[1]} classes: a "
                         "class the training split lacks")
    return F.cross_entropy(logits, y, weight=class_weight, reduction=reduction)


def step_losses(model: nn.Module, x: Tensor, y: Tensor, mask: Tensor, cfg: TrainConfig,
                targets: tuple[str, ...], teacher: Teacher | None = None,
                class_weight: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Task loss and XS loss for one batch (Eq. 3 before weighting). ``class_weight``: the task
    loss's class weights (:func:`class_weight_tensor`; None: unweighted).

    TAP and AT read the targets' activations after σ (Eq. 6, the registry's σ for ``cfg.model``).
    RRR, RBR and JT take input gradients per image (Eq. 4): with their options'
    ``batchnorm="running"`` in an extra forward pass with BatchNorm on running statistics (as the
    authors' code), with ``"batch"`` from the training forward pass itself (batch statistics mix
    the images). A model without BatchNorm or dropout (:func:`tapkit.losses.depends_on_mode`)
    computes the same in both modes, so its training forward pass serves the input gradients too:
    without the extra pass the two-layer CNN's RRR step takes 0.24 s instead of 0.38 s (batch 64,
    one thread), its RBR step 0.82 s instead of 0.95 s. The XS term reads ``cfg.options``, the
    method's typed options.
    """
    method = get_method(cfg.method)
    running = (method.input_grad and cfg.options.batchnorm == "running"
               and losses.depends_on_mode(model))
    keeps_input = method.keeps_input(cfg.options)  # the released RBR's (its registry entry)
    extra_forward = method.input_grad and (running or keeps_input)
    x = x.detach().requires_grad_(method.input_grad and not extra_forward)
    layers = targets if method.activations else ()
    with (capture(model, layers, target_sigma_of(cfg.model, layers)) if layers
          else contextlib.nullcontext({})) as acts:
        logits = model(x)
    check_ran(acts)
    task = _task_loss(logits, y, class_weight)
    if method.term is None:
        return task, task.new_zeros(())
    if extra_forward:
        if not keeps_input:  # else the term also runs through the training pass's task loss
            x = x.detach()
        x.requires_grad_(True)
        with losses.batchnorm_running(model, running):
            logits = model(x)
    return task, method.term(XSBatch(model, x, y, mask, logits, dict(acts), cfg.options, teacher, task))


@dataclass
class FitResult:
    status: str                      # "ok" or "dnc"
    epochs_done: int
    history: list[dict] = field(default_factory=list)


FUSED_DEVICES = ("cpu", "cuda")  # where torch.optim.Adam has a fused kernel


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    """The run's optimiser. Adam runs fused (one kernel over all parameters) where PyTorch has
    the kernel: on a CPU its per-tensor loop took a third of a ResNet-18 step at batch 16 of
    32 px (32 of 92 ms; fused 6 of 66 ms); a run still repeats bit for bit (the kernel is
    elementwise), though not bit for bit with the per-tensor loop. ``foreach`` did not help on a
    CPU, nor did either for SGD, whose update is a negligible part of a step."""
    if cfg.optimizer == "adam":
        params = list(model.parameters())
        fused = all(p.device.type in FUSED_DEVICES and p.is_floating_point() for p in params)
        return torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay,
                                fused=fused or None)
    return torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum,
                           weight_decay=cfg.weight_decay)


def fit(model: nn.Module, train: Split, cfg: TrainConfig, targets: tuple[str, ...],
        device: str = "cpu", checkpoint: Path | None = None, teacher: Teacher | None = None,
        progress: bool = True, compile_step: bool = False) -> FitResult:
    """Train ``model`` for ``cfg.epochs`` epochs on ``train`` (whose masks are the annotations).

    Seeded so that a CPU run repeats bit for bit; with ``checkpoint``, the state after every
    epoch but the last (model, optimiser, RNG, history) is written atomically and a rerun resumes
    from it; a
    checkpoint that cannot be used (corrupt, another model's) is moved aside with a warning and
    the run starts afresh. The masks are checked to be finite once, before the first step.
    The split is moved to ``device`` once (where it fits) and batched in the DataLoader's
    shuffled order (:mod:`tapkit.batches`). On a GPU the finite-loss check and the loss totals
    wait for the end of each epoch, so steps do not synchronise. ``compile_step`` (an execution
    option, not part of the config) compiles the step on a GPU
    (:func:`tapkit.compiled.compiled_step`).
    """
    check_finite_mask(train.mask, always=True)  # once here, so the steps need not
    torch.manual_seed(cfg.seed)
    model.to(device)
    opt = make_optimizer(model, cfg)
    gen = torch.Generator().manual_seed(cfg.seed)
    result = FitResult("ok", 0)
    if checkpoint is not None and checkpoint.exists():
        try:
            result = _resume(checkpoint, model, opt, gen)
        except UNREADABLE as exc:  # a file from outside: whatever is wrong, start afresh
            move_aside(checkpoint, unreadable_reason(exc))
            torch.manual_seed(cfg.seed)
            opt = make_optimizer(model, cfg)
            gen = torch.Generator().manual_seed(cfg.seed)
    data = batches.on_device((train.x, train.y, train.mask), device)
    sync_each_step = torch.device(device).type == "cpu"
    weight = class_weight_tensor(cfg, train.y)
    if weight is not None:
        weight = weight.to(device)
    compiled = (compiled_step(model, cfg, targets, teacher, device, class_weight=weight)
                if compile_step
                else contextlib.nullcontext())
    with compiled as step, masks_checked():
        step = step or functools.partial(step_losses, model, cfg=cfg, targets=targets,
                                         teacher=teacher, class_weight=weight)
        while result.status == "ok" and result.epochs_done < cfg.epochs:
            _epoch(model, opt, step, data, gen, cfg, device, result, progress, sync_each_step)
            # after the last epoch the caller writes the model and removes the checkpoint: no
            # checkpoint to write then (VGG-16's, with Adam's moments, is 1.7 GB)
            if checkpoint is not None and result.status == "ok" and result.epochs_done < cfg.epochs:
                save_torch(checkpoint, {"model": model.state_dict(), "optimizer": opt.state_dict(),
                                        "generator": gen.get_state(),
                                        "torch_rng": torch.get_rng_state(),
                                        "status": result.status, "epoch": result.epochs_done,
                                        "history": result.history})
    return result


# what reading a corrupt, truncated, foreign or code-carrying checkpoint raises
UNREADABLE = (pickle.UnpicklingError, RuntimeError, EOFError, OSError, KeyError, TypeError,
              ValueError, AttributeError, IndexError)


def _resume(path: Path, model: nn.Module, opt: torch.optim.Optimizer,
            gen: torch.Generator) -> FitResult:
    """Load the checkpoint at ``path`` into ``model``, ``opt``, ``gen`` and torch's RNG. Only
    tensors and plain values are unpickled (``weights_only=True``): a checkpoint is data, never
    code. Everything is checked before the model changes, so a checkpoint that does not fit
    (another model's, a broken one) raises and leaves the model's initial weights. It is read
    onto the CPU (torch's RNG states must be there); the model and optimiser copy their tensors
    to their own devices."""
    state = torch.load(path, map_location="cpu", weights_only=True)  # RNG states live there
    weights, ours = state["model"], model.state_dict()
    if list(weights) != list(ours) or any(weights[k].shape != v.shape for k, v in ours.items()):
        raise ValueError("its model's parameters are not this model's")
    result = FitResult(state["status"], int(state["epoch"]), list(state["history"]))
    if result.status not in ("ok", "dnc"):
        raise ValueError(f"unknown status {result.status!r}")
    opt.load_state_dict(state["optimizer"])
    gen.set_state(state["generator"])
    torch.set_rng_state(state["torch_rng"])
    model.load_state_dict(weights)
    log.info("resuming %s from epoch %d", path.parent.name, result.epochs_done)
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


@torch.no_grad()
def validation_loss(model: nn.Module, split: Split, device: str,
                    batch_size: int = batches.EVAL_BATCH,
                    class_weight: Tensor | None = None) -> float:
    """Cross-entropy on SC(X*, permute(y))_val: the paper's criterion for choosing lambda.
    ``class_weight``: the run's training weights (:func:`class_weight_tensor`, as the released
    code weights its validation loss), the mean then over the images' summed weights."""
    total, norm = 0.0, 0.0
    w = class_weight.to(device) if class_weight is not None else None
    for i in range(0, len(split), batch_size):
        logits = model(split.x[i: i + batch_size].to(device))
        y = split.y[i: i + batch_size].to(device)
        total += _task_loss(logits, y, w, reduction="sum").item()
        norm += w[y].sum().item() if w is not None else len(y)
    return total / norm if norm > 0 else 0.0
