"""Setting 2's protocol (teacher annotations and the distillation comparison), one type for every
dataset: :class:`TeachersProtocol`, beside the Setting-1 :class:`~.protocols.Protocol` that trains
its runs. Decoy-MNIST and PNEU/KNEE differ only in the typed fields below; the profiles are in
:mod:`.protocols`, the plans in :mod:`.setting2_plans`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from .protocol_base import _Protocol

P = TypeVar("P", bound=_Protocol)


class RandomMasks(str, Enum):
    """What the random baseline's masks cover (``annotation="random"`` students)."""

    TEACHERS = "teachers"          # what the teachers' masks cover at each τ: a run per τ (the
    #                                paper's PNEU/KNEE tables, whose random column moves with τ)
    GROUND_TRUTH = "ground_truth"  # the ground truth's coverage whatever τ: a run per seed, which
    #                                stands under every τ (Decoy-MNIST, whose patch size is known)


class Threshold(str, Enum):
    """How the students' teacher masks threshold the teachers' saliency
    (:func:`tapkit.teachers.threshold`; a config's ``threshold``)."""

    ABSOLUTE = "absolute"  # the paper's Eq. 14: E < τ on the min-max normalised saliency
    QUANTILE = "quantile"  # the released code (src/loss.py get_mask): each image's lowest τ
    #                        quantile of its saliency, on which the paper's λ were tuned


class LambdaSource(str, Enum):
    """Where the students' λ come from (:func:`.setting2_plans.student_lambdas`)."""

    PAPER = "paper"        # the paper's teacher-annotation and distillation tables
    SETTING1 = "setting1"  # Setting 1's λ of this profile and ``kd_lambda`` (a stand-in, on
    #                        which the paper's tables, tuned at 224 px from ImageNet weights, say
    #                        nothing)
    SEARCHED = "searched"  # the methods this profile's Setting 1 searched at the λ it chose (the
    #                        form it searched them in: the paper's λ were tuned on another), every
    #                        other method at the paper's (the quick Decoy-MNIST: TAP)


@dataclass(frozen=True)
class TeachersProtocol(_Protocol):
    """Setting 2 and the distillation comparison on one dataset or several. Teachers
    (``teacher_model``; None: the Setting-1 protocol's only model) learn from the clean
    ``fractions`` of the training split for ``teacher_epochs`` (None: the students'). Students of
    ``models`` (None: the only model) train with the ``xs_methods`` on teacher masks at every
    ``train_taus``, RRR/RBR with the ``xs_fractions`` teachers only (None: every teacher), and on
    random masks (``random_masks``); ``quality_taus`` are the annotation-quality figure's
    thresholds. The distillation table sets TAP with the ``kd_tap_fractions`` teachers' masks at
    τ = 0.01 (None: ``kd_fractions``) beside KD/AT/JT (``kd_methods``) students of ``kd_models``
    (None: the only model) taught by the ``kd_fractions`` teachers. λ: ``lambda_source``, with
    ``kd_lambda`` for KD/AT/JT from Setting 1. ``threshold``: the students' mask rule
    (:class:`Threshold`; a plan given its own rule uses that). ``experiments``: the data sets
    (None: the Setting-1 protocol's, :meth:`datasets`). The quick profiles keep one seed,
    one τ, TAP only and the 10% teacher for KD/AT/JT: the rest costs the most."""

    seeds: tuple[int, ...]
    fractions: tuple[float, ...]
    train_taus: tuple[float, ...]
    xs_methods: tuple[str, ...]
    kd_fractions: tuple[float, ...]
    quality_taus: tuple[float, ...] = ()
    models: tuple[str, ...] | None = None
    teacher_model: str | None = None
    teacher_epochs: int | None = None
    kd_methods: tuple[str, ...] = ("kd", "at", "jt")
    kd_models: tuple[str, ...] | None = None
    random_masks: RandomMasks = RandomMasks.TEACHERS
    xs_fractions: tuple[float, ...] | None = None
    kd_tap_fractions: tuple[float, ...] | None = None
    lambda_source: LambdaSource = LambdaSource.PAPER
    kd_lambda: float = 1.0
    threshold: Threshold = Threshold.ABSOLUTE
    experiments: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name, kind in (("random_masks", RandomMasks), ("lambda_source", LambdaSource),
                           ("threshold", Threshold)):
            value = getattr(self, name)
            try:
                object.__setattr__(self, name, kind(value))
            except ValueError:
                raise ValueError(f"unknown {name} {value!r}; expected one of "
                                 f"{[k.value for k in kind]}") from None

    def on_seeds(self, s: P, seeds: Any = None) -> P:
        """``s`` (the Setting-1 protocol) on these ``seeds``, unless a notebook gives its own."""
        return s if seeds is not None else s.with_overrides(seeds=self.seeds)

    def datasets(self, s: Any, given: Any = None) -> tuple[str, ...]:
        """The data sets Setting 2 runs on: a notebook's ``given`` list, else ``experiments``
        (quick: PNEU only, the data set its claims are judged on), else every experiment of
        the Setting-1 protocol ``s``."""
        return tuple(given or self.experiments or s.experiments)

    def students(self, s: Any) -> tuple[str, ...]:
        """The student architectures: ``models``, or the Setting-1 protocol ``s``'s only one."""
        return self.models or (s.settings().model,)

    def kd_students(self, s: Any) -> tuple[str, ...]:
        """The KD/AT/JT student architectures: ``kd_models``, or ``s``'s only one."""
        return self.kd_models or (s.settings().model,)

    def teacher(self, s: Any) -> str:
        """The teachers' architecture: ``teacher_model``, or ``s``'s only one."""
        return self.teacher_model or s.settings().model

    def as_dict(self) -> dict[str, Any]:
        """The settings for a table's metadata, without the fields that are None or empty (the
        Setting-1 protocol's model, no quality figure)."""
        return {k: v for k, v in super().as_dict().items() if v not in (None, [])}
