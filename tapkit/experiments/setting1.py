"""Setting 1's runs, written once for every dataset: one case of a table (``base``, ``none``,
``rrr``, ``rbr`` or ``tap``) on one experiment and architecture of a :class:`~.protocols.Protocol`,
with its per-architecture and per-experiment settings resolved. Decoy-MNIST's two-layer CNN
(:func:`.plans.mnist_case_config`) and the medical chapters (:mod:`.medical_plans`) both build
their configs here.

Cases follow the paper's Results section: ``base`` (No XS trained on clean images), ``none``
("No XS", trained on contaminated images), and ``rrr``, ``rbr``, ``tap`` (Eq. 3 with the XS
loss of Eq. 4, RBR, or Definition 2) with ground-truth masks.
"""

from __future__ import annotations

from typing import Sequence

from ..config import TrainConfig
from ..methods import comparators, no_xs, proposed_method
from ..models import model_label
from .protocols import Protocol


BASE = "base"
"""The case of No XS trained on clean images (the paper's Base): the reference a method
"matches"."""


def xs_cases() -> tuple[str, ...]:
    """The XS losses of the paper's tables' rows, read from the method registry now (a method
    registered after import is one of them): the ones it compares with (RRR, RBR), its own
    last."""
    return (*comparators(), proposed_method())


def cases() -> tuple[str, ...]:
    """The paper's tables' rows: Base, No XS, then :func:`xs_cases`."""
    return (BASE, no_xs(), *xs_cases())


def own_split(case: str) -> str:
    """The test split drawn as ``case`` was trained: ``"clean"`` for Base (trained on clean
    images), ``"contaminated"`` for the others. Whether a run learned its task is read there:
    a No XS run that reads the label off the tag scores a constant on clean images because it
    took the shortcut, not because it learned nothing (issue 36's preconditions)."""
    return "clean" if case == BASE else "contaminated"


def why_not_run(p: Protocol, experiment: str, model: str, case: str) -> str | None:
    """Why the protocol leaves the cell (model, case) out (its ``not_run``, which may be keyed
    by experiment first; one reason for a model leaves every case of it out), or None."""
    table = p.not_run.get(experiment, p.not_run)
    entry = table.get(model, {})
    return entry if isinstance(entry, str) else entry.get(case)


def seed_counts(p: Protocol, models: Sequence[str], experiment: str | None = None
                ) -> tuple[int, dict[str, int | str]]:
    """:meth:`Protocol.seed_counts` of a page's ``models`` on ``experiment``, without the cases
    none of them trains there (:func:`why_not_run`; the quick profile's RRR on KNEE), so a
    page never names a case's seeds where it has no such run. A case whose count differs
    between the architectures that train it reads as its smallest count with the others named:
    ``"1 (ResNet-18: 3)"`` (the quick profile's Base on KNEE)."""
    n, fewer = p.seed_counts(models, experiment)
    out: dict[str, int | str] = {k: v for k, v in fewer.items() if k in models}
    for case in (c for c in fewer if c not in models):
        counts = {m: len(p.seeds_of(m, case, experiment)) for m in models
                  if not why_not_run(p, experiment, m, case)}
        if not counts:
            continue
        low = min(counts.values())
        more = {m: k for m, k in counts.items() if k > low}
        out[case] = (f"{low} (" + ", ".join(f"{model_label(m)}: {k}" for m, k in more.items())
                     + ")" if more else low)
    return n, out


def left_out(s: Protocol, experiment: str, models: Sequence[str],
             cases: Sequence[str]) -> dict[tuple[str, str], str]:
    """``{(model, case): why}`` of the cells the protocol does not run (``not_run``)."""
    found = {(m, c): why_not_run(s, experiment, m, c) for m in models for c in cases}
    return {k: why for k, why in found.items() if why}


STRIPES_FEWER = "this profile trains the stripe appendix on fewer cases (its CPU budget)"


def stripe_left_out(s: Protocol, experiment: str, models: Sequence[str],
                    cases: Sequence[str]) -> dict[tuple[str, str], str]:
    """:func:`left_out` of the stripe appendix's table: the cases its ``stripe_cases`` leave out
    (:meth:`Protocol.stripes`), whatever else the protocol says of their tag cells, and the
    protocol's ``not_run`` cells among those it keeps."""
    _, kept = s.stripes(cases)
    return {**left_out(s, experiment, models, cases),
            **{(m, c): STRIPES_FEWER for m in models for c in cases if c not in kept}}


def case_config(p: Protocol, experiment: str | None, model: str | None, case: str,
                lam: float | None, seed: int, artifact: str = "tag") -> TrainConfig:
    """The run of one case. RRR and RBR take their input gradients per image, with BatchNorm on
    running statistics for the XS term (their options' default ``batchnorm="running"``, as the
    authors' extra forward pass; PyTorch has no third derivative of training-mode batch_norm
    either); the task loss keeps its normal forward. A ``method_batch_size`` entry of the
    protocol sets that case's batch (paper: DenseNet-121 RBR at 8); ``variants`` the registry
    entry that trains (the :class:`.cells.Cell` keeps the chapter's name). ``experiment`` and
    ``model`` None: the protocol's only ones (Decoy-MNIST's two-layer CNN)."""
    if case not in cases():
        raise ValueError(f"unknown case {case!r}; expected one of {cases()}")
    run = p.settings(experiment, model)
    extra = dict(seed=seed, artifact=artifact, **run.batch_for(case))
    if case == "base":
        return p.config_for(run, method=no_xs(), data="clean", **extra)
    if case == no_xs():
        return p.config_for(run, method=no_xs(), **extra)
    if lam is None:
        raise ValueError(f"case {case!r} on {run.model} needs a λ")
    return p.config_for(run, method=case, lam=lam, **extra)
