"""Training-step speed and peak memory per model and XS method (the paper's Table 1).

Every model the paper trains, each at its own batch and image size (``two_layer_cnn@256x28``
beside ``resnet18@16x224``), with the paper's optimiser (SGD, momentum 0.9).

Two passes. Speed: for each model, every method's pair
alive at once and warmed up, then ``steps`` rounds of one full training step (forward, XS term,
backward, optimiser step) per method in a rotating order, so that a noisy neighbour or a drifting
clock slows every method alike instead of whichever happened to run then; speed is
``1 / fastest step time``, as :mod:`timeit` advises: interference only ever slows a step down, so
the fastest of ``steps`` estimates the step's own cost (on our VM, TAP / No XS from five steps
stayed within 0.93-1.12 using the fastest step, 0.78-1.34 using the median; both are stored).
On a CPU this runs in a fresh process whose allocator keeps freed memory for reuse, so that a
step does not spend its time faulting in fresh zeroed pages (on our 2-core VM that was a fifth of
the CPU time and most of the spread). Memory: one pair at a time, so that each peak is its own:
build, warm up, reset the peak counter, one step; the peak over what was allocated before the
pair was built.
That is CUDA's max-allocated on a GPU and, on a CPU, the process's peak resident set (VmHWM, reset
through ``/proc/self/clear_refs``), measured in a fresh process per model with glibc's mmap
threshold fixed, so that the same pair measured twice gives the same number (in the long-lived
process of the speed pass it varied by 25% with the allocator's history).
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import statistics
import time
from pathlib import Path

import torch
from tqdm import tqdm

from .allocator import release_cpu_memory, reusing_cpu_allocator, steady_cpu_allocator
from .methods import get_method, methods_where
from .models import build_model, get_spec
from .results import device_name, resolve_device
from .config import TrainConfig
from .fit import make_optimizer, step_losses
from .progress import disabled as progress_disabled

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




class _Pair:
    """One (model, method) ready to train: ``step()`` runs one full training step."""

    def __init__(self, model_name: str, method: str, batch_size: int, image_size: int,
                 device: str):
        num_classes, in_channels = _shape(model_name)
        torch.manual_seed(0)
        built = build_model(model_name, num_classes, in_channels, image_size=image_size)
        self.model = built.model.to(device).train()
        self.targets = built.targets
        # as in training: input gradients per image, on BatchNorm running statistics; the
        # paper's optimiser, SGD with momentum 0.9 (Adam's state would add two buffers)
        self.cfg = TrainConfig(model=model_name, method=method, lam=BENCH_LAMBDA, optimizer="sgd",
                               lr=1e-3)
        self.xs_batchnorm = self.cfg.xs_batchnorm
        self.opt = make_optimizer(self.model, self.cfg)
        gen = torch.Generator().manual_seed(0)
        self.x = torch.randn(batch_size, in_channels, image_size, image_size, generator=gen).to(device)
        self.y = torch.randint(0, num_classes, (batch_size,), generator=gen).to(device)
        mask = torch.zeros(batch_size, 1, image_size, image_size)
        mask[:, :, : image_size // 10, : image_size // 4] = 1.0  # a tag-sized corner box
        self.mask = mask.to(device)
        self.cuda = device.startswith("cuda")

    def step(self) -> None:
        self.opt.zero_grad(set_to_none=True)
        task, xs = step_losses(self.model, self.x, self.y, self.mask, self.cfg, self.targets)
        (task + self.cfg.lam * xs).backward()
        self.opt.step()
        if self.cuda:
            torch.cuda.synchronize()


def peak_memory_mb(model_name: str, method: str, batch_size: int, image_size: int, device: str,
                   warmup: int = 1) -> float | None:
    """Peak memory in MB of one training step of this pair (see the module docstring): model,
    optimiser state and the step's tensors, counted after ``warmup`` steps; ``None`` when the
    pair runs out of memory."""
    gc.collect()
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.empty_cache()
        base = torch.cuda.memory_allocated()
    else:
        release_cpu_memory()
        base = _status_kb("VmRSS") * 1024
    try:
        pair = _Pair(model_name, method, batch_size, image_size, device)
        for _ in range(warmup):
            pair.step()
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        else:
            _reset_cpu_peak()
        pair.step()
    except torch.OutOfMemoryError:
        return None
    peak = torch.cuda.max_memory_allocated() if cuda else _status_kb("VmHWM") * 1024
    return max(peak - base, 0) / 2**20


def _peaks(model_name: str, methods: list[str], batch_size: int, image_size: int, device: str,
           warmup: int) -> dict[str, float | None]:
    # discarded: first-use allocations (thread pools, kernel caches) are nobody's peak
    peak_memory_mb(model_name, "none", batch_size, image_size, device, warmup=0)
    return {m: peak_memory_mb(model_name, m, batch_size, image_size, device, warmup)
            for m in dict.fromkeys(methods)}


def _in_child(threads: int, allocator, fn, *args):
    torch.set_num_threads(threads)
    allocator()
    return fn(*args)


def _fresh_cpu_process(fn, allocator, args: tuple, device: str):
    """``fn(*args)``; on a CPU in a fresh (spawned) process with the parent's thread count and
    ``allocator`` applied first, so that nothing the caller allocated skews the measurement."""
    if device.startswith("cuda"):
        return fn(*args)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_in_child, (torch.get_num_threads(), allocator, fn, *args))


def model_memory_mb(model_name: str, methods: list[str], batch_size: int, image_size: int,
                    device: str, warmup: int = 1) -> dict[str, float | None]:
    """:func:`peak_memory_mb` of each method's pair, one after the other. On a CPU this runs in a
    fresh (spawned) process with glibc's mmap threshold fixed, so that the resident set follows
    each pair's live tensors and not what the speed pass left in the allocator."""
    args = (model_name, list(methods), batch_size, image_size, device, warmup)
    return _fresh_cpu_process(_peaks, steady_cpu_allocator, args, device)


