"""Training-step speed and peak memory per model and XS method (the paper's Table 1), and the
steps' efficiency against the machine's matrix-multiply throughput (:mod:`tapkit.efficiency`).

Every model the paper trains, each at its own batch and image size (``two_layer_cnn@256x28``
beside ``resnet18@16x224``), with the paper's optimiser (SGD, momentum 0.9) unless asked for Adam.

Two passes. Speed: for each model, every method's pair alive at once and warmed up, then rounds
of one full training step (forward, XS term, backward, optimiser step) per method, the order
changing from round to round through every permutation (:func:`round_order`), so that a noisy
neighbour or a drifting clock slows every method of a round alike and no method always follows
the same one. Methods without input gradients (No XS, TAP: cheap) may run more rounds
(``paired_steps``) than the double-backward ones (``steps``). Each method's speed relative to
No XS is the geometric mean of the rounds' paired ratios ``t_none / t_method`` with a 95%
interval (:mod:`tapkit.paired`): noise widens the interval instead of moving the estimate;
where No XS is timed twice (Table 1), ``t_none`` is the round's mean of the two
(:func:`add_ratios`). The
absolute speed is ``1 / fastest step``, as :mod:`timeit` advises (the median beside it).
On a CPU this runs in a fresh process whose allocator keeps freed memory for reuse, so that a
step does not spend its time faulting in fresh zeroed pages (on our 2-core VM that was a fifth of
the CPU time and most of the spread). Memory: one pair at a time, so that each peak is its own:
build, warm up, reset the peak counter, one step; the peak over what was allocated before the
pair was built; the methods without input gradients are measured ``memory_passes`` times, each
pass against a No XS pass, for an interval of their ratio.
That is CUDA's max-allocated on a GPU and, on a CPU, the peak bytes of live tensors during the
step, counted at the dispatcher (:mod:`tapkit.memory`: parameters, gradients, optimiser state,
activations and temporaries; :func:`tracked_peak_mb`): exact and the same from pass to pass,
where the process's resident set (VmHWM) also counted the allocator's history (DenseNet-121's
memory ratio [0.87, 1.16] on the 2-core CPU).

A row of :func:`bench` (JSON; the speed chapter's CSV keeps the ratio columns): ``model``,
``method``, ``batch_size``, ``image_size``, ``device``, ``optimizer``, ``warmup``, ``steps``
(this method's timed rounds), ``timing`` (``"interleaved"``), ``status`` (``ok`` or ``oom``),
``it_per_s`` (1 / fastest step), ``it_per_s_median``, ``step_s_min``, ``step_s_max``, ``step_s``
(every round's seconds, in order), ``batchnorm`` (the input-gradient pass's BatchNorm mode,
``"running"``; None for a method without input gradients), ``peak_mem_mb`` (first pass),
``peak_mem_mb_passes``, and against the model's first No XS row ``speed_ratio`` with
``speed_ratio_lo``/``speed_ratio_hi`` over ``speed_rounds`` paired rounds, and ``mem_ratio``
with ``mem_ratio_lo``/``mem_ratio_hi`` over ``mem_passes`` passes (NaN bounds from one round or
pass; ``null`` in JSON). A row of :func:`efficiency` is :meth:`tapkit.efficiency.Efficiency.as_row`.
"""

from __future__ import annotations

import gc
import itertools
import logging
import math
import multiprocessing
import statistics
import time
from collections.abc import Mapping
from pathlib import Path

import torch
from tqdm import tqdm

from . import efficiency as eff
from .allocator import release_cpu_memory, reusing_cpu_allocator, steady_cpu_allocator
from .memory import peak_bytes, training_state
from .methods import Teacher, get_method, methods_where, no_xs
from .models import build_model, get_spec, target_sigma
from .paired import memory_ratio, speed_ratio
from .results import device_name, resolve_device
from .config import TrainConfig
from .fit import make_optimizer, step_losses
from .method_options import MethodOptions
from .progress import disabled as progress_disabled

log = logging.getLogger(__name__)

