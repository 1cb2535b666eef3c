"""Setting 2's protocols (teacher annotations and the distillation comparison), each beside the
Setting-1 :class:`~.protocols.Protocol` that trains its runs: :class:`TeachersProtocol` beside
Decoy-MNIST's, :class:`MedicalTeachersProtocol` beside PNEU/KNEE's. The profiles are in
:mod:`.protocols`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from .protocol_base import _Protocol

P = TypeVar("P", bound=_Protocol)


class _Setting2(_Protocol):
    """Shared by the Setting-2 protocols: the Setting-1 protocol that trains their runs, moved
    onto their ``seeds`` (the teachers' seeds)."""

    seeds: tuple[int, ...]

    def on_seeds(self, s: P, seeds: Any = None) -> P:
        """``s`` on these ``seeds``, unless a notebook gives its own ``seeds``."""
        return s if seeds is not None else s.with_overrides(seeds=self.seeds)


@dataclass(frozen=True)
class TeachersProtocol(_Setting2):
    """Setting 2 (teacher annotations) and the distillation comparison: teachers hold out
    ``fractions`` of the training split; students train at ``train_taus``; RRR/RBR with teacher
    masks (``xs_methods`` beyond TAP) and KD/AT/JT (``kd_fractions``) cost the most, so the quick
    profile keeps one threshold, TAP only, the 10% teacher and one of Setting 1's ``seeds``."""

    seeds: tuple[int, ...]
    fractions: tuple[float, ...]
    train_taus: tuple[float, ...]
    xs_methods: tuple[str, ...]
    kd_fractions: tuple[float, ...]


@dataclass(frozen=True)
class MedicalTeachersProtocol(_Setting2):
    """Setting 2 and the distillation comparison on PNEU/KNEE (or the stand-in), beside a
    :class:`Protocol` that trains every run. Teachers (``teacher_model``, the paper's
    ResNet-18) learn from the clean ``fractions`` of the training split for ``teacher_epochs``
    (None: the student protocol's). Students of ``models`` train with the ``xs_methods`` on
    teacher masks and on random masks of the same coverage at every ``train_taus``;
    ``quality_taus`` are the thresholds of the annotation-quality figure. KD/AT/JT
    (``kd_methods``) train ``kd_models`` with the ``kd_fractions`` teachers. λ: ``"paper"`` takes
    the paper's teacher-annotation and distillation tables; ``"setting1"`` (a stand-in, where
    those say nothing) takes TAP/RRR/RBR's λ from this profile's Setting-1 search and
    ``kd_lambda`` for KD/AT/JT."""

    seeds: tuple[int, ...]
    fractions: tuple[float, ...]
    train_taus: tuple[float, ...]
    quality_taus: tuple[float, ...]
    teacher_model: str
    teacher_epochs: int | None
    models: tuple[str, ...]
    xs_methods: tuple[str, ...]
    kd_methods: tuple[str, ...]
    kd_models: tuple[str, ...]
    kd_fractions: tuple[float, ...]
    lambda_source: str = "paper"
    kd_lambda: float = 1.0

    def __post_init__(self) -> None:
        if self.lambda_source not in ("paper", "setting1"):
            raise ValueError(f"unknown lambda_source {self.lambda_source!r}; expected 'paper' or "
                             "'setting1'")
