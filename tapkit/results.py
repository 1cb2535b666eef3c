"""Results on disk: atomic writes, provenance, and a store of runs keyed by config hash."""

from __future__ import annotations

import errno
import json
import logging
import math
import os
import pickle
import platform
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from . import __version__

log = logging.getLogger(__name__)


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and ``os.replace``, so a
    reader never sees a half-written file, even if the writer is killed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _clean(obj: Any) -> Any:
    """NaN/inf to None so the JSON is standard."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write_json(path: str | Path, obj: Any) -> None:
    write_atomic(path, json.dumps(_clean(obj), indent=2, sort_keys=True) + "\n")


# below this many free bytes a failed write is blamed on the disk (a model is tens of MB)
LOW_DISK = 256 * 2**20


def save_torch(path: str | Path, obj: Any) -> None:
    """``torch.save`` through :func:`write_atomic`. When the write fails on a nearly full disk,
    ``OSError`` (ENOSPC) says so: torch's own message is ``unexpected pos ...``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        free = (shutil.disk_usage(path.parent).free if isinstance(err, (RuntimeError, OSError))
                else LOW_DISK)  # an interrupt or a pickling error is not the disk's
        if free < LOW_DISK:
            raise OSError(errno.ENOSPC, f"no space left to write {path.name}: {free / 2**20:.0f} MB "
                          f"free on the disk of {path.parent}; free space there or point the "
                          "results folder (results=, --results) at a larger disk; nothing was "
                          "half-written") from err
        raise


def move_aside(path: Path, why: str) -> Path:
    """Rename an unreadable file to ``<name>.corrupt-<time>-<pid>`` beside it (kept for a look,
    never read again), with one warning line."""
    path = Path(path)
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    path.replace(target)
    log.warning("%s is unreadable (%s): moved aside to %s; the run is redone", path, why,
                target.name)
    return target


def unreadable_reason(exc: BaseException) -> str:
    """Why ``torch.load(..., weights_only=True)`` refused a file, in a few words on one line."""
    if isinstance(exc, pickle.UnpicklingError):
        return "it holds more than tensors and plain values, and unpickling it could run code"
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:200]


def git_commit() -> str:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True,
                             text=True, timeout=5, check=False)
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def device_name(device: str | torch.device) -> str:
    device = torch.device(device)
    if device.type == "cuda":
        return f"cuda: {torch.cuda.get_device_name(device)}"
    return f"cpu: {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads"


def provenance(device: str | torch.device = "cpu") -> dict[str, str]:
    return {"tapkit": __version__, "git_commit": git_commit(), "torch": torch.__version__,
            "python": platform.python_version(), "device": device_name(device)}


def resolve_device(device: str = "auto") -> str:
    """``"auto"``: CUDA where torch sees a GPU, else the CPU. Any other name is checked:
    ``ValueError`` for one torch does not know or this machine cannot run."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"unknown device {device!r}; use auto, cpu, cuda, cuda:N or mps") from exc
    available = {"cpu": True, "cuda": torch.cuda.is_available(),
                 "mps": torch.backends.mps.is_available()}
    if dev.type not in available:
        raise ValueError(f"device {device!r} is not supported; use auto, cpu, cuda, cuda:N or mps")
    if not available[dev.type]:
        raise ValueError(f"device {device!r}: torch {torch.__version__} sees no {dev.type} device "
                         "on this machine; use --device cpu (or auto)")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r}: this machine has {torch.cuda.device_count()} CUDA "
                         f"device(s), cuda:0 to cuda:{torch.cuda.device_count() - 1}")
    return device


def write_table(df: "pd.DataFrame", root: str | Path, name: str, provenance: dict | None = None) -> Path:
    """``root/tables/<name>.csv`` (and ``<name>.json`` with its provenance), written atomically."""
    path = Path(root) / "tables" / f"{name}.csv"
    write_atomic(path, df.to_csv(index=False))
    if provenance is not None:
        write_json(path.with_suffix(".json"), provenance)
    return path
