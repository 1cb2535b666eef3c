"""The claims of the paper about deep CNNs on PNEU and KNEE (Setting 1's tag re-emerging, Setting
2's teacher annotations and students), judged as :mod:`.claims` judges the MNIST ones. The
summary tables hold each split's mean and std over seeds; a verdict needs the paper's data and
several seeds, and on the digits stand-in the numbers are shown, not judged. Whether a table is on
the paper's data is its provenance's typed ``origin`` (:class:`.origin.DataOrigin`); each method's
evidence is its reliance on the tag (:func:`tapkit.metrics.tag_reliance`: what the metric worsens
by when the tag is swapped, positive when the model uses it), judged against
:mod:`.thresholds`."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import pandas as pd

from ..experiments.cells import Annotation
from ..metrics import tag_reliance, task_metric
from ..seedstats import Estimate, from_summary
from .claims import NOT_REPRODUCED, NOT_RUN, REPRODUCED, Claim
from .origin import DataOrigin
from .thresholds import keeps_off, relies

RELIANCE = "reliance on the tag (metric lost when the tag is swapped, > 0 uses it)"


def _reliances(frame: pd.DataFrame, experiment: str,
               row: str = "case") -> list[tuple[str, str, Estimate]]:
    """``(model, row, reliance)`` of a medical summary table, in its order, per model and its
    ``row`` column (Setting 1's ``case``, Setting 2's ``annotation``): the reliance of
    :func:`tapkit.metrics.tag_reliance` from the means of the contaminated and swapped splits,
    with the t-interval of :func:`_deep_verdict`'s docstring."""
    metric = task_metric(experiment)
    out = []
    for (model, case), grp in frame.groupby(["model", row], sort=False):
        rows = grp.set_index("split")
        if {"contaminated", "permuted"} <= set(rows.index):
            r = tag_reliance(rows.loc["contaminated", "mean"], rows.loc["permuted", "mean"], metric)
            sd = (rows.loc["permuted", "std"] ** 2 + rows.loc["contaminated", "std"] ** 2) ** 0.5
            out.append((model, case, from_summary(r, sd, int(rows["count"].min()))))
    return out


def deep_claim(summaries: Mapping[str, pd.DataFrame], data: Mapping[str, str],
               origins: Mapping[str, DataOrigin | None]) -> Claim:
    """On deep CNNs TAP keeps the tag from re-emerging while RRR or RBR do not: evidence per data
    set and architecture is each method's reliance on the tag. Judged only on the paper's data
    (``origins``) with several seeds; on the digits stand-in the numbers are shown, not
    judged."""
    claim = "On deep CNNs RRR/RBR let the tag re-emerge, TAP does not"
    parts, n_min = [], None
    for exp, frame in summaries.items():
        cells: dict[str, list[str]] = {}
        for model, case, d in _reliances(frame, exp):
            if case in ("none", "rrr", "rbr", "tap") and not pd.isna(d.mean):
                n_min = d.n if n_min is None else min(n_min, d.n)
                cells.setdefault(model, []).append(
                    f"{'No XS' if case == 'none' else case.upper()} {d.mean:+.3f}")
        parts += [f"{exp.upper()} {model}: " + ", ".join(c) for model, c in cells.items()]
    evidence = (f"{RELIANCE} — "
                + ("; ".join(parts) if parts else "no medical table in this build"))

    def holds() -> bool:
        tap_ok, other_bad = _deep_verdict(summaries)
        return tap_ok and other_bad

    return _judged(claim, "Results, Figs. PNEU/KNEE", evidence,
                   {e: data.get(e, "unknown") for e in summaries},
                   [origins.get(e) for e in summaries], n_min or 0, holds)


def _deep_verdict(summaries: Mapping[str, pd.DataFrame]) -> tuple[bool, bool]:
    """(TAP keeps off the tag everywhere, RRR or RBR relies on it somewhere), by
    :func:`.thresholds.keeps_off` and :func:`.thresholds.relies` on the reliance intervals. The
    summary tables hold each split's std, not the reliance's: its std is taken as
    √(σ_permuted² + σ_contaminated²), which ignores their covariance over seeds (wider than
    the paired interval when, as usual, the two splits rise and fall together)."""
    tap_ok, other_bad = True, False
    for exp, frame in summaries.items():
        for _, case, e in _reliances(frame, exp):
            if case == "tap":
                tap_ok = tap_ok and keeps_off(e)
            elif case in ("rrr", "rbr"):
                other_bad = other_bad or relies(e)
    return tap_ok, other_bad