OptionsTable = Mapping[str, MethodOptions]  # method -> the options its runs use

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
                 device: str, optimizer: str = "sgd", options: OptionsTable | None = None):
        num_classes, in_channels = _shape(model_name)
        torch.manual_seed(0)
        built = build_model(model_name, num_classes, in_channels, image_size=image_size)
        self.model = built.model.to(device).train()
        self.targets = built.targets
        # as in training: input gradients per image, on BatchNorm running statistics; by default
        # the paper's optimiser, SGD with momentum 0.9 (Adam's state would add two buffers)
        distils = get_method(method).needs_teacher  # KD/AT/JT
        teacher = TrainConfig(model=model_name, data="holdout") if distils else None
        self.cfg = TrainConfig(model=model_name, method=method, lam=BENCH_LAMBDA,
                               optimizer=optimizer, lr=1e-3, options=(options or {}).get(method),
                               teacher=teacher)
        self.batchnorm = getattr(self.cfg.options, "batchnorm", None)
        self.opt = make_optimizer(self.model, self.cfg)
        gen = torch.Generator().manual_seed(0)
        self.x = torch.randn(batch_size, in_channels, image_size, image_size, generator=gen).to(device)
        self.y = torch.randint(0, num_classes, (batch_size,), generator=gen).to(device)
        mask = torch.zeros(batch_size, 1, image_size, image_size)
        mask[:, :, : image_size // 10, : image_size // 4] = 1.0  # a tag-sized corner box
        self.mask = mask.to(device)
        self.cuda = device.startswith("cuda")
        # KD/AT/JT: a frozen teacher of the same architecture (its weights do not matter to the
        # step's cost); built before the step, so its weights count as the inputs do: not at all
        self.teacher = None
        if distils:
            torch.manual_seed(1)
            frozen = build_model(model_name, num_classes, in_channels, image_size=image_size)
            frozen.model.to(device).eval().requires_grad_(False)
            self.teacher = Teacher(frozen.model, frozen.targets,
                                   target_sigma(model_name))

    def step(self) -> None:
        self.opt.zero_grad(set_to_none=True)
        task, xs = step_losses(self.model, self.x, self.y, self.mask, self.cfg, self.targets,
                               self.teacher)
        (task + self.cfg.lam * xs).backward()
        self.opt.step()
        if self.cuda:
            torch.cuda.synchronize()


def peak_memory_mb(model_name: str, method: str, batch_size: int, image_size: int, device: str,
                   warmup: int = 1, optimizer: str = "sgd", options: OptionsTable | None = None
                   ) -> float | None:
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
        pair = _Pair(model_name, method, batch_size, image_size, device, optimizer, options)
        for _ in range(warmup):
            pair.step()
        if not cuda:
            return tracked_peak_mb(pair)
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        else:
            _reset_cpu_peak()
        pair.step()
    except torch.OutOfMemoryError:
        return None
    peak = torch.cuda.max_memory_allocated() if cuda else _status_kb("VmHWM") * 1024
    return max(peak - base, 0) / 2**20


def step_memory_mb(model_name: str, methods: list[str], batch_size: int, image_size: int,
                   optimizer: str = "sgd", device: str = "cpu") -> dict[str, float | None]:
    """Each method's peak memory in MB of one training step (:func:`peak_memory_mb`), in this
    process: on a CPU the dispatcher's count of live tensors, the same on every pass (no
    allocator history), so one pass decides it. KD/AT/JT with a frozen teacher of the same
    architecture: the distillation appendix's "memory usage suffers" for JT's second-order
    derivatives (its double backward keeps the first backward's graph)."""
    return {m: peak_memory_mb(model_name, m, batch_size, image_size, device, 1, optimizer)
            for m in methods}


def tracked_peak_mb(pair: _Pair) -> float:
    """Peak MB of live tensors during one training step of ``pair`` on a CPU
    (:func:`tapkit.memory.peak_bytes`): the model's parameters, gradients and buffers, the
    optimiser's state, and every tensor the step allocates; the inputs built before the step
    are not counted (as on a GPU, where they sit in the baseline)."""
    return peak_bytes(pair.step, training_state(pair.model, pair.opt)) / 2**20


def _peaks(model_name: str, methods: list[str], batch_size: int, image_size: int, device: str,
           warmup: int, passes: int = 1, optimizer: str = "sgd",
           options: OptionsTable | None = None) -> dict[str, list[float | None]]:
    """Each method's peak once; the methods without input gradients (and No XS) ``passes``
    times, No XS first in every pass, so that pass ``p`` of each pairs with No XS's pass ``p``."""
    # discarded: first-use allocations (thread pools, kernel caches) are nobody's peak
    peak_memory_mb(model_name, no_xs(), batch_size, image_size, device, 0, optimizer, options)
    methods = list(dict.fromkeys(methods))
    peaks: dict[str, list[float | None]] = {m: [] for m in methods}
    for p in range(max(passes, 1)):
        again = [m for m in methods if p == 0 or _cheap(m)]
        for m in sorted(again, key=lambda m: m != no_xs()):
            peaks[m].append(peak_memory_mb(model_name, m, batch_size, image_size, device, warmup,
                                           optimizer, options))
    return peaks


def _cheap(method: str) -> bool:
    """Methods without a double backward (No XS, TAP): cheap enough for many rounds."""
    return not get_method(method).input_grad


def _in_child(threads: int, allocator, fn, *args):
    torch.set_num_threads(threads)
    allocator()
    return fn(*args)


# Fresh processes are forked from a server process that has imported this module (and so torch)
# and allocated no tensor, not spawned: a spawned process imported torch afresh each time (6-9 s
# on a slow 2-core host, ~9 spawns in the quick speed chapter). The server also imports
# torchvision and torch._dynamo (sympy, ~800 modules), which each child otherwise imported at
# its first model or optimizer step: a ResNet-18 memory pass 3.3-5.3 s -> 2.5-2.8 s, the same
# peaks (2026-11-30)
_FRESH = multiprocessing.get_context("forkserver")
_FRESH.set_forkserver_preload([__name__, "torch._dynamo", "torchvision"])


def _fresh_cpu_process(fn, allocator, args: tuple, device: str, threads: int | None = None):
    """``fn(*args)``; on a CPU in a fresh process (forked from the server, :data:`_FRESH`) with
    ``threads`` (default: the parent's thread count) and ``allocator`` applied first, so that
    nothing the caller allocated skews the measurement."""
    if device.startswith("cuda"):
        return fn(*args)
    with _FRESH.Pool(1) as pool:
        return pool.apply(_in_child, (threads or torch.get_num_threads(), allocator, fn, *args))


def model_memory_passes(model_name: str, methods: list[str], batch_size: int, image_size: int,
                        device: str, warmup: int = 1, passes: int = 1, optimizer: str = "sgd",
                        options: OptionsTable | None = None) -> dict[str, list[float | None]]:
    """:func:`peak_memory_mb` of each method's pair, one after the other, ``passes`` times for
    the methods without input gradients (once for the others). On a CPU this runs in a fresh
    process (:data:`_FRESH`) with glibc's mmap threshold fixed, so that the resident set follows
    each pair's live tensors and not what the speed pass left in the allocator."""
    args = (model_name, list(methods), batch_size, image_size, device, warmup, passes, optimizer,
            options)
    return _fresh_cpu_process(_peaks, steady_cpu_allocator, args, device)


def model_memory_mb(model_name: str, methods: list[str], batch_size: int, image_size: int,
                    device: str, warmup: int = 1) -> dict[str, float | None]:
    """Each method's peak memory in MB, one pass (:func:`model_memory_passes`)."""
    peaks = model_memory_passes(model_name, methods, batch_size, image_size, device, warmup)
    return {m: values[0] for m, values in peaks.items()}


def round_order(live: list[int], r: int) -> tuple[int, ...]:
    """The order of round ``r`` among the pairs ``live``: their permutations in turn (six for
    No XS, TAP and No XS again). Over every full cycle each pair runs in each place equally often
    and right after each other pair equally often. A rotation keeps one cyclic order, so each
    pair always follows the same one, and what a step leaves behind (caches, the allocator)
    lands on the same neighbour: with a rotation, in the fresh clone of 4740751 (2026-11-28),
    VGG-16's second No XS (always right after TAP) ran ×1.053 [1.028, 1.077] of the first,
    further from 1 than the 0.95 Table 1's claim is judged on."""
    orders = itertools.permutations(live)
    return next(itertools.islice(orders, r % math.factorial(len(live)), None), tuple(live))


def step_seconds(pairs: list[_Pair], steps: int | list[int],
                 warm_rounds: int = 1) -> list[list[float]]:
    """Seconds of each pair's training steps, interleaved: in round ``r`` one step of every pair
    with more than ``r`` steps to run (``steps``: one count for all, or one per pair), in the
    ``r``-th of their orders (:func:`round_order`: every order in turn, so that each pair
    follows each other as often as it precedes it, which a rotation does not).

    ``warm_rounds`` untimed rounds of every pair come first. Each pair was warmed up as it was
    built, but the pairs built after it (RBR's, ~3 GB for VGG-16 on the quick profile's CPU)
    moved the allocator and the caches under it: in the build of c22ab3b VGG-16's first timed
    TAP step took 1.60 s against 0.99-1.09 s in the seven rounds after it, and that one round
    widened the ratio's interval to [0.80, 1.06]."""
    counts = steps if isinstance(steps, list) else [steps] * len(pairs)
    for _ in range(warm_rounds):
        for pair in pairs:
            pair.step()
    times: list[list[float]] = [[] for _ in pairs]
    for r in range(max(counts, default=0)):
        live = [i for i, n in enumerate(counts) if n > r]
        for i in round_order(live, r):
            start = time.perf_counter()
            pairs[i].step()
            times[i].append(time.perf_counter() - start)
    return times


def _warm_pairs(model_name: str, methods: list[str], batch_size: int, image_size: int,
                device: str, warmup: int, optimizer: str = "sgd",
                options: OptionsTable | None = None) -> list[_Pair | None]:
    """Each method's pair, built and warmed up; ``None`` where it ran out of memory."""
    pairs: list[_Pair | None] = []
    for method in methods:
        try:
            pair = _Pair(model_name, method, batch_size, image_size, device, optimizer, options)
            for _ in range(warmup):
                pair.step()
            pairs.append(pair)
        except torch.OutOfMemoryError:
            pairs.append(None)
            torch.cuda.empty_cache()
    return pairs


def bench_model(model_name: str, methods: list[str], batch_size: int, image_size: int,
                steps: int, device: str, warmup: int = 1, paired_steps: int | None = None,
                optimizer: str = "sgd", options: OptionsTable | None = None) -> list[dict]:
    """Speed rows for one model (interleaved, see the module docstring), without memory or
    ratios: ``steps`` rounds, ``paired_steps`` (default ``steps``) for the methods without input
    gradients. A pair that runs out of memory is reported with ``status="oom"`` (the paper's
    DenseNet-121 + RBR)."""
    pairs = _warm_pairs(model_name, methods, batch_size, image_size, device, warmup, optimizer,
                        options)
    live = [(m, p) for m, p in zip(methods, pairs) if p is not None]
    counts = [paired_steps or steps if _cheap(m) else steps for m, _ in live]
    times = iter(step_seconds([p for _, p in live], counts))
    rows = []
    for method, pair in zip(methods, pairs):
        row = {"model": model_name, "method": method, "batch_size": batch_size,
               "image_size": image_size, "device": device_name(device), "optimizer": optimizer,
               "steps": steps, "warmup": warmup, "timing": "interleaved", "status": "oom",
               "it_per_s": None}
        if pair is not None:
            t = next(times)
            row.update(status="ok", steps=len(t), it_per_s=1.0 / min(t),
                       it_per_s_median=1.0 / statistics.median(t), step_s_min=min(t),
                       step_s_max=max(t), step_s=t, batchnorm=pair.batchnorm)
        rows.append(row)
    return rows


def model_speed(model_name: str, methods: list[str], batch_size: int, image_size: int,
                steps: int, device: str, warmup: int = 1, paired_steps: int | None = None,
                optimizer: str = "sgd", options: OptionsTable | None = None) -> list[dict]:
    """:func:`bench_model`, on a CPU in a fresh process with a reusing allocator."""
    args = (model_name, list(methods), batch_size, image_size, steps, device, warmup,
            paired_steps, optimizer, options)
    return _fresh_cpu_process(bench_model, reusing_cpu_allocator, args, device)


def no_xs_rounds(timings: list[list[float]]) -> list[float]:
    """Each round's geometric mean of the No XS steps timed in it (one list of seconds per No XS
    pair, round by round), over the rounds every pair ran: the baseline an XS method's steps are
    paired with (:func:`add_ratios`)."""
    if not timings:
        return []
    return [math.exp(sum(math.log(t) for t in steps) / len(steps)) for steps in zip(*timings)]


def add_ratios(rows: list[dict]) -> list[dict]:
    """``rows`` of one model (one batch and image size) with each method's speed and memory
    ratios to No XS and their 95% intervals (:mod:`tapkit.paired`): speed over the rounds both
    ran, memory over the passes both have. No No XS row, or an out-of-memory row: NaN ratios.

    Where No XS was timed twice (Table 1's noise floor), an XS method's speed is paired with
    each round's geometric mean of the two No XS steps (:func:`no_xs_rounds`), and the second
    No XS row with the first (the noise floor itself). Why: two instances of the same No XS pair
    differ from round to round as much as TAP and No XS do (a quick build on an AVX-512 host, VGG-16:
    the second ×0.982 [0.961, 1.004] of the first, TAP ×0.976 [0.949, 1.005]); a ratio to one
    of them carries that one's luck, the mean of both halves its variance. Memory is exact and
    takes the first."""
    nones = [r for r in rows if r["method"] == no_xs() and r["status"] == "ok"]
    base = nones[0] if nones else None
    pooled = no_xs_rounds([r["step_s"] for r in nones])
    for row in rows:
        ok = base is not None and row["status"] == "ok"
        paired = base["step_s"] if row["method"] == no_xs() else pooled
        speed = speed_ratio(paired if ok else [], row.get("step_s") or [])
        mem = memory_ratio(base.get("peak_mem_mb_passes") or [] if ok else [],
                           row.get("peak_mem_mb_passes") or [])
        row.update(speed_ratio=speed.mean, speed_ratio_lo=speed.lo, speed_ratio_hi=speed.hi,
                   speed_rounds=speed.n, mem_ratio=mem.mean, mem_ratio_lo=mem.lo,
                   mem_ratio_hi=mem.hi, mem_passes=mem.n)
    return rows


def ratio_text(row: dict) -> str:
    """One row's ratios as the CLI logs them: ``speed ×0.97 [0.93, 1.01] (30 rounds), memory
    ×1.00 [1.00, 1.00] (3 passes)``."""
    parts = []
    for key, label, count, unit in (("speed", "speed", "speed_rounds", "round"),
                                    ("mem", "memory", "mem_passes", "pass")):
        mean, lo, hi = row.get(f"{key}_ratio"), row.get(f"{key}_ratio_lo"), row.get(f"{key}_ratio_hi")
        n = row.get(count) or 0
        if mean is None or math.isnan(mean):
            parts.append(f"{label} –")
            continue
        interval = "" if lo is None or math.isnan(lo) else f" [{lo:.2f}, {hi:.2f}]"
        parts.append(f"{label} ×{mean:.2f}{interval} ({n} {unit}{'' if n == 1 else 'es' if unit == 'pass' else 's'})")
    return ", ".join(parts)


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
          steps: int = 10, device: str = "auto", warmup: int = 2, paired_steps: int | None = None,
          memory_passes: int = 1, optimizer: str = "sgd",
          options: OptionsTable | None = None) -> list[dict]:
    """Every model x method pair, with progress bars: speed per model (:func:`model_speed`),
    then peak memory pair by pair (:func:`model_memory_passes`), then each method's ratios to
    No XS with their intervals (:func:`add_ratios`). A model may carry its own batch and image
    size (``name@BATCHxSIZE``, :func:`model_spec`); ``batch_size`` and ``image_size`` are the
    defaults. ``steps`` rounds for every method, ``paired_steps`` (default ``steps``) for those
    without input gradients, whose memory is measured ``memory_passes`` times. ``methods`` may
    name a method twice: the two rows then share one memory figure and differ in speed only by
    measurement noise. Steps use the paper's optimiser (SGD with momentum 0.9) unless
    ``optimizer="adam"``. ``options``: method -> its options (e.g. the released RBR the paper
    timed, :data:`tapkit.experiments.protocol_base.RELEASED`); a method not named takes its
    defaults."""
    device = resolve_device(device)
    options = dict(options or {})  # a plain dict: it travels to the fresh measuring processes
    specs = [model_spec(m, batch_size, image_size) for m in models]
    check_methods(methods)
    for name, _, side in specs:  # before any process starts: a mistake is one clear error
        check_pair(name, side)
    per_model = []
    for name, bs, side in tqdm(specs, desc="bench speed", disable=progress_disabled()):
        per_model.append(model_speed(name, methods, bs, side, steps, device, warmup, paired_steps,
                                     optimizer, options))
        gc.collect()
    bar = tqdm(specs, desc="bench memory", disable=progress_disabled())
    for (name, bs, side), own in zip(bar, per_model):
        ok = [row["method"] for row in own if row["status"] == "ok"]
        peaks = (model_memory_passes(name, ok, bs, side, device, warmup, memory_passes, optimizer,
                                     options) if ok else {})
        for row in own:
            passes = peaks.get(row["method"]) or [None]
            row["peak_mem_mb"], row["peak_mem_mb_passes"] = passes[0], passes
            if row["status"] == "ok" and row["peak_mem_mb"] is None:
                row["status"] = "oom"
        add_ratios(own)
    rows = [row for own in per_model for row in own]
    for row in rows:
        log.info("%s@%dx%d %s: %s", row["model"], row["batch_size"], row["image_size"],
                 row["method"], ratio_text(row) if row["status"] == "ok" else row["status"])
    return rows


