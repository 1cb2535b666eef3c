"""An optional compiled training step (``torch.compile``) for GPU runs: an execution option.

Compiling fuses the many small kernels of a small model's step (TAP's pooling, masking and
reductions per layer among them), which on a GPU otherwise cost more in launches than in compute.
It changes how a step runs, not what it computes, so it is no part of a run's config or hash.
Only methods without a double backward are compiled (``none``, ``tap``, ``kd``, ``at``): RRR, RBR
and JT take input gradients with ``create_graph=True``, which compiled graphs do not support.
On a CPU the option is ignored (runs there must repeat bit for bit), and where compilation is
unavailable the step runs eagerly, with a warning.

The eager step captures activations with hooks installed per step (``models.capture``); a
compiled graph would keep the first step's hooks (Dynamo does not guard on module hooks), so the
compiled step installs its hooks once, on a wrapper that returns the logits and activations. For
``none`` and ``tap`` the whole loss computation is compiled; for ``kd`` and ``at``, whose teacher
runs with hooks of its own, the student's forward only. Compilation errors, which surface at
the first call, fall back to eager execution (``torch._dynamo.config.suppress_errors``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
from typing import Callable, Iterator, Mapping

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .methods import XSBatch, get_method, methods_where
from .models import install_hooks, target_sigma_of

log = logging.getLogger(__name__)

Step = Callable[[Tensor, Tensor, Tensor], "tuple[Tensor, Tensor]"]


def check_compilable(method: str) -> None:
    """Raise ``ValueError`` for a method whose step cannot be compiled (its registry entry)."""
    if not get_method(method).compilable:
        raise ValueError(f"compile_step is for methods without a double backward "
                         f"{methods_where(compilable=True)}; {method!r} takes input gradients "
                         "with create_graph=True")


class Capturing(nn.Module):
    """``model`` returning ``(logits, {layer: activation})``, its hooks installed once, through
    the eager step's own primitive (:func:`tapkit.models.install_hooks`), σ included (Eq. 6)."""

    def __init__(self, model: nn.Module, layers: tuple[str, ...], sigma: Mapping[str, str]):
        super().__init__()
        self.model, self.layers, self.acts = model, tuple(layers), {}
        self.handles = install_hooks(model, self.layers, sigma, self.acts)

    def forward(self, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        logits = self.model(x)
        return logits, {name: self.acts[name] for name in self.layers}

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.acts.clear()


@contextlib.contextmanager
def compiled_step(model: nn.Module, cfg, targets: tuple[str, ...], teacher=None,
                  device: str = "cpu", backend: str | None = None,
                  class_weight: Tensor | None = None) -> Iterator[Step | None]:
    """A compiled ``(x, y, mask) -> (task loss, XS loss)`` for the block, computing what
    :func:`tapkit.fit.step_losses` computes (the same σ-applied activations and class-weighted
    task loss); ``None`` (train eagerly) on a CPU unless a
    ``backend`` is named (tests use ``"eager"``), or where ``torch.compile`` is unavailable. A
    method with a double backward raises ``ValueError``. The hooks are removed on exit."""
    check_compilable(cfg.method)
    if backend is None and torch.device(device).type != "cuda":
        log.info("compile_step ignored on %s: compiled steps are for GPU runs", device)
        yield None
        return
    method = get_method(cfg.method)
    layers = tuple(targets) if method.activations else ()
    wrapper = Capturing(model, layers, target_sigma_of(cfg.model, layers))

    def losses_of(forward: Callable, x: Tensor, y: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        logits, acts = forward(x)
        task = F.cross_entropy(logits, y, weight=class_weight)  # as fit's task loss
        if method.term is None:
            return task, task.new_zeros(())
        return task, method.term(XSBatch(model, x, y, mask, logits, acts, cfg.options, teacher,
                                                 task))

    compile_ = functools.partial(torch.compile, backend=backend or "inductor", dynamic=False)
    try:
        if not method.teacher:  # the whole step: TAP's extra kernels fuse with it
            step = compile_(functools.partial(losses_of, wrapper))
        else:  # KD/AT run the teacher with per-step hooks: compile the student's forward only
            step = functools.partial(losses_of, compile_(wrapper))
    except Exception as exc:  # no compiler backend on this platform
        log.warning("torch.compile unavailable (%s); training eagerly", exc)
        wrapper.remove()
        yield None
        return
    try:
        with torch._dynamo.config.patch(suppress_errors=True):  # a failing graph runs eagerly
            yield step
    finally:
        wrapper.remove()
