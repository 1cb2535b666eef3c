"""The XS methods as a registry (torchvision's model registry, for losses): one entry per method,
one call signature (:class:`XSBatch` -> scalar Tensor), and what the fit loop needs to know about
each as data, its options as a frozen dataclass (:mod:`tapkit.method_options`). Adding a method
is adding one :func:`register_method` call (and its options class, if it has options).

``none`` (no XS term), ``tap`` (Definition 2, Eq. 8), ``rrr`` (Eq. 4), ``rbr`` (Shao et al.), and
the knowledge-distillation baselines ``kd``, ``at``, ``jt`` (appendix), which learn from a teacher.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Mapping

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from . import baselines, losses
from .method_options import (AtOptions, JtOptions, KdOptions, MethodOptions, NoOptions,
                             RbrOptions, RrrOptions, TapOptions, has_batchnorm_mode)
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
    those of the XS forward pass (BatchNorm on running statistics when the options' ``batchnorm``
    is ``"running"``), ``task`` the task loss of the training forward pass, ``options`` the run's
    options of its method (the registry entry's class, e.g. :class:`TapOptions` for TAP)."""

    model: nn.Module
    x: Tensor
    y: Tensor
    mask: Tensor
    logits: Tensor
    acts: dict[str, Tensor]
    options: MethodOptions
    teacher: Teacher | None = None
    task: Tensor | None = None


class Kind(Enum):
    """What a method is in the paper: the baseline without an XS term (No XS), an XS loss that
    learns from annotations (Setting 1 and 2: TAP, RRR, RBR), or a distillation baseline that
    learns from a teacher model instead (the appendix: KD, AT, JT)."""

    NO_XS = "no XS term"
    XS = "XS loss"
    DISTILLATION = "distillation baseline"


def _never(_options: MethodOptions) -> bool:
    return False


@dataclass(frozen=True)
class XSMethod:
    """One XS method: its term, its options class and the facts the training loop reads.

    ``options``: the frozen dataclass of the method's options (:mod:`tapkit.method_options`); a
    run carries one instance, and only it enters the run's key.
    ``input_grad``: the term takes per-image input gradients (a double backward); on BatchNorm
    networks these come from an extra forward pass with BatchNorm on running statistics when the
    options' ``batchnorm`` is ``"running"`` (the default), so its options class has that field.
    ``activations``: the term reads the model's target activations (after σ, Eq. 6).
    ``teacher``: the term needs a trained teacher (the config's ``teacher``).
    ``compilable``: the step may be compiled (:mod:`tapkit.compiled`; no double backward).
    ``label``: the name pages print ("No XS", "TAP"); ``kind``: ``Kind``, which lists a
    method belongs to (the XS losses of a table, the distillation baselines).
    ``keeps_input(options)``: the term's input gradients are taken in an extra forward pass on
    the training pass's own input ``x`` (not a detached copy), because the term also runs
    through the training pass's task loss (the released RBR's influence term); the training
    step asks this instead of testing the options' type.
    ``released``: the options of the authors' released code, on which the paper's λ were tuned
    (None: the released code's form is the options' defaults); the ``paper`` profile trains
    these (``tapkit.experiments.protocol_base.RELEASED``).
    ``proposed``: the paper's own method (TAP), which its tables set beside every other XS
    loss (the comparators, ``comparators()``) and every distillation baseline; one entry
    at most says so (``proposed_method()``).
    ``paper_grid``: the λ the paper's searches tried (tex l.348: log steps from 1e-9 to 1 for
    TAP and RRR, from 1 to 1e9 for RBR, "given much smaller losses"); the paper profile
    searches them (``paper_grids()``).
    """

    name: str
    term: Callable[[XSBatch], Tensor] | None
    options: type[MethodOptions] = NoOptions
    input_grad: bool = False
    activations: bool = False
    teacher: bool = False
    compilable: bool = True
    label: str = ""
    kind: Kind = Kind.XS
    keeps_input: Callable[[MethodOptions], bool] = _never
    released: MethodOptions | None = None
    proposed: bool = False
    paper_grid: tuple[float, ...] = ()

    @property
    def needs_teacher(self) -> bool:
        return self.teacher

    def make_options(self, value: MethodOptions | Mapping[str, Any] | None = None) -> MethodOptions:
        """The method's options from ``value``: ``None`` gives the defaults, a mapping its fields
        (a stored config's JSON form), an instance of the method's class itself. Another class
        raises ``ValueError`` naming the expected one (TAP's options on an RRR run are a mistake,
        not something to ignore)."""
        if value is None:
            return self.options()
        if isinstance(value, Mapping):
            return self.options.from_dict(value)
        if type(value) is not self.options:
            raise ValueError(f"method {self.name!r} takes {self.options.__name__}, got "
                             f"{type(value).__name__}")
        return value


