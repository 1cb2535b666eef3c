"""Peak bytes of live tensors while a function runs, counted exactly at PyTorch's dispatcher: the
CPU's counterpart of CUDA's ``max_memory_allocated`` (Table 1's memory column on a CPU).

Every tensor an operation returns (forward, hooks, first and second backward, optimiser) is
counted once per storage when it appears and uncounted when its storage is freed (a weak
reference's callback), on top of the tensors alive at the start (``keep``: parameters,
gradients, optimiser state). Unlike the process's resident set it does not see the allocator's
history, so the same step measured twice gives the same number. It follows torch's own
``MemTracker`` (``torch.distributed._tools``), without its module hooks, which break
``torch.autograd.grad`` (RRR's and RBR's input gradients)."""

from __future__ import annotations

import weakref
from typing import Callable, Iterable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class LiveBytes(TorchDispatchMode):
    """A dispatch mode that keeps ``live`` (bytes of the storages it knows that are still alive)
    and ``peak`` (the most ``live`` has been)."""

    def __init__(self, keep: Iterable[torch.Tensor] = ()):
        super().__init__()
        self.live = self.peak = 0
        self._refs: dict[int, weakref.ref] = {}
        for t in keep:
            self._add(t)

    def _add(self, t: torch.Tensor) -> None:
        if not isinstance(t, torch.Tensor) or t.device.type == "meta":
            return
        storage = t.untyped_storage()
        key = id(storage)
        if key in self._refs and self._refs[key]() is storage:
            return
        size = storage.nbytes()
        self._refs[key] = weakref.ref(storage, lambda _, k=key, n=size: self._free(k, n))
        self.live += size
        self.peak = max(self.peak, self.live)

    def _free(self, key: int, size: int) -> None:
        self._refs.pop(key, None)
        self.live -= size

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            self._add(t)
        return out


def peak_bytes(fn: Callable[[], object], keep: Iterable[torch.Tensor] = ()) -> int:
    """The peak bytes of live tensors while ``fn()`` runs, counting ``keep`` (the tensors alive
    before it that it uses: a model's parameters and gradients, an optimiser's state) from the
    start."""
    with LiveBytes(keep) as mode:
        fn()
    return mode.peak


def training_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    """The tensors a training step keeps alive throughout: parameters, their gradients,
    buffers and the optimiser's state."""
    out = [*model.parameters(), *model.buffers()]
    out += [p.grad for p in model.parameters() if p.grad is not None]
    out += [v for state in optimizer.state.values() for v in state.values()
            if isinstance(v, torch.Tensor)]
    return out
