"""Shuffled mini-batches of a split held in memory (on the training device), without a DataLoader.

A DataLoader collates every batch sample by sample; for tensors already in memory a seeded
permutation and one indexing per batch do the same work in one call, and on a GPU the split is
moved to the device once instead of batch by batch. The order is the DataLoader's: the same
generator gives the same batches, so CPU runs repeat today's results bit for bit.
"""

from __future__ import annotations

import math
from typing import Iterator

import torch
from torch import Tensor


# Images per forward pass when a model is evaluated (tapkit.metrics.predict, the validation loss):
# on one CPU thread DenseNet-121 scores 300 64-px images in 1.56 s in batches of 128 and 2.16 s in
# batches of 512 (ResNet-18 and VGG-16: the same or faster); the predictions are the same.
EVAL_BATCH = 128


def dataloader_order(n: int, gen: torch.Generator) -> Tensor:
    """The order in which ``DataLoader(dataset_of_n, shuffle=True, generator=gen)`` visits the
    samples in one epoch, drawn from ``gen`` as the DataLoader draws it, so that ``gen`` is left in
    the same state: the iterator's base seed (``_share_dist_seed``), ``RandomSampler``'s
    ``randperm(n)``, and its trailing ``randperm(n)[:0]`` for ``num_samples % n``."""
    torch.empty((), dtype=torch.int64).random_(generator=gen)
    order = torch.randperm(n, generator=gen)
    torch.randperm(n, generator=gen)
    return order


def num_batches(n: int, batch_size: int) -> int:
    return math.ceil(n / batch_size)


def on_device(tensors: tuple[Tensor, ...], device: str | torch.device,
              share: float = 0.25) -> tuple[Tensor, ...]:
    """``tensors`` moved to ``device`` once, when they take at most ``share`` of the GPU's free
    memory (several workers may share it); otherwise left where they are, and
    :func:`epoch_batches` moves each batch instead."""
    device = torch.device(device)
    if device.type != "cuda":
        return tuple(t.to(device) for t in tensors)
    need = sum(t.numel() * t.element_size() for t in tensors)
    free, _ = torch.cuda.mem_get_info(device)
    return tuple(t.to(device) for t in tensors) if need <= share * free else tensors


def epoch_batches(tensors: tuple[Tensor, ...], batch_size: int, gen: torch.Generator,
                  device: str | torch.device | None = None) -> Iterator[tuple[Tensor, ...]]:
    """One epoch of shuffled batches (the last one smaller, as with ``drop_last=False``) of
    ``tensors``, which share their first dimension and device, each batch moved to ``device``
    (default: where the tensors are). ``gen`` is a CPU generator; the permutation is drawn on
    the CPU and moved to the tensors' device once."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    n = len(tensors[0])
    if any(len(t) != n for t in tensors):
        raise ValueError(f"tensors differ in length: {[len(t) for t in tensors]}")
    order = dataloader_order(n, gen).to(tensors[0].device)
    for start in range(0, n, batch_size):
        idx = order[start: start + batch_size]
        yield tuple(t.index_select(0, idx).to(device or t.device) for t in tensors)