_METHODS: dict[str, XSMethod] = {}


def register_method(method: XSMethod) -> XSMethod:
    if method.name in _METHODS:
        raise ValueError(f"XS method {method.name!r} is already registered")
    if not method.label:
        object.__setattr__(method, "label", method.name.upper())
    if method.input_grad and (method.compilable or not has_batchnorm_mode(method.options)):
        raise ValueError(f"{method.name!r}: input-gradient methods have a BatchNorm mode in their "
                         "options (a batchnorm field) and cannot be compiled (double backward)")
    if method.released is not None:
        method.make_options(method.released)  # its own options class, or ValueError
    if method.proposed and any(m.proposed for m in _METHODS.values()):
        raise ValueError(f"{method.name!r}: the paper proposes one method, and "
                         f"{proposed_method()!r} is registered as it")
    _METHODS[method.name] = method
    return method


def method_label(name: str) -> str:
    """The name pages print for a registered method (its entry's ``label``)."""
    return get_method(name).label


def list_methods() -> list[str]:
    """Registered method names, in registration order (the paper's)."""
    return list(_METHODS)


def get_method(name: str) -> XSMethod:
    """The registry entry of ``name``; ``ValueError`` listing the valid names otherwise."""
    if name not in _METHODS:
        raise ValueError(f"unknown XS method {name!r}; expected one of {list_methods()}")
    return _METHODS[name]


def default_options(name: str) -> MethodOptions:
    """The options ``name`` trains with unless told otherwise (the equations as written)."""
    return get_method(name).options()


def methods_where(**facts: Any) -> list[str]:
    """Names of the methods whose facts match, in registration order, e.g.
    ``methods_where(kind=Kind.XS)`` -> ``["tap", "rrr", "rbr"]``."""
    return [m.name for m in _METHODS.values()
            if all(getattr(m, k) == v for k, v in facts.items())]


def method_of(options: type[MethodOptions]) -> str:
    """The registered method whose options class is ``options`` (``RbrOptions`` -> ``"rbr"``):
    a page that speaks of one options class's fields finds its method here."""
    found = [m.name for m in _METHODS.values() if m.options is options]
    if len(found) != 1:
        raise ValueError(f"{options.__name__} is the options class of {len(found)} registered "
                         f"methods ({found}), not one")
    return found[0]


def xs_methods() -> list[str]:
    """The XS losses that learn from annotations (:attr:`Kind.XS`), in registration order:
    ``["tap", "rrr", "rbr"]`` and any registered after them."""
    return methods_where(kind=Kind.XS)


def is_xs(name: str) -> bool:
    """Whether ``name`` (a method, or a table's case such as ``"base"``) is an XS loss that
    learns from annotations."""
    return name in _METHODS and _METHODS[name].kind is Kind.XS


def proposed_method() -> str:
    """The paper's own method (the entry registered with ``proposed=True``: TAP)."""
    found = methods_where(proposed=True)
    if not found:
        raise ValueError("no registered method is the paper's own (proposed=True)")
    return found[0]


def no_xs() -> str:
    """The method without an XS term (the entry of :attr:`Kind.NO_XS`: ``"none"``), every
    comparison's reference: the tables' No XS rows carry its name."""
    found = methods_where(kind=Kind.NO_XS)
    if len(found) != 1:
        raise ValueError(f"expected one registered method of kind NO_XS, found {found}")
    return found[0]


def table1_methods() -> list[str]:
    """Table 1's columns, in its order: No XS, the comparators, then the paper's own method
    (``["none", "rrr", "rbr", "tap"]``)."""
    return [no_xs(), *comparators(), proposed_method()]


def paper_grids() -> dict[str, tuple[float, ...]]:
    """The paper's λ search grid of every method that has one (its ``paper_grid``, l.348)."""
    return {m.name: m.paper_grid for m in _METHODS.values() if m.paper_grid}


def comparators() -> list[str]:
    """The XS losses the paper compares its own method with (every :func:`xs_methods` entry but
    :func:`proposed_method`), in registration order: ``["rrr", "rbr"]``."""
    return [m for m in xs_methods() if m != proposed_method()]


