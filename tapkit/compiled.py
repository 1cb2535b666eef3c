"""An optional compiled training step (``torch.compile``) for GPU runs: an execution option.

Compiling fuses the many small kernels of a small model's step (TAP's pooling, masking and
reductions per layer among them), which on a GPU otherwise cost more in launches than in compute.
It changes how a step runs, not what it computes, so it is no part of a run's config or hash.
Only methods without a double backward are compiled (``none``, ``tap``, ``kd``, ``at``): RRR, RBR
and JT take input gradients with ``create_graph=True``, which compiled graphs do not support.
On a CPU the option is ignored (runs there must repeat bit for bit), and where compilation is
unavailable or fails the step runs eagerly, with a warning.
"""

from __future__ import annotations

import logging

import torch
from torch import nn

log = logging.getLogger(__name__)

COMPILABLE = ("none", "tap", "kd", "at")


def check_compilable(method: str) -> None:
    """Raise ``ValueError`` for a method whose step cannot be compiled."""
    if method not in COMPILABLE:
        raise ValueError(f"compile_step is for methods without a double backward {COMPILABLE}; "
                         f"{method!r} takes input gradients with create_graph=True")


def maybe_compile(model: nn.Module, method: str, device: str) -> bool:
    """Compile ``model`` in place (``nn.Module.compile``: module names, hooks and ``state_dict``
    keys unchanged) when on a GPU; return whether it was compiled. A method with a double
    backward raises ``ValueError``."""
    check_compilable(method)
    if torch.device(device).type != "cuda":
        log.info("compile_step ignored on %s: compiled steps are for GPU runs", device)
        return False
    try:
        torch._dynamo.config.suppress_errors = True  # a graph that fails to compile runs eagerly
        model.compile(dynamic=False)
    except Exception as exc:  # no compiler backend, an unsupported platform
        log.warning("torch.compile unavailable (%s); training eagerly", exc)
        return False
    return True