def annotation_claim(quality: pd.DataFrame, meta: Mapping) -> Claim:
    """Teacher annotations find the tags better than random masks on PNEU/KNEE: every teacher's
    pixel precision at every τ above the tags' coverage (what any random mask scores). Judged on
    the paper's data with several seeds only."""
    claim = "Teacher annotations mark the tags better than random masks (PNEU/KNEE)"
    lift = quality["precision"] / quality["tag_coverage"]
    parts = [f"{e.upper()}: precision {g.precision.min():.1%}–{g.precision.max():.1%} vs random "
             f"{g.tag_coverage.iloc[0]:.1%}" for e, g in quality.groupby("experiment", sort=False)]
    evidence = "; ".join(parts) + f" (lift {lift.min():.2f}–{lift.max():.2f}× random)"
    return _medical_verdict(claim, "Setting 2, Fig. overlap", evidence, meta,
                            lambda: lift.min() > 1)


def medical_teacher_claim(summary: pd.DataFrame, meta: Mapping) -> Claim:
    """On PNEU, TAP with either teacher's masks keeps the student off the tag: at τ = 0.01 each
    teacher student keeps off the tag while No XS relies on it (:mod:`.thresholds`). Judged on
    the paper's data with several seeds only; KNEE's numbers are shown. ``summary``'s τ column
    holds numbers, NaN for the runs that take no τ (No XS)."""
    claim = "TAP with 10%- or 1%-teacher masks keeps deep CNNs off the tag on PNEU"
    parts, ok = [], True
    for exp in dict.fromkeys(summary["experiment"]):
        frame = summary[(summary["experiment"] == exp) & (summary["method"].isin(["tap", "none"]))
                        & _at_tau(summary["tau"], CLAIM_TAU)]
        cells = []
        for model, case, d in _reliances(frame, exp, "annotation"):  # one per (model, annotation)
            if case in (Annotation.TEACHER_10, Annotation.TEACHER_1, Annotation.NONE):
                cells.append(f"{model} {Annotation(case).value.replace('_', ' ')} {d.mean:+.3f}")
                if exp == "pneu":
                    ok = ok and (keeps_off(d) if case != Annotation.NONE else relies(d))
        parts.append(f"{exp.upper()}: " + ", ".join(cells))
    evidence = f"{RELIANCE} — " + "; ".join(parts)
    return _medical_verdict(claim, "Setting 2, Fig. ts", evidence, meta, lambda: ok)


CLAIM_TAU = 0.01   # the τ of the paper's teacher-student figure the claim reads


def _at_tau(tau: pd.Series, value: float) -> pd.Series:
    """Rows whose τ is ``value`` (compared as a number, so that ``0.010`` and ``1e-2`` match) or
    missing (a run that takes no τ: NaN, or a legacy table's ``"any"``)."""
    numbers = pd.to_numeric(tau, errors="coerce")
    return (numbers == value) | numbers.isna()


def _medical_verdict(claim: str, where: str, evidence: str, meta: Mapping,
                     holds: Callable[[], bool]) -> Claim:
    """:func:`_judged` with the data, origin and seeds a Setting-2 table's provenance records."""
    return _judged(claim, where, evidence, meta.get("data", {}), [DataOrigin.read(meta)],
                   len(meta.get("settings", {}).get("seeds", [])), holds)


def _judged(claim: str, where: str, evidence: str, data: Mapping[str, str],
            origins: Sequence[DataOrigin | None], seeds: int, holds: Callable[[], bool]) -> Claim:
    """A medical claim's row: ``not run here`` when a table is on the digits stand-in or does
    not record its data's origin, or with fewer than two seeds (saying why), else reproduced
    when ``holds()``. ``data`` names the data per experiment, for the row only."""
    data_text = "; ".join(f"{k.upper()}: {v}" for k, v in data.items()) or "unknown"
    why = (["the digits stand-in is not PNEU/KNEE"] if DataOrigin.STANDIN in origins else [])
    why += (["its table does not record whether its data are the paper's (rebuild it)"]
            if None in origins else [])
    why += ["one seed"] if seeds < 2 else []
    seeds_text = f"{seeds} seed{'s' if seeds != 1 else ''}"
    if why:
        return Claim(claim, where, evidence + f" (not judged: {', '.join(why)}; needs the paper "
                     "profile on the real data)", seeds_text, data_text, NOT_RUN,
                     standin=DataOrigin.STANDIN in origins)
    return Claim(claim, where, evidence, seeds_text, data_text,
                 REPRODUCED if holds() else NOT_REPRODUCED)
