"""The claims of the paper about deep CNNs on PNEU and KNEE (Setting 1's tag re-emerging, Setting
2's teacher annotations and students), judged as :mod:`.claims` judges the MNIST ones. The
summary tables hold each split's mean and std over seeds; a verdict needs the paper's data and
several seeds, and on the digits stand-in the numbers are shown, not judged."""

from __future__ import annotations

from typing import Callable, Mapping

import pandas as pd

from ..seedstats import Estimate, from_summary
from .claims import MARGIN, NOT_REPRODUCED, NOT_RUN, REPRODUCED, Claim


def _deltas(frame: pd.DataFrame, experiment: str) -> list[tuple[str, str, Estimate]]:
    """``(model, case, Δ)`` of a medical summary table, in its order: Δ = swapped − contaminated,
    signed so that < 0 is worse (KNEE's MAE: lower is better), with the t-interval of
    :func:`_deep_verdict`'s docstring."""
    sign = -1.0 if experiment == "knee" else 1.0
    out = []
    for (model, case), grp in frame.groupby(["model", "case"], sort=False):
        rows = grp.set_index("split")
        if {"contaminated", "permuted"} <= set(rows.index):
            d = sign * (rows.loc["permuted", "mean"] - rows.loc["contaminated", "mean"])
            sd = (rows.loc["permuted", "std"] ** 2 + rows.loc["contaminated", "std"] ** 2) ** 0.5
            out.append((model, case, from_summary(d, sd, int(rows["count"].min()))))
    return out


def deep_claim(summaries: Mapping[str, pd.DataFrame], data: Mapping[str, str]) -> Claim:
    """On deep CNNs TAP keeps the tag from re-emerging while RRR or RBR do not: evidence per data
    set and architecture is each method's Δ (swapped − contaminated). Judged only on the paper's
    data with several seeds; on the digits stand-in the numbers are shown, not judged."""
    claim = "On deep CNNs RRR/RBR let the tag re-emerge, TAP does not"
    parts, n_min = [], None
    for exp, frame in summaries.items():
        cells: dict[str, list[str]] = {}
        for model, case, d in _deltas(frame, exp):
            if case in ("none", "rrr", "rbr", "tap") and not pd.isna(d.mean):
                n_min = d.n if n_min is None else min(n_min, d.n)
                cells.setdefault(model, []).append(
                    f"{'No XS' if case == 'none' else case.upper()} {d.mean:+.3f}")
        parts += [f"{exp.upper()} {model}: " + ", ".join(c) for model, c in cells.items()]
    evidence = ("Δ (tag swapped − contaminated, signed so that < 0 is worse) — "
                + ("; ".join(parts) if parts else "no medical table in this build"))

    def holds() -> bool:
        tap_ok, other_bad = _deep_verdict(summaries)
        return tap_ok and other_bad

    return _judged(claim, "Results, Figs. PNEU/KNEE", evidence,
                   {e: data.get(e, "stand-in") for e in summaries}, n_min or 0, holds)


def _deep_verdict(summaries: Mapping[str, pd.DataFrame]) -> tuple[bool, bool]:
    """(TAP's Δ interval reaches within MARGIN of 0 everywhere, RRR or RBR has a Δ interval wholly
    below −MARGIN somewhere). The summary tables hold each split's std, not Δ's: Δ's std is taken
    as √(σ_permuted² + σ_contaminated²), which ignores their covariance over seeds (wider than
    the paired interval when, as usual, the two splits rise and fall together)."""
    tap_ok, other_bad = True, False
    for exp, frame in summaries.items():
        for _, case, e in _deltas(frame, exp):
            if case == "tap":
                tap_ok = tap_ok and e.hi > -MARGIN
            elif case in ("rrr", "rbr"):
                other_bad = other_bad or e.hi < -MARGIN
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
    teacher student's Δ (swapped − contaminated) reaches within MARGIN of 0 while No XS's lies
    below −MARGIN. Judged on the paper's data with several seeds only; KNEE's numbers are shown."""
    claim = "TAP with 10%- or 1%-teacher masks keeps deep CNNs off the tag on PNEU"
    parts, ok = [], True
    for exp in dict.fromkeys(summary["experiment"]):
        frame = summary[(summary["experiment"] == exp) & (summary["method"].isin(["tap", "none"]))
                        & (summary["tau"].astype(str).isin(["0.01", "any"]))]
        cells = []
        for model, case, d in _deltas(frame, exp):  # one row per (model, case) at tau 0.01
            if case in ("teacher_10", "teacher_1", "none"):
                cells.append(f"{model} {case.replace('_', ' ')} {d.mean:+.3f}")
                if exp == "pneu":
                    ok = ok and (d.hi > -MARGIN if case != "none" else d.hi < -MARGIN)
        parts.append(f"{exp.upper()}: " + ", ".join(cells))
    evidence = "Δ (tag swapped − contaminated, < 0 is worse) — " + "; ".join(parts)
    return _medical_verdict(claim, "Setting 2, Fig. ts", evidence, meta, lambda: ok)


def _medical_verdict(claim: str, where: str, evidence: str, meta: Mapping,
                     holds: Callable[[], bool]) -> Claim:
    """:func:`_judged` with the data and seeds a Setting-2 table's provenance records."""
    return _judged(claim, where, evidence, meta.get("data", {}),
                   len(meta.get("settings", {}).get("seeds", [])), holds)


def _judged(claim: str, where: str, evidence: str, data: Mapping[str, str], seeds: int,
            holds: Callable[[], bool]) -> Claim:
    """A medical claim's row: ``not run here`` on the digits stand-in or with fewer than two
    seeds (saying why), else reproduced when ``holds()``."""
    data_text = "; ".join(f"{k.upper()}: {v}" for k, v in data.items()) or "unknown"
    why = (["the digits stand-in is not PNEU/KNEE"] if "stand-in" in data_text else [])
    why += ["one seed"] if seeds < 2 else []
    seeds_text = f"{seeds} seed{'s' if seeds != 1 else ''}"
    if why:
        return Claim(claim, where, evidence + f" (not judged: {', '.join(why)}; needs the paper "
                     "profile on the real data)", seeds_text, data_text, NOT_RUN)
    return Claim(claim, where, evidence, seeds_text, data_text,
                 REPRODUCED if holds() else NOT_REPRODUCED)
