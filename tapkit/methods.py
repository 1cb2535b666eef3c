"""The XS methods as a registry (torchvision's model registry, for losses): one entry per method,
one call signature (:class:`XSBatch` -> scalar Tensor), and what the fit loop needs to know about
each as data. Adding a method is adding one :func:`register_method` call.

``none`` (no XS term), ``tap`` (Definition 2), ``rrr`` (Eq. 4), ``rbr`` (Shao et al.), and the
knowledge-distillation baselines ``kd``, ``at``, ``jt`` (appendix), which learn from a teacher.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import baselines, losses
from .models import capture, check_ran


@dataclass
class Teacher:
    """A frozen teacher model, its target layers and their σ (Eq. 6), for KD/AT/JT."""

    model: nn.Module
    targets: tuple[str, ...]
    sigma: dict[str, str] = field(default_factory=dict)


@dataclass
class XSBatch:
    """What every XS term receives: one call signature for all methods. ``x`` and ``logits`` are
    those of the XS forward pass (BatchNorm on running statistics when ``xs_batchnorm="eval"``),
    ``task`` the task loss of the training forward pass."""

    model: nn.Module
    x: Tensor
    y: Tensor
    mask: Tensor
    logits: Tensor
    acts: dict[str, Tensor]
    cfg: Any                  # the run's tapkit.config.TrainConfig (config imports this module)
    teacher: Teacher | None = None
    task: Tensor | None = None


@dataclass(frozen=True)
class XSMethod:
    """One XS method: its term and the facts the training loop reads.

    ``input_grad``: the term takes per-image input gradients (a double backward); on BatchNorm
    networks these come from an extra forward pass whose BatchNorm mode is ``batchnorm``
    (``"xs_batchnorm"``: the config's ``xs_batchnorm``, running statistics by default).
    ``activations``: the term reads the model's target activations (after σ, Eq. 6).
    ``teacher``: the term needs a trained teacher (the config's ``teacher``).
    ``compilable``: the step may be compiled (:mod:`tapkit.compiled`; no double backward).
    """

    name: str
    term: Callable[[XSBatch], Tensor] | None
    input_grad: bool = False
    activations: bool = False
    teacher: bool = False
    batchnorm: str | None = None
    compilable: bool = True

    @property
    def needs_teacher(self) -> bool:
        return self.teacher


_METHODS: dict[str, XSMethod] = {}


def register_method(method: XSMethod) -> XSMethod:
    if method.name in _METHODS:
        raise ValueError(f"XS method {method.name!r} is already registered")
    if method.input_grad and (method.compilable or method.batchnorm is None):
        raise ValueError(f"{method.name!r}: input-gradient methods name a BatchNorm mode and "
                         "cannot be compiled (double backward)")
    _METHODS[method.name] = method
    return method


def list_methods() -> list[str]:
    """Registered method names, in registration order (the paper's)."""
    return list(_METHODS)


def get_method(name: str) -> XSMethod:
    """The registry entry of ``name``; ``ValueError`` listing the valid names otherwise."""
    if name not in _METHODS:
        raise ValueError(f"unknown XS method {name!r}; expected one of {list_methods()}")
    return _METHODS[name]


def methods_where(**facts: bool) -> list[str]:
    """Names of the methods whose facts match, e.g. ``methods_where(teacher=False)``."""
    return [m.name for m in _METHODS.values()
            if all(getattr(m, k) == v for k, v in facts.items())]


# --------------------------------------------------------------------------- the terms

def _input_grads(b: XSBatch) -> Tensor:
    return losses.input_gradients(b.logits, b.x)


def _teacher_forward(b: XSBatch, with_grad: bool = False):
    """The frozen teacher's logits, σ-activations of its targets and (``with_grad``) its input
    gradients, with BatchNorm as ``xs_batchnorm`` says for the gradient (JT compares per-image
    gradients)."""
    if b.teacher is None:
        raise ValueError(f"method {b.cfg.method!r} needs a teacher model")
    t = b.teacher
    tx = b.x.detach().requires_grad_(with_grad)
    bn = losses.batchnorm_running(t.model, with_grad and b.cfg.xs_batchnorm == "eval")
    with torch.set_grad_enabled(with_grad), bn, capture(t.model, t.targets, t.sigma) as t_acts:
        t_logits = t.model(tx)
    check_ran(t_acts)
    grad = losses.input_gradients(t_logits, tx, create_graph=False) if with_grad else None
    return t_logits.detach(), [a.detach() for a in t_acts.values()], grad


def _tap(b: XSBatch) -> Tensor:
    return losses.tap(b.acts, b.mask, b.cfg.kernel_size, b.cfg.tap_norm, b.cfg.tap_pooling)


def _rrr(b: XSBatch) -> Tensor:
    return losses.rrr_penalty(_input_grads(b), b.mask, b.cfg.rrr_scale)


def _rbr(b: XSBatch) -> Tensor:
    """RBR in the training loop: the released variant's influence term comes from the training
    forward's task loss (made before x required grad), the full one from the XS forward's."""
    released = b.cfg.rbr_variant == "released"
    task = b.task if released else F.cross_entropy(b.logits, b.y)
    term = losses.influence(task, b.x, list(b.model.parameters()))
    return losses.rbr_penalty(_input_grads(b), term, b.mask, "sum" if released else "mean",
                              sum_channels=released)


def _kd(b: XSBatch) -> Tensor:
    return baselines.kd(b.logits, _teacher_forward(b)[0], b.cfg.kd_temperature)


def _at(b: XSBatch) -> Tensor:
    return baselines.at(list(b.acts.values()), _teacher_forward(b)[1])


def _jt(b: XSBatch) -> Tensor:
    return baselines.jt(_input_grads(b), _teacher_forward(b, with_grad=True)[2])


GRAD = dict(input_grad=True, batchnorm="xs_batchnorm", compilable=False)
for _entry in (XSMethod("none", None),
               XSMethod("tap", _tap, activations=True),
               XSMethod("rrr", _rrr, **GRAD),
               XSMethod("rbr", _rbr, **GRAD),
               XSMethod("kd", _kd, teacher=True),
               XSMethod("at", _at, activations=True, teacher=True),
               XSMethod("jt", _jt, teacher=True, **GRAD)):
    register_method(_entry)