# --------------------------------------------------------------------------- the terms

def _input_grads(b: XSBatch) -> Tensor:
    return losses.input_gradients(b.logits, b.x)


def _teacher_forward(b: XSBatch, with_grad: bool = False):
    """The frozen teacher's logits, σ-activations of its targets and (``with_grad``) its input
    gradients, with BatchNorm as the options' ``batchnorm`` says for the gradient (JT compares
    per-image gradients)."""
    if b.teacher is None:
        raise ValueError("KD, AT and JT need a teacher model (the config's teacher)")
    t = b.teacher
    tx = b.x.detach().requires_grad_(with_grad)
    running = with_grad and getattr(b.options, "batchnorm", "running") == "running"
    bn = losses.batchnorm_running(t.model, running)
    with torch.set_grad_enabled(with_grad), bn, capture(t.model, t.targets, t.sigma) as t_acts:
        t_logits = t.model(tx)
    check_ran(t_acts)
    grad = losses.input_gradients(t_logits, tx, create_graph=False) if with_grad else None
    return t_logits.detach(), [a.detach() for a in t_acts.values()], grad


def _tap(b: XSBatch) -> Tensor:
    """Definition 2 (Eq. 8) on the σ-activations of the targets (Eq. 6), masks by Eq. 7."""
    o: TapOptions = b.options
    return losses.tap(b.acts, b.mask, o.kernel_size, o.norm, o.pooling)


def _rrr(b: XSBatch) -> Tensor:
    """Eq. 4 on the XS forward's per-image input gradients."""
    return losses.rrr_penalty(_input_grads(b), b.mask, b.options.scale)


def _rbr(b: XSBatch) -> Tensor:
    """RBR in the training loop: the released variant's influence term comes from the training
    forward's task loss (made before x required grad), the full one from the XS forward's."""
    released = b.options.variant == "released"
    task = b.task if released else F.cross_entropy(b.logits, b.y)
    term = losses.influence(task, b.x, list(b.model.parameters()))
    return losses.rbr_penalty(_input_grads(b), term, b.mask, "sum" if released else "mean",
                              sum_channels=released)


def _kd(b: XSBatch) -> Tensor:
    return baselines.kd(b.logits, _teacher_forward(b)[0], b.options.temperature)


def _at(b: XSBatch) -> Tensor:
    """AT in its options' ``variant``: the cited method or the released code's."""
    form = baselines.at_released if b.options.variant == "released" else baselines.at
    return form(list(b.acts.values()), _teacher_forward(b)[1])


def _jt(b: XSBatch) -> Tensor:
    """JT in its options' ``variant``: the cited method on the summed log-probabilities'
    gradients, or the released code's on the student's true-class gradient."""
    teacher_grad = _teacher_forward(b, with_grad=True)[2]
    if b.options.variant == "released":
        return baselines.jt_released(baselines.class_input_gradients(b.logits, b.x, b.y),
                                     teacher_grad)
    return baselines.jt(_input_grads(b), teacher_grad)


def _released_rbr(options: MethodOptions) -> bool:
    return options.variant == "released"


GRAD = dict(input_grad=True, compilable=False)
_LOG_STEPS = tuple(10.0 ** k for k in range(-9, 1))  # 1e-9 ... 1 (l.348)
TEACHER = dict(teacher=True, kind=Kind.DISTILLATION)
for _entry in (XSMethod("none", None, label="No XS", kind=Kind.NO_XS),
               XSMethod("tap", _tap, TapOptions, activations=True, proposed=True,
                        released=TapOptions(norm="l2sq", pooling="cumulative"),
                        paper_grid=_LOG_STEPS),
               XSMethod("rrr", _rrr, RrrOptions, released=RrrOptions(scale="released"),
                        paper_grid=_LOG_STEPS, **GRAD),
               XSMethod("rbr", _rbr, RbrOptions, keeps_input=_released_rbr,
                        released=RbrOptions(variant="released"),
                        paper_grid=tuple(10.0 ** k for k in range(0, 10)), **GRAD),
               XSMethod("kd", _kd, KdOptions, released=KdOptions(temperature=1.0), **TEACHER),
               XSMethod("at", _at, AtOptions, activations=True,
                        released=AtOptions(variant="released"), **TEACHER),
               XSMethod("jt", _jt, JtOptions, released=JtOptions(variant="released"),
                        **TEACHER, **GRAD)):
    register_method(_entry)
