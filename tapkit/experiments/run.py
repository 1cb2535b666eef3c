"""One run as data: :func:`train_run` trains and evaluates one config in its folder, given the
trained teacher model and the annotation masks by its caller (:mod:`.store` resolves them from
the results store); it never reaches into the store itself.

``run_dir/checkpoint.pt`` makes an interrupted run resume; ``model.pt`` and ``metrics.json`` are
written atomically at the end.
"""

from __future__ import annotations

import time
from pathlib import Path

import torch
from torch import Tensor, nn

from .. import metrics
from ..allocator import reusing_cpu_allocator
from ..config import TrainConfig
from ..data import Split
from ..fit import class_weight_tensor, experiment_data, fit, training_split, validation_loss
from ..methods import Teacher, get_method
from ..models import build_model, check_image_size, target_layers, target_sigma
from ..results import provenance, resolve_device, save_torch, write_json
from ..teachers import annotation_masks
from ..weights import start_from


def needs_teacher_model(cfg: TrainConfig) -> bool:
    """Whether training ``cfg`` needs its teacher's trained model (KD/AT/JT learn from it, teacher
    annotations are its saliency)."""
    return get_method(cfg.method).needs_teacher or cfg.annotation == "teacher"


def train_run(cfg: TrainConfig, run_dir: str | Path, teacher: nn.Module | None = None,
              masks: Tensor | None = None, device: str = "auto", progress: bool = True,
              compile_step: bool = False, start_weights: dict[str, Tensor] | None = None) -> dict:
    """Train and evaluate ``cfg`` in ``run_dir``; return and write ``metrics.json``.

    ``teacher``: the trained teacher model (KD/AT/JT, and teacher annotations when ``masks`` is
    not given). ``start_weights``: the trained weights of ``cfg.start`` (the store reads them),
    copied into the new model but for its head (:func:`tapkit.weights.start_from`). ``masks``:
    the annotations of the training split (default: as ``cfg.annotation`` says,
    :func:`tapkit.teachers.annotation_masks`). ``compile_step`` compiles the step of methods
    whose registry entry allows it (:mod:`tapkit.compiled`). On a CPU the process's allocator
    is set to reuse freed memory (:func:`tapkit.allocator.reusing_cpu_allocator`).
    """
    run_dir = Path(run_dir)
    device = resolve_device(device)
    method = get_method(cfg.method)
    if teacher is None and (method.needs_teacher or (cfg.annotation == "teacher" and masks is None)):
        raise ValueError(f"run {cfg.key()} ({cfg.method}, annotation={cfg.annotation}) needs its "
                         "trained teacher model: pass teacher=")
    if (cfg.start is None) != (start_weights is None):
        raise ValueError(f"run {cfg.key()}: pass start_weights= exactly when the config has a start "
                         "(the trained weights of cfg.start)")
    if device == "cpu":
        reusing_cpu_allocator()  # steps reuse freed memory instead of faulting in fresh pages
    start = time.time()
    task, splits = experiment_data(cfg)
    check_image_size(cfg.model, task.in_channels, task.image_size)
    train = training_split(cfg, splits)
    if teacher is not None:
        teacher = teacher.to(device).eval()
    masks = annotation_masks(cfg, train, teacher, device) if masks is None else masks
    if masks.shape != train.mask.shape:
        raise ValueError(f"masks are {tuple(masks.shape)}; the training split's are "
                         f"{tuple(train.mask.shape)}")
    train = Split(train.x, train.y, masks)
    torch.manual_seed(cfg.seed)  # the initial weights belong to the run, not to what ran before
    built = build_model(cfg.model, task.num_classes, task.in_channels, cfg.pretrained,
                        task.image_size, cfg.weights_fallback)
    weights = built.weights
    if start_weights is not None:
        fresh = start_from(built.model, start_weights)
        weights = (f"run {cfg.start.key()} ({cfg.start.experiment}); "
                   f"{len(fresh)} tensors of the head fresh")
    frozen = (Teacher(teacher, target_layers(cfg.teacher.model), target_sigma(cfg.teacher.model))
              if method.needs_teacher else None)
    result = fit(built.model, train, cfg, built.targets, device, run_dir / "checkpoint.pt",
                 frozen, progress, compile_step and method.compilable)
    model = built.model.eval()
    record = {"metric": task.metric, "status": result.status, "epochs_done": result.epochs_done,
              "history": result.history, "weights": weights, "key": cfg.key(),
              "config": cfg.to_dict(), "provenance": provenance(device)}
    ok = result.status == "ok"
    # the test scores, and the clean validation score (the λ search's guard, beside what a
    # constant prediction scores there)
    names = {"contaminated": "test_contaminated", "permuted": "test_permuted",
             "clean": "test_clean", "val_clean": "val_clean"}
    scores = (metrics.split_scores(model, {k: splits[v] for k, v in names.items()}, task.metric,
                                   device) if ok else dict.fromkeys(names, float("nan")))
    record.update(scores)
    record["val_constant"] = metrics.constant_score(splits["val_clean"].y, task.metric)
    # the λ criterion weighs classes as training did (the released code's PNEU weights)
    weight = class_weight_tensor(cfg, train.y)
    record["val_loss"] = (validation_loss(model, splits["val"], device,
                                          class_weight=None if weight is None else
                                          weight.to(device)) if ok else float("nan"))
    record["seconds"] = time.time() - start
    if ok:
        save_torch(run_dir / "model.pt", model.state_dict())
    write_json(run_dir / "metrics.json", record)
    (run_dir / "checkpoint.pt").unlink(missing_ok=True)
    return record