# ----------------------------------------------------------------------------- efficiency

def _efficiencies(specs: list[tuple[str, int, int, str]], steps: int, warmup: int,
                  device: str) -> list[dict]:
    threads = torch.get_num_threads()
    reference, measured = 0.0, []
    for name, bs, side, optimizer in specs:
        # the reference between models too: on a busy machine its best catches a quiet moment
        reference = max(reference, eff.matmul_flops_per_s(device=device))
        pair = _Pair(name, no_xs(), bs, side, device, optimizer)
        for _ in range(warmup):
            pair.step()
        flops = eff.count_flops(pair.step)
        measured.append((name, bs, side, optimizer, flops, eff.fastest_seconds(pair.step, steps)))
        del pair
        gc.collect()
    reference = max(reference, eff.matmul_flops_per_s(device=device))
    return [eff.Efficiency(name, bs, side, optimizer, threads, flops, seconds,
                           reference).as_row()
            for name, bs, side, optimizer, flops, seconds in measured]


def efficiency(models: list[tuple[str, str]], batch_size: int = 16, image_size: int = 224,
               steps: int = 3, warmup: int = 1, device: str = "auto",
               threads: int | None = None) -> list[dict]:
    """:class:`tapkit.efficiency.Efficiency` rows of No XS training steps, one per
    ``(model spec, optimizer)`` (``("resnet18@16x32", "adam")``; a plain name takes
    ``batch_size`` and ``image_size``): the step's counted FLOPs over its fastest of ``steps``
    timed steps, against the fastest matrix-multiply measurement (one before each model, one
    after the last) in the same process with the same threads; on a CPU a fresh process with a reusing
    allocator, as the speed pass, and ``threads`` threads (default: this process's)."""
    device = resolve_device(device)
    specs = []
    for spec, optimizer in models:
        name, bs, side = model_spec(spec, batch_size, image_size)
        check_pair(name, side)
        if optimizer not in ("sgd", "adam"):
            raise ValueError(f"unknown optimizer {optimizer!r}; expected 'sgd' or 'adam'")
        specs.append((name, bs, side, optimizer))
    rows = _fresh_cpu_process(_efficiencies, reusing_cpu_allocator, (specs, steps, warmup, device),
                              device, threads)
    for row in rows:
        log.info("%s@%dx%d %s: %.2f GFLOP a step in %.3f s = %.1f GFLOP/s, %.2f of a %d² matrix "
                 "multiply's %.1f GFLOP/s (%d threads)", row["model"], row["batch_size"],
                 row["image_size"], row["optimizer"], row["step_flops"] / 1e9, row["step_s"],
                 row["flops_per_s"] / 1e9, row["efficiency"], eff.MATMUL_SIDE,
                 row["matmul_flops_per_s"] / 1e9, row["threads"])
    return rows
