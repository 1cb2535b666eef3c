"""Training-step speed and peak memory per model and XS method (the paper's Table 1).

All pairs are measured in one process. For each (model, method): build, warm up, reset the peak
counter, time ``steps`` full training steps (forward, XS term, backward, optimiser step). Speed is
``1 / median step time``, robust to a stray slow step. Peak memory is CUDA's max-allocated on a
GPU and, on a CPU, the growth of the process's peak resident set (VmHWM, reset per pair through
``/proc/self/clear_refs``) over its resident set before the pair's first step.
"""

from __future__ import annotations

import gc
import logging
import statistics
import time
from pathlib import Path

import torch
from tqdm import tqdm

from .models import build_model
from .results import device_name, resolve_device
from .training import TrainConfig, make_optimizer, step_losses

log = logging.getLogger(__name__)

# lambda only scales the XS term; any positive value exercises the same computation
BENCH_LAMBDA = 1.0


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_cpu_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def _release_cpu_memory() -> None:
    """Hand memory freed by earlier pairs back to the OS (glibc ``malloc_trim``), so that a pair's
    resident-set growth is its own and not hidden in the allocator's cache; a no-op elsewhere."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _has_batchnorm(model: torch.nn.Module) -> bool:
    return any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())


def bench_pair(model_name: str, method: str, batch_size: int, image_size: int, steps: int,
               device: str, warmup: int = 2, num_classes: int = 2) -> dict:
    """Measure one (model, method) pair; see the module docstring."""
    gc.collect()
    if not device.startswith("cuda"):
        _release_cpu_memory()
    in_channels = 1 if model_name == "two_layer_cnn" else 3
    built = build_model(model_name, num_classes, in_channels, image_size=image_size)
    model = built.model.to(device).train()
    # full RBR needs third derivatives, which training-mode batch_norm lacks: use running stats
    xs_bn = "eval" if method == "rbr" and _has_batchnorm(model) else "train"
    cfg = TrainConfig(model=model_name, method=method, lam=BENCH_LAMBDA, xs_batchnorm=xs_bn)
    opt = make_optimizer(model, cfg)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch_size, in_channels, image_size, image_size, generator=gen).to(device)
    y = torch.randint(0, num_classes, (batch_size,), generator=gen).to(device)
    mask = torch.zeros(batch_size, 1, image_size, image_size)
    mask[:, :, : image_size // 10, : image_size // 4] = 1.0  # a tag-sized corner box
    mask = mask.to(device)
    cuda = device.startswith("cuda")

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        task, xs = step_losses(model, x, y, mask, cfg, built.targets)
        (task + cfg.lam * xs).backward()
        opt.step()
        if cuda:
            torch.cuda.synchronize()

    if cuda:
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        base = _status_kb("VmRSS")
        _reset_cpu_peak()
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    if cuda:
        peak_mb = torch.cuda.max_memory_allocated() / 2**20
    else:
        peak_mb = max(_status_kb("VmHWM") - base, 0) / 1024
    return {"model": model_name, "method": method, "batch_size": batch_size,
            "image_size": image_size, "it_per_s": 1.0 / statistics.median(times),
            "peak_mem_mb": peak_mb, "device": device_name(device), "xs_batchnorm": xs_bn,
            "steps": steps, "warmup": warmup}


def bench(models: list[str], methods: list[str], batch_size: int = 16, image_size: int = 224,
          steps: int = 10, device: str = "auto", warmup: int = 2) -> list[dict]:
    """Every model x method pair, in one process, with a progress bar. A pair that runs out of
    memory is reported with ``status="oom"`` (the paper's DenseNet-121 + RBR) instead of raising."""
    device = resolve_device(device)
    torch.manual_seed(0)
    rows = []
    pairs = [(m, k) for m in models for k in methods]
    for model_name, method in tqdm(pairs, desc="bench"):
        try:
            row = bench_pair(model_name, method, batch_size, image_size, steps, device, warmup)
            row["status"] = "ok"
        except torch.OutOfMemoryError:
            row = {"model": model_name, "method": method, "batch_size": batch_size,
                   "image_size": image_size, "it_per_s": None, "peak_mem_mb": None,
                   "device": device_name(device), "status": "oom"}
            torch.cuda.empty_cache()
        log.info("%s", row)
        rows.append(row)
    return rows