def step_seconds(pairs: list[_Pair], steps: int) -> list[list[float]]:
    """Seconds of each of ``steps`` training steps per pair, interleaved in rotating order."""
    times: list[list[float]] = [[] for _ in pairs]
    for r in range(steps):
        for k in range(len(pairs)):
            i = (r + k) % len(pairs)
            start = time.perf_counter()
            pairs[i].step()
            times[i].append(time.perf_counter() - start)
    return times


def _warm_pairs(model_name: str, methods: list[str], batch_size: int, image_size: int,
                device: str, warmup: int) -> list[_Pair | None]:
    """Each method's pair, built and warmed up; ``None`` where it ran out of memory."""
    pairs: list[_Pair | None] = []
    for method in methods:
        try:
            pair = _Pair(model_name, method, batch_size, image_size, device)
            for _ in range(warmup):
                pair.step()
            pairs.append(pair)
        except torch.OutOfMemoryError:
            pairs.append(None)
            torch.cuda.empty_cache()
    return pairs


def bench_model(model_name: str, methods: list[str], batch_size: int, image_size: int,
                steps: int, device: str, warmup: int = 1) -> list[dict]:
    """Speed rows for one model (interleaved, see the module docstring), without memory. A pair
    that runs out of memory is reported with ``status="oom"`` (the paper's DenseNet-121 + RBR)."""
    pairs = _warm_pairs(model_name, methods, batch_size, image_size, device, warmup)
    live = [p for p in pairs if p is not None]
    times = iter(step_seconds(live, steps))
    rows = []
    for method, pair in zip(methods, pairs):
        row = {"model": model_name, "method": method, "batch_size": batch_size,
               "image_size": image_size, "device": device_name(device), "steps": steps,
               "warmup": warmup, "timing": "interleaved", "status": "oom", "it_per_s": None}
        if pair is not None:
            t = next(times)
            row.update(status="ok", it_per_s=1.0 / min(t),
                       it_per_s_median=1.0 / statistics.median(t), step_s_min=min(t),
                       step_s_max=max(t), xs_batchnorm=pair.xs_batchnorm)
        rows.append(row)
    return rows


