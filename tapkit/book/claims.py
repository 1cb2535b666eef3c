"""The reproduction report's verdicts (ReScience C style): a claim of the paper, the evidence
this build measured for it, and a :class:`Verdict`, with the rules every judge shares.

A verdict rests on more than one seed: a mean over seeds carries its 95% Student-t interval kept
inside the metric's range, a comparison between two methods is a paired difference over the
seeds both trained (:mod:`tapkit.seedstats`), and only the seeds where the claim's preconditions
hold count (:mod:`.preconditions`: every run learned the task, and No XS took the shortcut).
The interval decides: wholly on the claim's side of its threshold, *reproduced*; wholly on the
other side, *not reproduced*; across it, *inconclusive* (:func:`keeps_verdict`,
:func:`within_verdict`). Cells that ran but cannot decide (one seed, every seed dropped, the
stand-in for a claim about the real data) are *not testable here* with the reason; *not run* is
kept for claims no cell of the build measured. A claim about several things together needs each
of them (:func:`every_part`, :func:`needs_all`).

The judges build on this module, each pure (tables in, :class:`Claim` out), with thresholds from
:mod:`.thresholds`: :mod:`.mnist_claims` (Decoy-MNIST), :mod:`.cost_claims` (Table 1's speed and
memory), :mod:`.medical_claims` and :mod:`.teacher_claims` (PNEU and KNEE, labelled as the
stand-in's where they ran on it), :mod:`.summary_claims` and :mod:`.distillation_claims`;
:mod:`.claim_specs` names each claim's judge and :mod:`.claim_table` reads a build's tables into
the report's table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Iterable, Sequence

import pandas as pd

from ..metrics import TASK_METRICS
from ..seedstats import Estimate, from_summary


class Verdict(str, Enum):
    """A claim's verdict (issue 36). *Reproduced* / *not reproduced* only when the evidence
    decides (an interval wholly on one side of the claim's threshold); *inconclusive* when the
    interval spans it; *not testable here* when the cells ran but a precondition failed (one
    seed, a collapsed model, a No XS that never took the shortcut, the stand-in for a claim about
    the real data), with the reason; *not run* only where no cell that measures it ran."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not reproduced"
    INCONCLUSIVE = "inconclusive"
    NOT_TESTABLE = "not testable here"
    NOT_RUN = "not run"

    __str__ = str.__str__
    __format__ = str.__format__


REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTABLE, NOT_RUN = Verdict
ACCURACY = TASK_METRICS["accuracy"]


@dataclass(frozen=True)
class Claim:
    """One row of the claim table (:data:`COLUMNS`): ``reason`` says why a claim is not
    testable or not run, and ``standin`` whether its evidence is on a stand-in for the paper's
    data (:class:`.origin.DataOrigin`): a verdict on it is the stand-in's, and says so
    (:mod:`.medical_claims`); ``brief`` is the reason as a page's opening gives it."""

    claim: str
    where: str        # the paper's section or table
    evidence: str
    seeds: str
    data: str
    verdict: Verdict
    standin: bool = False
    reason: str = ""
    brief: str = ""   # the reason as a page's opening gives it, where shorter (the report: whole)


COLUMNS = ("claim", "where", "evidence", "seeds", "data", "verdict", "reason")  # the table's

# every verdict a claim can get, in the order an opening names them
VERDICTS = tuple(Verdict)


def verdict_text(verdict: str, reason: str = "") -> str:
    """``"not testable here (one seed)"``: a verdict as the report's column shows it."""
    return f"{verdict} ({reason})" if reason else str(verdict)


def shorten(text: object, most: int) -> str:
    """``text`` cut at a word to at most ``most`` characters, with "…" where it was cut."""
    text = str(text)
    return text if len(text) <= most else text[:most].rsplit(" ", 1)[0].rstrip(";,:") + " …"


VERDICT_LEAD = "The reproduction report's verdict: "
"""How :func:`verdicts`' sentence starts: a page's opening (:func:`.openings.paragraph`) keeps it
in view and folds the evidence before it."""


def verdicts(claims: Iterable[Claim], most: int = 200, reasons: int = 2) -> str:
    """One sentence: the reproduction report's verdicts on ``claims``, those not judged with why
    (one seed, the stand-in, a chapter that did not run): each reason once, though several
    claims fail on it, cut to ``most`` characters, and at most ``reasons`` of them per verdict,
    the rest counted (the report has them whole): an opening says what decided, not every
    cell's story (issue 39: openings of two or three sentences)."""
    claims = list(claims)
    by = {v: [c for c in claims if c.verdict == v] for v in VERDICTS}
    quiet = (NOT_TESTABLE, NOT_RUN)
    every = len({c.claim for c in claims})

    # a judged claim that did not reproduce says which of its parts kept it (its reason), if any
    parts = [f"*{v}* for " + (_names(cs, every) if v == REPRODUCED
                              else _named_with_reasons(cs, every, most, reasons))
             for v, cs in by.items() if cs and v not in quiet]
    for v in quiet:
        if by[v]:
            why = _reasons(by[v], most, reasons)
            parts.append(f"*{v}* for {_names(by[v], every)} ({why})" if parts or v != quiet[0]
                         else f"not judged here ({why})")
    return VERDICT_LEAD + "; ".join(parts) + "."


def _reasons(claims: list[Claim], most: int, reasons: int, evidence: bool = True) -> str:
    """The claims' reasons (or, with ``evidence``, their evidence where they give none), each
    once and cut to ``most`` characters, at most ``reasons`` of them, the rest counted."""
    found = list(dict.fromkeys(shorten(part, most) for c in claims for part in (
        c.brief or c.reason or (c.evidence if evidence else "")).split("; ") if part))
    return "; ".join(found[:reasons]) + (
        f"; {len(found) - reasons} more in the reproduction report" if len(found) > reasons
        else "")


def _judged_reasons(claims: list[Claim], most: int, reasons: int) -> str:
    """The reasons of judged claims that did not reproduce (:func:`_reasons`, never their
    evidence); where the sentence counts the claims rather than naming them and some give no
    reason, "among them" says the reasons are not every claim's."""
    why = _reasons(claims, most, reasons, evidence=False)
    titles = {c.claim for c in claims}
    unsaid = any(not (c.brief or c.reason) for c in claims)
    return f"among them: {why}" if why and len(titles) > 2 and unsaid else why


def _named_with_reasons(claims: list[Claim], every: int, most: int, reasons: int) -> str:
    """Judged claims of one verdict with the reasons that kept them from being reproduced: each
    named claim beside its own reason ("“A” (on the stand-in; why A) and “B” (why B)"), so that
    no reason reads as another claim's; more than two are counted, with their reasons after
    (:func:`_judged_reasons`)."""
    named: dict[str, list[Claim]] = {}
    for c in claims:
        named.setdefault(_names([c], every), []).append(c)
    if len(named) > 2:
        return _with_reason(_names(claims, every), _judged_reasons(claims, most, reasons))
    return " and ".join(_with_reason(name, _reasons(cs, most, reasons, evidence=False))
                        for name, cs in named.items())


def _with_reason(names: str, why: str) -> str:
    """``names`` and ``why`` in one parenthesis: "“…” (on the stand-in; why)"."""
    if not why:
        return names
    return f"{names[:-1]}; {why})" if names.endswith(")") else f"{names} ({why})"


def _names(claims: list[Claim], every: int) -> str:
    """The claims' titles, each once (the paper makes some claims twice, e.g. in the results and
    in an appendix); for more than two, how many of the ``every`` claims the sentence covers
    ("all 3 claims", or "3 claims" when others carry another verdict)."""
    names = list(dict.fromkeys(
        f"“{c.claim}”" + (" (on the stand-in)" if c.standin and c.verdict not in
                          (NOT_TESTABLE, NOT_RUN) else "")
        for c in claims))
    if len(names) <= 2:
        return " and ".join(names)
    n = len({c.claim for c in claims})  # a title shown twice (stand-in or not) counts once
    return f"all {n} claims" if n == every else f"{n} claims"


def per_seed(runs: pd.DataFrame, case: str, value: pd.Series) -> dict[int, float]:
    """``{seed: value}`` of the converged runs of ``case`` (``value`` is indexed as ``runs``): the
    pairs a paired difference over seeds reads, for MNIST's claims and the medical ones."""
    ok = (runs["case"] == case) & (runs["status"] == "ok")
    return dict(zip(runs.loc[ok, "seed"].astype(int), value[ok].astype(float)))


def on_seeds(values: dict[int, float], seeds: Iterable[int]) -> dict[int, float]:
    """``values`` on ``seeds`` only: the seeds where a claim's preconditions hold."""
    keep = set(seeds)
    return {s: v for s, v in values.items() if s in keep}


def untestable(claim: str, where: str, evidence: str, seeds: str, data: str, reason: str,
               standin: bool = False) -> Claim:
    """A claim whose cells ran but cannot decide it, with ``reason``."""
    return Claim(claim, where, evidence, seeds, data, NOT_TESTABLE, standin, reason)


def few_reason(seeds) -> str:
    """Why fewer than two seeds could judge: one seed trained, or the preconditions dropped the
    others."""
    if not seeds.dropped:
        return "fewer than two seeds trained"
    return "fewer than two seeds where the preconditions hold: " + "; ".join(
        sorted(set(seeds.dropped.values())))


def within_verdict(lo: float, hi: float, margin: float) -> str:
    """The verdict of "the difference is about zero": reproduced when [lo, hi] lies within
    [−margin, margin], not reproduced when it lies wholly outside, inconclusive when it crosses
    an end (or is missing: one seed)."""
    if lo >= -margin and hi <= margin:
        return REPRODUCED
    if hi < -margin or lo > margin:
        return NOT_REPRODUCED
    return INCONCLUSIVE


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


def combined(verdicts: list[str]) -> str:
    """All parts reproduced: reproduced; any part not reproduced: not reproduced; else
    inconclusive."""
    if NOT_REPRODUCED in verdicts:
        return NOT_REPRODUCED
    return REPRODUCED if all(v == REPRODUCED for v in verdicts) else INCONCLUSIVE


def every_part(claim: str, parts: Sequence[Claim]) -> Claim:
    """One claim that needs each of ``parts`` (one per comparator or method: "TAP matches RRR
    and RBR"): a part that fails fails it; else a part this build did not run leaves it *not
    run* and one it could not judge *not testable here* (every unjudged part *not run*: not run;
    else not testable), each reason kept; else the parts' verdicts combined
    (:func:`combined`), whose reason names the judged parts that kept it from being reproduced.
    The evidence is every part's; seeds and data are the first's."""
    head = parts[0]
    verdicts = [p.verdict for p in parts]
    open_ = [p for p in parts if p.verdict in (NOT_RUN, NOT_TESTABLE)]
    evidence = "; ".join(dict.fromkeys(p.evidence for p in parts))
    if NOT_REPRODUCED in verdicts or not open_:
        kept = [p for p in parts if p.verdict in (NOT_REPRODUCED, INCONCLUSIVE)]
        verdict = combined(verdicts)
        reason = ("; ".join(dict.fromkeys(f"{p.claim}: {p.verdict}" for p in kept))
                  if verdict != REPRODUCED and len(parts) > 1 else "")
        return replace(head, claim=claim, evidence=evidence, verdict=verdict, reason=reason,
                       brief="")
    kind = NOT_RUN if all(p.verdict == NOT_RUN for p in open_) else NOT_TESTABLE
    return replace(head, claim=claim, evidence=evidence, verdict=kind,
                   reason="; ".join(dict.fromkeys(p.reason for p in open_ if p.reason)),
                   brief="")


def needs_all(c: Claim, missing: Sequence[str]) -> Claim:
    """``c``, or, where a part the claim needs (``missing``: a method, teacher or architecture
    this build did not train) leaves it open, *not run* with what is missing: a verdict on the
    parts that ran can fail the claim, not reproduce it nor leave it inconclusive."""
    if not missing or c.verdict not in (REPRODUCED, INCONCLUSIVE):
        return c
    return replace(c, verdict=NOT_RUN, reason=f"{', '.join(missing)}: not run here")


def summary_difference(a: pd.Series, b: pd.Series) -> Estimate:
    """``a − b`` of two rows of a summary table (mean, std, count over seeds): unpaired, the
    stds combined as √(sa² + sb²), the interval on the smaller count and inside an accuracy
    difference's range (no interval when either ran one seed)."""
    sd = (float(a["std"]) ** 2 + float(b["std"]) ** 2) ** 0.5
    return from_summary(float(a["mean"]) - float(b["mean"]), sd, int(min(a["count"], b["count"])),
                        bounds=ACCURACY.range(1))
