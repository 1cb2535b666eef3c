"""The reproduction report's claim table (ReScience C style): one row per claim of the paper, the
evidence this build measured for it, and a verdict.

A verdict rests on more than one seed: a mean over seeds carries its 95% Student-t interval, a
comparison between two methods is a paired difference over the seeds both trained
(:mod:`tapkit.seedstats`). A claim whose evidence is one seed, a stand-in for the paper's data, or
absent gets ``not run here`` with the reason, never a guess; the deep-CNN Setting-1 claims are
the exception for the stand-in, judged on its seeds and labelled as the stand-in's
(:mod:`.medical_claims`). Each ``*_claim`` function is pure
(tables in, :class:`Claim` out); their thresholds are :mod:`.thresholds`. This module holds the
MNIST and Table-1 claims,
:mod:`.medical_claims` those on PNEU and KNEE, and :mod:`.claim_table` reads the tables a build
wrote into the report's table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from ..experiments.cells import Annotation, tau_text

from ..seedstats import Estimate, from_summary, mean_ci, paired_difference
from .thresholds import KEEPS, MARGIN  # noqa: F401  (read as claims.KEEPS by the chapters)

REPRODUCED, NOT_REPRODUCED, NOT_RUN = "reproduced", "not reproduced", "not run here"
INCONCLUSIVE = "inconclusive on this machine"  # a timing interval that straddles the threshold


@dataclass(frozen=True)
class Claim:
    """One row of the claim table (:data:`COLUMNS`), and whether its evidence is on a stand-in
    for the paper's data (:class:`.origin.DataOrigin`): a Setting-2 claim on it is not judged,
    and a Setting-1 deep-CNN verdict on it is the stand-in's (:mod:`.medical_claims`)."""

    claim: str
    where: str        # the paper's section or table
    evidence: str
    seeds: str
    data: str
    verdict: str
    standin: bool = False


COLUMNS = ("claim", "where", "evidence", "seeds", "data", "verdict")  # the claim table's

# every verdict a claim can get, in the order an opening names them
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_RUN)


def verdicts(claims: Iterable[Claim]) -> str:
    """One sentence: the reproduction report's verdicts on ``claims``, those not judged with why
    (one seed, the stand-in, a chapter that did not run)."""
    claims = list(claims)
    by = {v: [c for c in claims if c.verdict == v] for v in VERDICTS}
    parts = [f"*{v}* for {_names(cs)}" for v, cs in by.items() if cs and v != NOT_RUN]
    if by[NOT_RUN]:
        why = sorted({_why(c) for c in by[NOT_RUN]})
        parts.append(f"*{NOT_RUN}* for {_names(by[NOT_RUN])} ({'; '.join(why)})"
                     if parts else f"not judged here ({'; '.join(why)})")
    return "The reproduction report's verdict: " + "; ".join(parts) + "."


def _names(claims: list[Claim]) -> str:
    return "all of them" if len(claims) > 2 else " and ".join(
        f"“{c.claim}”" + (" (on the stand-in)" if c.standin and c.verdict != NOT_RUN else "")
        for c in claims)


def _why(claim: Claim) -> str:
    """Why a claim is ``not run here``, in a few words."""
    if claim.standin:
        return "the stand-in is not the paper's data"
    if claim.seeds.startswith(("1 seed", "0 seed")) or "1 seed" in claim.evidence:
        return "one seed"
    return claim.evidence


def per_seed(runs: pd.DataFrame, case: str, value: pd.Series) -> dict[int, float]:
    """``{seed: value}`` of the converged runs of ``case`` (``value`` is indexed as ``runs``): the
    pairs a paired difference over seeds reads, for MNIST's claims and the medical ones."""
    ok = (runs["case"] == case) & (runs["status"] == "ok")
    return dict(zip(runs.loc[ok, "seed"].astype(int), value[ok].astype(float)))


def _delta(frame: pd.DataFrame) -> pd.Series:
    return frame["permuted"] - frame["contaminated"]


def _permuted(frame: pd.DataFrame) -> pd.Series:
    return frame["permuted"]


def _seeds(e: Estimate) -> str:
    return f"{e.n} seed{'s' if e.n != 1 else ''}"


def _few(e: Estimate) -> bool:
    return e.n < 2