def model_speed(model_name: str, methods: list[str], batch_size: int, image_size: int,
                steps: int, device: str, warmup: int = 1) -> list[dict]:
    """:func:`bench_model`, on a CPU in a fresh (spawned) process with a reusing allocator."""
    args = (model_name, list(methods), batch_size, image_size, steps, device, warmup)
    return _fresh_cpu_process(bench_model, reusing_cpu_allocator, args, device)


def model_spec(spec: str, batch_size: int, image_size: int) -> tuple[str, int, int]:
    """``"name"`` or ``"name@BATCHxSIZE"`` (e.g. ``two_layer_cnn@256x28``) as (name, batch, image
    side), the defaults filling what the spec leaves out."""
    name, _, size = spec.partition("@")
    if not size:
        return name, batch_size, image_size
    batch, _, side = size.partition("x")
    if not (batch.isdigit() and side.isdigit() and int(batch) > 0 and int(side) > 0):
        raise ValueError(f"bad model spec {spec!r}; expected NAME or NAME@BATCHxSIZE, "
                         "e.g. two_layer_cnn@256x28")
    return name, int(batch), int(side)


def _shape(name: str) -> tuple[int, int]:
    return (10, 1) if name == "two_layer_cnn" else (2, 3)  # Decoy-MNIST's model: 10 classes, 1 channel


def check_pair(name: str, image_size: int) -> None:
    """``ValueError`` when ``name`` cannot take ``image_size``-pixel images: the model is built
    and run once on the meta device (shapes only, no memory, no time)."""
    get_spec(name)  # an unknown name raises listing the registered ones
    num_classes, in_channels = _shape(name)
    try:
        with torch.device("meta"):
            model = build_model(name, num_classes, in_channels, image_size=image_size).model
            model(torch.empty(2, in_channels, image_size, image_size))
    except RuntimeError as err:
        raise ValueError(f"{name} cannot take {image_size}x{image_size} images "
                         f"({str(err).splitlines()[0]}); use a larger --image-size or "
                         f"{name}@BATCHxSIZE") from err


def check_methods(methods: list[str]) -> None:
    """``ValueError`` for a method the benchmark cannot run (unknown, or one needing a teacher)."""
    for method in methods:
        if get_method(method).needs_teacher:
            raise ValueError(f"the benchmark times methods without a teacher "
                             f"{methods_where(teacher=False)}; {method!r} needs one")


def bench(models: list[str], methods: list[str], batch_size: int = 16, image_size: int = 224,
          steps: int = 10, device: str = "auto", warmup: int = 2) -> list[dict]:
    """Every model x method pair, with progress bars: speed per model (:func:`model_speed`),
    then peak memory pair by pair (:func:`model_memory_mb`). A model may carry its own batch and
    image size (``name@BATCHxSIZE``, :func:`model_spec`); ``batch_size`` and ``image_size`` are
    the defaults. ``methods`` may name a method twice: the two rows then share one memory figure
    and differ in speed only by measurement noise. Steps use the paper's optimiser (SGD with
    momentum 0.9)."""
    device = resolve_device(device)
    specs = [model_spec(m, batch_size, image_size) for m in models]
    check_methods(methods)
    for name, _, side in specs:  # before any process starts: a mistake is one clear error
        check_pair(name, side)
    per_model = []
    for name, bs, side in tqdm(specs, desc="bench speed", disable=progress_disabled()):
        per_model.append(model_speed(name, methods, bs, side, steps, device, warmup))
        gc.collect()
    bar = tqdm(specs, desc="bench memory", disable=progress_disabled())
    for (name, bs, side), own in zip(bar, per_model):
        ok = [row["method"] for row in own if row["status"] == "ok"]
        peaks = model_memory_mb(name, ok, bs, side, device, warmup) if ok else {}
        for row in own:
            row["peak_mem_mb"] = peaks.get(row["method"])
            if row["status"] == "ok" and row["peak_mem_mb"] is None:
                row["status"] = "oom"
    rows = [row for own in per_model for row in own]
    for row in rows:
        log.info("%s", row)
    return rows
