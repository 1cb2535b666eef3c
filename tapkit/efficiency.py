"""How close a training step runs to what the machine can do: the model FLOPs per second of a
real step (forward, XS term, backward, optimiser step) as a share of the FLOPs per second of a
large matrix multiply measured in the same process with the same threads.

A step's FLOPs are counted, not estimated: :class:`torch.utils.flop_counter.FlopCounterMode`
records every matrix multiply and convolution of the step, its backward included (elementwise
work, the optimiser's update among it, counts zero, so the ratio charges that work to the step's
time, where it belongs). The reference is the best of a few ``n x n`` float32 matrix multiplies
(``2 n^3`` FLOPs each): the throughput the same BLAS reaches on the same cores. The ratio is what
two machines can be compared on; absolute seconds are not.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Callable

import torch
from torch.utils.flop_counter import FlopCounterMode

MATMUL_SIDE = 2048  # large enough for BLAS to reach its peak, small enough to take ~0.1 s


@dataclass(frozen=True)
class Efficiency:
    """One model's training step against the machine's matrix-multiply throughput."""

    model: str
    batch_size: int
    image_size: int
    optimizer: str
    threads: int
    step_flops: float        # counted FLOPs of one step (forward + backward)
    step_s: float            # the fastest timed step, in seconds
    matmul_flops_per_s: float

    @property
    def flops_per_s(self) -> float:
        return self.step_flops / self.step_s

    @property
    def ratio(self) -> float:
        """The step's FLOPs per second over the matrix multiply's (1.0: as fast as BLAS)."""
        return self.flops_per_s / self.matmul_flops_per_s

    def as_row(self) -> dict:
        return {**asdict(self), "flops_per_s": self.flops_per_s, "efficiency": self.ratio}


def count_flops(step: Callable[[], None]) -> int:
    """FLOPs of one call of ``step`` (matrix multiplies and convolutions, forward and backward)."""
    with FlopCounterMode(display=False) as counter:
        step()
    return int(counter.get_total_flops())


def fastest_seconds(step: Callable[[], None], repeats: int) -> float:
    """The fastest of ``repeats`` calls: interference only slows a call down (:mod:`timeit`)."""
    best = float("inf")
    for _ in range(max(repeats, 1)):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return best


def matmul_flops_per_s(side: int = MATMUL_SIDE, repeats: int = 5, device: str = "cpu") -> float:
    """FLOPs per second of the fastest of ``repeats`` ``side x side`` float32 matrix multiplies
    (``2 side^3`` FLOPs each) with this process's threads, after one untimed multiply."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(side, side, generator=gen).to(device)
    b = torch.randn(side, side, generator=gen).to(device)
    out = torch.empty(side, side, device=device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)

    def multiply() -> None:
        torch.mm(a, b, out=out)
        sync()

    multiply()
    return 2 * side**3 / fastest_seconds(multiply, repeats)