def decoy_claim(runs: pd.DataFrame, data: str) -> Claim:
    """No XS learns the decoy: its accuracy falls when the decoy is permuted (Δ < 0 over seeds)."""
    claim, where = "No XS learns the decoy on MNIST", "Results, Fig. MNIST; App. Table gt_mnist"
    d = mean_ci(per_seed(runs, "none", _delta(runs)).values())
    verdict = NOT_RUN if _few(d) else REPRODUCED if d.hi < 0 else NOT_REPRODUCED
    return Claim(claim, where, f"No XS Δ-accuracy (permuted − contaminated) {d.text()}",
                 _seeds(d), data, verdict)


def removes_claim(runs: pd.DataFrame, data: str, method: str = "tap") -> Claim:
    """An XS method protects the model: its permuted-decoy accuracy beats No XS's (paired)."""
    name = method.upper()
    permuted = _permuted(runs)
    diff = paired_difference(per_seed(runs, method, permuted), per_seed(runs, "none", permuted))
    verdict = NOT_RUN if _few(diff) else REPRODUCED if diff.lo > 0 else NOT_REPRODUCED
    return Claim(f"{name} protects the two-layer CNN from the decoy (beats No XS on permuted digits)",
                 "Results, Fig. MNIST",
                 f"permuted accuracy, {name} − No XS (paired): {diff.text()}", _seeds(diff), data,
                 verdict)


def matches_claim(runs: pd.DataFrame, data: str, other: str) -> Claim:
    """TAP matches RRR/RBR on MNIST: TAP's permuted accuracy is not worse than ``other``'s by
    more than :data:`MARGIN` (the paired difference's interval lies above −MARGIN)."""
    permuted = _permuted(runs)
    diff = paired_difference(per_seed(runs, "tap", permuted), per_seed(runs, other, permuted))
    verdict = NOT_RUN if _few(diff) else REPRODUCED if diff.lo > -MARGIN else NOT_REPRODUCED
    return Claim(f"TAP matches {other.upper()} on MNIST (within {MARGIN:g} accuracy)",
                 "App. gt_mnist: \"TAP ... still matches RRR and RBR very closely\"",
                 f"permuted accuracy, TAP − {other.upper()} (paired): {diff.text()}",
                 _seeds(diff), data, verdict)


def keeps_verdict(lo: float, hi: float, threshold: float, higher_is_better: bool = True) -> str:
    """The verdict of a ratio's interval [lo, hi] against ``threshold``: reproduced when the
    whole interval is on the good side (``lo >= threshold`` when higher is better), not
    reproduced when the whole interval is on the bad side (``hi < threshold``), and
    :data:`INCONCLUSIVE` when it straddles the threshold or is missing (NaN): the machine's noise
    is then larger than the distance to the threshold, and more rounds or a quieter machine
    decide."""
    if not higher_is_better:
        return keeps_verdict(-hi, -lo, -threshold)
    if lo >= threshold:
        return REPRODUCED
    if hi < threshold:
        return NOT_REPRODUCED
    return INCONCLUSIVE


def _combined(verdicts: list[str]) -> str:
    """All parts reproduced: reproduced; any part not reproduced: not reproduced; else
    inconclusive."""
    if NOT_REPRODUCED in verdicts:
        return NOT_REPRODUCED
    return REPRODUCED if all(v == REPRODUCED for v in verdicts) else INCONCLUSIVE


def _bounds(row, key: str) -> tuple[float, float]:
    """The interval's ends, NaN where the table has none (an older table, one round)."""
    ends = (getattr(row, f"{key}_{end}", None) for end in ("lo", "hi"))
    lo, hi = (float("nan") if v is None else float(v) for v in ends)
    return lo, hi


SPEED_CLAIM = f"TAP keeps at least {KEEPS:g} of No XS's speed and memory"


