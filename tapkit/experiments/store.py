"""The results store: every run under ``root/<config key>/`` (``metrics.json``, ``model.pt``,
``checkpoint.pt`` while training, ``.lock`` while a worker trains it).

:meth:`ResultStore.run` locates a run, loads it, or claims it under a lock and trains it, giving
:func:`~tapkit.experiments.run.train_run` the trained teacher model it needs from the store.
Workers never train the same run twice: a second worker asking for a locked run waits, then
reads the result. An entry that cannot be read (a truncated checkpoint, a garbled
``metrics.json``) is moved aside with a warning and the run is redone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from ..config import TrainConfig
from ..data import Split
from ..fit import UNREADABLE, experiment_data
from ..models import build_model
from ..results import move_aside, resolve_device, unreadable_reason
from ..teachers import saliency
from .run import needs_teacher_model, train_run

log = logging.getLogger(__name__)
_ASKED: dict[str, None] = {}  # every key ResultStore.load was asked for in this process, in order


def asked_keys() -> list[str]:
    """The key of every run a :class:`ResultStore` of this process was asked for
    (:meth:`ResultStore.load`, through which every read, run and training goes), first asked
    first. In a notebook's kernel these are the runs its chapter read or trained: its status
    record lists them (:meth:`tapkit.book.chapter.Chapter.finish`), and a test compares them with
    the chapter's plan."""
    return list(_ASKED)


class TeacherNotTrainedError(RuntimeError):
    """A student's teacher is not in the store (and the caller asked not to train it)."""


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
        """The stored record, or ``None`` when it is missing or unreadable (see :meth:`run`). The
        key is remembered (:func:`asked_keys`)."""
        _ASKED.setdefault(cfg.key(), None)
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
            compile_step: bool = False, train_teachers: bool = True) -> dict:
        """The cached record of ``cfg``, or train it (resuming a checkpoint) and cache it. Under
        the run's lock: a worker finding it locked waits, then reads what the other one wrote.

        A run that needs its teacher's model gets it from the store; a teacher not there yet is
        trained first under its own lock (so parallel workers train it once), or, with
        ``train_teachers=False`` (a planned sweep, whose waves train teachers first), raises
        :class:`TeacherNotTrainedError`. A run's ``start`` (its pretraining run) is resolved the
        same way."""
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
            device = resolve_device(device)  # "auto" is no place to load tensors to
            teacher = (self.model(cfg.teacher, device, train=train_teachers)
                       if needs_teacher_model(cfg) else None)
            start = (self.weights(cfg.start, device, train=train_teachers)
                     if cfg.start is not None else None)
            return train_run(cfg, run_dir, teacher, device=device, progress=progress,
                             compile_step=compile_step, start_weights=start)

    def model(self, cfg: TrainConfig, device: str = "cpu", train: bool = True,
              mmap: bool = False) -> nn.Module:
        """The trained model of ``cfg`` in eval mode (trained first when ``train`` and it is not
        stored); ``RuntimeError`` when the run did not converge. The network is built on the meta
        device and takes the stored tensors (:meth:`weights`) directly: no random initialisation
        to throw away (seconds for VGG-16's 138M parameters, and no draw from the global random
        generator) and no ImageNet weights to fetch for a pretrained run."""
        state = self.weights(cfg, device, train, mmap)
        task, _ = experiment_data(cfg)
        with torch.device("meta"):
            net = build_model(cfg.model, task.num_classes, task.in_channels, False,
                              task.image_size).model
        net.load_state_dict(state, assign=True)
        return net.to(device).eval()

    def weights(self, cfg: TrainConfig, device: str = "cpu", train: bool = True,
                mmap: bool = False) -> dict[str, Tensor]:
        """The trained state dict of ``cfg`` (``model.pt``, trained first when ``train`` and it is
        not stored), read as tensors only (``weights_only``: a copied store is data, never
        code). An unreadable ``model.pt`` is moved aside with its ``metrics.json`` and the run
        redone (when ``train``)."""
        record = self.load(cfg)
        if record is None and not train:
            raise TeacherNotTrainedError(
                f"teacher {cfg.key()} ({cfg.model}, data={cfg.data}) is not in {self.root}: "
                "train it first (a sweep's waves do)")
        record = record or self.run(cfg, device)
        if record["status"] != "ok":
            raise RuntimeError(f"run {cfg.key()} ended {record['status']}; it has no model")
        path = self.path(cfg) / "model.pt"
        try:
            return torch.load(path, map_location=device, weights_only=True, mmap=mmap)
        except UNREADABLE:
            if not train:
                raise
        with run_lock(path.parent):  # once: another worker may be redoing it already
            try:
                return torch.load(path, map_location=device, weights_only=True, mmap=mmap)
            except UNREADABLE as exc:
                record_why = "its model.pt is not"
                for bad, reason in ((path, unreadable_reason(exc)),
                                    (path.parent / "metrics.json", record_why)):
                    if bad.exists():
                        move_aside(bad, reason)
        self.run(cfg, device)
        return self.weights(cfg, device, train=False, mmap=mmap)


def load_trained(cfg: TrainConfig, store_root: str | Path, device: str = "cpu") -> nn.Module:
    """The trained model of ``cfg`` from the store at ``store_root`` (trained first if missing)."""
    return ResultStore(store_root).model(cfg, device)


def teacher_saliency(teacher: TrainConfig, store_root: str | Path, device: str = "cpu",
                     split: str = "train", method: str = "saliency") -> tuple[Tensor, Split]:
    """E (Eq. 13) of the trained ``teacher`` (trained first if the store lacks it) on ``split``
    of its experiment (by default ``"train"``, the contaminated images its students train on)
    and that split, whose ``mask`` is the ground truth."""
    model = load_trained(teacher, store_root, device)
    _, splits = experiment_data(teacher)
    if split not in splits:
        raise ValueError(f"unknown split {split!r}; expected one of {sorted(splits)}")
    data = splits[split]
    return saliency(model, data.x.to(device), method=method).cpu(), data