def speed_claim(ratios: pd.DataFrame, label: str) -> Claim:
    """TAP keeps at least :data:`KEEPS` of No XS's training speed and uses at most 1/KEEPS of its
    peak memory, on every architecture benchmarked (Table 1). Each ratio carries its 95% interval
    over paired rounds (speed) or passes (memory) (:mod:`tapkit.paired`), judged by
    :func:`keeps_verdict`: noise widens an interval into "inconclusive" instead of flipping the
    verdict. A table without intervals (one round) is inconclusive."""
    claim = SPEED_CLAIM
    tap = ratios[(ratios["method"] == "tap") & ratios["speed_ratio"].notna()]
    if tap.empty:
        return Claim(claim, "Table 1", "no TAP benchmark in this build", "—", label, NOT_RUN)
    verdicts, parts = [], []
    for r in tap.itertuples():
        speed, mem = _bounds(r, "speed_ratio"), _bounds(r, "mem_ratio")
        verdicts += [keeps_verdict(*speed, KEEPS),
                     keeps_verdict(*mem, 1 / KEEPS, higher_is_better=False)]
        parts.append(f"{r.model}: speed ×{r.speed_ratio:.2f} {_interval(*speed)}, memory "
                     f"×{r.mem_ratio:.2f} {_interval(*mem)}")
    rounds = _counts(tap, "speed_rounds", "paired round")
    passes = _counts(tap, "mem_passes", "memory pass")
    return Claim(claim, "Table 1", "; ".join(parts) + " (95% intervals)",
                 f"{rounds}; {passes}", label, _combined(verdicts))


def _interval(lo: float, hi: float) -> str:
    return "[no interval]" if lo != lo or hi != hi else f"[{lo:.2f}, {hi:.2f}]"


def _counts(frame: pd.DataFrame, column: str, unit: str) -> str:
    """``"20–30 paired rounds"``: the range of ``column`` over the architectures."""
    n = sorted({int(v) for v in frame[column].dropna()}) if column in frame else []
    span = "no" if not n else f"{n[0]}" if n[0] == n[-1] else f"{n[0]}–{n[-1]}"
    return f"{span} {unit}{'' if span == '1' else 'es' if unit.endswith('s') else 's'}"


def cost_claim(ratios: pd.DataFrame, label: str) -> Claim:
    """RRR and RBR, which take second derivatives, train slower than TAP on every architecture."""
    wide = ratios.pivot_table(index="model", columns="method", values="speed_ratio")
    others = [m for m in ("rrr", "rbr") if m in wide]
    if "tap" not in wide or not others:
        return Claim("RRR and RBR train slower than TAP", "Table 1", "not benchmarked here",
                     "—", label, NOT_RUN)
    slower = all((wide[m] < wide["tap"]).dropna().all() for m in others)
    parts = [f"{model}: " + ", ".join(f"{m.upper()} ×{row[m]:.2f}" for m in ["tap", *others]
                                      if pd.notna(row[m])) for model, row in wide.iterrows()]
    return Claim("RRR and RBR train slower than TAP", "Table 1; Introduction",
                 "; ".join(parts), "—", label, REPRODUCED if slower else NOT_REPRODUCED)


def teacher_claim(summary: pd.DataFrame, data: str) -> Claim:
    """TAP with masks from a teacher trained on 1% of clean data beats No XS on permuted digits."""
    claim = "TAP works with masks from a teacher trained on 1% of clean data"
    rows = summary[summary["split"] == "permuted"]
    tap = rows[(rows["annotation"] == Annotation.TEACHER_1) & (rows["method"] == "tap")]
    none = rows[rows["annotation"] == Annotation.NONE]
    if tap.empty or none.empty:
        return Claim(claim, "Setting 2, Fig. ts", "no 1%-teacher TAP run in this build", "—", data,
                     NOT_RUN)
    t, n = tap.iloc[0], none.iloc[0]
    count = int(min(t["count"], n["count"]))
    evidence = (f"MNIST permuted accuracy: TAP with 1%-teacher masks (τ {tau_text(t['tau'])}) "
                f"{t['mean']:.3f}, No XS {n['mean']:.3f}")
    if count < 2:
        return Claim(claim, "Setting 2, Fig. ts", evidence + " (one seed: not judged; the paper's "
                     "finding is on PNEU/KNEE)", f"{count} seed", data, NOT_RUN)
    e = from_summary(t["mean"] - n["mean"], (t["std"] ** 2 + n["std"] ** 2) ** 0.5, count)
    return Claim(claim, "Setting 2, Fig. ts", evidence + f"; difference {e.text()} (unpaired)",
                 f"{count} seeds", data, REPRODUCED if e.lo > 0 else NOT_REPRODUCED)
